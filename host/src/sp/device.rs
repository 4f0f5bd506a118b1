//! What every shortest-path launch module shares: the error for a broken launch contract, and
//! uploads that never ask the driver for zero bytes.
use crate::error::{OctileError, Result};
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr};
use std::sync::Arc;

/// Ok, or the error for a launch contract `what` describes as broken (every shortest-path launch's).
pub fn check(ok: bool, what: impl FnOnce() -> String) -> Result<()> {
    if ok { Ok(()) } else { Err(OctileError::LaunchContract { launch: "shortest-path".into(), what: what() }) }
}

/// `v` on the device (one `pad` element when empty: the driver allocates nothing of size 0).
pub fn upload<T: DeviceRepr + Clone>(s: &Arc<CudaStream>, v: &[T], pad: T) -> Result<CudaSlice<T>> {
    Ok(if v.is_empty() { s.clone_htod(&[pad])? } else { s.clone_htod(v)? })
}

//! Pinned host buffers for large device → host copies (a whole Gram matrix: 200 MB for 5,000
//! graphs; the graphlet transform's n × 16 counts: 512 MB for 4 M nodes). A copy into ordinary (pageable) memory goes through the driver's own staging at about
//! a third of the bus speed; here the DMA fills one pinned buffer while the host threads copy the
//! previous one out, in parallel, into its place in the result:
//!
//! ```text
//! device src:  [ piece 0 ][ piece 1 ][ piece 2 ] …      piece = `piece_elems` values
//! pinned:      [ buffer 0 ][ buffer 1 ]                  piece k → buffer k % 2 (DMA, async)
//! host dst:    piece k−1 copied out of buffer (k−1) % 2 by all threads while piece k is in flight
//! ```
//! Why two buffers owned by the caller: pinning memory is slow (the driver locks every page), so a
//! kernel object allocates them once and reuses them for every call.
use crate::error::{OctileError, Result};
use crate::gpu::GpuDevice;
use cudarc::driver::{CudaEvent, CudaStream, CudaView, DeviceRepr, PinnedHostSlice, ValidAsZeroBits};
use rayon::prelude::*;
use std::sync::{Arc, Mutex};

/// Two pinned buffers of `piece_elems` values of `T` each, and an event per buffer marking the
/// end of the copy into it (recorded here: cudarc records a pinned buffer's own event only when the
/// context runs several streams).
pub struct Staging<T = f64> {
    bufs: Mutex<([PinnedHostSlice<T>; 2], [CudaEvent; 2])>,
    piece_elems: usize,
}

impl<T: DeviceRepr + ValidAsZeroBits + Copy + Send + Sync> Staging<T> {
    /// Pin two buffers of `piece_elems` values on `dev`'s context.
    pub fn new(dev: &GpuDevice, piece_elems: usize) -> Result<Staging<T>> {
        let alloc = || -> Result<PinnedHostSlice<T>> {
            // SAFETY: page-locked host memory of piece_elems values of T (plain numbers: any bits
            // are valid, ValidAsZeroBits); flags 0: cached, readable by the host at full speed
            // (write-combined memory is not); it is only read after a copy into it has completed
            // (as_slice waits for its event).
            Ok(unsafe { dev.ctx.alloc_pinned_with_flags::<T>(piece_elems.max(1), 0) }?)
        };
        let event = || dev.ctx.new_event(None);
        Ok(Staging { bufs: Mutex::new(([alloc()?, alloc()?], [event()?, event()?])), piece_elems: piece_elems.max(1) })
    }

    /// Copy `src` into `dst` (same length) through the pinned buffers on stream `s`.
    pub fn download(&self, s: &Arc<CudaStream>, src: &CudaView<T>, dst: &mut [T]) -> Result<()> {
        self.download_with(s, src, dst, |from, to| to.copy_from_slice(from))
    }

    /// Copy `src` into `dst` (same length) through the pinned buffers on stream `s`, each run of
    /// values written out by `convert(from, to)` (equal lengths; e.g. widening i32 to i64).
    pub fn download_with<U: Send>(&self, s: &Arc<CudaStream>, src: &CudaView<T>, dst: &mut [U], convert: impl Fn(&[T], &mut [U]) + Sync) -> Result<()> {
        if src.len() != dst.len() {
            return Err(OctileError::LaunchContract { launch: "staged download".into(), what: format!("{} values into {}", src.len(), dst.len()) });
        }
        let mut guard = self.bufs.lock().map_err(|_| OctileError::Internal("staging buffers poisoned by a panic".into()))?;
        let (bufs, events) = &mut *guard;
        // whole pieces through the buffers (a copy into a pinned buffer moves the buffer's whole
        // length), the tail through the first buffer's front
        let whole = src.len() / self.piece_elems;
        let copy_out = |from: &[T], dst: &mut [U]| dst.par_chunks_mut(1 << 15).zip(from.par_chunks(1 << 15)).for_each(|(d, f)| convert(f, d));
        let piece = |k: usize| k * self.piece_elems..(k + 1) * self.piece_elems;
        for k in 0..whole {
            s.memcpy_dtoh(&src.slice(piece(k)), &mut bufs[k % 2])?;
            events[k % 2].record(s)?;
            if k > 0 {
                events[(k - 1) % 2].synchronize()?;
                copy_out(bufs[(k - 1) % 2].as_slice()?, &mut dst[piece(k - 1)]);
            }
        }
        if whole > 0 {
            events[(whole - 1) % 2].synchronize()?;
            copy_out(bufs[(whole - 1) % 2].as_slice()?, &mut dst[piece(whole - 1)]);
        }
        let tail = whole * self.piece_elems;
        if tail < src.len() {
            let front = &mut bufs[whole % 2].as_mut_slice()?[..src.len() - tail];
            s.memcpy_dtoh(&src.slice(tail..), front)?;
            s.synchronize()?;
            copy_out(front, &mut dst[tail..]);
        }
        Ok(())
    }
}

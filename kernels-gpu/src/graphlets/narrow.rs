//! The counts narrowed for the trip to the host: most graphs' counts fit `i32`, and half the
//! bytes cross the bus in half the time (the host widens them back while copying them out).
use crate::intrinsics::{atomic_exch_u32, block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use octile_types::graphlets::N_ORBITS;
use octile_types::graphlets::launch::{GraphletParams, STATUS_WIDE};

/// `dst[k] = src[k] as i32` for the n × 16 counts (grid-strided); `status[STATUS_WIDE]` is set
/// when a count does not fit (then `dst` is not used).
///
/// # Safety
/// `src` and `dst` hold 16·n values; `status` the status words.
#[unsafe(export_name = octile_types::entry_name!(GraphletNarrow))]
#[allow(non_snake_case)]
pub unsafe extern "ptx-kernel" fn GraphletNarrow(p: GraphletParams, src: *const i64, dst: *mut i32, status: *mut u32) {
    let len = p.n_nodes as u64 * N_ORBITS as u64;
    let stride = grid_dim_x() as u64 * block_dim_x() as u64;
    let mut k = block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64;
    let mut wide = false;
    while k < len {
        // SAFETY: k < 16n, inside both arrays (contract above).
        unsafe {
            let v = *src.add(k as usize);
            wide |= i32::try_from(v).is_err();
            *dst.add(k as usize) = v as i32;
        }
        k += stride;
    }
    if wide {
        // SAFETY: the status words (contract above).
        unsafe { atomic_exch_u32(status.add(STATUS_WIDE), 1) };
    }
}

//! The fast graphlet transform on the GPU (layouts and the *why*: `octile_types::graphlets::launch`):
//! pass 1 ([`pass1`]: 2-walk counts, per-edge triangle counts c3 and the pass-1 orbits; light nodes
//! by warps with shared-memory hash tables, heavy ones by blocks with dense workspaces), pass 2
//! ([`pass2`]: the neighbours' sums, triangles and 4-cliques, the raw and net rows), on the warp
//! helpers of [`warp`]; [`narrow`] halves the bytes of the download when the counts fit `i32`. The row sums become frequencies through `octile_types::graphlets`'
//! `finish_pass1`, `finish_pass2` and `raw_to_net`, the functions the CPU backend calls.
pub mod narrow;
pub mod pass1;
pub mod pass2;
pub mod warp;

use crate::intrinsics::atomic_exch_u32;
use octile_types::graphlets::launch::{STATUS_OVERFLOW, STATUS_OVERFLOW_NODE};

/// Record that a count of node `i` passed `i64` (the host turns it into an error naming a node).
///
/// # Safety
/// `status` points at the launch's status words.
#[inline(always)]
unsafe fn flag_overflow(status: *mut u32, i: u32) {
    // SAFETY: caller's contract.
    unsafe {
        atomic_exch_u32(status.add(STATUS_OVERFLOW), 1);
        atomic_exch_u32(status.add(STATUS_OVERFLOW_NODE), i);
    }
}

/// Whether `x` is in the ascending run `col[lo..hi]` (binary search).
///
/// # Safety
/// `col[lo..hi]` is readable.
#[inline(always)]
unsafe fn contains(col: *const u32, lo: u32, hi: u32, x: u32) -> bool {
    let at = unsafe { lower_bound(col, lo, hi, x) };
    // SAFETY: at < hi is inside the run.
    at < hi && unsafe { *col.add(at as usize) } == x
}

/// The first entry of the ascending run `col[lo..hi]` that is ≥ `x` (`hi` when none).
///
/// # Safety
/// `col[lo..hi]` is readable.
#[inline(always)]
unsafe fn lower_bound(col: *const u32, mut lo: u32, mut hi: u32, x: u32) -> u32 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // SAFETY: lo ≤ mid < hi.
        if unsafe { *col.add(mid as usize) } < x {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

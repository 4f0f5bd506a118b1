//! Block-wide ordered compaction: the cells a block keeps, numbered in cell order — how the
//! histogram build and the shortest-path build write sorted outputs without a sort.
use crate::intrinsics::{FULL_MASK, ballot, lane_id, sync_threads, thread_idx_x, warp_id};
use octile_types::sp::SP_BLOCK_THREADS;

/// For every cell c in `0..n_cells` with `keep(c)`, calls `write(c, rank)`, rank = the number of
/// kept cells before c; returns how many were kept (in every thread). Rounds of one cell per
/// thread: a ballot per warp, the warps' totals in `totals` (32 u32 of shared memory).
///
/// # Safety
/// Every thread of a block of `SP_BLOCK_THREADS` must call it with the same `n_cells` (it contains
/// barriers); `totals` points at 32 u32 of shared memory no one else uses meanwhile.
#[inline(always)]
pub unsafe fn compact_in_order(n_cells: usize, totals: *mut u32, mut keep: impl FnMut(usize) -> bool, mut write: impl FnMut(usize, u32)) -> u32 {
    let (tid, threads) = (thread_idx_x() as usize, SP_BLOCK_THREADS as usize);
    let (lane, warp) = (lane_id(), warp_id() as usize);
    let (mut written, mut start) = (0u32, 0usize);
    while start < n_cells {
        let c = start + tid;
        let kept = c < n_cells && keep(c);
        // SAFETY: all lanes reach the ballot and every thread the barriers (caller's contract);
        // warp slots < threads / 32 ≤ 32 lie inside totals.
        unsafe {
            let mask = ballot(FULL_MASK, kept);
            if lane == 0 {
                *totals.add(warp) = mask.count_ones();
            }
            sync_threads();
            let (mut before, mut all) = (written, written);
            for x in 0..threads / 32 {
                let t = *totals.add(x);
                before += if x < warp { t } else { 0 };
                all += t;
            }
            if kept {
                write(c, before + (mask & ((1u32 << lane) - 1)).count_ones());
            }
            written = all;
            // the totals are rewritten next round
            sync_threads();
        }
        start += threads;
    }
    written
}

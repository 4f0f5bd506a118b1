//! Block-wide reductions and broadcasts for the solver block (warp shuffles + shared memory).
//!
//! All sums are in `f64` whatever the solver's T: CG's dot products decide α and β, and summing
//! thousands of `f32` products in `f32` would cost the accuracy the f32 path must keep. Every
//! thread sums the per-warp partials in the same order, so all threads get bit-identical results
//! and take the same branches afterwards.
use crate::intrinsics::{FULL_MASK, lane_id, shfl_xor_f64, shfl_xor_u32, sync_threads, thread_idx_x, warp_id};
use crate::smem::reduce_smem;
use octile_types::names::BLOCK_WARPS;

/// Sums of `a` and `b` over the warp by an xor butterfly: every lane adds the same two values in
/// each step (in swapped order, which is exact), so every lane ends with the same bits.
///
/// # Safety
/// All 32 lanes of the warp must call it together.
#[inline(always)]
pub unsafe fn warp_sum2(mut a: f64, mut b: f64) -> (f64, f64) {
    let mut d = 16;
    while d > 0 {
        // SAFETY: all 32 lanes are converged (caller's contract).
        unsafe {
            a += shfl_xor_f64(FULL_MASK, a, d);
            b += shfl_xor_f64(FULL_MASK, b, d);
        }
        d /= 2;
    }
    (a, b)
}

/// Sum of `a` and of `b` over the whole block, returned to every thread.
///
/// # Safety
/// Every thread of the block must call it (it contains barriers); the block must have
/// `BLOCK_WARPS` warps.
#[inline(always)]
pub unsafe fn block_sum2(a: f64, b: f64) -> (f64, f64) {
    // SAFETY: all 32 lanes are converged here (called by every thread of the block).
    let (a, b) = unsafe { warp_sum2(a, b) };
    let slots = reduce_smem() as *mut f64;
    if lane_id() == 0 {
        let w = warp_id() as usize;
        // SAFETY: slot 2w and 2w+1 < 2·BLOCK_WARPS lie inside reduce_smem (const-asserted).
        unsafe {
            *slots.add(2 * w) = a;
            *slots.add(2 * w + 1) = b;
        }
    }
    // SAFETY: reached by every thread (caller's contract).
    unsafe { sync_threads() };
    let (mut sa, mut sb) = (0.0, 0.0);
    for w in 0..BLOCK_WARPS as usize {
        // SAFETY: as above; written before the barrier.
        unsafe {
            sa += *slots.add(2 * w);
            sb += *slots.add(2 * w + 1);
        }
    }
    // SAFETY: reached by every thread; keeps the next reduction from overwriting the slots early.
    unsafe { sync_threads() };
    (sa, sb)
}

/// Thread 0's `v`, returned to every thread of the block.
///
/// # Safety
/// Every thread of the block must call it (it contains barriers).
#[inline(always)]
pub unsafe fn block_broadcast_u32(v: u32) -> u32 {
    let slot = unsafe { reduce_smem().add(2 * BLOCK_WARPS as usize * 8) } as *mut u32;
    if thread_idx_x() == 0 {
        // SAFETY: the broadcast slot lies after the partial sums, inside reduce_smem.
        unsafe { *slot = v };
    }
    // SAFETY: reached by every thread (caller's contract).
    unsafe { sync_threads() };
    // SAFETY: written before the barrier.
    let r = unsafe { *slot };
    // SAFETY: as above; keeps a later broadcast from overwriting the slot early.
    unsafe { sync_threads() };
    r
}

/// The u64 sum of `v` over the warp, in every lane.
///
/// # Safety
/// All 32 lanes of the warp must call it together.
#[inline(always)]
pub unsafe fn warp_sum_u64(mut v: u64) -> u64 {
    let mut d = 16;
    while d > 0 {
        // SAFETY: all lanes converged (caller's contract).
        let (lo, hi) = unsafe { (shfl_xor_u32(FULL_MASK, v as u32, d), shfl_xor_u32(FULL_MASK, (v >> 32) as u32, d)) };
        v = v.wrapping_add((hi as u64) << 32 | lo as u64);
        d /= 2;
    }
    v
}

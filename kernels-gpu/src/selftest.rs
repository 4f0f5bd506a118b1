//! `SmokeIntrinsics`: exercises every wrapper in [`crate::intrinsics`] and the block reduction so
//! the host can check them against known answers on a real GPU.
//!
//! Per thread t (global), `words[t·8 ..]` receives:
//! ```text
//! 0 lane_id            1 warp_id              2 shfl_down(3·lane, 1)
//! 3 Σ lane (bfly)      4 ballot(lane odd)     5 vote_all(true) | vote_any(lane == 5) << 1
//! 6 fns(0xF0F0F0F0, 0, lane % 8 + 1)          7 old value of atomic_add_u32(counter, 1)
//! ```
//! Every thread also adds 1.0 to `*acc_f32` and 0.5 to `*acc_f64`; thread 0 of block b writes the
//! block sums of (tid, 1.0) to `block_sums[2b ..]`.
use crate::intrinsics::*;
use crate::reduce::block_sum2;
use octile_types::names::SMOKE_WORDS_PER_THREAD;

/// See the module docs.
///
/// # Safety
/// `words` holds 8 u32 per launched thread, `block_sums` 2 f64 per block; the counters are valid
/// global scalars; launched with `SMOKE_BLOCK_THREADS` threads per block.
#[unsafe(export_name = octile_types::entry_name!(SmokeIntrinsics))]
#[allow(non_snake_case)]
pub unsafe extern "ptx-kernel" fn SmokeIntrinsics(words: *mut u32, counter: *mut u32, acc_f32: *mut f32, acc_f64: *mut f64, block_sums: *mut f64) {
    let tid = thread_idx_x();
    let gtid = block_idx_x() as usize * block_dim_x() as usize + tid as usize;
    let lane = lane_id();
    let out = unsafe { words.add(gtid * SMOKE_WORDS_PER_THREAD) };
    // SAFETY: the whole warp executes every warp-level call below (no divergence before them).
    unsafe {
        let down = shfl_down_u32(FULL_MASK, 3 * lane, 1);
        let mut sum = lane;
        let mut d = 16;
        while d > 0 {
            sum += shfl_xor_u32(FULL_MASK, sum, d);
            d /= 2;
        }
        let from0 = shfl_idx_u32(FULL_MASK, lane + 100, 0);
        let odd = ballot(FULL_MASK, lane & 1 == 1);
        let votes = vote_all(FULL_MASK, true) as u32 | (vote_any(FULL_MASK, lane == 5) as u32) << 1 | ((from0 == 100) as u32) << 2;
        *out = lane;
        *out.add(1) = warp_id();
        *out.add(2) = down;
        *out.add(3) = sum;
        *out.add(4) = odd;
        *out.add(5) = votes;
        *out.add(6) = fns(0xF0F0_F0F0, 0, (lane % 8 + 1) as i32);
        *out.add(7) = atomic_add_u32(counter, 1);
        atomic_add_f32(acc_f32, 1.0);
        atomic_add_f64(acc_f64, 0.5);
        let (a, b) = block_sum2(tid as f64, 1.0);
        if tid == 0 {
            *block_sums.add(2 * block_idx_x() as usize) = a;
            *block_sums.add(2 * block_idx_x() as usize + 1) = b;
        }
    }
}

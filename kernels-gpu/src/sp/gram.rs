//! The histogram form's Gram matrix on the GPU: whole rows × columns of sorted (key, count) lists,
//! written row-major (`octile_types::sp::SpGramParams`).
//!
//! One block per row: the row graph's list is staged in shared memory (when it fits), then each
//! warp takes columns c, c + 4, …: its lanes read the column graph's entries (coalesced) and
//! binary-search each key in the staged list; the count products are summed exactly in u64.
use crate::intrinsics::{block_idx_x, lane_id, sync_threads, thread_idx_x, warp_id};
use crate::reduce::warp_sum_u64;
use crate::smem::dynamic_smem;
use octile_types::sp::{SP_BLOCK_THREADS, SpGramParams, SpHistogram};

/// One block of `SP_BLOCK_THREADS` per row of the launch.
///
/// # Safety
/// `params` points at one SpGramParams; the grid has `n_rows` blocks of `SP_BLOCK_THREADS` threads
/// with `staged`·12 bytes of dynamic shared memory, and `staged` ≥ every row list's length when it
/// is not 0; runs `row_graph0 + row_begin ..` (`n_rows`) and `col_graph0 ..` (`n_cols`) exist and
/// lie inside `keys`/`counts` with ascending keys; `out` holds `n_rows × n_cols` values.
#[unsafe(export_name = octile_types::entry_name!(SpHistogramGram))]
#[allow(non_snake_case)]
pub unsafe extern "ptx-kernel" fn SpHistogramGram(params: *const SpGramParams, runs: *const SpHistogram, keys: *const u64, counts: *const u32, out: *mut f64) {
    // SAFETY: contract above.
    unsafe {
        let p = &*params;
        let r = block_idx_x();
        if r >= p.n_rows {
            return;
        }
        let ra = *runs.add((p.row_graph0 + p.row_begin + r) as usize);
        let (tid, threads) = (thread_idx_x() as usize, SP_BLOCK_THREADS as usize);
        let m = ra.len as usize;
        let (mut ka, mut ca) = (keys.add(ra.offset as usize), counts.add(ra.offset as usize));
        if p.staged != 0 {
            let sk = dynamic_smem() as *mut u64;
            let sc = sk.add(p.staged as usize) as *mut u32;
            let mut k = tid;
            while k < m {
                *sk.add(k) = *ka.add(k);
                *sc.add(k) = *ca.add(k);
                k += threads;
            }
            sync_threads();
            (ka, ca) = (sk as *const u64, sc as *const u32);
        }
        let (lane, warps) = (lane_id() as usize, threads / 32);
        let row = out.add(r as usize * p.n_cols as usize);
        let mut c = warp_id() as usize;
        while c < p.n_cols as usize {
            let rb = *runs.add(p.col_graph0 as usize + c);
            let (kb, cb) = (keys.add(rb.offset as usize), counts.add(rb.offset as usize));
            let mut acc = 0u64;
            let mut x = lane;
            while x < rb.len as usize {
                let key = *kb.add(x);
                let (mut lo, mut hi) = (0usize, m);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if *ka.add(mid) < key { lo = mid + 1 } else { hi = mid }
                }
                if lo < m && *ka.add(lo) == key {
                    acc += *ca.add(lo) as u64 * *cb.add(x) as u64;
                }
                x += 32;
            }
            let acc = warp_sum_u64(acc);
            if lane == 0 {
                *row.add(c) = acc as f64;
            }
            c += warps;
        }
    }
}

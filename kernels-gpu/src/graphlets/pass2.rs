//! Pass 2: per node i the sums over its neighbours of pass 1's d̂2 and d̂4, the triangles
//! {i, j, k} weighted by c3(j, k) − 1, and the 4-cliques containing i; then d̂5, d̂9, d̂13, d̂15
//! into the raw row and the net row from it.
//!
//! Triangles: for each neighbour k with c3(i, k) > 0, the entries j < k of N(k) (a prefix of the
//! sorted row, found by binary search) are dealt over the lanes, each looked up in the sorted
//! N(i). 4-cliques: from each triangle {i, j, k} with j < k, the common neighbours m > k of i, j
//! and k (the shorter of the two rows above k walked, the others searched), so each 4-clique
//! {i, a, b, c} (a < b < c) is counted once, from (j, k) = (a, b).
use super::warp::{warp_flat_runs, warp_sum_i64_checked};
use super::{contains, flag_overflow, lower_bound};
use crate::intrinsics::{block_idx_x, grid_dim_x, lane_id, warp_id};
use octile_types::graphlets::launch::{GRAPHLET_BLOCK_WARPS, GraphletParams};
use octile_types::graphlets::{N_ORBITS, Pass2Sums, finish_pass2, raw_to_net};

/// Pass 2 of every node, one warp per node (nodes strided over the grid's warps).
///
/// # Safety
/// After both pass-1 kernels (`c3`, `d2d4` and the raw rows complete, no overflow flagged);
/// blocks of `GRAPHLET_BLOCK_THREADS` threads; the CSR as in `GraphletPass1Light`; `raw` and
/// `net` hold 16n values, `d2d4` 2n, `c3` row_start[n].
#[unsafe(export_name = octile_types::entry_name!(GraphletPass2))]
#[allow(non_snake_case)]
pub unsafe extern "ptx-kernel" fn GraphletPass2(
    p: GraphletParams,
    row_start: *const u32,
    col: *const u32,
    c3: *const u32,
    d2d4: *const i64,
    raw: *mut i64,
    net: *mut i64,
    status: *mut u32,
) {
    // SAFETY: contract above; every index is a node < n or an entry of a row.
    unsafe {
        let lane = lane_id();
        let warps = grid_dim_x() * GRAPHLET_BLOCK_WARPS;
        let mut i = block_idx_x() * GRAPHLET_BLOCK_WARPS + warp_id();
        while i < p.n_nodes {
            let (lo, hi) = (*row_start.add(i as usize), *row_start.add(i as usize + 1));
            let (mut s5, mut s9, mut ok) = (0i64, 0i64, true);
            let (mut s13, mut k4) = (0u64, 0u64);
            let mut e = lo + lane;
            while e < hi {
                let k = *col.add(e as usize) as usize;
                match (s5.checked_add(*d2d4.add(2 * k)), s9.checked_add(*d2d4.add(2 * k + 1))) {
                    (Some(a), Some(b)) => (s5, s9) = (a, b),
                    _ => ok = false,
                }
                e += 32;
            }
            let mut base = lo;
            while base < hi {
                let e = base + lane;
                let (mut start, mut len, mut k, mut c_ik) = (0, 0, 0, 0);
                if e < hi {
                    k = *col.add(e as usize);
                    c_ik = *c3.add(e as usize);
                    if c_ik > 0 {
                        start = *row_start.add(k as usize);
                        len = lower_bound(col, start, *row_start.add(k as usize + 1), k) - start;
                    }
                }
                warp_flat_runs(start, len, k, c_ik, |k, c_ik, at| {
                    let j = *col.add(at as usize);
                    if !contains(col, lo, hi, j) {
                        return;
                    }
                    let c_jk = *c3.add(at as usize);
                    s13 += c_jk as u64 - 1;
                    if c_ik < 2 || c_jk < 2 {
                        return;
                    }
                    let (j_lo, j_hi) = (*row_start.add(j as usize), *row_start.add(j as usize + 1));
                    let (k_lo, k_hi) = (*row_start.add(k as usize), *row_start.add(k as usize + 1));
                    let (i_from, k_from) = (lower_bound(col, lo, hi, k + 1), lower_bound(col, k_lo, k_hi, k + 1));
                    let (walk, walk_end, other_lo, other_hi) =
                        if hi - i_from <= k_hi - k_from { (i_from, hi, k_from, k_hi) } else { (k_from, k_hi, i_from, hi) };
                    let mut x = walk;
                    while x < walk_end {
                        let m = *col.add(x as usize);
                        if contains(col, other_lo, other_hi, m) && contains(col, j_lo, j_hi, m) {
                            k4 += 1;
                        }
                        x += 1;
                    }
                });
                base += 32;
            }
            let (s5, ok5) = warp_sum_i64_checked(s5, ok);
            let (s9, ok9) = warp_sum_i64_checked(s9, ok);
            let (s13, ok13) = warp_sum_i64_checked(i64::try_from(s13).unwrap_or(0), s13 <= i64::MAX as u64);
            let (k4, ok4) = warp_sum_i64_checked(i64::try_from(k4).unwrap_or(0), k4 <= i64::MAX as u64);
            if lane == 0 {
                let row = raw.add(i as usize * N_ORBITS);
                let mut r = [0i64; N_ORBITS];
                for (o, v) in r.iter_mut().enumerate() {
                    *v = *row.add(o);
                }
                let sums = Pass2Sums { s5, s9, s13, k4 };
                let done = if ok5 && ok9 && ok13 && ok4 { finish_pass2(&mut r, &sums).and_then(|_| raw_to_net(&r)) } else { None };
                match done {
                    Some(f) => {
                        let out = net.add(i as usize * N_ORBITS);
                        for o in 0..N_ORBITS {
                            *row.add(o) = r[o];
                            *out.add(o) = f[o];
                        }
                    }
                    None => flag_overflow(status, i),
                }
            }
            i += warps;
        }
    }
}

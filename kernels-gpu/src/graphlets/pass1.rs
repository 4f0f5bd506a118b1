//! Pass 1: per node i its neighbours' degree sums, the 2-walk counts w_ij (j ≠ i) and from them
//! c4 = Σ C(w_ij, 2), the per-edge triangle counts c3 = w_ij (j ∈ N(i)), tri2, s10 and s14;
//! then the pass-1 orbits of the raw row and d̂2, d̂4 for pass 2.
//!
//! Every increment of a counter adds the count it found to c4 (0 + 1 + … + (w − 1) = C(w, 2)), in
//! whatever order the lanes come: no list of the touched j, no second sweep.
use super::flag_overflow;
use super::warp::warp_flat_runs;
use crate::intrinsics::{
    FULL_MASK, atomic_add_shared_u32, atomic_add_u32, atomic_cas_shared_u32, atomic_max_u32, block_dim_x, block_idx_x, grid_dim_x, lane_id, sync_threads,
    sync_warp, thread_idx_x, trap, warp_id,
};
use crate::reduce::{block_broadcast_u32, warp_sum_u64};
use crate::smem::dynamic_smem;
use octile_types::graphlets::launch::{
    GRAPHLET_BLOCK_WARPS, GRAPHLET_EMPTY_KEY, GRAPHLET_HEAVY_PARTIAL_BYTES, GRAPHLET_LIGHT_WALKS, GRAPHLET_MEDIUM_SLOTS, GRAPHLET_MEDIUM_WALKS,
    GRAPHLET_TABLE_SLOTS, GraphletParams, STATUS_DEAL, STATUS_HEAVY, STATUS_MAX_WALKS, table_home, table_slots,
};
use octile_types::graphlets::{N_ORBITS, Pass1Sums, finish_pass1, t04};

/// The six u64 row sums a pass-1 thread accumulates.
#[derive(Clone, Copy, Default)]
struct Partial {
    s_deg: u64,
    s_t04: u64,
    c4: u64,
    tri2: u64,
    s10: u64,
    s14: u64,
}

/// Degree of node `k`.
///
/// # Safety
/// `k < n`, `row_start` holds n + 1 entries.
#[inline(always)]
unsafe fn degree(row_start: *const u32, k: u32) -> u32 {
    // SAFETY: caller's contract.
    unsafe { *row_start.add(k as usize + 1) - *row_start.add(k as usize) }
}

/// A thread's share of s_deg = Σ d_k and s_t04 = Σ C(d_k − 1, 2) over the row entries
/// `from, from + step, …` below `hi` (the other sums zero).
///
/// # Safety
/// The entries are a row of the CSR of [`GraphletPass1Light`]'s contract.
#[inline(always)]
unsafe fn neighbour_degrees(row_start: *const u32, col: *const u32, from: u32, hi: u32, step: u32) -> Partial {
    let mut q = Partial::default();
    let mut e = from;
    while e < hi {
        // SAFETY: e < hi is an entry of the row; its node k < n (caller's contract).
        let dk = unsafe { degree(row_start, *col.add(e as usize)) } as u64;
        q.s_deg += dk;
        q.s_t04 += t04(dk as i64).unwrap_or(0) as u64;
        e += step;
    }
    q
}

/// Add node j's share to the edge sums: c3 of the entry, tri2, s10, s14.
#[inline(always)]
fn add_edge(p: &mut Partial, w: u32, d_j: u32) {
    let w = w as u64;
    p.tri2 += w;
    // w > 0 ⇒ j has i and a common neighbour: d_j ≥ 2
    if w > 0 {
        p.s10 += w * (d_j as u64 - 2);
    }
    p.s14 += w * w;
}

/// Finish node i from its sums: the raw row's pass-1 orbits and d̂2, d̂4; a count past `i64`
/// flags the node instead.
///
/// # Safety
/// `raw` holds 16n values, `d2d4` 2n, i < n; `status` the status words.
#[inline(always)]
unsafe fn write_node(i: u32, d: u32, p: &Partial, raw: *mut i64, d2d4: *mut i64, status: *mut u32) {
    let to = |x: u64| i64::try_from(x).ok();
    let sums =
        (|| Some(Pass1Sums { d: d as i64, s_deg: to(p.s_deg)?, s_t04: to(p.s_t04)?, c4: to(p.c4)?, tri2: to(p.tri2)?, s10: to(p.s10)?, s14: to(p.s14)? }))();
    // SAFETY: caller's contract: the node's row and pair are inside the arrays.
    unsafe {
        match sums.and_then(|s| finish_pass1(&s)) {
            Some(r) => {
                let row = raw.add(i as usize * N_ORBITS);
                for (o, v) in r.iter().enumerate() {
                    *row.add(o) = *v;
                }
                *d2d4.add(2 * i as usize) = r[2];
                *d2d4.add(2 * i as usize + 1) = r[4];
            }
            None => flag_overflow(status, i),
        }
    }
}

/// Count one 2-walk to `j` in the hash table `keys`/`counts` of `slots` (a power of two) slots of
/// shared memory; returns the count before (the old-count trick's addend).
///
/// # Safety
/// `keys` and `counts` are `slots` words of this block's shared memory each; the table holds fewer
/// than `slots` keys (its node's 2-walks ≤ slots / 2).
#[inline(always)]
unsafe fn table_add(keys: *mut u32, counts: *mut u32, slots: u32, j: u32) -> u32 {
    let mut h = table_home(j, slots);
    // SAFETY: caller's contract; h < slots; a free slot exists, so the probe ends.
    unsafe {
        loop {
            let cur = atomic_cas_shared_u32(keys.add(h as usize), GRAPHLET_EMPTY_KEY, j);
            if cur == GRAPHLET_EMPTY_KEY || cur == j {
                break;
            }
            h = (h + 1) & (slots - 1);
        }
        atomic_add_shared_u32(counts.add(h as usize), 1)
    }
}

/// The count of `j` in the table (0 when absent), after every [`table_add`] of its node (a
/// barrier between).
///
/// # Safety
/// As [`table_add`].
#[inline(always)]
unsafe fn table_get(keys: *const u32, counts: *const u32, slots: u32, j: u32) -> u32 {
    let mut h = table_home(j, slots);
    // SAFETY: caller's contract; h < slots; an empty slot exists, so the probe ends.
    unsafe {
        loop {
            let key = core::ptr::read_volatile(keys.add(h as usize));
            if key == j {
                return core::ptr::read_volatile(counts.add(h as usize));
            }
            if key == GRAPHLET_EMPTY_KEY {
                return 0;
            }
            h = (h + 1) & (slots - 1);
        }
    }
}

/// Empty slots `from, from + step, …` below `slots`.
///
/// # Safety
/// `keys` and `counts` hold `slots` words each.
#[inline(always)]
unsafe fn table_clear(keys: *mut u32, counts: *mut u32, slots: u32, from: u32, step: u32) {
    let mut s = from;
    while s < slots {
        // SAFETY: s < slots.
        unsafe {
            *keys.add(s as usize) = GRAPHLET_EMPTY_KEY;
            *counts.add(s as usize) = 0;
        }
        s += step;
    }
}

/// Pass 1 of every light node (W_i ≤ `GRAPHLET_LIGHT_WALKS`), one warp per node (nodes strided
/// over the grid's warps); heavy nodes are appended to `heavy` for [`GraphletPass1Heavy`].
///
/// # Safety
/// Blocks of `GRAPHLET_BLOCK_THREADS` threads with `GRAPHLET_PASS1_SMEM_BYTES` of dynamic shared
/// memory; `row_start` holds n + 1 ascending entries, `col` row_start[n] < 2³² node ids < n, each
/// row ascending, without i and without repeats, every edge in both rows; `c3` holds row_start[n]
/// entries, `raw` 16n, `d2d4` 2n, `heavy` n; `status` `GRAPHLET_STATUS_WORDS` words, zero except
/// the overflow node.
#[unsafe(export_name = octile_types::entry_name!(GraphletPass1Light))]
#[allow(non_snake_case)]
pub unsafe extern "ptx-kernel" fn GraphletPass1Light(
    p: GraphletParams,
    row_start: *const u32,
    col: *const u32,
    c3: *mut u32,
    raw: *mut i64,
    d2d4: *mut i64,
    heavy: *mut u32,
    status: *mut u32,
) {
    // SAFETY: contract above; every index below is a node < n, an entry of a row, or a slot of
    // the warp's own table.
    unsafe {
        let lane = lane_id();
        let keys = (dynamic_smem() as *mut u32).add((warp_id() * 2 * GRAPHLET_TABLE_SLOTS) as usize);
        let counts = keys.add(GRAPHLET_TABLE_SLOTS as usize);
        table_clear(keys, counts, GRAPHLET_TABLE_SLOTS, lane, 32);
        sync_warp(FULL_MASK);
        let warps = grid_dim_x() * GRAPHLET_BLOCK_WARPS;
        let mut i = block_idx_x() * GRAPHLET_BLOCK_WARPS + warp_id();
        while i < p.n_nodes {
            let (lo, hi) = (*row_start.add(i as usize), *row_start.add(i as usize + 1));
            let mut q = neighbour_degrees(row_start, col, lo + lane, hi, 32);
            q.s_deg = warp_sum_u64(q.s_deg);
            if q.s_deg > GRAPHLET_LIGHT_WALKS as u64 {
                if lane == 0 {
                    *heavy.add(atomic_add_u32(status.add(STATUS_HEAVY), 1) as usize) = i;
                    atomic_max_u32(status.add(STATUS_MAX_WALKS), q.s_deg.min(u32::MAX as u64) as u32);
                }
                i += warps;
                continue;
            }
            let slots = table_slots(q.s_deg as u32);
            // the 2-walks i → k → j, neighbours 32 at a time, their rows dealt over the lanes
            let mut base = lo;
            while base < hi {
                let e = base + lane;
                let (start, len) = if e < hi {
                    let k = *col.add(e as usize);
                    (*row_start.add(k as usize), degree(row_start, k))
                } else {
                    (0, 0)
                };
                warp_flat_runs(start, len, 0, 0, |_, _, at| {
                    let j = *col.add(at as usize);
                    if j != i {
                        q.c4 += table_add(keys, counts, slots, j) as u64;
                    }
                });
                base += 32;
            }
            sync_warp(FULL_MASK);
            // w_ij of the neighbours: c3 of the row's entries
            let mut e = lo + lane;
            while e < hi {
                let j = *col.add(e as usize);
                let w = table_get(keys, counts, slots, j);
                *c3.add(e as usize) = w;
                add_edge(&mut q, w, degree(row_start, j));
                e += 32;
            }
            sync_warp(FULL_MASK);
            table_clear(keys, counts, slots, lane, 32);
            let sums = Partial {
                s_deg: q.s_deg,
                s_t04: warp_sum_u64(q.s_t04),
                c4: warp_sum_u64(q.c4),
                tri2: warp_sum_u64(q.tri2),
                s10: warp_sum_u64(q.s10),
                s14: warp_sum_u64(q.s14),
            };
            sync_warp(FULL_MASK);
            if lane == 0 {
                write_node(i, hi - lo, &sums, raw, d2d4, status);
            }
            i += warps;
        }
    }
}

/// Every 2-walk i → k → j (j ≠ i) of node i (row entries `lo..hi`) over the block: warp w takes
/// neighbours w·32 … w·32 + 31, then every `GRAPHLET_BLOCK_WARPS`·32-th, their rows dealt over its
/// lanes; `visit(j)` per walk.
///
/// # Safety
/// Every thread of the block calls it; the CSR as in [`GraphletPass1Light`].
#[inline(always)]
unsafe fn block_walks(row_start: *const u32, col: *const u32, i: u32, lo: u32, hi: u32, mut visit: impl FnMut(u32)) {
    let (lane, warp) = (lane_id(), warp_id());
    let mut base = lo + warp * 32;
    while base < hi {
        let e = base + lane;
        // SAFETY: e < hi is an entry of i's row, k < n (caller's contract).
        let (start, len) = if e < hi {
            unsafe {
                let k = *col.add(e as usize);
                (*row_start.add(k as usize), degree(row_start, k))
            }
        } else {
            (0, 0)
        };
        // SAFETY: all lanes of the warp call it (the loop bound is warp-uniform); `at` is an entry
        // of k's row.
        unsafe {
            warp_flat_runs(start, len, 0, 0, |_, _, at| {
                let j = *col.add(at as usize);
                if j != i {
                    visit(j);
                }
            })
        };
        base += GRAPHLET_BLOCK_WARPS * 32;
    }
}

/// Pass 1 of the nodes listed in `heavy`, one block per node at a time (dealt by the status
/// word `STATUS_DEAL`): the counts in the block's shared table when the node's 2-walks W_i ≤
/// `GRAPHLET_MEDIUM_WALKS`, else in the block's own `n`-word slice of `workspace`.
///
/// # Safety
/// As [`GraphletPass1Light`], after it (the heavy list, its count and the most 2-walks in
/// `status` are its output; `STATUS_DEAL` zero); blocks of `GRAPHLET_BLOCK_THREADS` threads with
/// `GRAPHLET_HEAVY_SMEM_BYTES` of dynamic shared memory; when the most 2-walks pass
/// `GRAPHLET_MEDIUM_WALKS`, `p.n_workspaces` equals the grid and `workspace` holds
/// n_workspaces·n zero words.
#[unsafe(export_name = octile_types::entry_name!(GraphletPass1Heavy))]
#[allow(non_snake_case)]
pub unsafe extern "ptx-kernel" fn GraphletPass1Heavy(
    p: GraphletParams,
    row_start: *const u32,
    col: *const u32,
    c3: *mut u32,
    raw: *mut i64,
    d2d4: *mut i64,
    heavy: *const u32,
    status: *mut u32,
    workspace: *mut u32,
) {
    // SAFETY: contract above; every index is a node < n, an entry of a row, a slot of the table
    // or of the block's partials.
    unsafe {
        let (tid, lane, warp) = (thread_idx_x(), lane_id(), warp_id());
        let threads = block_dim_x();
        let partials = dynamic_smem() as *mut u64;
        let keys = (dynamic_smem() as *mut u32).add(GRAPHLET_HEAVY_PARTIAL_BYTES as usize / 4);
        let counts = keys.add(GRAPHLET_MEDIUM_SLOTS as usize);
        table_clear(keys, counts, GRAPHLET_MEDIUM_SLOTS, tid, threads);
        let n_heavy = *status.add(STATUS_HEAVY);
        loop {
            // (its barriers also order the table's clearing before the next node's counts)
            let slot = block_broadcast_u32(if tid == 0 { atomic_add_u32(status.add(STATUS_DEAL), 1) } else { 0 });
            if slot >= n_heavy {
                return;
            }
            let i = *heavy.add(slot as usize);
            let (lo, hi) = (*row_start.add(i as usize), *row_start.add(i as usize + 1));
            let mut q = neighbour_degrees(row_start, col, lo + tid, hi, threads);
            // W_i over the block: every thread sums the warps' partials in the same order
            let w_warp = warp_sum_u64(q.s_deg);
            if lane == 0 {
                *partials.add(warp as usize * 8) = w_warp;
            }
            sync_threads();
            let mut walks = 0u64;
            for w in 0..GRAPHLET_BLOCK_WARPS as usize {
                walks += *partials.add(w * 8);
            }
            sync_threads();
            if walks <= GRAPHLET_MEDIUM_WALKS as u64 {
                let slots = table_slots(walks as u32);
                block_walks(row_start, col, i, lo, hi, |j| q.c4 += table_add(keys, counts, slots, j) as u64);
                sync_threads();
                let mut e = lo + tid;
                while e < hi {
                    let j = *col.add(e as usize);
                    let w = table_get(keys, counts, slots, j);
                    *c3.add(e as usize) = w;
                    add_edge(&mut q, w, degree(row_start, j));
                    e += threads;
                }
                sync_threads();
                table_clear(keys, counts, slots, tid, threads);
            } else {
                if p.n_workspaces == 0 {
                    trap();
                }
                let ws = workspace.add(block_idx_x() as usize * p.n_nodes as usize);
                block_walks(row_start, col, i, lo, hi, |j| q.c4 += atomic_add_u32(ws.add(j as usize), 1) as u64);
                sync_threads();
                let mut e = lo + tid;
                while e < hi {
                    let j = *col.add(e as usize);
                    let w = *ws.add(j as usize);
                    *c3.add(e as usize) = w;
                    add_edge(&mut q, w, degree(row_start, j));
                    e += threads;
                }
                sync_threads();
                block_walks(row_start, col, i, lo, hi, |j| *ws.add(j as usize) = 0);
            }
            let sums = [q.s_deg, q.s_t04, q.c4, q.tri2, q.s10, q.s14].map(|v| warp_sum_u64(v));
            if lane == 0 {
                for (k, v) in sums.iter().enumerate() {
                    *partials.add(warp as usize * 8 + k) = *v;
                }
            }
            sync_threads();
            if tid == 0 {
                let mut t = [0u64; 6];
                for w in 0..GRAPHLET_BLOCK_WARPS as usize {
                    for (k, v) in t.iter_mut().enumerate() {
                        *v += *partials.add(w * 8 + k);
                    }
                }
                let sums = Partial { s_deg: t[0], s_t04: t[1], c4: t[2], tri2: t[3], s10: t[4], s14: t[5] };
                write_node(i, hi - lo, &sums, raw, d2d4, status);
            }
            // the partials, the table and the workspace are reused by the next node
            // (block_broadcast_u32 begins with a barrier after thread 0's reads)
        }
    }
}

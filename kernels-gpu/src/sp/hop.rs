//! The histogram form's GPU build: every unit-weight graph's (label, label, hops) counts from a
//! bit-parallel breadth-first search of all its sources at once (layouts: `octile_types::sp::SpHopGraph`,
//! `sp_hop_smem_words`).
//!
//! Level k: every node v ORs its neighbours' reach bitsets into its own; a bit s that turns on is
//! the path s → v of k hops, counted in the cell (label s, label v, k). The search stops when no
//! bit turns on. Then the non-zero cells, read in order, are the graph's sorted list.
use super::compact::compact_in_order;
use crate::intrinsics::{FULL_MASK, atomic_add_shared_u32, block_idx_x, lane_id, sync_threads, thread_idx_x, vote_any};
use crate::smem::dynamic_smem;
use octile_types::sp::{SP_BLOCK_THREADS, SpHistogram, SpHopGraph, SpHopParams, sp_key};

/// One block of `SP_BLOCK_THREADS` per graph.
///
/// # Safety
/// `params` points at one SpHopParams; the grid has `n_graphs` blocks of `SP_BLOCK_THREADS` threads
/// with `sp_hop_smem_words(n_cap, cells_cap)`·4 bytes of dynamic shared memory; every graph has
/// `n_nodes ≤ n_cap`, ℓ²·n ≤ `cells_cap`, its `n_nodes + 1` row starts, its neighbours (local ids
/// `< n_nodes`, no self-loops) and local labels (`< ℓ`) inside the arrays, `ℓ` ascending global
/// labels `< n_labels` at `label_offset`, room for min(ℓ²·n, n(n−1)) entries at `list_offset` in
/// `keys`/`counts`, and its `graph` index inside `runs`; `n_nodes ≤ n_lengths`.
#[unsafe(export_name = octile_types::entry_name!(SpHopHistograms))]
#[allow(non_snake_case)]
pub unsafe extern "ptx-kernel" fn SpHopHistograms(
    params: *const SpHopParams,
    graphs: *const SpHopGraph,
    adj_start: *const u32,
    adj: *const u32,
    local_label: *const u32,
    label_global: *const u32,
    keys: *mut u64,
    counts: *mut u32,
    runs: *mut SpHistogram,
) {
    // SAFETY: contract above; every index below is inside the graph's own ranges.
    unsafe {
        let p = &*params;
        if block_idx_x() >= p.n_graphs {
            return;
        }
        let g = *graphs.add(block_idx_x() as usize);
        let (n, l) = (g.n_nodes as usize, g.n_labels as usize);
        let (w, w_cap) = (n.div_ceil(32), p.n_cap.div_ceil(32) as usize);
        let smem = dynamic_smem() as *mut u32;
        let (mut reach, mut next) = (smem, smem.add(p.n_cap as usize * w_cap));
        let cells = smem.add(2 * p.n_cap as usize * w_cap);
        let totals = cells.add(p.cells_cap as usize);
        let flags = totals.add(32);
        let (tid, threads) = (thread_idx_x() as usize, SP_BLOCK_THREADS as usize);
        let n_cells = l * l * n;
        let base = g.node_offset as usize;
        // every source has reached itself; no paths counted
        let mut k = tid;
        while k < n * w {
            let (v, word) = (k / w, k % w);
            *reach.add(k) = if v / 32 == word { 1u32 << (v % 32) } else { 0 };
            k += threads;
        }
        k = tid;
        while k < n_cells {
            *cells.add(k) = 0;
            k += threads;
        }
        if tid < 3 {
            *flags.add(tid) = 0;
        }
        sync_threads();
        // level `hops` writes flag hops % 3 and resets the one level hops + 1 writes; that flag
        // was last read in level hops − 2, before the barrier of level hops − 1: one barrier a level
        let mut hops = 1usize;
        loop {
            if tid == 0 {
                *flags.add((hops + 1) % 3) = 0;
            }
            let mut any = false;
            let mut k = tid;
            while k < n * w {
                let (v, word) = (k / w, k % w);
                let old = *reach.add(k);
                let mut acc = old;
                for e in *adj_start.add(base + v)..*adj_start.add(base + v + 1) {
                    acc |= *reach.add(*adj.add(e as usize) as usize * w + word);
                }
                *next.add(k) = acc;
                let mut new = acc & !old;
                any |= new != 0;
                let lv = *local_label.add(base + v) as usize;
                while new != 0 {
                    let s = word * 32 + new.trailing_zeros() as usize;
                    atomic_add_shared_u32(cells.add((*local_label.add(base + s) as usize * l + lv) * n + hops), 1);
                    new &= new - 1;
                }
                k += threads;
            }
            if vote_any(FULL_MASK, any) && lane_id() == 0 {
                atomic_add_shared_u32(flags.add(hops % 3), 1);
            }
            sync_threads();
            if *flags.add(hops % 3) == 0 {
                break;
            }
            core::mem::swap(&mut reach, &mut next);
            hops += 1;
        }
        // the non-zero cells in cell order (keys ascending)
        let lo = g.label_offset as usize;
        let written = compact_in_order(
            n_cells,
            totals,
            |c| *cells.add(c) != 0,
            |c, rank| {
                let at = g.list_offset as usize + rank as usize;
                let (a, b, d) = (c / (l * n), c / n % l, c % n);
                *keys.add(at) = sp_key(*label_global.add(lo + a) as u64, *label_global.add(lo + b) as u64, d as u64, p.n_labels as u64, p.n_lengths as u64);
                *counts.add(at) = *cells.add(c);
            },
        );
        if tid == 0 {
            *runs.add(g.graph as usize) = SpHistogram { offset: g.list_offset, len: written };
        }
    }
}

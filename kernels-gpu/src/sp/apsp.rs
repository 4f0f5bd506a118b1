//! All-pairs shortest paths of small graphs on the GPU, for the general form: Floyd–Warshall on
//! the n × n f64 lengths in shared memory, one block per graph, then the paths (u ≠ v, finite) in
//! (u, v) order as SP_S / SP_E / SP_W runs (layouts: `octile_types::sp::SpApspGraph`).
//!
//! Iteration k updates every d[i][j] with d[i][k] + d[k][j] in place: row k and column k do not
//! change in iteration k (d[k][k] = 0, lengths ≥ 0), so the block needs one barrier per k.
use super::compact::compact_in_order;
use crate::intrinsics::{block_idx_x, sync_threads, thread_idx_x};
use crate::smem::dynamic_smem;
use octile_types::sp::{SP_BLOCK_THREADS, SpApspGraph, SpApspParams};

/// One block of `SP_BLOCK_THREADS` per graph.
///
/// # Safety
/// `params` points at one SpApspParams; the grid has `n_graphs` blocks of `SP_BLOCK_THREADS`
/// threads with `sp_apsp_smem_bytes(n_cap)` bytes of dynamic shared memory; every graph has
/// `n_nodes ≤ n_cap`, its `n_nodes + 1` row starts inside `adj_start`, its neighbours (local ids
/// `< n_nodes`, no self-loops) and their lengths (finite, > 0) inside `adj`/`adj_w`, room for
/// `n_paths` paths from `path_offset` in `sp_s`/`sp_e`/`sp_w`, and its `graph` slot in `found`.
#[unsafe(export_name = octile_types::entry_name!(SpFloydWarshall))]
#[allow(non_snake_case)]
pub unsafe extern "ptx-kernel" fn SpFloydWarshall(
    params: *const SpApspParams,
    graphs: *const SpApspGraph,
    adj_start: *const u32,
    adj: *const u32,
    adj_w: *const f64,
    sp_s: *mut u32,
    sp_e: *mut u32,
    sp_w: *mut f64,
    found: *mut u32,
) {
    // SAFETY: contract above; every index below is inside the graph's own ranges.
    unsafe {
        let p = &*params;
        if block_idx_x() >= p.n_graphs {
            return;
        }
        let g = *graphs.add(block_idx_x() as usize);
        let n = g.n_nodes as usize;
        let dist = dynamic_smem() as *mut f64;
        let totals = dist.add(p.n_cap as usize * p.n_cap as usize) as *mut u32;
        let (tid, threads) = (thread_idx_x() as usize, SP_BLOCK_THREADS as usize);
        let mut c = tid;
        while c < n * n {
            *dist.add(c) = if c / n == c % n { 0.0 } else { f64::INFINITY };
            c += threads;
        }
        sync_threads();
        // the edges: row v is one thread's (the rows list both directions of every edge)
        let base = g.adj_node_offset as usize;
        let mut v = tid;
        while v < n {
            for e in *adj_start.add(base + v) as usize..*adj_start.add(base + v + 1) as usize {
                let cell = dist.add(v * n + *adj.add(e) as usize);
                let w = *adj_w.add(e);
                if w < *cell {
                    *cell = w;
                }
            }
            v += threads;
        }
        sync_threads();
        for k in 0..n {
            let mut c = tid;
            while c < n * n {
                let via = *dist.add(c / n * n + k) + *dist.add(k * n + c % n);
                if via < *dist.add(c) {
                    *dist.add(c) = via;
                }
                c += threads;
            }
            sync_threads();
        }
        // the paths in (u, v) order
        let po = g.path_offset as usize;
        let written = compact_in_order(
            n * n,
            totals,
            |c| c / n != c % n && *dist.add(c) < f64::INFINITY,
            |c, rank| {
                if rank < g.n_paths {
                    *sp_s.add(po + rank as usize) = (c / n) as u32;
                    *sp_e.add(po + rank as usize) = (c % n) as u32;
                    *sp_w.add(po + rank as usize) = *dist.add(c);
                }
            },
        );
        if tid == 0 {
            *found.add(g.graph as usize) = written;
        }
    }
}

//! The shortest-path kernel on the GPU (layouts and the *why*: `octile_types::sp`): the general
//! form and the histogram dot products of pair lists here, the histogram build ([`hop`]) and the
//! histogram Gram matrix ([`gram`]) and the general form's shortest paths ([`apsp`]) beside.
//!
//! Both entries deal graph pairs from a global counter to persistent teams (blocks or warps), like
//! the marginalized solver, so pairs of very different sizes balance themselves.
pub mod apsp;
pub mod compact;
pub mod gram;
pub mod hop;

use crate::intrinsics::{FULL_MASK, atomic_add_u32, lane_id, shfl_idx_u32, sync_threads, thread_idx_x};
use crate::reduce::{block_broadcast_u32, block_sum2, warp_sum_u64};
use crate::smem::dynamic_smem;
use octile_types::PairJob;
use octile_types::sp::{SP_BLOCK_THREADS, SP_TABLE_ENTRIES, SpGraph, SpHistogram, SpParams};

/// The general form: one block of `SP_BLOCK_THREADS` per pair at a time. The block first fills
/// the n × n′ table of κv in shared memory (when it fits `SP_TABLE_ENTRIES`, else κv is evaluated
/// per use), then each thread takes paths p of G (strided) against every path p′ of G′ — all
/// threads read the same p′, one broadcast load — and the block sums in f64.
///
/// # Safety
/// `params` points at one SpParams in global memory; launched with `SP_BLOCK_THREADS` threads and
/// `SP_TABLE_ENTRIES`·8 bytes of dynamic shared memory; every job's graphs exist and their path and
/// node runs lie inside `sp_s`/`sp_e`/`sp_w` and `nodes`; `out` holds `n_jobs` values; `*counter == 0`.
#[unsafe(export_name = octile_types::entry_name!(SpGeneralF64))]
#[allow(non_snake_case)]
pub unsafe extern "ptx-kernel" fn SpGeneralF64(
    params: *const SpParams,
    graphs: *const SpGraph,
    sp_s: *const u32,
    sp_e: *const u32,
    sp_w: *const f64,
    nodes: *const f64,
    jobs: *const PairJob,
    out: *mut f64,
    counter: *mut u32,
) {
    // SAFETY: contract above; every index below is inside the runs the host checked.
    unsafe {
        let p = &*params;
        let stride = p.node_stride as usize;
        let table = dynamic_smem() as *mut f64;
        let tid = thread_idx_x() as usize;
        let threads = SP_BLOCK_THREADS as usize;
        loop {
            let j = block_broadcast_u32(if tid == 0 { atomic_add_u32(counter, 1) } else { 0 });
            if j >= p.n_jobs {
                return;
            }
            let job = *jobs.add(j as usize);
            let (g1, g2) = (*graphs.add(job.g1 as usize), *graphs.add(job.g2 as usize));
            let (n1, n2) = (g1.n_nodes as usize, g2.n_nodes as usize);
            let rows1 = nodes.add(g1.node_offset as usize * stride);
            let rows2 = nodes.add(g2.node_offset as usize * stride);
            let kv = |a: usize, b: usize| {
                p.node_kernel
                    .eval::<f64>(core::slice::from_raw_parts(rows1.add(a * stride), stride), core::slice::from_raw_parts(rows2.add(b * stride), stride))
            };
            let tabled = n1 * n2 <= SP_TABLE_ENTRIES;
            if tabled {
                let mut k = tid;
                while k < n1 * n2 {
                    *table.add(k) = kv(k / n2, k % n2);
                    k += threads;
                }
            }
            sync_threads();
            let (o1, o2) = (g1.path_offset as usize, g2.path_offset as usize);
            let mut total = 0.0f64;
            let mut a = tid;
            while a < g1.n_paths as usize {
                let (s, e, w) = (*sp_s.add(o1 + a) as usize, *sp_e.add(o1 + a) as usize, *sp_w.add(o1 + a));
                let mut acc = 0.0f64;
                for b in o2..o2 + g2.n_paths as usize {
                    let (s2, e2) = (*sp_s.add(b) as usize, *sp_e.add(b) as usize);
                    let kl = p.length.eval::<f64>(w, *sp_w.add(b));
                    acc += if tabled { *table.add(s * n2 + s2) * kl * *table.add(e * n2 + e2) } else { kv(s, s2) * kl * kv(e, e2) };
                }
                total += acc;
                a += threads;
            }
            let (sum, _) = block_sum2(total, 0.0);
            if tid == 0 {
                *out.add(j as usize) = sum;
            }
            // the next pair's table overwrites this one (block_sum2 ends with a barrier)
        }
    }
}

/// The histogram form: one warp per pair at a time. Lane l takes entries l, l + 32, … of G's
/// sorted (key, count) run and binary-searches each key in G′'s run; the count products are summed
/// exactly in u64.
///
/// # Safety
/// `params` points at one SpParams in global memory (only `n_jobs` is read); every job's runs lie
/// inside `keys`/`counts`; `out` holds `n_jobs` values; `*counter == 0`.
#[unsafe(export_name = octile_types::entry_name!(SpHistogramDot))]
#[allow(non_snake_case)]
pub unsafe extern "ptx-kernel" fn SpHistogramDot(
    params: *const SpParams,
    runs: *const SpHistogram,
    keys: *const u64,
    counts: *const u32,
    jobs: *const PairJob,
    out: *mut f64,
    counter: *mut u32,
) {
    // SAFETY: contract above.
    unsafe {
        let n_jobs = (*params).n_jobs;
        let lane = lane_id();
        loop {
            let v = if lane == 0 { atomic_add_u32(counter, 1) } else { 0 };
            let j = shfl_idx_u32(FULL_MASK, v, 0);
            if j >= n_jobs {
                return;
            }
            let job = *jobs.add(j as usize);
            let (ra, rb) = (*runs.add(job.g1 as usize), *runs.add(job.g2 as usize));
            let (ia, ca) = (keys.add(ra.offset as usize), counts.add(ra.offset as usize));
            let (ib, cb) = (keys.add(rb.offset as usize), counts.add(rb.offset as usize));
            let mut acc = 0u64;
            let mut x = lane as usize;
            while x < ra.len as usize {
                let key = *ia.add(x);
                let (mut lo, mut hi) = (0usize, rb.len as usize);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if *ib.add(mid) < key { lo = mid + 1 } else { hi = mid }
                }
                if lo < rb.len as usize && *ib.add(lo) == key {
                    acc += *ca.add(x) as u64 * *cb.add(lo) as u64;
                }
                x += 32;
            }
            let acc = warp_sum_u64(acc);
            if lane == 0 {
                *out.add(j as usize) = acc as f64;
            }
        }
    }
}

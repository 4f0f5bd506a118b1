//! The graphlet transform on the GPU: the CSR goes up once, pass 1 (light nodes by warps, then
//! the heavy ones by blocks) and pass 2 run as three launches, the raw and net rows come back
//! (kernels: `octile_kernels::graphlets`; layouts and the *why*: `octile_types::graphlets::launch`).
//! Every `unsafe` launch is behind this module's checks of sizes and of the [`Adjacency`]
//! invariants the kernels rely on.
use super::adjacency::Adjacency;
use super::frequencies::{Frequencies, Keep, Phases, overflow};
use crate::error::{OctileError, Result};
use crate::gpu::GpuDevice;
use crate::gpu::staging::Staging;
use cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits, sys::CUevent_flags};
use octile_types::Kernel;
use octile_types::graphlets::N_ORBITS;
use octile_types::graphlets::launch::{
    GRAPHLET_BLOCK_THREADS, GRAPHLET_BLOCK_WARPS, GRAPHLET_HEAVY_SMEM_BYTES, GRAPHLET_MEDIUM_WALKS, GRAPHLET_PASS1_SMEM_BYTES, GRAPHLET_STATUS_WORDS,
    GraphletParams, STATUS_HEAVY, STATUS_MAX_WALKS, STATUS_OVERFLOW, STATUS_OVERFLOW_NODE, STATUS_WIDE,
};
use rayon::prelude::*;
use std::sync::OnceLock;
use std::time::Instant;

/// Device bytes of the transform of `n` nodes and `entries` CSR entries, heavy workspaces aside.
pub fn device_bytes(n: usize, entries: usize) -> u128 {
    let n = n as u128;
    (n + 1) * 4 + entries as u128 * 8 + n * (2 * N_ORBITS as u128 * 8 + 16 + 4) + 64
}

/// The frequencies `keep` names of every node of `a` on `dev` (only those are copied back), and
/// where the time went: ("prepare", "upload", "kernels", "host_alloc", "host_pages", "download")
/// in seconds (the kernels by CUDA events, the rest by the host clock; "host_alloc": the other
/// cores' mapping of the result pages, beside the GPU; "host_pages": the wait for it after the
/// kernels).
pub fn transform(dev: &GpuDevice, a: &Adjacency, keep: Keep) -> Result<(Frequencies, Phases)> {
    let n = a.n_nodes();
    let entries = a.col().len();
    // the kernels index nodes and entries in u32 and keep u32::MAX as the hash tables' empty key
    if n >= u32::MAX as usize || entries > u32::MAX as usize {
        return Err(OctileError::InvalidRequest(format!(
            "the GPU graphlet transform takes fewer than 2^32 − 1 nodes and at most 2^32 − 1 adjacency entries; this graph has {n} nodes and {entries} entries (use the CPU backend)"
        )));
    }
    if n == 0 {
        return Ok((Frequencies::from_flat(0, Vec::new(), Vec::new()), Vec::new()));
    }
    crate::memory::check_gpu(
        device_bytes(n, entries),
        dev.free_mem_bytes(),
        || format!("the graphlet transform of {n} nodes and {} edges on the GPU", entries / 2),
        "use the CPU backend",
    )?;
    // the host's result vectors are allocated and their pages mapped by the other cores while the
    // GPU works (a fresh page costs a fault at its first write: ~20 ms per 512 MB otherwise)
    let len = n * N_ORBITS;
    let (keep_raw, keep_net) = (keep != Keep::Net, keep != Keep::Raw);
    // the u32 row starts before the other cores start mapping pages (on the same thread pool, this
    // small job would queue behind theirs: 26 ms instead of 1 ms on delaunay_n22's 4 M rows)
    let t = Instant::now();
    let row_start: Vec<u32> = a.row_start().par_iter().map(|&x| x as u32).collect();
    let prepare = t.elapsed().as_secs_f64();
    std::thread::scope(|scope| {
        let host = scope.spawn(move || {
            let t = Instant::now();
            let v = (if keep_raw { touched(len) } else { Vec::new() }, if keep_net { touched(len) } else { Vec::new() });
            (v, t.elapsed().as_secs_f64())
        });
        let on_gpu = kernels(dev, &row_start, a.col(), n, entries);
        let t = Instant::now();
        let ((mut raw_host, mut net_host), host_alloc) =
            host.join().map_err(|_| OctileError::Internal("allocating the graphlet counts on the host panicked".into()))?;
        let host_pages = t.elapsed().as_secs_f64();
        let (raw, net, gpu_phases) = on_gpu?;
        let mut phases = vec![("prepare", prepare)];
        phases.extend(gpu_phases);
        let t = Instant::now();
        if keep_raw {
            download(dev, &raw, &mut raw_host)?;
        }
        if keep_net {
            download(dev, &net, &mut net_host)?;
        }
        phases.extend([("host_alloc", host_alloc), ("host_pages", host_pages), ("download", t.elapsed().as_secs_f64())]);
        Ok((Frequencies::from_flat(n, raw_host, net_host), phases))
    })
}

/// The three launches on the graph's CSR (`row_start` as u32, `col`): the raw and net rows on the
/// device, and the seconds of "upload" (the CSR's copy and the allocations) and "kernels".
fn kernels(dev: &GpuDevice, row_start: &[u32], col: &[u32], n: usize, entries: usize) -> Result<(CudaSlice<i64>, CudaSlice<i64>, Phases)> {
    let s = &dev.stream;
    let t = Instant::now();
    let d_row_start = s.clone_htod(row_start)?;
    let d_col = if entries == 0 { s.alloc_zeros::<u32>(1)? } else { s.clone_htod(col)? };
    let mut c3 = s.alloc_zeros::<u32>(entries.max(1))?;
    let mut raw = s.alloc_zeros::<i64>(n * N_ORBITS)?;
    let mut net = s.alloc_zeros::<i64>(n * N_ORBITS)?;
    let mut d2d4 = s.alloc_zeros::<i64>(2 * n)?;
    let mut heavy = s.alloc_zeros::<u32>(n)?;
    let mut status = s.clone_htod(&[0u32, 0, u32::MAX, 0, 0, 0, 0, 0][..GRAPHLET_STATUS_WORDS])?;
    let start = s.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    start.synchronize()?;
    let upload = t.elapsed().as_secs_f64();
    let p = GraphletParams { n_nodes: n as u32, n_workspaces: 0 };
    let grid = (n.div_ceil(GRAPHLET_BLOCK_WARPS as usize) as u32).min(dev.sm_count * 32);

    let f = dev.function_with_smem(Kernel::GraphletPass1Light, GRAPHLET_PASS1_SMEM_BYTES as usize)?;
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (GRAPHLET_BLOCK_THREADS, 1, 1), shared_mem_bytes: GRAPHLET_PASS1_SMEM_BYTES };
    let mut b = s.launch_builder(&f);
    b.arg(&p).arg(&d_row_start).arg(&d_col).arg(&mut c3).arg(&mut raw).arg(&mut d2d4).arg(&mut heavy).arg(&mut status);
    // SAFETY: graphlet_pass1_light's contract: blocks of GRAPHLET_BLOCK_THREADS with
    // GRAPHLET_PASS1_SMEM_BYTES of dynamic shared memory; row_start holds n + 1 ascending entries
    // (Adjacency's invariant, converted losslessly: entries < 2^32 checked above), col its
    // entries, node ids < n, rows ascending without self-loops or repeats and symmetric
    // (Adjacency's invariant); c3 holds the entries, raw 16n, d2d4 2n, heavy n values; status is
    // zero but the overflow node; the buffers outlive the launch (the status download below
    // synchronizes the stream).
    unsafe { b.launch(cfg) }?;
    let st = s.clone_dtoh(&status)?;
    let n_heavy = st[STATUS_HEAVY] as usize;
    if n_heavy > n {
        return Err(OctileError::Internal(format!("graphlet pass 1 listed {n_heavy} heavy nodes of {n}")));
    }
    if n_heavy > 0 {
        // blocks with a shared table each; a dense n-word workspace per block only when a node's
        // 2-walks pass the table (as many blocks as such workspaces fit a quarter of free memory)
        let mut blocks = n_heavy.min(dev.sm_count as usize * 3);
        let dense = st[STATUS_MAX_WALKS] > GRAPHLET_MEDIUM_WALKS;
        if dense {
            blocks = blocks.min((dev.free_mem_bytes() / 4 / (4 * n)).max(1));
            crate::memory::check_gpu(
                (blocks * n * 4) as u128,
                dev.free_mem_bytes(),
                || format!("the heavy nodes' workspace of the graphlet transform of {n} nodes"),
                "use the CPU backend",
            )?;
        }
        let mut workspace = s.alloc_zeros::<u32>(if dense { blocks * n } else { 1 })?;
        let p = GraphletParams { n_nodes: n as u32, n_workspaces: if dense { blocks as u32 } else { 0 } };
        let f = dev.function_with_smem(Kernel::GraphletPass1Heavy, GRAPHLET_HEAVY_SMEM_BYTES as usize)?;
        let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (GRAPHLET_BLOCK_THREADS, 1, 1), shared_mem_bytes: GRAPHLET_HEAVY_SMEM_BYTES };
        let mut b = s.launch_builder(&f);
        b.arg(&p).arg(&d_row_start).arg(&d_col).arg(&mut c3).arg(&mut raw).arg(&mut d2d4).arg(&heavy).arg(&mut status).arg(&mut workspace);
        // SAFETY: graphlet_pass1_heavy's contract: after the light pass on the same arrays (same
        // stream), its heavy list and count (≤ n, checked above), the most 2-walks in status and
        // the dealing counter still zero; blocks of GRAPHLET_BLOCK_THREADS with
        // GRAPHLET_HEAVY_SMEM_BYTES of dynamic shared memory; when a node's 2-walks pass
        // GRAPHLET_MEDIUM_WALKS, n_workspaces = the grid and the workspace holds blocks·n zero
        // words; the buffers outlive the launch (synchronized by the downloads below).
        unsafe { b.launch(cfg) }?;
    }
    let f = dev.function(Kernel::GraphletPass2)?;
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (GRAPHLET_BLOCK_THREADS, 1, 1), shared_mem_bytes: 0 };
    let mut b = s.launch_builder(&f);
    b.arg(&p).arg(&d_row_start).arg(&d_col).arg(&c3).arg(&d2d4).arg(&mut raw).arg(&mut net).arg(&mut status);
    // SAFETY: graphlet_pass2's contract: after both pass-1 launches on the same stream (c3, d2d4
    // and the raw rows complete; an overflow there is reported below and the result dropped);
    // the CSR as above; raw and net hold 16n values, d2d4 2n, c3 the entries; the buffers
    // outlive the launch (synchronized by the downloads below).
    unsafe { b.launch(cfg) }?;
    let end = s.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    let st = s.clone_dtoh(&status)?;
    let kernel_seconds = start.elapsed_ms(&end)? as f64 / 1e3;
    if st[STATUS_OVERFLOW] != 0 {
        return Err(overflow(st[STATUS_OVERFLOW_NODE] as usize));
    }
    Ok((raw, net, vec![("upload", upload), ("kernels", kernel_seconds)]))
}

/// `len` zeros whose pages are mapped: one write per 4 KiB page, by all cores (`black_box`: the
/// compiler may not drop a store of zero into memory it knows is zeroed).
fn touched(len: usize) -> Vec<i64> {
    let mut v = vec![0i64; len];
    v.par_chunks_mut(1 << 16).for_each(|c| {
        for k in (0..c.len()).step_by(512) {
            c[k] = std::hint::black_box(0);
        }
    });
    v
}

/// Values per pinned piece of the download: 4 Mi values (two pieces are pinned per value type).
const STAGING_PIECE: usize = 1 << 22;

/// The process's pinned buffers for the counts, narrowed and not (pinned once, at the first large
/// transform that needs them: pinning is slow, and every later transform reuses them).
static STAGING_I32: OnceLock<Staging<i32>> = OnceLock::new();
static STAGING_I64: OnceLock<Staging<i64>> = OnceLock::new();

/// The pinned buffers of `cell`, pinned on first use.
fn staging<T: DeviceRepr + ValidAsZeroBits + Copy + Send + Sync>(cell: &'static OnceLock<Staging<T>>, dev: &GpuDevice) -> Result<&'static Staging<T>> {
    match cell.get() {
        Some(st) => Ok(st),
        None => {
            let st = Staging::new(dev, STAGING_PIECE)?;
            Ok(cell.get_or_init(|| st))
        }
    }
}

/// An n × 16 result into `out` (as long): narrowed to `i32` on the device when every count fits
/// (half the bytes over the bus; widened back while copied out), through the pinned buffers when
/// it spans more than one piece (a copy into pageable memory runs at a fraction of the bus speed).
fn download(dev: &GpuDevice, v: &CudaSlice<i64>, out: &mut [i64]) -> Result<()> {
    let s = &dev.stream;
    let n = out.len() / N_ORBITS;
    if v.len() != out.len() || n * N_ORBITS != v.len() || n == 0 || n >= u32::MAX as usize {
        return Err(OctileError::LaunchContract {
            launch: Kernel::GraphletNarrow.name().into(),
            what: format!("download of {} counts into {}", v.len(), out.len()),
        });
    }
    let mut narrow = s.alloc_zeros::<i32>(v.len())?;
    let mut status = s.alloc_zeros::<u32>(GRAPHLET_STATUS_WORDS)?;
    let f = dev.function(Kernel::GraphletNarrow)?;
    let grid = (v.len().div_ceil(GRAPHLET_BLOCK_THREADS as usize) as u32).min(dev.sm_count * 16);
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (GRAPHLET_BLOCK_THREADS, 1, 1), shared_mem_bytes: 0 };
    let p = GraphletParams { n_nodes: n as u32, n_workspaces: 0 };
    let mut b = s.launch_builder(&f);
    b.arg(&p).arg(v).arg(&mut narrow).arg(&mut status);
    // SAFETY: graphlet_narrow's contract: src and dst hold 16n values (checked above: v has
    // 16n, narrow was allocated as long), status the status words; the buffers outlive the launch
    // (the status download below synchronizes the stream).
    unsafe { b.launch(cfg) }?;
    let wide = s.clone_dtoh(&status)?[STATUS_WIDE] != 0;
    let widen = |from: &[i32], to: &mut [i64]| to.iter_mut().zip(from).for_each(|(t, &f)| *t = f as i64);
    match (wide, v.len() <= STAGING_PIECE) {
        (false, true) => {
            let small = s.clone_dtoh(&narrow)?;
            widen(&small, out);
            Ok(())
        }
        (false, false) => staging(&STAGING_I32, dev)?.download_with(s, &narrow.as_view(), out, widen),
        (true, true) => {
            s.memcpy_dtoh(v, out)?;
            Ok(s.synchronize()?)
        }
        (true, false) => staging(&STAGING_I64, dev)?.download(s, &v.as_view(), out),
    }
}

//! The histogram form's whole Gram matrix on the GPU (entries `octile_kernels::sp::{hop, gram}`,
//! layouts `octile_types::sp`): the histograms of unit-weight graphs up to `SP_HOP_MAX_NODES`
//! nodes are built on the device (all-sources BFS); the others (larger, or weighted sets) on the
//! host; then every row × column dot product, written row-major and copied straight into the
//! result, a chunk of rows at a time (progress, cancellation).
//!
//! ```text
//! keys/counts: [ host-built lists, packed ][ GPU graph 0: room for min(ℓ²n, n(n−1)) ][ GPU graph 1 … ]
//! runs[g] = { offset, len }: host runs uploaded, GPU runs written by the build
//! ```
use super::csr::Csr;
use super::device::{check, upload};
use super::histogram::{Histograms, Labels, Lengths, check_keys};
use super::paths::PathSet;
use super::trace::trace;
use crate::error::{OctileError, Result};
use crate::gpu::GpuDevice;
use crate::gpu::staging::Staging;
use crate::gram::control::RunControl;
use crate::graph::Graph;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use octile_types::Kernel;
use octile_types::sp::{
    SP_BLOCK_THREADS, SP_GRAM_SMEM_ENTRIES, SP_HOP_MAX_CELLS, SP_HOP_MAX_NODES, SpGramParams, SpHistogram, SpHopGraph, SpHopParams, sp_hop_smem_words,
};
use rayon::prelude::*;
use std::ops::Range;

/// Bytes of one chunk of result rows on the device.
const CHUNK_BYTES: usize = 256 << 20;
/// Values of a chunk from which the download goes through the pinned staging buffers.
const STAGED_MIN: usize = 1 << 20;
/// Values per pinned staging buffer (8 MB).
pub const STAGING_PIECE: usize = 1 << 20;

/// The histograms on the device: `runs` (one per graph), `keys`, `counts`, and how many graphs
/// the device built.
pub struct DeviceHistograms {
    runs: CudaSlice<SpHistogram>,
    keys: CudaSlice<u64>,
    counts: CudaSlice<u32>,
    /// Every run, as on the device after the build.
    pub host_runs: Vec<SpHistogram>,
    /// Graphs whose histogram the device built.
    pub built_on_gpu: usize,
}

/// The GPU build's inputs for the graphs it takes (`which`): descriptors and the arrays they index.
struct HopInput {
    descs: Vec<SpHopGraph>,
    adj_start: Vec<u32>,
    adj: Vec<u32>,
    local_label: Vec<u32>,
    label_global: Vec<u32>,
    list_end: usize,
}

fn hop_input(graphs: &[Graph], labels: &Labels, which: &[usize], list_begin: usize) -> HopInput {
    let csr = Csr::build(graphs, which, false);
    let (mut descs, mut label, mut list) = (Vec::with_capacity(which.len()), 0usize, list_begin);
    for (&g, &node) in which.iter().zip(&csr.node_offset) {
        let (n, l) = (graphs[g].n_nodes(), labels.own[g].len());
        descs.push(SpHopGraph {
            graph: g as u32,
            node_offset: node,
            n_nodes: n as u32,
            label_offset: label as u32,
            n_labels: l as u32,
            list_offset: list as u32,
        });
        (label, list) = (label + l, list + (l * l * n).min(n * n.saturating_sub(1)));
    }
    let local_label = which.iter().flat_map(|&g| labels.local_of_graph(g).iter().copied()).collect();
    HopInput {
        descs,
        adj_start: csr.start,
        adj: csr.adj,
        local_label,
        label_global: which.iter().flat_map(|&g| labels.own[g].iter().copied()).collect(),
        list_end: list,
    }
}

/// Every descriptor's ranges inside the arrays, neighbours and labels inside the graph, the global
/// labels ascending: `sp_hop_histograms`' contract.
fn check_hop(h: &HopInput, n_labels: u32, n_lengths: u64, n_graphs: usize, n_cap: u32, cells_cap: u32) -> Result<()> {
    let nodes = h.local_label.len();
    check(h.adj_start.len() == nodes + 1 && h.adj_start[nodes] as usize == h.adj.len(), || "row starts do not cover the neighbours".into())?;
    let bad = h.descs.par_iter().find_map_any(|d| {
        let (o, n, l) = (d.node_offset as usize, d.n_nodes as usize, d.n_labels as usize);
        let ok = n <= n_cap as usize
            && (l * l * n) <= cells_cap as usize
            && n as u64 <= n_lengths
            && o + n <= nodes
            && (d.graph as usize) < n_graphs
            && d.label_offset as usize + l <= h.label_global.len()
            && h.label_global[d.label_offset as usize..d.label_offset as usize + l].windows(2).all(|w| w[0] < w[1])
            && h.label_global[d.label_offset as usize..d.label_offset as usize + l].iter().all(|&x| x < n_labels)
            && h.local_label[o..o + n].iter().all(|&x| (x as usize) < l)
            && (o..o + n).all(|v| {
                h.adj_start[v] <= h.adj_start[v + 1]
                    && h.adj[h.adj_start[v] as usize..h.adj_start[v + 1] as usize].iter().all(|&u| (u as usize) < n && u as usize != v - o)
            });
        (!ok).then(|| format!("graph {} breaks the build's layout", d.graph))
    });
    bad.map_or(Ok(()), |m| check(false, || m))
}

/// The histograms of `graphs` (node labels on `features`) on the device.
pub fn build(dev: &GpuDevice, graphs: &[Graph], features: &[String]) -> Result<DeviceHistograms> {
    let s = &dev.stream;
    let t = std::time::Instant::now();
    let at = |what: &str| trace(format_args!("  build: {what} at {:.3} ms", t.elapsed().as_secs_f64() * 1e3));
    let labels = Labels::build(graphs, features)?;
    at("labels");
    let Some(lengths) = Lengths::hops(graphs) else {
        // weighted lengths: every histogram on the host
        let h = Histograms::on_host(graphs, &labels)?;
        return Ok(DeviceHistograms {
            runs: upload(s, &h.runs, SpHistogram::default())?,
            keys: upload(s, &h.keys, 0)?,
            counts: upload(s, &h.counts, 0)?,
            host_runs: h.runs,
            built_on_gpu: 0,
        });
    };
    check_keys(&labels, &lengths)?;
    let on_gpu = |g: usize| {
        let (n, l) = (graphs[g].n_nodes(), labels.own[g].len());
        n >= 2 && n <= SP_HOP_MAX_NODES as usize && l * l * n <= SP_HOP_MAX_CELLS as usize
    };
    let (gpu, host): (Vec<usize>, Vec<usize>) = (0..graphs.len()).partition(|&g| on_gpu(g));
    let h = Histograms::from_paths(&PathSet::build_some(graphs, &host, &[])?, &host, &labels, &lengths)?;
    let mut runs = vec![SpHistogram::default(); graphs.len()];
    for (k, &g) in host.iter().enumerate() {
        runs[g] = h.runs[k];
    }
    at("host lists");
    let input = hop_input(graphs, &labels, &gpu, h.keys.len());
    at("device inputs");
    if input.list_end > u32::MAX as usize {
        return Err(OctileError::InvalidRequest(format!("{} histogram entries in all: more than 2^32; split the set", input.list_end)));
    }
    let n_cap = input.descs.iter().map(|d| d.n_nodes).max().unwrap_or(1);
    let cells_cap = input.descs.iter().map(|d| d.n_labels * d.n_labels * d.n_nodes).max().unwrap_or(1);
    check_hop(&input, labels.count, lengths.count(), graphs.len(), n_cap, cells_cap)?;
    let mut keys = s.alloc_zeros::<u64>(input.list_end.max(1))?;
    let mut counts = s.alloc_zeros::<u32>(input.list_end.max(1))?;
    if !h.keys.is_empty() {
        s.memcpy_htod(&h.keys, &mut keys.slice_mut(..h.keys.len()))?;
        s.memcpy_htod(&h.counts, &mut counts.slice_mut(..h.counts.len()))?;
    }
    let mut dev_runs = upload(s, &runs, SpHistogram::default())?;
    if !input.descs.is_empty() {
        let params = SpHopParams { n_graphs: input.descs.len() as u32, n_labels: labels.count, n_lengths: lengths.count() as u32, n_cap, cells_cap, _pad: 0 };
        // one upload: [ params ][ descriptors ][ adj_start ][ adj ][ local_label ][ label_global ]
        // (u32 words; the two structs are 6 words each, 4-aligned)
        let words = |d: &SpHopGraph| [d.graph, d.node_offset, d.n_nodes, d.label_offset, d.n_labels, d.list_offset];
        let mut arena: Vec<u32> = Vec::with_capacity(6 + 6 * input.descs.len() + input.adj_start.len() + input.adj.len() + 2 * input.local_label.len());
        arena.extend([params.n_graphs, params.n_labels, params.n_lengths, params.n_cap, params.cells_cap, params._pad]);
        arena.extend(input.descs.iter().flat_map(words));
        let mut cuts = vec![arena.len()];
        for part in [&input.adj_start, &input.adj, &input.local_label, &input.label_global] {
            arena.extend_from_slice(part);
            cuts.push(arena.len());
        }
        let dev_arena = s.clone_htod(&arena)?;
        let view = |k: usize| {
            dev_arena.slice(match k {
                0 => 0..6,
                1 => 6..cuts[0],
                _ => cuts[k - 2]..cuts[k - 1],
            })
        };
        let (dev_params, descs, adj_start, adj, local_label, label_global) = (view(0), view(1), view(2), view(3), view(4), view(5));
        at("uploads");
        let smem = (sp_hop_smem_words(n_cap, cells_cap) * 4) as u32;
        let f = dev.function_with_smem(Kernel::SpHopHistograms, smem as usize)?;
        let cfg = LaunchConfig { grid_dim: (input.descs.len() as u32, 1, 1), block_dim: (SP_BLOCK_THREADS, 1, 1), shared_mem_bytes: smem };
        let mut b = s.launch_builder(&f);
        b.arg(&dev_params).arg(&descs).arg(&adj_start).arg(&adj).arg(&local_label).arg(&label_global).arg(&mut keys).arg(&mut counts).arg(&mut dev_runs);
        // SAFETY: sp_hop_histograms' contract is checked by check_hop (sizes against n_cap and
        // cells_cap, which size the dynamic shared memory; ranges, neighbours, labels, ascending
        // global labels, n ≤ n_lengths); the lists' room (min(ℓ²n, n(n−1)) each, from
        // list_offset) lies inside keys/counts (list_end); the grid has one block per descriptor;
        // the buffers outlive the launch (the runs' download below synchronizes the stream).
        unsafe { b.launch(cfg) }?;
    }
    let host_runs = s.clone_dtoh(&dev_runs)?;
    at("device build");
    check(host_runs.iter().all(|r| (r.offset + r.len) as usize <= input.list_end.max(h.keys.len())), || "a built run passes the lists".into())?;
    Ok(DeviceHistograms { runs: dev_runs, keys, counts, host_runs, built_on_gpu: gpu.len() })
}

/// The row-major matrix of runs `rows` × runs `cols` of `h`, rows in chunks: cancellation is
/// checked before each, and after each its share of `pairs` (what the caller counts as the whole
/// matrix's pairs) is reported. Large chunks come back through `staging` (pinned buffers: the
/// copy-out by all host threads overlaps the DMA), small ones directly.
pub fn matrix(
    dev: &GpuDevice,
    h: &DeviceHistograms,
    rows: Range<usize>,
    cols: Range<usize>,
    pairs: usize,
    staging: Option<&Staging>,
    ctl: &RunControl,
) -> Result<Vec<f64>> {
    let s = &dev.stream;
    let t = std::time::Instant::now();
    let at = |what: &str| trace(format_args!("  matrix: {what} at {:.3} ms", t.elapsed().as_secs_f64() * 1e3));
    let (nr, nc) = (rows.len(), cols.len());
    check(rows.end <= h.host_runs.len() && cols.end <= h.host_runs.len(), || "rows or columns past the runs".into())?;
    let mut result = vec![0.0f64; nr * nc];
    if nr == 0 || nc == 0 {
        return Ok(result);
    }
    let longest = h.host_runs[rows.clone()].iter().map(|r| r.len).max().unwrap_or(0);
    let staged = if longest <= SP_GRAM_SMEM_ENTRIES { longest.max(1) } else { 0 };
    let smem = staged * 12;
    let f = dev.function_with_smem(Kernel::SpHistogramGram, smem as usize)?;
    let chunk = (CHUNK_BYTES / 8 / nc).clamp(1, nr);
    let mut out = s.alloc_zeros::<f64>(chunk * nc)?;
    let mut begin = 0;
    while begin < nr {
        if ctl.cancelled() {
            return Err(OctileError::Cancelled);
        }
        let n_rows = chunk.min(nr - begin);
        let params = SpGramParams {
            row_begin: begin as u32,
            n_rows: n_rows as u32,
            n_cols: nc as u32,
            row_graph0: rows.start as u32,
            col_graph0: cols.start as u32,
            staged,
        };
        let dev_params = s.clone_htod(&[params])?;
        let cfg = LaunchConfig { grid_dim: (n_rows as u32, 1, 1), block_dim: (SP_BLOCK_THREADS, 1, 1), shared_mem_bytes: smem };
        let mut b = s.launch_builder(&f);
        b.arg(&dev_params).arg(&h.runs).arg(&h.keys).arg(&h.counts).arg(&mut out);
        // SAFETY: sp_histogram_gram's contract: the row and column runs exist (checked above) and
        // lie inside keys/counts (checked after the build; their keys ascend by construction, which
        // only the values depend on); staged ≥ every row list's length or 0, with
        // staged·12 bytes of shared memory; out holds chunk·n_cols ≥ n_rows·n_cols values; the
        // buffers outlive the launch (the download below synchronizes).
        unsafe { b.launch(cfg) }?;
        let dst = &mut result[begin * nc..(begin + n_rows) * nc];
        match staging {
            Some(st) if dst.len() >= STAGED_MIN => st.download(s, &out.slice(..n_rows * nc), dst)?,
            _ => {
                s.memcpy_dtoh(&out.slice(..n_rows * nc), dst)?;
                s.synchronize()?;
            }
        }
        at("chunk copied");
        ctl.report(pairs * (begin + n_rows) / nr - pairs * begin / nr);
        begin += n_rows;
    }
    Ok(result)
}

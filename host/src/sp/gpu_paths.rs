//! The general form's shortest paths for the GPU: graphs up to `SP_APSP_MAX_NODES` nodes by
//! Floyd–Warshall on the device (`octile_kernels::sp::apsp`), larger ones by the host's
//! [`PathSet`], all in one set of device arrays the all-pairs-of-paths sum reads:
//!
//! ```text
//! sp_s / sp_e / sp_w: [ host-built paths, packed ][ GPU graph 0: n_paths ][ GPU graph 1 … ]
//! graphs[g] = SpGraph { path_offset, n_paths, node_offset, n_nodes }   (n_paths: host union–find)
//! nodes: every graph's node feature rows, graph after graph
//! ```
use super::csr::Csr;
use super::device::{check, upload};
use super::paths::{PathSet, node_rows, path_count, unit_weights};
use crate::error::{OctileError, Result};
use crate::gpu::GpuDevice;
use crate::graph::Graph;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use octile_types::Kernel;
use octile_types::sp::{SP_APSP_MAX_NODES, SP_BLOCK_THREADS, SpApspGraph, SpApspParams, SpGraph, sp_apsp_smem_bytes};
use rayon::prelude::*;

/// Paths and node rows on the device.
pub struct DevicePaths {
    /// One per graph.
    pub graphs: CudaSlice<SpGraph>,
    /// Source node of each path.
    pub sp_s: CudaSlice<u32>,
    /// End node of each path.
    pub sp_e: CudaSlice<u32>,
    /// Length of each path.
    pub sp_w: CudaSlice<f64>,
    /// Node feature rows.
    pub nodes: CudaSlice<f64>,
    /// Values per node row.
    pub node_stride: usize,
    /// The descriptors, as uploaded.
    pub descs: Vec<SpGraph>,
    /// Graphs whose paths the device computed.
    pub built_on_gpu: usize,
}

/// The paths of `graphs` and their rows of `features`, on the device.
pub fn build(dev: &GpuDevice, graphs: &[Graph], features: &[String]) -> Result<DevicePaths> {
    let s = &dev.stream;
    // the host's checks for every graph (weights that are lengths, 32-bit node ids), the counts
    graphs.par_iter().enumerate().try_for_each(|(k, g)| unit_weights(g, k).map(|_| ()))?;
    let counts: Vec<usize> = graphs.par_iter().map(path_count).collect();
    let total: usize = counts.iter().sum();
    if total > u32::MAX as usize {
        return Err(OctileError::InvalidRequest(format!("{total} shortest paths in all: more than 2^32; split the set")));
    }
    let (gpu, host): (Vec<usize>, Vec<usize>) = (0..graphs.len()).partition(|&g| (2..=SP_APSP_MAX_NODES as usize).contains(&graphs[g].n_nodes()));
    let hs = PathSet::build_some(graphs, &host, &[])?;
    let node_stride = features.len().max(1);
    let nodes = node_rows(graphs, features)?;
    let mut descs = vec![SpGraph::default(); graphs.len()];
    let mut node = 0u32;
    for (g, d) in descs.iter_mut().enumerate() {
        (d.node_offset, d.n_nodes) = (node, graphs[g].n_nodes() as u32);
        node += d.n_nodes;
    }
    for (k, &g) in host.iter().enumerate() {
        (descs[g].path_offset, descs[g].n_paths) = (hs.graphs[k].path_offset, hs.graphs[k].n_paths);
    }
    let csr = Csr::build(graphs, &gpu, true);
    let mut offset = hs.sp_s.len() as u32;
    let apsp: Vec<SpApspGraph> = gpu
        .iter()
        .zip(&csr.node_offset)
        .map(|(&g, &adj_node_offset)| {
            (descs[g].path_offset, descs[g].n_paths) = (offset, counts[g] as u32);
            offset += counts[g] as u32;
            SpApspGraph {
                graph: g as u32,
                adj_node_offset,
                n_nodes: graphs[g].n_nodes() as u32,
                path_offset: descs[g].path_offset,
                n_paths: counts[g] as u32,
                _pad: 0,
            }
        })
        .collect();
    let len = (offset as usize).max(1);
    let (mut sp_s, mut sp_e, mut sp_w) = (s.alloc_zeros::<u32>(len)?, s.alloc_zeros::<u32>(len)?, s.alloc_zeros::<f64>(len)?);
    if !hs.sp_s.is_empty() {
        let h = hs.sp_s.len();
        s.memcpy_htod(&hs.sp_s, &mut sp_s.slice_mut(..h))?;
        s.memcpy_htod(&hs.sp_e, &mut sp_e.slice_mut(..h))?;
        s.memcpy_htod(&hs.sp_w, &mut sp_w.slice_mut(..h))?;
    }
    if !apsp.is_empty() {
        let n_cap = apsp.iter().map(|d| d.n_nodes).max().unwrap_or(2);
        // sp_floyd_warshall's contract: sizes, row starts, neighbours inside their graph and not
        // themselves, lengths finite and > 0 (unit_weights above), room for the counted paths
        let nodes_gpu = csr.start.len() - 1;
        check(csr.start[nodes_gpu] as usize == csr.adj.len() && csr.weight.len() == csr.adj.len(), || "row starts do not cover the neighbours".into())?;
        let bad = apsp.par_iter().find_map_any(|d| {
            let (o, n) = (d.adj_node_offset as usize, d.n_nodes as usize);
            let ok = n <= n_cap as usize
                && o + n <= nodes_gpu
                && (d.path_offset + d.n_paths) as usize <= len
                && (o..o + n).all(|v| {
                    csr.start[v] <= csr.start[v + 1]
                        && csr.adj[csr.start[v] as usize..csr.start[v + 1] as usize].iter().all(|&u| (u as usize) < n && u as usize != v - o)
                });
            (!ok).then(|| format!("graph {} breaks the build's layout", d.graph))
        });
        bad.map_or(Ok(()), |m| check(false, || m))?;
        let params = s.clone_htod(&[SpApspParams { n_graphs: apsp.len() as u32, n_cap }])?;
        let (dev_apsp, start, adj, weight) = (s.clone_htod(&apsp)?, s.clone_htod(&csr.start)?, upload(s, &csr.adj, 0)?, upload(s, &csr.weight, 0.0)?);
        let mut found = s.alloc_zeros::<u32>(graphs.len())?;
        let smem = sp_apsp_smem_bytes(n_cap) as u32;
        let f = dev.function_with_smem(Kernel::SpFloydWarshall, smem as usize)?;
        let cfg = LaunchConfig { grid_dim: (apsp.len() as u32, 1, 1), block_dim: (SP_BLOCK_THREADS, 1, 1), shared_mem_bytes: smem };
        let mut b = s.launch_builder(&f);
        b.arg(&params).arg(&dev_apsp).arg(&start).arg(&adj).arg(&weight).arg(&mut sp_s).arg(&mut sp_e).arg(&mut sp_w).arg(&mut found);
        // SAFETY: sp_floyd_warshall's contract is checked above (n ≤ n_cap, which sizes the dynamic
        // shared memory; row starts, neighbours and lengths; every graph's counted paths inside the
        // arrays; found holds a slot per graph); one block per descriptor; the buffers outlive the
        // launch (the download of found below synchronizes the stream).
        unsafe { b.launch(cfg) }?;
        let found = s.clone_dtoh(&found)?;
        if let Some(&g) = gpu.iter().find(|&&g| found[g] as usize != counts[g]) {
            return Err(super::paths::paths_missing(g, found[g] as usize, counts[g]));
        }
    }
    Ok(DevicePaths {
        graphs: upload(s, &descs, SpGraph::default())?,
        sp_s,
        sp_e,
        sp_w,
        nodes: upload(s, &nodes, 0.0)?,
        node_stride,
        descs,
        built_on_gpu: gpu.len(),
    })
}

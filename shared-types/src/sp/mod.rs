//! The shortest-path kernel's host/device boundary (`../shared/papers/shortest-path-kernel-gpu-slides.txt`).
//!
//! ```text
//! K_sp(G, G′) = Σ_{(u,v) of G} Σ_{(u′,v′) of G′} κv(u, u′) · κℓ(d_uv, d′_u′v′) · κv(v, v′)
//! ```
//! over ordered node pairs u ≠ v with a finite shortest-path length d. Each graph's paths are the
//! slides' SP_S / SP_E / SP_W arrays, one run per graph, and its node feature rows:
//!
//! ```text
//! SpGraph { path_offset, n_paths, node_offset, n_nodes }
//!   sp_s[path_offset .. + n_paths]   u32  source node (local index)
//!   sp_e[path_offset .. + n_paths]   u32  end node
//!   sp_w[path_offset .. + n_paths]   f64  length
//!   nodes[node_offset · stride ..]   f64  the node kernel's feature rows
//! ```
//! Why structure of arrays: the threads of a warp read consecutive paths of one graph, so each of
//! the three loads is one coalesced transaction.

use crate::kernel_spec::KernelSpec;
use crate::real::Real;

/// Where one graph's paths and nodes lie.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpGraph {
    /// First path in the path arrays.
    pub path_offset: u32,
    /// Ordered pairs u ≠ v with a finite distance.
    pub n_paths: u32,
    /// First node row.
    pub node_offset: u32,
    /// Nodes.
    pub n_nodes: u32,
}

/// The base kernel on path lengths, κℓ.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LengthKernelKind {
    /// 1 if d == d′, else h (`param` = h; GraKeL's case: h = 0).
    KroneckerDelta = 0,
    /// exp(−(d − d′)² / (2ℓ²)) (`param` = −1/(2ℓ²)).
    SquareExponential = 1,
    /// max(0, c − |d − d′|) (`param` = c), the Brownian bridge kernel of the SP-kernel papers.
    BrownianBridge = 2,
}

/// κℓ with its parameter.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LengthKernel {
    /// [`LengthKernelKind`] as `u32`.
    pub kind: u32,
    /// Padding.
    pub _pad: u32,
    /// h, −1/(2ℓ²) or c (see [`LengthKernelKind`]).
    pub param: f64,
}

impl LengthKernel {
    /// 1 if equal, else h.
    pub const fn kronecker_delta(h: f64) -> Self {
        LengthKernel { kind: LengthKernelKind::KroneckerDelta as u32, _pad: 0, param: h }
    }
    /// exp(−(d − d′)²/(2ℓ²)).
    pub fn square_exponential(length_scale: f64) -> Self {
        LengthKernel { kind: LengthKernelKind::SquareExponential as u32, _pad: 0, param: -0.5 / (length_scale * length_scale) }
    }
    /// max(0, c − |d − d′|).
    pub const fn brownian_bridge(c: f64) -> Self {
        LengthKernel { kind: LengthKernelKind::BrownianBridge as u32, _pad: 0, param: c }
    }
    /// κℓ(a, b).
    #[inline(always)]
    pub fn eval<T: Real>(&self, a: T, b: T) -> T {
        let d = a - b;
        if self.kind == LengthKernelKind::KroneckerDelta as u32 {
            if d == T::from_f64(0.0) { T::from_f64(1.0) } else { T::from_f64(self.param) }
        } else if self.kind == LengthKernelKind::SquareExponential as u32 {
            (T::from_f64(self.param) * d * d).exp()
        } else {
            let ad = if d < T::from_f64(0.0) { T::from_f64(0.0) - d } else { d };
            let v = T::from_f64(self.param) - ad;
            if v > T::from_f64(0.0) { v } else { T::from_f64(0.0) }
        }
    }
}

/// Parameters of one general-path launch (read through a pointer in global memory).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpParams {
    /// κv.
    pub node_kernel: KernelSpec,
    /// κℓ.
    pub length: LengthKernel,
    /// Jobs (graph pairs) of the launch.
    pub n_jobs: u32,
    /// f64 values per node row.
    pub node_stride: u32,
}

/// Threads of a general-path block (one block per graph pair at a time; the block reductions of
/// the solver block, `names::BLOCK_WARPS` warps).
pub const SP_BLOCK_THREADS: u32 = crate::names::BLOCK_WARPS * 32;
/// κv entries a general-path block tables in dynamic shared memory (n·n′ up to this: 32 KiB of f64).
pub const SP_TABLE_ENTRIES: usize = 4096;

/// A histogram key: the triple (label of u, label of v, length) numbered lexicographically, so
/// sorting keys sorts triples. Labels are dataset-wide ids `< n_labels`, lengths ids `< n_lengths`
/// (hop counts themselves on unit-weight sets); callers check [`sp_keys_fit`] first.
#[inline(always)]
pub fn sp_key(label_u: u64, label_v: u64, length: u64, n_labels: u64, n_lengths: u64) -> u64 {
    (label_u * n_labels + label_v) * n_lengths + length
}

/// Whether every key of a set with `n_labels` labels and `n_lengths` length ids fits `u64`.
pub fn sp_keys_fit(n_labels: u64, n_lengths: u64) -> bool {
    n_labels.checked_mul(n_labels).and_then(|x| x.checked_mul(n_lengths.max(1))).is_some()
}

/// Nodes of the largest graph the GPU histogram build takes (its bitsets: `n / 32` words per node).
pub const SP_HOP_MAX_NODES: u32 = 256;
/// Largest count table ℓ²·n (ℓ the graph's own distinct labels) the GPU histogram build keeps in
/// shared memory (64 KiB of u32); a graph past it or `SP_HOP_MAX_NODES` is built on the host.
pub const SP_HOP_MAX_CELLS: u32 = 16384;
/// Histogram entries of the row graph the Gram entry keeps in shared memory (key u64 + count u32:
/// 96 KiB); a longer row list is searched in global memory.
pub const SP_GRAM_SMEM_ENTRIES: u32 = 8192;

/// One graph of the GPU histogram build (unit weights: lengths are hop counts).
///
/// ```text
/// adj_start[node_offset + v ..= node_offset + v + 1]   its neighbours' range in adj (local ids)
/// local_label[node_offset + v]                          its label among the graph's own ℓ labels
/// label_global[label_offset + a]                        local label a's dataset-wide id (ascending in a)
/// cells (shared memory): ℓ × ℓ × n counts, cell (a, b, d) = paths a → b of d hops
/// keys/counts[list_offset ..]                           the non-zero cells in cell order
/// ```
/// Why cells in that order: local labels ascend with their global ids, so reading the cells in
/// order gives keys in ascending order — sorted lists without a sort.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpHopGraph {
    /// The graph's index (its run in `runs`).
    pub graph: u32,
    /// First node of the graph in `adj_start` / `local_label`.
    pub node_offset: u32,
    /// Nodes (≤ `SP_HOP_MAX_NODES`).
    pub n_nodes: u32,
    /// First entry of its local → global label table.
    pub label_offset: u32,
    /// Its distinct labels ℓ (ℓ²·n ≤ `SP_HOP_MAX_CELLS`).
    pub n_labels: u32,
    /// First entry of its output list (room for min(ℓ²·n, n(n−1)) entries).
    pub list_offset: u32,
}

/// Parameters of one GPU histogram build.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpHopParams {
    /// Graphs (one block each).
    pub n_graphs: u32,
    /// Dataset-wide labels (the key's label base).
    pub n_labels: u32,
    /// Length ids (the key's length base: > every hop count).
    pub n_lengths: u32,
    /// The largest graph's nodes (shared-memory layout).
    pub n_cap: u32,
    /// The largest ℓ²·n (shared-memory layout).
    pub cells_cap: u32,
    /// Padding.
    pub _pad: u32,
}

/// u32 words of the histogram build's dynamic shared memory:
///
/// ```text
/// [ reach : n_cap × W ][ next : n_cap × W ][ cells : cells_cap ][ warp totals : 32 ][ flags : 4 ]
/// W = ⌈n_cap / 32⌉; reach[v] = the sources whose BFS has reached v (one bit each)
/// ```
pub const fn sp_hop_smem_words(n_cap: u32, cells_cap: u32) -> usize {
    let w = n_cap.div_ceil(32) as usize;
    2 * n_cap as usize * w + cells_cap as usize + 32 + 4
}

/// Parameters of one histogram Gram launch: rows `row_begin ..` (chunk of `n_rows`) of the matrix
/// whose row r is graph `row_graph0 + r` and column c graph `col_graph0 + c`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpGramParams {
    /// First row of this launch.
    pub row_begin: u32,
    /// Rows of this launch (one block each).
    pub n_rows: u32,
    /// Columns (the output's row stride).
    pub n_cols: u32,
    /// Run index of row 0.
    pub row_graph0: u32,
    /// Run index of column 0.
    pub col_graph0: u32,
    /// 1: the row's list is staged in shared memory (every row list ≤ `SP_GRAM_SMEM_ENTRIES`).
    pub staged: u32,
}

/// Nodes of the largest graph whose shortest paths the GPU computes (n² f64 lengths in shared
/// memory: 72 KiB); a larger graph's come from the host. The host uses the same Floyd–Warshall
/// for weighted graphs up to this size, so both give the same bits.
pub const SP_APSP_MAX_NODES: u32 = 96;

/// One graph of the GPU shortest-path build.
///
/// ```text
/// adj_start[adj_node_offset + v ..= + v + 1]   its neighbours' range in adj / adj_w (local ids, weights)
/// sp_s / sp_e / sp_w[path_offset .. + n_paths] its paths, written in (u, v) order, u ≠ v, finite
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpApspGraph {
    /// The graph's index (its slot in `found`).
    pub graph: u32,
    /// First node of the graph in `adj_start`.
    pub adj_node_offset: u32,
    /// Nodes (≤ `SP_APSP_MAX_NODES`).
    pub n_nodes: u32,
    /// First path in the path arrays.
    pub path_offset: u32,
    /// Paths the host counted (ordered pairs in one component); the build writes at most these.
    pub n_paths: u32,
    /// Padding.
    pub _pad: u32,
}

/// Parameters of one GPU shortest-path build.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpApspParams {
    /// Graphs (one block each).
    pub n_graphs: u32,
    /// The largest graph's nodes (shared-memory layout: `n_cap`² f64, then 32 u32 warp totals).
    pub n_cap: u32,
}

/// Bytes of the shortest-path build's dynamic shared memory.
pub const fn sp_apsp_smem_bytes(n_cap: u32) -> usize {
    n_cap as usize * n_cap as usize * 8 + 32 * 4
}

/// One graph's histogram run: sorted u64 keys and their counts.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpHistogram {
    /// First entry.
    pub offset: u32,
    /// Distinct keys.
    pub len: u32,
}

const _: () = assert!(core::mem::size_of::<SpGraph>() == 16 && core::mem::align_of::<SpGraph>() == 4);
const _: () = assert!(core::mem::size_of::<LengthKernel>() == 16 && core::mem::align_of::<LengthKernel>() == 8);
const _: () = assert!(core::mem::size_of::<SpParams>() == 264 + 16 + 8 && core::mem::align_of::<SpParams>() == 8);
const _: () = assert!(core::mem::size_of::<SpHistogram>() == 8);
const _: () = assert!(core::mem::size_of::<SpHopGraph>() == 24 && core::mem::align_of::<SpHopGraph>() == 4);
const _: () = assert!(core::mem::size_of::<SpHopParams>() == 24 && core::mem::align_of::<SpHopParams>() == 4);
const _: () = assert!(core::mem::size_of::<SpGramParams>() == 24 && core::mem::align_of::<SpGramParams>() == 4);
const _: () = assert!(sp_hop_smem_words(SP_HOP_MAX_NODES, SP_HOP_MAX_CELLS) * 4 <= 100 * 1024);
const _: () = assert!(SP_GRAM_SMEM_ENTRIES as usize * 12 <= 100 * 1024);
const _: () = assert!(core::mem::size_of::<SpApspGraph>() == 24 && core::mem::align_of::<SpApspGraph>() == 4);
const _: () = assert!(core::mem::size_of::<SpApspParams>() == 8 && core::mem::align_of::<SpApspParams>() == 4);
const _: () = assert!(sp_apsp_smem_bytes(SP_APSP_MAX_NODES) <= 100 * 1024);

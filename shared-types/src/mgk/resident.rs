//! The resident solver: one pair's whole product system in shared memory, one team per pair.
//!
//! For pairs whose product system fits a slice of shared memory (molecules, graphs of ~100 nodes)
//! the product is solved by one warp (small pairs) or one block (up to ~10⁴ unknowns) that keeps
//! both graphs and all five CG vectors in shared memory, so each CG iteration reads global memory
//! not at all. The XMV is evaluated on the fly, one product row (i, i') per thread, from the two
//! graphs in CSR form with their nodes sorted by degree (so neighbouring threads walk rows of similar
//! length and the lanes of a warp finish together).
//!
//! Each graph is one contiguous run of 32-bit words in `words`, copied into the team's slice with
//! one loop:
//!
//! ```text
//! ResidentGraph { offset, n_nodes, nnz }      words[offset ..]:
//!   [ row_ptr : n + 1  u32 ]  CSR over nodes, local (row_ptr[0] = 0)
//!   [ col     : nnz    u32 ]  neighbour of each nonzero
//!   [ edge    : nnz · nz_stride  f32 ]   weight, edge features (as `layout::NZ_*`)
//!   [ node    : n · node_stride  f32 ]   d, p, node features  (as `layout::NODE_*`)
//!
//! team slice (shared memory, `slice_words` words):
//!   [ graph 1 ][ graph 2 ][ dg : N ][ x : N ][ r : N ][ p : N ][ ap : N ]    N = n · n′, f32
//! ```
//! Why: a team reads each graph once per pair instead of once per iteration, and the vectors never
//! leave the SM; f32 everywhere but the reductions (f64), as GraphDot. The host checks the true
//! residual the kernel reports and re-solves with the refined tile solver any pair that misses
//! the tolerance.
use crate::kernel_spec::{BaseKernelKind, Combine, KernelSpec};

/// Where one graph lies in the resident word array.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResidentGraph {
    /// First word of the graph's run in `words`.
    pub offset: u32,
    /// Nodes (≥ 1).
    pub n_nodes: u32,
    /// Stored nonzeros (both triangles; a self-loop once).
    pub nnz: u32,
    /// Padding.
    pub _pad: u32,
}

/// Words of one graph's run.
pub const fn graph_words(n_nodes: usize, nnz: usize, node_stride: usize, nz_stride: usize) -> usize {
    n_nodes + 1 + nnz * (1 + nz_stride) + n_nodes * node_stride
}

/// f32 vectors of the product system a team keeps: dg, x, r, p, ap.
pub const RESIDENT_VECTORS: usize = 5;

/// Words of a team slice for a pair: both graphs and the five vectors.
pub const fn slice_words(g1: (usize, usize), g2: (usize, usize), node_stride: usize, nz_stride: usize) -> usize {
    graph_words(g1.0, g1.1, node_stride, nz_stride) + graph_words(g2.0, g2.1, node_stride, nz_stride) + RESIDENT_VECTORS * g1.0 * g2.0
}

/// Threads of a block-team launch (one block per pair).
pub const RESIDENT_BLOCK_THREADS: u32 = 512;
/// Warps of a block team.
pub const RESIDENT_BLOCK_WARPS: u32 = RESIDENT_BLOCK_THREADS / 32;
/// Bytes at the start of a block team's shared memory for its reductions and broadcasts
/// (2 f64 per warp, then one u32).
pub const RESIDENT_BLOCK_HEADER_BYTES: usize = 2 * 8 * RESIDENT_BLOCK_WARPS as usize + 16;
/// Most warps (independent teams) in one block of a warp-team launch.
pub const RESIDENT_MAX_WARPS_PER_BLOCK: u32 = 8;

/// κe shapes with their own (monomorphized) kernel entries; anything else runs the general
/// interpreter of [`KernelSpec`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeShape {
    /// Any [`KernelSpec`].
    General = 0,
    /// One square-exponential term: κe = exp(coef · (a − b)²) on one feature.
    SquareExponential = 1,
    /// One Kronecker-delta term: κe = 1 if a == b else h, on one feature.
    KroneckerDelta = 2,
}

impl EdgeShape {
    /// The specialised shape of `spec`, if it has one: a single term with weight 1 (a product of
    /// one term, or a sum of one term of weight 1).
    pub fn of(spec: &KernelSpec) -> Self {
        let t = spec.terms();
        if t.len() != 1 || (spec.combine == Combine::Additive as u32 && t[0].weight != 1.0) {
            return EdgeShape::General;
        }
        match BaseKernelKind::from_u32(t[0].kind) {
            Some(BaseKernelKind::SquareExponential) => EdgeShape::SquareExponential,
            Some(BaseKernelKind::KroneckerDelta) => EdgeShape::KroneckerDelta,
            _ => EdgeShape::General,
        }
    }
}

/// Parameters of one resident-solver launch, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResidentParams {
    /// κv.
    pub node_kernel: KernelSpec,
    /// κe.
    pub edge_kernel: KernelSpec,
    /// A pair converges when its true residual ‖b − M·x‖ ≤ rtol·‖b‖; CG stops when the recurrence
    /// residual reaches `RECURRENCE_SHARE`·rtol.
    pub rtol: f64,
    /// Jobs in the job array.
    pub n_jobs: u32,
    /// Iteration limit per pair.
    pub max_iterations: u32,
    /// Values per node row.
    pub node_stride: u32,
    /// Values per nonzero row.
    pub nz_stride: u32,
    /// Words of each team's shared-memory slice (≥ [`slice_words`] of every job).
    pub slice_words: u32,
    /// Padding.
    pub _pad: u32,
}

/// CG stops at a recurrence residual of this share of rtol, so that the true residual, which f32
/// rounding keeps a little above the recurrence, still meets rtol.
pub const RECURRENCE_SHARE: f64 = 0.5;

const _: () = assert!(core::mem::size_of::<ResidentGraph>() == 16 && core::mem::align_of::<ResidentGraph>() == 4);
const _: () = assert!(core::mem::size_of::<ResidentParams>() == 2 * 264 + 8 + 24 && core::mem::align_of::<ResidentParams>() == 8);
const _: () = assert!(RESIDENT_BLOCK_HEADER_BYTES % 16 == 0 && RESIDENT_BLOCK_THREADS % 32 == 0);

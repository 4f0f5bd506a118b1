//! `#[repr(C)]` layouts of packed graphs, solver jobs, results and parameters.
//!
//! A set of graphs is packed into five flat arrays, uploaded once and read by every solver:
//!
//! ```text
//! graphs     [GraphDesc; n_graphs]     n_nodes, n_tile_rows, where its rows/nodes start
//! row_ptr    [u32]                     per graph n_tile_rows+1 absolute octile indices (CSR over tile rows)
//! octiles    [Octile]                  non-empty 8×8 tiles, sorted by (tile_row, tile_col) per graph
//! edge_data  [T; nnz · nz_stride]      per nonzero, in bit order of its octile:
//!                                      [ weight, edge feature 0, edge feature 1, ... ]
//! node_data  [T; nodes · node_stride]  per node: [ d, p, node feature 0, node feature 1, ... ]
//!
//!  Octile (24 bytes)                    its nonzeros, compact
//!  ┌───────────────────────────┐        edge_data[nz_offset·stride ..]
//!  │ nz_mask   u64  bit r·8+c  │──────▶ ┌──────┬──────┬──────┐
//!  │ tile_row  u32             │        │ nz 0 │ nz 1 │ ...  │  (popcount(nz_mask) entries,
//!  │ tile_col  u32             │        └──────┴──────┴──────┘   lowest set bit first)
//!  │ nz_offset u32  (nonzeros) │
//!  │ _pad      u32             │
//!  └───────────────────────────┘
//! ```
//!
//! Why this shape: only non-empty tiles are stored (inter-tile sparsity, COO), and inside a tile only
//! its nonzeros (intra-tile sparsity, bitmap + compact values), so an empty region of the adjacency
//! matrix costs nothing and a sparse tile costs its popcount. The row pointer lets the owner of an
//! output block find its tiles without a search. Both triangles of the symmetric adjacency matrix are
//! stored, so a tile pair's product needs no transposition logic. Node degree d already includes the
//! 1/(1 − q) factor; p is the starting probability.
use crate::kernel_spec::KernelSpec;
use crate::blocked::GatheredKernel;
use crate::primitives::PrimitiveMap;

/// One non-empty 8×8 tile of a graph's adjacency matrix.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Octile {
    /// Bit `r·8 + c` is set iff entry (tile_row·8 + r, tile_col·8 + c) is nonzero.
    pub nz_mask: u64,
    /// Tile row (in units of 8 nodes).
    pub tile_row: u32,
    /// Tile column (in units of 8 nodes).
    pub tile_col: u32,
    /// Index of this tile's first nonzero in `edge_data` (in nonzeros, not values).
    pub nz_offset: u32,
    /// Padding (keeps the size a multiple of 8 on both sides).
    pub _pad: u32,
}

impl Octile {
    /// Number of nonzeros.
    #[inline(always)]
    pub fn nnz(&self) -> u32 {
        self.nz_mask.count_ones()
    }
    /// Rank of bit `pos` among the set bits (its index in the compact nonzeros).
    #[inline(always)]
    pub fn rank(&self, pos: u32) -> u32 {
        (self.nz_mask & ((1u64 << pos) - 1)).count_ones()
    }
    /// Its nonzeros in storage order: (bit position r·8 + c, index into the compact nonzeros).
    #[inline(always)]
    pub fn nonzeros(&self) -> impl Iterator<Item = (usize, usize)> {
        let mut mask = self.nz_mask;
        let mut k = self.nz_offset as usize;
        core::iter::from_fn(move || {
            if mask == 0 {
                return None;
            }
            let bit = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            k += 1;
            Some((bit, k - 1))
        })
    }
    /// The 8-bit mask of row `r` (0..8) of the tile.
    #[inline(always)]
    pub fn row_mask(&self, r: u32) -> u32 {
        ((self.nz_mask >> (r * 8)) & 0xff) as u32
    }
}

/// Where one graph's data lies in the packed arrays.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphDesc {
    /// Number of nodes (≥ 1).
    pub n_nodes: u32,
    /// ⌈n_nodes / 8⌉.
    pub n_tile_rows: u32,
    /// Index of this graph's first entry in `row_ptr`.
    pub row_ptr_offset: u32,
    /// Index of this graph's first node in `node_data` (in nodes, not values).
    pub node_offset: u32,
}

/// One pair to solve: graph indices into the packed set(s) and where its scratch starts.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairJob {
    /// Graph of the first set.
    pub g1: u32,
    /// Graph of the second set.
    pub g2: u32,
    /// Offset of this pair's scratch (in elements of T) in the scratch buffer.
    pub scratch_offset: u64,
}

/// What the solver reports for one pair.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairStatus {
    /// K(G, G') = Σ p_i p'_i' x_ii'.
    pub value: f64,
    /// Final relative residual ‖r‖ / ‖b‖.
    pub residual: f64,
    /// CG iterations taken.
    pub iterations: u32,
    /// 1 if ‖r‖ ≤ rtol·‖b‖ was reached, else 0.
    pub converged: u32,
}

/// Parameters of one solver launch, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MgkParams {
    /// κv.
    pub node_kernel: KernelSpec,
    /// κe.
    pub edge_kernel: KernelSpec,
    /// Stop when ‖r‖ ≤ rtol·‖b‖.
    pub rtol: f64,
    /// Number of jobs in the job array.
    pub n_jobs: u32,
    /// Iteration limit per pair.
    pub max_iterations: u32,
    /// Values per node in `node_data` (2 + node features).
    pub node_stride: u32,
    /// Values per nonzero in `edge_data` (1 + edge features).
    pub nz_stride: u32,
    /// Which tile-pair primitive to use, by the two tiles' nonzero counts.
    pub primitives: PrimitiveMap,
    /// [`TILE_STORAGE_COMPACT`] or [`TILE_STORAGE_DENSE`].
    pub tile_storage: u32,
    /// Blocks that solve one pair together (the team entries `mgk_solve_team_*`; the grid is a
    /// whole number of teams). 1 for the one-block-per-pair entries.
    pub team_blocks: u32,
    /// κe gathered for the register-blocked dense walks: `GatheredKernel::of(&edge_kernel)`.
    pub dense_kernel: GatheredKernel,
}

/// Synchronization state of one team of blocks that solves one pair together (team entries only),
/// in global memory, zeroed by the host before the launch.
///
/// ```text
///  arrive      u32   blocks arrived at the current barrier (reset by the last one)
///  generation  u32   barriers completed (the waiting blocks spin until it changes)
///  job         u32   the job the team's leader drew, read by the other blocks after a barrier
///  deal        u32   output blocks of the XMVs dealt so far (each warp draws its next block here)
///  sums        [f64; 6]   three slots of two sums: reduction i adds into slot i mod 3 and, after
///                          its barrier, the leader zeroes slot (i + 2) mod 3 — last read before
///                          that barrier, next written after the following one
/// ```
/// Why three slots: one barrier per reduction suffices (a slot is never reset while a block may
/// still read it, nor read before its reset is ordered by a barrier).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TeamSync {
    /// Blocks arrived at the current barrier.
    pub arrive: u32,
    /// Completed barriers.
    pub generation: u32,
    /// Current job of the team.
    pub job: u32,
    /// Output-block dealing counter (see `Team::deal` in the kernels).
    pub deal: u32,
    /// Reduction slots.
    pub sums: [f64; 6],
}

/// `edge_data` holds only the nonzeros of each octile, in bit order: entry k of a tile is at
/// `nz_offset + rank(k)` (the default).
pub const TILE_STORAGE_COMPACT: u32 = 0;
/// `edge_data` holds all 64 entries of each octile (zeros included): entry k is at `nz_offset + k`.
/// Only for measuring what compact storage gains (the ablation benchmark).
pub const TILE_STORAGE_DENSE: u32 = 1;

/// Parameters of the tile-pair microbenchmark / primitive check kernel, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TileBenchParams {
    /// κe.
    pub edge_kernel: KernelSpec,
    /// Tile pairs (octiles 2k and 2k+1, p block k).
    pub n_pairs: u32,
    /// Times each warp repeats each of its pairs (outputs are summed over repeats).
    pub reps: u32,
    /// Values per nonzero in `edge_data`.
    pub nz_stride: u32,
    /// [`crate::primitives::Primitive`] code.
    pub primitive: u32,
    /// `GatheredKernel::of(&edge_kernel)` (register-blocked dense walks).
    pub dense_kernel: GatheredKernel,
}

/// Offset of the degree d in a node row.
pub const NODE_D: usize = 0;
/// Offset of the starting probability p in a node row.
pub const NODE_P: usize = 1;
/// Offset of the first feature in a node row.
pub const NODE_FEATURES: usize = 2;
/// Offset of the weight in a nonzero row.
pub const NZ_WEIGHT: usize = 0;
/// Offset of the first feature in a nonzero row.
pub const NZ_FEATURES: usize = 1;
/// Most edge features the GPU kernels stage per nonzero (their shared memory is sized for it).
pub const MAX_EDGE_FEATURES: usize = 4;
/// Most values per nonzero on the GPU.
pub const MAX_NZ_STRIDE: usize = NZ_FEATURES + MAX_EDGE_FEATURES;

const _: () = assert!(core::mem::size_of::<Octile>() == 24 && core::mem::align_of::<Octile>() == 8);
const _: () = assert!(core::mem::size_of::<GraphDesc>() == 16 && core::mem::align_of::<GraphDesc>() == 4);
const _: () = assert!(core::mem::size_of::<PairJob>() == 16 && core::mem::align_of::<PairJob>() == 8);
const _: () = assert!(core::mem::size_of::<PairStatus>() == 24 && core::mem::align_of::<PairStatus>() == 8);
const _: () = assert!(core::mem::size_of::<MgkParams>() == 2 * 264 + 8 + 16 + 296 + 8 + 280);
const _: () = assert!(core::mem::size_of::<TileBenchParams>() == 264 + 16 + 280 && core::mem::align_of::<TileBenchParams>() == 8);
const _: () = assert!(core::mem::align_of::<MgkParams>() == 8);
const _: () = assert!(core::mem::size_of::<TeamSync>() == 64 && core::mem::align_of::<TeamSync>() == 8);

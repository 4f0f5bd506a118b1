//! `#[repr(C)]` parameters, jobs and results of the MGK solver and tile-bench launches.
//!
//! The host fills [`MgkParams`] once per launch (passed by value: one params struct per kernel), one
//! [`PairJob`] per pair, and reads back one [`PairStatus`] per pair. Team entries synchronize through
//! one [`TeamSync`] per team in global memory.
use crate::kernel_spec::KernelSpec;
use crate::mgk::blocked::GatheredKernel;
use crate::mgk::primitives::PrimitiveMap;

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
/// in global memory, zeroed by the host before the launch; each team owns
/// [`team_sync_records`]`(team_blocks)` consecutive records: its `TeamSync`, then its blocks'
/// partial sums in the records after it (read as f64).
///
/// ```text
///  arrive      u32   blocks arrived at the current barrier (reset by the last one)
///  generation  u32   barriers completed (the waiting blocks spin until it changes)
///  job         u32   the job the team's leader drew, read by the other blocks after a barrier
///  deal        u32   output blocks of the XMVs dealt so far (each warp draws its next block here)
///  sums        [f64; 6]   unused (the partials below replaced them)
///  partials    f64 [3 slots][team_blocks][2], in the records after: reduction i stores each
///              block's two sums in slot i mod 3 at the block's rank; after its barrier every
///              block sums the slot in rank order — the same order in every run
/// ```
/// Why partials and not atomic adds: f64 atomics add in the order the blocks arrive, so a team's
/// sums (and the pair's value) changed in the last bits from run to run. Why three slots: one
/// barrier per reduction suffices (slot i mod 3 is next written at reduction i + 3, after every
/// block has passed two more barriers, so after every read of reduction i).
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
    /// [`crate::mgk::primitives::Primitive`] code.
    pub primitive: u32,
    /// `GatheredKernel::of(&edge_kernel)` (register-blocked dense walks).
    pub dense_kernel: GatheredKernel,
}

const _: () = assert!(core::mem::size_of::<PairJob>() == 16 && core::mem::align_of::<PairJob>() == 8);
const _: () = assert!(core::mem::size_of::<PairStatus>() == 24 && core::mem::align_of::<PairStatus>() == 8);
const _: () = assert!(core::mem::size_of::<MgkParams>() == 2 * 264 + 8 + 16 + 296 + 8 + 280);
const _: () = assert!(core::mem::size_of::<TileBenchParams>() == 264 + 16 + 280 && core::mem::align_of::<TileBenchParams>() == 8);
const _: () = assert!(core::mem::align_of::<MgkParams>() == 8);
const _: () = assert!(core::mem::size_of::<TeamSync>() == 64 && core::mem::align_of::<TeamSync>() == 8);

/// Records of [`TeamSync`] one team of `team_blocks` blocks owns: its own, then room for
/// 3 · team_blocks · 2 f64 partial sums (8 f64 to a record).
pub const fn team_sync_records(team_blocks: u32) -> usize {
    1 + (6 * team_blocks as usize).div_ceil(8)
}

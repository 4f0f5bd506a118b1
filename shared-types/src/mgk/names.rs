//! PTX entry-point names of the marginalized graph kernel's solver and of its tile-pair
//! microbenchmark (`octile tune`), and the solver's launch shape.
use crate::names::{BLOCK_THREADS, BLOCK_WARPS};

/// PCG solver for many graph pairs, `f32` storage and arithmetic (reductions in `f64`).
pub const MGK_SOLVE_F32: &str = "mgk_solve_f32";
/// PCG solver for many graph pairs, `f64` throughout.
pub const MGK_SOLVE_F64: &str = "mgk_solve_f64";
/// Sparse-only variant of [`MGK_SOLVE_F32`]: every tile pair sparse × sparse, compact storage only.
pub const MGK_SOLVE_SPARSE_F32: &str = "mgk_solve_sparse_f32";
/// Sparse-only variant of [`MGK_SOLVE_F64`].
pub const MGK_SOLVE_SPARSE_F64: &str = "mgk_solve_sparse_f64";
/// Team variant of [`MGK_SOLVE_F32`]: several blocks solve one pair together (large graphs), the
/// grid's blocks grouped into teams of `MgkParams::team_blocks`, synchronized through a
/// `TeamSync` per team (cooperative launch: every block resident).
pub const MGK_SOLVE_TEAM_F32: &str = "mgk_solve_team_f32";
/// Team variant of [`MGK_SOLVE_F64`].
pub const MGK_SOLVE_TEAM_F64: &str = "mgk_solve_team_f64";
/// Variant of [`MGK_SOLVE_F32`] whose dense walks in B (primitives D and R) are the paper's
/// tiling-blocking ones (`crate::mgk::blocked`); opt-in (`dense_walk = "blocked"`).
pub const MGK_SOLVE_BLOCKED_F32: &str = "mgk_solve_blocked_f32";
/// Tiling-blocking variant of [`MGK_SOLVE_F64`].
pub const MGK_SOLVE_BLOCKED_F64: &str = "mgk_solve_blocked_f64";
/// Tiling-blocking variant of [`MGK_SOLVE_TEAM_F32`].
pub const MGK_SOLVE_TEAM_BLOCKED_F32: &str = "mgk_solve_team_blocked_f32";
/// Tiling-blocking variant of [`MGK_SOLVE_TEAM_F64`].
pub const MGK_SOLVE_TEAM_BLOCKED_F64: &str = "mgk_solve_team_blocked_f64";
/// Tile-pair primitive microbenchmark and check, `f32`.
pub const TILE_BENCH_F32: &str = "tile_bench_f32";
/// Tile-pair primitive microbenchmark and check, `f64`.
pub const TILE_BENCH_F64: &str = "tile_bench_f64";

/// Threads per block of the solver kernels ([`BLOCK_THREADS`]).
pub const SOLVER_BLOCK_THREADS: u32 = BLOCK_THREADS;
/// Warps per solver block.
pub const SOLVER_WARPS: u32 = BLOCK_WARPS;

/// Resident solver, one warp per pair, general κe.
pub const MGK_RESIDENT_WARP_GENERAL: &str = "mgk_resident_warp_general";
/// Resident solver, one warp per pair, one square-exponential term.
pub const MGK_RESIDENT_WARP_SQEXP: &str = "mgk_resident_warp_sqexp";
/// Resident solver, one warp per pair, one Kronecker-delta term.
pub const MGK_RESIDENT_WARP_KDELTA: &str = "mgk_resident_warp_kdelta";
/// Resident solver, one block per pair, general κe, long rows of the second graph split into pieces.
pub const MGK_RESIDENT_BLOCK_GENERAL_SPLIT: &str = "mgk_resident_block_general_split";
/// Resident solver, one block per pair, one square-exponential term, rows split into pieces.
pub const MGK_RESIDENT_BLOCK_SQEXP_SPLIT: &str = "mgk_resident_block_sqexp_split";
/// Resident solver, one block per pair, one Kronecker-delta term, rows split into pieces.
pub const MGK_RESIDENT_BLOCK_KDELTA_SPLIT: &str = "mgk_resident_block_kdelta_split";
/// Resident solver, one warp per pair, the product built once per pair (Kronecker-delta κe, unit weights).
pub const MGK_RESIDENT_WARP_PRODUCT: &str = "mgk_resident_warp_product";
/// Resident solver, one block per pair, the product built once per pair.
pub const MGK_RESIDENT_BLOCK_PRODUCT: &str = "mgk_resident_block_product";
/// Resident solver, one block per pair, general κe.
pub const MGK_RESIDENT_BLOCK_GENERAL: &str = "mgk_resident_block_general";
/// Resident solver, one block per pair, one square-exponential term.
pub const MGK_RESIDENT_BLOCK_SQEXP: &str = "mgk_resident_block_sqexp";
/// Resident solver, one block per pair, one Kronecker-delta term.
pub const MGK_RESIDENT_BLOCK_KDELTA: &str = "mgk_resident_block_kdelta";

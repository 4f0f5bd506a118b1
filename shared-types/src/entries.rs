//! Every GPU entry of the PTX module, declared once, as data: its typed id ([`Kernel`]), its PTX
//! name, the block size it is launched with and its launch bounds.
//!
//! ```text
//!   declare_entries! { Id = ptx_name { threads, bounds }, … }
//!        │
//!        ├─► Kernel::Id, Kernel::ALL, Kernel::Id.decl()   host: dev.function(Kernel::Id), launch checks
//!        ├─► entry_name!(Id) = "ptx_name"                 device: #[unsafe(export_name = entry_name!(Id))]
//!        └─► LaunchBounds                                 host/build.rs: .maxntid/.minnctapersm/.maxnreg
//! ```
//! Why one table: an entry's name, block size and bounds used to be written in four places (the
//! device function, a name constant, build.rs's lists of names to patch, the host's launch) and
//! matched by strings. Now the name exists once, as the identifier in this table (no string
//! literal anywhere); the device crate names its functions through [`entry_name!`], build.rs
//! checks that the PTX exports exactly [`Kernel::ALL`] and writes each entry's bounds from
//! [`Kernel::decl`], and the host loads and sizes launches by id.
use crate::graphlets::launch::GRAPHLET_BLOCK_THREADS;
use crate::mgk::names::SOLVER_BLOCK_THREADS;
use crate::mgk::resident::{RESIDENT_BLOCK_THREADS, RESIDENT_MAX_WARPS_PER_BLOCK};
use crate::names::SMOKE_BLOCK_THREADS;
use crate::sp::SP_BLOCK_THREADS;

/// The block sizes an entry may be launched with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// Exactly this many threads (its shared memory and reductions are sized for it).
    Exactly(u32),
    /// A multiple of 32 threads, at most this many.
    UpTo(u32),
}

impl Threads {
    /// Whether a launch of `block` threads keeps the entry's contract.
    pub const fn allows(self, block: u32) -> bool {
        match self {
            Threads::Exactly(t) => block == t,
            Threads::UpTo(t) => block > 0 && block.is_multiple_of(32) && block <= t,
        }
    }
    /// The largest block size allowed.
    pub const fn max(self) -> u32 {
        match self {
            Threads::Exactly(t) | Threads::UpTo(t) => t,
        }
    }
}

/// ptxas launch bounds of an entry (0: none). rustc has no `__launch_bounds__`: host/build.rs
/// writes them into the PTX after the entry's parameter list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// `.maxntid`: most threads per block (ptxas sizes registers for it).
    pub max_threads: u32,
    /// `.minnctapersm`: blocks that must fit an SM at once (ptxas caps registers to allow it).
    pub min_blocks_per_sm: u32,
    /// `.maxnreg`: most registers per thread.
    pub max_registers: u32,
}

impl LaunchBounds {
    /// No bounds.
    pub const NONE: LaunchBounds = LaunchBounds { max_threads: 0, min_blocks_per_sm: 0, max_registers: 0 };
    /// At most `t` threads per block.
    pub const fn threads(t: u32) -> LaunchBounds {
        LaunchBounds { max_threads: t, ..LaunchBounds::NONE }
    }
    /// At most `t` threads per block and `blocks` blocks resident per SM.
    pub const fn occupancy(t: u32, blocks: u32) -> LaunchBounds {
        LaunchBounds { max_threads: t, min_blocks_per_sm: blocks, max_registers: 0 }
    }
    /// At most `r` registers per thread.
    pub const fn with_registers(self, r: u32) -> LaunchBounds {
        LaunchBounds { max_registers: r, ..self }
    }
}

/// What is declared of one entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryDecl {
    /// The PTX name.
    pub name: &'static str,
    /// The block sizes it is launched with.
    pub threads: Threads,
    /// Its ptxas launch bounds.
    pub bounds: LaunchBounds,
}

/// Blocks per SM the tile solver's entries are compiled for. ptxas then caps registers so that 5
/// blocks fit an SM. Measured on an H200 (pairs/s, none/3/4/5): NWS 13.7k/17.6k/20.8k/23.1k, BA
/// 746/936/991/1170, ChEMBL 165k/218k/252k/273k. The tiling-blocking entries keep 5 too: B's row in
/// registers spills at 5 (~0.6–1 KB), but fewer resident blocks cost more (two protein chains
/// 0.61 s at 3, 0.50 s at 5). At 5 they spill 188–1,040 bytes a thread (solver entries 188–976
/// since they take `&MgkParams`, gradient entries 860–1,040); spill-free (`.maxnreg 255`:
/// 179–255 registers, 2 blocks an SM) measured 1.6–1.7× slower on the tile solver's sets (H100,
/// `results/spill-bounds-h100-2.md`: MUTAG 42.5 → 72.4 ms, NWS 0.524 → 0.852 s).
const SOLVER_BOUNDS: LaunchBounds = LaunchBounds::occupancy(SOLVER_BLOCK_THREADS, 5);
/// The resident block entries run at most 512 threads (ptxas then keeps them within 128
/// registers: at 1024 threads and 64 registers the unrolled XMV spills).
const RESIDENT_BLOCK_BOUNDS: LaunchBounds = LaunchBounds::threads(RESIDENT_BLOCK_THREADS);
/// The product-form block entries: at most 512 threads and 80 registers (ptxas spills nothing there;
/// unbounded they took 107 and 109, and registers then capped a 64-thread team at 8 blocks an SM).
const RESIDENT_BLOCK_PRODUCT_BOUNDS: LaunchBounds = RESIDENT_BLOCK_BOUNDS.with_registers(80);
/// The graphlet transform's warp-per-node entries: 256 threads, 4 blocks an SM (≤ 64 registers,
/// 32 warps an SM to hide the CSR's dependent loads; pass 1's tables take 32 KiB a block).
const GRAPHLET_WARP_BOUNDS: LaunchBounds = LaunchBounds::occupancy(GRAPHLET_BLOCK_THREADS, 4);
/// The resident grid entries: blocks of the tile solver's team size (`GridTeam`), 6 of them an SM
/// (ptxas caps them at 80 registers). Measured on an H200 against 4 an SM (128 registers): two
/// protein chains 0.085 vs 0.090 s, NWS in f64 0.178 vs 0.227 s, BA in f64 1.87 vs 2.26 s (the
/// kernel waits on its gathers: more warps hide more of them).
const GRID_BOUNDS: LaunchBounds = LaunchBounds::occupancy(SOLVER_BLOCK_THREADS, 6);
/// The general κe's f32 grid entry: 5 an SM (at 6 its 80 registers spill 4 bytes since the
/// recurrent PCG, `octile_types::pcg`).
const GRID_GENERAL_BOUNDS: LaunchBounds = LaunchBounds::occupancy(SOLVER_BLOCK_THREADS, 5);
/// The f64 grid entries: 5 an SM (at 6 their 80 registers spill).
const GRID_F64_BOUNDS: LaunchBounds = LaunchBounds::occupancy(SOLVER_BLOCK_THREADS, 5);
/// The general κe's f64 grid entry: 3 an SM (its interpreter spills at 4 and 5).
const GRID_GENERAL_F64_BOUNDS: LaunchBounds = LaunchBounds::occupancy(SOLVER_BLOCK_THREADS, 3);
/// The resident warp gradient entries: 144 registers, no spills (at 128 they spilled 12–56 bytes a
/// thread). Measured on an H100 against 128 (`results/spill-bounds-h100-2.md`, medians, alternating):
/// ChEMBL `--gradient` 0.4011 → 0.4019 s, NWS 35.8 → 36.1 ms, BA 197.7 → 198.2 ms, MUTAG 7.9 → 7.8
/// ms — within the runs' spread; values bit-identical.
const RESIDENT_WARP_GRADIENT_BOUNDS: LaunchBounds = LaunchBounds::NONE.with_registers(144);
/// Resident warp entries: 32·w threads, w ≤ `RESIDENT_MAX_WARPS_PER_BLOCK`.
const RESIDENT_WARPS: Threads = Threads::UpTo(32 * RESIDENT_MAX_WARPS_PER_BLOCK);

macro_rules! declare_entries {
    ($( $(#[$doc:meta])* $id:ident = $name:ident { threads: $threads:expr, bounds: $bounds:expr $(,)? } ),* $(,)?) => {
        /// A GPU entry of the PTX module: the typed id the host loads and launches by.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Kernel {
            $( $(#[$doc])* $id, )*
        }

        impl Kernel {
            /// Every entry the PTX module exports (build.rs and a host test check the PTX against it).
            pub const ALL: &'static [Kernel] = &[$(Kernel::$id),*];

            /// The entry's declaration.
            pub const fn decl(self) -> EntryDecl {
                match self {
                    $( Kernel::$id => EntryDecl { name: stringify!($name), threads: $threads, bounds: $bounds }, )*
                }
            }

            /// The entry's PTX name.
            pub const fn name(self) -> &'static str {
                self.decl().name
            }
        }

        /// The PTX name of an entry, from its [`Kernel`] id, as a literal: the device crate names
        /// its functions with `#[unsafe(export_name = octile_types::entry_name!(Id))]`.
        #[macro_export]
        macro_rules! entry_name {
            $( ($id) => { stringify!($name) }; )*
        }
    };
}

declare_entries! {
    /// Device self-test of the intrinsics (lane ids, shuffles, votes, popc/fns, atomics).
    SmokeIntrinsics = smoke_intrinsics { threads: Threads::Exactly(SMOKE_BLOCK_THREADS), bounds: LaunchBounds::NONE },
    /// MGK tile solver, one block per pair, adaptive primitives, f32 inner PCG with f64 refinement.
    MgkSolveF32 = mgk_solve_f32 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// MGK tile solver, one block per pair, adaptive primitives, f64.
    MgkSolveF64 = mgk_solve_f64 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// MGK tile solver, sparse × sparse only, compact storage only, f32.
    MgkSolveSparseF32 = mgk_solve_sparse_f32 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// MGK tile solver, sparse × sparse only, f64.
    MgkSolveSparseF64 = mgk_solve_sparse_f64 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// MGK tile solver, teams of blocks per pair (cooperative launch), f32.
    MgkSolveTeamF32 = mgk_solve_team_f32 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// MGK tile solver, teams of blocks per pair, f64.
    MgkSolveTeamF64 = mgk_solve_team_f64 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// MGK tile solver with the tiling-blocking dense walks (`crate::mgk::blocked`), f32.
    MgkSolveBlockedF32 = mgk_solve_blocked_f32 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// MGK tile solver with the tiling-blocking dense walks, f64.
    MgkSolveBlockedF64 = mgk_solve_blocked_f64 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// Team entry with the tiling-blocking dense walks, f32.
    MgkSolveTeamBlockedF32 = mgk_solve_team_blocked_f32 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// Team entry with the tiling-blocking dense walks, f64.
    MgkSolveTeamBlockedF64 = mgk_solve_team_blocked_f64 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// MGK hyperparameter gradient on the tile solver (primal and adjoint solve, then the
    /// contractions), one block per pair, f32 inner PCG with f64 refinement.
    MgkGradientF32 = mgk_gradient_f32 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// MGK hyperparameter gradient on the tile solver, f64.
    MgkGradientF64 = mgk_gradient_f64 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// MGK hyperparameter gradient on the tile solver, teams of blocks per pair (cooperative launch), f32.
    MgkGradientTeamF32 = mgk_gradient_team_f32 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// MGK hyperparameter gradient on the tile solver, teams of blocks per pair, f64.
    MgkGradientTeamF64 = mgk_gradient_team_f64 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// Tile-pair primitive microbenchmark and check (`octile tune`), f32.
    TileBenchF32 = tile_bench_f32 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// Tile-pair primitive microbenchmark and check, f64.
    TileBenchF64 = tile_bench_f64 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: SOLVER_BOUNDS },
    /// Resident solver, one warp per pair, any κe.
    MgkResidentWarpGeneral = mgk_resident_warp_general { threads: RESIDENT_WARPS, bounds: LaunchBounds::NONE },
    /// Resident solver, one warp per pair, one square-exponential term.
    MgkResidentWarpSqexp = mgk_resident_warp_sqexp { threads: RESIDENT_WARPS, bounds: LaunchBounds::NONE },
    /// Resident solver, one warp per pair, one Kronecker-delta term.
    MgkResidentWarpKdelta = mgk_resident_warp_kdelta { threads: RESIDENT_WARPS, bounds: LaunchBounds::NONE },
    /// Resident solver, one block per pair, any κe (ptxas would settle at 64 registers and spill).
    MgkResidentBlockGeneral = mgk_resident_block_general {
        threads: Threads::UpTo(RESIDENT_BLOCK_THREADS),
        bounds: RESIDENT_BLOCK_BOUNDS.with_registers(128),
    },
    /// Resident solver, one block per pair, one square-exponential term.
    MgkResidentBlockSqexp = mgk_resident_block_sqexp { threads: Threads::UpTo(RESIDENT_BLOCK_THREADS), bounds: RESIDENT_BLOCK_BOUNDS },
    /// Resident solver, one block per pair, one Kronecker-delta term.
    MgkResidentBlockKdelta = mgk_resident_block_kdelta { threads: Threads::UpTo(RESIDENT_BLOCK_THREADS), bounds: RESIDENT_BLOCK_BOUNDS },
    /// Resident solver in product form (Kronecker-delta κe, unit weights), one warp per pair: the
    /// per-pair setup would take 138 registers; 96 spill nothing and let 21 warps share an SM.
    MgkResidentWarpProduct = mgk_resident_warp_product { threads: RESIDENT_WARPS, bounds: LaunchBounds::NONE.with_registers(96) },
    /// Resident solver in product form, one block per pair: 80 registers (107 unbounded) spill
    /// nothing and let more blocks share an SM where shared memory allows (ChEMBL 0.260 → 0.252 s on
    /// an H200, `results/xmv-rows-h200.md` call 21).
    MgkResidentBlockProduct = mgk_resident_block_product { threads: Threads::UpTo(RESIDENT_BLOCK_THREADS), bounds: RESIDENT_BLOCK_PRODUCT_BOUNDS },
    /// Resident hyperparameter gradient (primal and adjoint solve, contractions), one warp per pair, any κe.
    MgkResidentWarpGradient = mgk_resident_warp_gradient { threads: RESIDENT_WARPS, bounds: RESIDENT_WARP_GRADIENT_BOUNDS },
    /// Resident hyperparameter gradient, one block per pair, any κe.
    MgkResidentBlockGradient = mgk_resident_block_gradient {
        threads: Threads::UpTo(RESIDENT_BLOCK_THREADS),
        bounds: RESIDENT_BLOCK_BOUNDS.with_registers(128),
    },
    /// Resident hyperparameter gradient, one warp per pair, one square-exponential term.
    MgkResidentWarpGradientSqexp = mgk_resident_warp_gradient_sqexp { threads: RESIDENT_WARPS, bounds: RESIDENT_WARP_GRADIENT_BOUNDS },
    /// Resident hyperparameter gradient, one block per pair, one square-exponential term.
    MgkResidentBlockGradientSqexp = mgk_resident_block_gradient_sqexp {
        threads: Threads::UpTo(RESIDENT_BLOCK_THREADS),
        bounds: RESIDENT_BLOCK_BOUNDS.with_registers(128),
    },
    /// Resident hyperparameter gradient, one warp per pair, one Kronecker-delta term.
    MgkResidentWarpGradientKdelta = mgk_resident_warp_gradient_kdelta { threads: RESIDENT_WARPS, bounds: RESIDENT_WARP_GRADIENT_BOUNDS },
    /// Resident hyperparameter gradient, one block per pair, one Kronecker-delta term.
    MgkResidentBlockGradientKdelta = mgk_resident_block_gradient_kdelta {
        threads: Threads::UpTo(RESIDENT_BLOCK_THREADS),
        bounds: RESIDENT_BLOCK_BOUNDS.with_registers(128),
    },
    /// Resident hyperparameter gradient in product form (Kronecker-delta κe, unit weights), one warp
    /// per pair (at 96 registers it spilled ~440 bytes; the fused solve's slices leave room for few
    /// warps per SM anyway).
    MgkResidentWarpGradientProduct = mgk_resident_warp_gradient_product { threads: RESIDENT_WARPS, bounds: RESIDENT_WARP_GRADIENT_BOUNDS },
    /// Resident hyperparameter gradient in product form, one block per pair.
    MgkResidentBlockGradientProduct = mgk_resident_block_gradient_product {
        threads: Threads::UpTo(RESIDENT_BLOCK_THREADS),
        bounds: RESIDENT_BLOCK_BOUNDS.with_registers(128),
    },
    /// Resident solver, one block per pair, any κe, long rows of the second graph split into pieces.
    MgkResidentBlockGeneralSplit = mgk_resident_block_general_split {
        threads: Threads::UpTo(RESIDENT_BLOCK_THREADS),
        bounds: RESIDENT_BLOCK_BOUNDS.with_registers(128),
    },
    /// Resident solver, one block per pair, one square-exponential term, rows split into pieces.
    MgkResidentBlockSqexpSplit = mgk_resident_block_sqexp_split { threads: Threads::UpTo(RESIDENT_BLOCK_THREADS), bounds: RESIDENT_BLOCK_BOUNDS },
    /// Resident solver, one block per pair, one Kronecker-delta term, rows split into pieces.
    MgkResidentBlockKdeltaSplit = mgk_resident_block_kdelta_split { threads: Threads::UpTo(RESIDENT_BLOCK_THREADS), bounds: RESIDENT_BLOCK_BOUNDS },
    /// Resident solver in f64 (`precision = "f64"`), one warp per pair, any κe.
    MgkResidentWarpGeneralF64 = mgk_resident_warp_general_f64 { threads: RESIDENT_WARPS, bounds: LaunchBounds::NONE },
    /// Resident solver in f64, one warp per pair, one square-exponential term.
    MgkResidentWarpSqexpF64 = mgk_resident_warp_sqexp_f64 { threads: RESIDENT_WARPS, bounds: LaunchBounds::NONE },
    /// Resident solver in f64, one warp per pair, one Kronecker-delta term.
    MgkResidentWarpKdeltaF64 = mgk_resident_warp_kdelta_f64 { threads: RESIDENT_WARPS, bounds: LaunchBounds::NONE },
    /// Resident solver in f64, one block per pair, any κe.
    MgkResidentBlockGeneralF64 = mgk_resident_block_general_f64 {
        threads: Threads::UpTo(RESIDENT_BLOCK_THREADS),
        bounds: RESIDENT_BLOCK_BOUNDS.with_registers(128),
    },
    /// Resident solver in f64, one block per pair, one square-exponential term.
    MgkResidentBlockSqexpF64 = mgk_resident_block_sqexp_f64 { threads: Threads::UpTo(RESIDENT_BLOCK_THREADS), bounds: RESIDENT_BLOCK_BOUNDS },
    /// Resident solver in f64, one block per pair, one Kronecker-delta term.
    MgkResidentBlockKdeltaF64 = mgk_resident_block_kdelta_f64 { threads: Threads::UpTo(RESIDENT_BLOCK_THREADS), bounds: RESIDENT_BLOCK_BOUNDS },
    /// Resident solver in f64, product form, one warp per pair.
    MgkResidentWarpProductF64 = mgk_resident_warp_product_f64 { threads: RESIDENT_WARPS, bounds: LaunchBounds::NONE },
    /// Resident solver in f64, product form, one block per pair: 80 registers (109 unbounded), as
    /// the f32 entry (ChEMBL f64 0.559 → 0.541 s).
    MgkResidentBlockProductF64 = mgk_resident_block_product_f64 { threads: Threads::UpTo(RESIDENT_BLOCK_THREADS), bounds: RESIDENT_BLOCK_PRODUCT_BOUNDS },
    /// Resident solver in f64, one block per pair, any κe, rows split into pieces.
    MgkResidentBlockGeneralSplitF64 = mgk_resident_block_general_split_f64 {
        threads: Threads::UpTo(RESIDENT_BLOCK_THREADS),
        bounds: RESIDENT_BLOCK_BOUNDS.with_registers(128),
    },
    /// Resident solver in f64, one block per pair, one square-exponential term, rows split into pieces.
    MgkResidentBlockSqexpSplitF64 = mgk_resident_block_sqexp_split_f64 { threads: Threads::UpTo(RESIDENT_BLOCK_THREADS), bounds: RESIDENT_BLOCK_BOUNDS },
    /// Resident solver in f64, one block per pair, one Kronecker-delta term, rows split into pieces.
    MgkResidentBlockKdeltaSplitF64 = mgk_resident_block_kdelta_split_f64 { threads: Threads::UpTo(RESIDENT_BLOCK_THREADS), bounds: RESIDENT_BLOCK_BOUNDS },
    /// Resident solver in global memory (pairs whose slice exceeds shared memory), a team of blocks
    /// per pair (cooperative launch), any κe.
    MgkResidentGridGeneral = mgk_resident_grid_general { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: GRID_GENERAL_BOUNDS },
    /// Resident solver in global memory, a team of blocks per pair, one square-exponential term.
    MgkResidentGridSqexp = mgk_resident_grid_sqexp { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: GRID_BOUNDS },
    /// Resident solver in global memory, a team of blocks per pair, one Kronecker-delta term.
    MgkResidentGridKdelta = mgk_resident_grid_kdelta { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: GRID_BOUNDS },
    /// Resident solver in global memory in f64, any κe.
    MgkResidentGridGeneralF64 = mgk_resident_grid_general_f64 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: GRID_GENERAL_F64_BOUNDS },
    /// Resident solver in global memory in f64, one square-exponential term.
    MgkResidentGridSqexpF64 = mgk_resident_grid_sqexp_f64 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: GRID_F64_BOUNDS },
    /// Resident solver in global memory in f64, one Kronecker-delta term.
    MgkResidentGridKdeltaF64 = mgk_resident_grid_kdelta_f64 { threads: Threads::Exactly(SOLVER_BLOCK_THREADS), bounds: GRID_F64_BOUNDS },
    /// Shortest-path kernel, general form (continuous node/length kernels), f64.
    SpGeneralF64 = sp_general_f64 { threads: Threads::Exactly(SP_BLOCK_THREADS), bounds: LaunchBounds::NONE },
    /// Shortest-path kernel: dot products of histograms (pair lists).
    SpHistogramDot = sp_histogram_dot { threads: Threads::Exactly(SP_BLOCK_THREADS), bounds: LaunchBounds::NONE },
    /// Shortest-path kernel: per-graph histograms of unit-weight graphs by breadth-first hops.
    SpHopHistograms = sp_hop_histograms { threads: Threads::Exactly(SP_BLOCK_THREADS), bounds: LaunchBounds::NONE },
    /// Shortest-path kernel: the whole Gram matrix of histograms.
    SpHistogramGram = sp_histogram_gram { threads: Threads::Exactly(SP_BLOCK_THREADS), bounds: LaunchBounds::NONE },
    /// Shortest-path kernel: all-pairs shortest paths by Floyd–Warshall, one block per graph.
    SpFloydWarshall = sp_floyd_warshall { threads: Threads::Exactly(SP_BLOCK_THREADS), bounds: LaunchBounds::NONE },
    /// Graphlet transform, pass 1 for light nodes (one warp per node).
    GraphletPass1Light = graphlet_pass1_light { threads: Threads::Exactly(GRAPHLET_BLOCK_THREADS), bounds: GRAPHLET_WARP_BOUNDS },
    /// Graphlet transform, pass 1 for heavy nodes (one block per node).
    GraphletPass1Heavy = graphlet_pass1_heavy { threads: Threads::Exactly(GRAPHLET_BLOCK_THREADS), bounds: LaunchBounds::NONE },
    /// Graphlet transform, pass 2 (one warp per node).
    GraphletPass2 = graphlet_pass2 { threads: Threads::Exactly(GRAPHLET_BLOCK_THREADS), bounds: GRAPHLET_WARP_BOUNDS },
    /// Graphlet transform: the counts narrowed to i32 for the download.
    GraphletNarrow = graphlet_narrow { threads: Threads::Exactly(GRAPHLET_BLOCK_THREADS), bounds: LaunchBounds::NONE },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_id_has_its_literal() {
        for (i, a) in Kernel::ALL.iter().enumerate() {
            for b in &Kernel::ALL[i + 1..] {
                assert_ne!(a.name(), b.name(), "{a:?} and {b:?} share a PTX name");
            }
        }
        assert_eq!(entry_name!(MgkSolveF32), Kernel::MgkSolveF32.name());
        assert_eq!(Kernel::MgkResidentWarpProduct.decl().bounds.max_registers, 96);
    }

    #[test]
    fn threads_allow_only_declared_block_sizes() {
        assert!(Threads::Exactly(128).allows(128) && !Threads::Exactly(128).allows(64));
        assert!(Threads::UpTo(512).allows(96) && !Threads::UpTo(512).allows(100) && !Threads::UpTo(512).allows(1024) && !Threads::UpTo(512).allows(0));
    }
}

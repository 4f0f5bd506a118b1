//! The marginalized graph kernel solver's launch shape (its entries: [`crate::entries`]).
use crate::names::{BLOCK_THREADS, BLOCK_WARPS};

/// Threads per block of the solver kernels ([`BLOCK_THREADS`]).
pub const SOLVER_BLOCK_THREADS: u32 = BLOCK_THREADS;
/// Warps per solver block.
pub const SOLVER_WARPS: u32 = BLOCK_WARPS;

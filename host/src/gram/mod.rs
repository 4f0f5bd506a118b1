//! The Gram driver, shared by every pairwise graph kernel: the [`GraphKernel`] trait a method
//! implements (evaluate listed pairs on its backend) and the driver methods it provides (K(X),
//! K(X, Y), diag, listed pairs, normalized), the [`Gram`] result with per-pair [`PairInfo`], and
//! [`RunControl`] (progress, cancellation, streaming blocks of pairs), and [`Known`] entries of an
//! interrupted run to resume from.
pub mod control;
pub mod kernel;
pub mod partial;
pub mod tiles;

pub use crate::matrix::{Gradient, Gram, PairInfo};
pub use control::RunControl;
pub use kernel::{Evaluation, GraphKernel};
pub use partial::Known;
pub use tiles::{Tile, TilePlan, block_tiles, default_tile_size, gram_tile, normalize_tile};

//! # octile-types — the one boundary between the host and the GPU kernels
//!
//! Everything that both sides must agree on lives here, once. Shared by every method: the
//! floating-point abstraction ([`real`]), the base-kernel descriptions and their pure math
//! ([`kernel_spec`]), every GPU entry declared once ([`entries`]: typed ids, PTX names, block sizes,
//! launch bounds), the module-wide launch shape ([`names`]) and the one PCG solver ([`pcg`]). One module per
//! method: [`mgk`] (the marginalized graph kernel: octile layout, launch parameters, tile-pair
//! primitives, tiled vectors); [`sp`] (the shortest-path kernel), [`graphlets`] (the fast graphlet transform). The crate is `no_std` and allocation-free so
//! the nvptx64 kernels and the x86-64 host compile the very same source; every shared type carries a
//! `const` size/align assertion, so a layout drift fails the build on both sides.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch))]
#![deny(missing_docs)]

// host builds may enable `std` for the platform libm (faster `exp` than the pure-Rust one)
#[cfg(feature = "std")]
extern crate std;

pub mod entries;
pub mod graphlets;
pub mod kernel_spec;
pub mod mgk;
pub mod names;
pub mod pcg;
pub mod real;
pub mod sp;

pub use entries::{EntryDecl, Kernel, LaunchBounds, Threads};
pub use kernel_spec::{BaseKernel, BaseKernelKind, Combine, KernelSpec, MAX_TERMS, PairKernel, SpecDerivative};
pub use mgk::blocked::GatheredKernel;
pub use mgk::gradient::{GradientParams, Hyper, HyperKind, MAX_HYPERPARAMETERS};
pub use mgk::layout::{GraphDesc, Octile};
pub use mgk::params::{MgkParams, PairJob, PairStatus, TeamSync, TileBenchParams, team_sync_records};
pub use mgk::primitives::{Primitive, PrimitiveMap};
pub use mgk::resident::{EdgeShape, ResidentGraph, ResidentParams};
pub use mgk::tiling::{TILE, TILE_AREA};
pub use real::Real;

#[cfg(feature = "cudarc")]
mod cudarc_impls {
    use super::*;
    // SAFETY: all of these are #[repr(C)], Copy, contain no pointers or padding-dependent
    // invariants, and every bit pattern of zero is a valid value.
    unsafe impl cudarc::driver::DeviceRepr for Octile {}
    unsafe impl cudarc::driver::ValidAsZeroBits for Octile {}
    unsafe impl cudarc::driver::DeviceRepr for GraphDesc {}
    unsafe impl cudarc::driver::ValidAsZeroBits for GraphDesc {}
    unsafe impl cudarc::driver::DeviceRepr for PairJob {}
    unsafe impl cudarc::driver::ValidAsZeroBits for PairJob {}
    unsafe impl cudarc::driver::DeviceRepr for PairStatus {}
    unsafe impl cudarc::driver::DeviceRepr for crate::sp::SpGraph {}
    unsafe impl cudarc::driver::ValidAsZeroBits for crate::sp::SpGraph {}
    unsafe impl cudarc::driver::DeviceRepr for crate::sp::SpHistogram {}
    unsafe impl cudarc::driver::ValidAsZeroBits for crate::sp::SpHistogram {}
    unsafe impl cudarc::driver::DeviceRepr for crate::sp::SpParams {}
    unsafe impl cudarc::driver::DeviceRepr for crate::sp::SpHopGraph {}
    unsafe impl cudarc::driver::ValidAsZeroBits for crate::sp::SpHopGraph {}
    unsafe impl cudarc::driver::DeviceRepr for crate::sp::SpHopParams {}
    unsafe impl cudarc::driver::DeviceRepr for crate::sp::SpGramParams {}
    unsafe impl cudarc::driver::DeviceRepr for crate::sp::SpApspGraph {}
    unsafe impl cudarc::driver::ValidAsZeroBits for crate::sp::SpApspGraph {}
    unsafe impl cudarc::driver::DeviceRepr for crate::sp::SpApspParams {}
    unsafe impl cudarc::driver::DeviceRepr for crate::graphlets::launch::GraphletParams {}
    unsafe impl cudarc::driver::ValidAsZeroBits for PairStatus {}
    unsafe impl cudarc::driver::DeviceRepr for MgkParams {}
    unsafe impl cudarc::driver::DeviceRepr for TileBenchParams {}
    unsafe impl cudarc::driver::DeviceRepr for TeamSync {}
    unsafe impl cudarc::driver::ValidAsZeroBits for TeamSync {}
    unsafe impl cudarc::driver::DeviceRepr for ResidentGraph {}
    unsafe impl cudarc::driver::ValidAsZeroBits for ResidentGraph {}
    unsafe impl cudarc::driver::DeviceRepr for ResidentParams {}
    unsafe impl cudarc::driver::DeviceRepr for GradientParams {}
}

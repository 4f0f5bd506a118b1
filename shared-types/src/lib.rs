//! # octile-types — the one boundary between the host and the GPU kernels
//!
//! Everything that both sides must agree on lives here, once: the `#[repr(C)]` layouts that travel
//! to the device ([`layout`]), the base-kernel descriptions and their pure math ([`kernel_spec`]),
//! the tiled vector layout of the product system ([`tiling`]), the tile-pair XMV primitives and
//! the map choosing between them ([`primitives`], register blocking in [`blocked`]), the floating-point abstraction
//! ([`real`]) and the PTX entry-point names ([`names`]). The crate is `no_std` and allocation-free so
//! the nvptx64 kernels and the x86-64 host compile the very same source; every shared type carries a
//! `const` size/align assertion, so a layout drift fails the build on both sides.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch))]
#![deny(missing_docs)]

// host builds may enable `std` for the platform libm (faster `exp` than the pure-Rust one)
#[cfg(feature = "std")]
extern crate std;

pub mod blocked;
pub mod kernel_spec;
pub mod layout;
pub mod names;
pub mod primitives;
pub mod real;
pub mod tiling;

pub use blocked::GatheredKernel;
pub use kernel_spec::{BaseKernel, BaseKernelKind, Combine, KernelSpec, MAX_TERMS};
pub use layout::{GraphDesc, MgkParams, Octile, PairJob, PairStatus, TeamSync, TileBenchParams};
pub use primitives::{Primitive, PrimitiveMap};
pub use real::Real;
pub use tiling::{TILE, TILE_AREA};

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
    unsafe impl cudarc::driver::ValidAsZeroBits for PairStatus {}
    unsafe impl cudarc::driver::DeviceRepr for MgkParams {}
    unsafe impl cudarc::driver::DeviceRepr for TileBenchParams {}
    unsafe impl cudarc::driver::DeviceRepr for TeamSync {}
    unsafe impl cudarc::driver::ValidAsZeroBits for TeamSync {}
}

//! # octile-kernels — the GPU side of octile, in pure `no_std` Rust
//!
//! Compiled to PTX by rustc's own `nvptx64-nvidia-cuda` backend (`-Zbuild-std=core`), linked with
//! octile's own bitcode link step (`tools/ptx-link.sh`: llvm-link → opt → llc), and embedded into the
//! host library by `host/build.rs`. Every `#[repr(C)]` type, layout constant and kernel name comes
//! from `octile-types`, the same source the host compiles.
//!
//! Layout: shared device helpers ([`intrinsics`]: PTX instructions as safe-ish functions;
//! [`smem`]: the module's static shared memory; [`reduce`]: block reductions), one module tree per
//! method ([`mgk`], [`sp`], [`graphlets`]) and [`selftest`] (`SmokeIntrinsics`).
//!
//! A Rust panic (failed bounds check, overflow in debug) becomes the PTX `trap` instruction: the
//! launch fails with `CUDA_ERROR_LAUNCH_FAILED` instead of reading out of bounds.
#![no_std]
#![feature(abi_ptx, stdarch_nvptx, asm_experimental_arch, stmt_expr_attributes)]
#![allow(clippy::missing_safety_doc)]

// shared device helpers: every method's kernels build on these
pub mod intrinsics;
pub mod reduce;
pub mod smem;
// one module tree per method
pub mod graphlets;
pub mod mgk;
pub mod sp;
// the device self-test of the helpers (not used by any method)
pub mod selftest;

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    intrinsics::trap()
}

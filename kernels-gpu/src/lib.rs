//! # octile-kernels — the GPU side of octile, in pure `no_std` Rust
//!
//! Compiled to PTX by rustc's own `nvptx64-nvidia-cuda` backend (`-Zbuild-std=core`), linked with
//! octile's own bitcode link step (`tools/ptx-link.sh`: llvm-link → opt → llc), and embedded into the
//! host library by `host/build.rs`. Every `#[repr(C)]` type, layout constant and kernel name comes
//! from `octile-types`, the same source the host compiles.
//!
//! A Rust panic (failed bounds check, overflow in debug) becomes the PTX `trap` instruction: the
//! launch fails with `CUDA_ERROR_LAUNCH_FAILED` instead of reading out of bounds.
#![no_std]
#![feature(abi_ptx, stdarch_nvptx, asm_experimental_arch)]
#![allow(clippy::missing_safety_doc)]

pub mod intrinsics;
pub mod mgk;
pub mod reduce;
pub mod smem;
pub mod smoke;
pub mod stage;
pub mod team;
pub mod tile_bench;

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    intrinsics::trap()
}

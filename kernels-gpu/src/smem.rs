//! Static shared memory of the solver block.
//!
//! Rust has no `addrspace(3)` statics, so the arrays are declared in PTX with `global_asm!` and
//! reached through their generic address (`cvta.shared`). Sizes come from `octile-types`.
//!
//! ```text
//! octile_smem (BLOCK_WARPS × WARP_STAGE_BYTES, sized for f64)
//!   warp w: [ tile A : 64 × MAX_NZ_STRIDE ][ tile B : 64 × MAX_NZ_STRIDE ][ p block : 64 ]
//!            dense expansion of one octile of G and one of G' (weight, edge features per entry;
//!            weight 0 where the bitmap is clear), and the 8×8 block of p the pair multiplies.
//! dynamic_smem (per launch)
//!   the resident solver's team slices (`octile_types::mgk::resident`)
//! reduce_smem (256 bytes)
//!   [ per-warp partial sums: BLOCK_WARPS × 2 f64 ][ broadcast slot: u32 ][ pad ][ deal: u32 ]
//!   deal: the block's output-block dealing counter (`team::BlockTeam`), at DEAL_SLOT_OFFSET
//! ```
//! Why: the tile pair is expanded once per warp and then read 64× by the warp's lanes from shared
//! memory instead of global memory; the p block is one coalesced 64-value load shared by all lanes.
use core::arch::{asm, global_asm};
use octile_types::mgk::layout::MAX_NZ_STRIDE;
use octile_types::mgk::tiling::TILE_AREA;
use octile_types::names::BLOCK_WARPS;

/// Values of T staged per warp: two expanded tiles and one p block.
pub const WARP_STAGE_ELEMS: usize = 2 * TILE_AREA * MAX_NZ_STRIDE + TILE_AREA;
/// Bytes staged per warp (sized for f64, the widest T).
pub const WARP_STAGE_BYTES: usize = WARP_STAGE_ELEMS * 8;
/// Bytes of `octile_smem`.
pub const OCTILE_SMEM_BYTES: usize = WARP_STAGE_BYTES * BLOCK_WARPS as usize;
/// Bytes of `reduce_smem`.
pub const REDUCE_SMEM_BYTES: usize = 256;
/// Offset in `reduce_smem` of the block's output-block dealing counter (after the partial sums and
/// the broadcast slot).
pub const DEAL_SLOT_OFFSET: usize = 2 * BLOCK_WARPS as usize * 8 + 8;

global_asm!(".shared .align 16 .b8 octile_smem[{n}];", n = const OCTILE_SMEM_BYTES);
global_asm!(".shared .align 16 .b8 reduce_smem[{n}];", n = const REDUCE_SMEM_BYTES);

/// Generic address of `octile_smem`.
#[inline(always)]
pub fn octile_smem() -> *mut u8 {
    let p: u64;
    // SAFETY: takes the address of a module-scope shared array; no memory is accessed.
    unsafe { asm!("cvta.shared.u64 {p}, octile_smem;", p = out(reg64) p, options(nostack, preserves_flags, pure, nomem)) };
    p as *mut u8
}

unsafe extern "C" {
    /// `tools/smem.ll`: the generic address of `dynamic_smem`, an `addrspace(3)` array there.
    safe fn octile_dynamic_smem() -> *mut u8;
}

/// Generic address of the launch's dynamic shared memory (`shared_mem_bytes` of the launch).
/// Defined in LLVM IR (`tools/smem.ll`, linked by `tools/ptx-link.sh`) as an address-space cast of
/// the shared array: every pointer derived from it compiles to shared-memory loads and stores.
#[inline(always)]
pub fn dynamic_smem() -> *mut u8 {
    octile_dynamic_smem()
}

/// Generic address of `reduce_smem`.
#[inline(always)]
pub fn reduce_smem() -> *mut u8 {
    let p: u64;
    // SAFETY: takes the address of a module-scope shared array; no memory is accessed.
    unsafe { asm!("cvta.shared.u64 {p}, reduce_smem;", p = out(reg64) p, options(nostack, preserves_flags, pure, nomem)) };
    p as *mut u8
}

const _: () = assert!(2 * (BLOCK_WARPS as usize) * 8 + 8 <= DEAL_SLOT_OFFSET && DEAL_SLOT_OFFSET + 4 <= REDUCE_SMEM_BYTES);
const _: () = assert!(OCTILE_SMEM_BYTES + REDUCE_SMEM_BYTES <= 48 * 1024);

//! PTX entry-point names and launch shapes shared by every kernel of the module. The kernels in
//! `kernels-gpu` are `#[no_mangle]` functions with exactly the names here and in
//! [`crate::mgk::names`]; the host loads them by these constants, and a host test checks that the
//! embedded PTX declares every one of them ([`crate::ALL_KERNELS`]).

/// Threads per block of every kernel of the module (4 warps). The kernels' static shared memory
/// and block reductions are sized for exactly this many warps; the host launches with this block
/// size and nothing else.
pub const BLOCK_THREADS: u32 = 128;
/// Warps per block.
pub const BLOCK_WARPS: u32 = BLOCK_THREADS / 32;

/// Device self-test of the intrinsics (lane ids, shuffles, votes, popc/fns, atomics).
pub const SMOKE_INTRINSICS: &str = "smoke_intrinsics";

/// Threads per block of the smoke-test kernel.
pub const SMOKE_BLOCK_THREADS: u32 = BLOCK_THREADS;
/// Number of `u32` result words the smoke kernel writes per thread.
pub const SMOKE_WORDS_PER_THREAD: usize = 8;

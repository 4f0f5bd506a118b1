//! Launch shapes shared by every kernel of the module (the entries themselves, their names and
//! bounds: [`crate::entries`]).

/// Threads per block of every kernel of the module (4 warps). The kernels' static shared memory
/// and block reductions are sized for exactly this many warps; the host launches with this block
/// size and nothing else.
pub const BLOCK_THREADS: u32 = 128;
/// Warps per block.
pub const BLOCK_WARPS: u32 = BLOCK_THREADS / 32;

/// Threads per block of the smoke-test kernel.
pub const SMOKE_BLOCK_THREADS: u32 = BLOCK_THREADS;
/// Number of `u32` result words the smoke kernel writes per thread.
pub const SMOKE_WORDS_PER_THREAD: usize = 8;

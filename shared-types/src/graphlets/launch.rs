//! The GPU transform's launch shape, parameters and entry names (kernels: `octile_kernels::graphlets`,
//! launches: `octile::graphlets::gpu`).
//!
//! ```text
//! device arrays (n nodes, 2m CSR entries; 2m < 2³²)
//!   row_start  u32 [n + 1]     col  u32 [2m]  sorted rows, no self-loops, no repeats
//!   c3         u32 [2m]        w_ij = |N(i) ∩ N(j)| per CSR entry (pass 1; pass 2 reads it)
//!   d2d4       i64 [2n]        d̂2, d̂4 per node (pass 1; pass 2 reads the neighbours')
//!   raw, net   i64 [16n]       node-major rows (pass 1 writes raw's pass-1 orbits, pass 2 the rest
//!                              and net)
//!   heavy      u32 [n]         nodes whose 2-walks do not fit a warp's table (pass 1 lists them)
//!   status     u32 [8]         [heavy count, overflow flag, an overflowing node, dealing counter,
//!                              the most 2-walks of a heavy node, a count past i32, 0, 0]
//!   narrow     i32 [16n]       the kept counts narrowed for the download, when they all fit
//! pass 1, light: one warp per node, its 2-walk counts in a hash table of the warp's own
//!   GRAPHLET_TABLE_SLOTS (key, count) slots of shared memory, sized per node to the next power of
//!   two ≥ 2·W_i (W_i = Σ_{k∈N(i)} d_k, the node's 2-walks): cleared and probed in O(W_i), not O(n)
//! pass 1, heavy: one block per listed node at a time, its counts in a hash table of the block's
//!   GRAPHLET_MEDIUM_SLOTS slots of shared memory when W_i ≤ GRAPHLET_MEDIUM_WALKS, else in the
//!   block's own n-word slice of a dense global workspace (allocated only when such a node exists;
//!   zero between nodes: the block clears what it touched)
//! pass 2: one warp per node; triangles {i, j, k} found by binary search of j in the sorted N(i)
//! ```
//! Why hash tables per warp: FGlT's dense per-thread arrays of n counters cost 4n bytes per thread;
//! 2-walks of a sparse graph's node touch a few dozen nodes, which fit a warp's slice of shared
//! memory. Hubs (few, with up to 2m 2-walks) get a dense array each, one block at a time.

/// Threads per block of every graphlet kernel.
pub const GRAPHLET_BLOCK_THREADS: u32 = 256;
/// Warps per block.
pub const GRAPHLET_BLOCK_WARPS: u32 = GRAPHLET_BLOCK_THREADS / 32;
/// Hash slots per warp in pass 1 (each a u32 key and a u32 count).
pub const GRAPHLET_TABLE_SLOTS: u32 = 512;
/// A node is light when its 2-walks W_i ≤ this (the table stays at most half full).
pub const GRAPHLET_LIGHT_WALKS: u32 = GRAPHLET_TABLE_SLOTS / 2;
/// Hash slots of the heavy kernel's block-wide table (each a u32 key and a u32 count).
pub const GRAPHLET_MEDIUM_SLOTS: u32 = 8192;
/// A heavy node's counts go to the block's shared table when its 2-walks W_i ≤ this, else to a
/// dense global workspace.
pub const GRAPHLET_MEDIUM_WALKS: u32 = GRAPHLET_MEDIUM_SLOTS / 2;
/// Bytes of the heavy kernel's per-warp partial sums (at the start of its dynamic shared memory).
pub const GRAPHLET_HEAVY_PARTIAL_BYTES: u32 = GRAPHLET_BLOCK_WARPS * 64;
/// Bytes of dynamic shared memory of the heavy pass-1 kernel: the partials, then the table.
pub const GRAPHLET_HEAVY_SMEM_BYTES: u32 = GRAPHLET_HEAVY_PARTIAL_BYTES + GRAPHLET_MEDIUM_SLOTS * 8;
/// Bytes of dynamic shared memory of the light pass-1 kernel.
pub const GRAPHLET_PASS1_SMEM_BYTES: u32 = GRAPHLET_BLOCK_WARPS * GRAPHLET_TABLE_SLOTS * 8;
/// An empty hash slot's key (no node has this id: n < 2³² − 1).
pub const GRAPHLET_EMPTY_KEY: u32 = u32::MAX;
/// Slots of the status array.
pub const GRAPHLET_STATUS_WORDS: usize = 8;
/// Status slot: how many nodes pass 1 listed as heavy.
pub const STATUS_HEAVY: usize = 0;
/// Status slot: nonzero when a count passed `i64`.
pub const STATUS_OVERFLOW: usize = 1;
/// Status slot: the smallest node whose count passed `i64` (`u32::MAX` when none).
pub const STATUS_OVERFLOW_NODE: usize = 2;
/// Status slot: the heavy kernel's dealing counter.
pub const STATUS_DEAL: usize = 3;
/// Status slot: the most 2-walks W_i of a node pass 1 listed as heavy (the dense workspace is
/// needed when it passes `GRAPHLET_MEDIUM_WALKS`).
pub const STATUS_MAX_WALKS: usize = 4;
/// Status slot: nonzero when a count does not fit `i32` (the download then stays `i64`).
pub const STATUS_WIDE: usize = 5;

/// The launch parameters of all three kernels.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphletParams {
    /// Nodes.
    pub n_nodes: u32,
    /// Dense workspaces of the heavy kernel (one `n_nodes`-word slice per block; 0 when no heavy
    /// node has more than `GRAPHLET_MEDIUM_WALKS` 2-walks).
    pub n_workspaces: u32,
}

const _: () = assert!(core::mem::size_of::<GraphletParams>() == 8 && core::mem::align_of::<GraphletParams>() == 4);

/// The slot of `key` to probe first in a table of `slots` (a power of two) slots: Fibonacci
/// hashing (consecutive ids spread over the table).
#[inline(always)]
pub fn table_home(key: u32, slots: u32) -> u32 {
    key.wrapping_mul(0x9E37_79B1) >> (32 - slots.trailing_zeros()) & (slots - 1)
}

/// The table size for a node of `walks` 2-walks: the next power of two ≥ 2·walks, at least 32.
#[inline(always)]
pub fn table_slots(walks: u32) -> u32 {
    (2 * walks).max(32).next_power_of_two()
}

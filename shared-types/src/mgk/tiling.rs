//! The tiled layout of product-graph vectors.
//!
//! A vector over the product graph G × G' (n·m entries, index pair (i, i')) is stored tile-major:
//! the 8×8 block of node pairs (I, I') = (i / 8, i' / 8) is 64 contiguous values, row-major inside.
//!
//! ```text
//!  G' tiles →   I'=0        I'=1        ...  I'=Mt-1
//!  I=0       [ 64 vals ] [ 64 vals ]        [ 64 vals ]
//!  I=1       [ 64 vals ] ...
//!  ...                                     (Nt·Mt·64 values; Nt = ⌈n/8⌉, Mt = ⌈m/8⌉)
//!
//!  inside a block: offset (i % 8)·8 + (i' % 8)
//! ```
//!
//! Why: the XMV of a pair of octiles (one of G in tile-row I, column J; one of G' in tile-row I',
//! column J') reads exactly block (J, J') of p and writes exactly block (I, I') of A·p, so both are
//! one coalesced 64-value access, and the warp that owns block (I, I') accumulates it without atomics.
//! Padding entries (i ≥ n or i' ≥ m) have diagonal 1 and right-hand side 0, so they stay 0 through
//! CG and never need a bounds check.

/// Tile edge: octiles are 8×8.
pub const TILE: usize = 8;
/// Entries of one tile.
pub const TILE_AREA: usize = TILE * TILE;
/// Vectors of scratch each pair needs on the device: x, r, p, ap, and the Jacobi inverse diagonal.
pub const SCRATCH_VECTORS: usize = 5;

/// Number of tile rows (or columns) of a graph with `n_nodes` nodes.
#[inline(always)]
pub const fn n_tiles(n_nodes: usize) -> usize {
    n_nodes.div_ceil(TILE)
}

/// Length of a padded, tiled product vector for graphs of `n` and `m` nodes.
#[inline(always)]
pub const fn padded_len(n: usize, m: usize) -> usize {
    n_tiles(n) * n_tiles(m) * TILE_AREA
}

/// Position of entry (i, i') in the tiled layout, `mt` = tile columns of G' (`n_tiles(m)`).
#[inline(always)]
pub const fn tiled_index(i: usize, ip: usize, mt: usize) -> usize {
    ((i / TILE) * mt + ip / TILE) * TILE_AREA + (i % TILE) * TILE + ip % TILE
}

/// Inverse of [`tiled_index`]: the node pair (i, i') of position `idx`.
#[inline(always)]
pub const fn tiled_coords(idx: usize, mt: usize) -> (usize, usize) {
    let block = idx / TILE_AREA;
    let within = idx % TILE_AREA;
    ((block / mt) * TILE + within / TILE, (block % mt) * TILE + within % TILE)
}

/// Device scratch elements one pair needs ([`SCRATCH_VECTORS`] padded vectors).
#[inline(always)]
pub const fn scratch_len(n: usize, m: usize) -> usize {
    SCRATCH_VECTORS * padded_len(n, m)
}

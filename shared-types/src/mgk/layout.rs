//! `#[repr(C)]` layout of a packed graph set: octiles, graph descriptors, node and nonzero rows.
//!
//! A set of graphs is packed into five flat arrays, uploaded once and read by every solver:
//!
//! ```text
//! graphs     [GraphDesc; n_graphs]     n_nodes, n_tile_rows, where its rows/nodes start
//! row_ptr    [u32]                     per graph n_tile_rows+1 absolute octile indices (CSR over tile rows)
//! octiles    [Octile]                  non-empty 8×8 tiles, sorted by (tile_row, tile_col) per graph
//! edge_data  [T; nnz · nz_stride]      per nonzero, in bit order of its octile:
//!                                      [ weight, edge feature 0, edge feature 1, ... ]
//! node_data  [T; nodes · node_stride]  per node: [ d, p, node feature 0, node feature 1, ... ]
//!
//!  Octile (24 bytes)                    its nonzeros, compact
//!  ┌───────────────────────────┐        edge_data[nz_offset·stride ..]
//!  │ nz_mask   u64  bit r·8+c  │──────▶ ┌──────┬──────┬──────┐
//!  │ tile_row  u32             │        │ nz 0 │ nz 1 │ ...  │  (popcount(nz_mask) entries,
//!  │ tile_col  u32             │        └──────┴──────┴──────┘   lowest set bit first)
//!  │ nz_offset u32  (nonzeros) │
//!  │ _pad      u32             │
//!  └───────────────────────────┘
//! ```
//!
//! Why this shape: only non-empty tiles are stored (inter-tile sparsity, COO), and inside a tile only
//! its nonzeros (intra-tile sparsity, bitmap + compact values), so an empty region of the adjacency
//! matrix costs nothing and a sparse tile costs its popcount. The row pointer lets the owner of an
//! output block find its tiles without a search. Both triangles of the symmetric adjacency matrix are
//! stored, so a tile pair's product needs no transposition logic. Node degree d already includes the
//! 1/(1 − q) factor; p is the starting probability.

/// One non-empty 8×8 tile of a graph's adjacency matrix.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Octile {
    /// Bit `r·8 + c` is set iff entry (tile_row·8 + r, tile_col·8 + c) is nonzero.
    pub nz_mask: u64,
    /// Tile row (in units of 8 nodes).
    pub tile_row: u32,
    /// Tile column (in units of 8 nodes).
    pub tile_col: u32,
    /// Index of this tile's first nonzero in `edge_data` (in nonzeros, not values).
    pub nz_offset: u32,
    /// Padding (keeps the size a multiple of 8 on both sides).
    pub _pad: u32,
}

impl Octile {
    /// Number of nonzeros.
    #[inline(always)]
    pub fn nnz(&self) -> u32 {
        self.nz_mask.count_ones()
    }
    /// Rank of bit `pos` among the set bits (its index in the compact nonzeros).
    #[inline(always)]
    pub fn rank(&self, pos: u32) -> u32 {
        (self.nz_mask & ((1u64 << pos) - 1)).count_ones()
    }
    /// Its nonzeros in storage order: (bit position r·8 + c, index into the compact nonzeros).
    #[inline(always)]
    pub fn nonzeros(&self) -> impl Iterator<Item = (usize, usize)> {
        let mut mask = self.nz_mask;
        let mut k = self.nz_offset as usize;
        core::iter::from_fn(move || {
            if mask == 0 {
                return None;
            }
            let bit = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            k += 1;
            Some((bit, k - 1))
        })
    }
    /// The 8-bit mask of row `r` (0..8) of the tile.
    #[inline(always)]
    pub fn row_mask(&self, r: u32) -> u32 {
        ((self.nz_mask >> (r * 8)) & 0xff) as u32
    }
}

/// Where one graph's data lies in the packed arrays.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphDesc {
    /// Number of nodes (≥ 1).
    pub n_nodes: u32,
    /// ⌈n_nodes / 8⌉.
    pub n_tile_rows: u32,
    /// Index of this graph's first entry in `row_ptr`.
    pub row_ptr_offset: u32,
    /// Index of this graph's first node in `node_data` (in nodes, not values).
    pub node_offset: u32,
}

/// `edge_data` holds only the nonzeros of each octile, in bit order: entry k of a tile is at
/// `nz_offset + rank(k)` (the default).
pub const TILE_STORAGE_COMPACT: u32 = 0;
/// `edge_data` holds all 64 entries of each octile (zeros included): entry k is at `nz_offset + k`.
/// Only for measuring what compact storage gains (the ablation benchmark).
pub const TILE_STORAGE_DENSE: u32 = 1;

/// Offset of the degree d in a node row.
pub const NODE_D: usize = 0;
/// Offset of the starting probability p in a node row.
pub const NODE_P: usize = 1;
/// Offset of the first feature in a node row.
pub const NODE_FEATURES: usize = 2;
/// Offset of the weight in a nonzero row.
pub const NZ_WEIGHT: usize = 0;
/// Offset of the first feature in a nonzero row.
pub const NZ_FEATURES: usize = 1;
/// Most edge features the GPU kernels stage per nonzero (their shared memory is sized for it).
pub const MAX_EDGE_FEATURES: usize = 4;
/// Most values per nonzero on the GPU.
pub const MAX_NZ_STRIDE: usize = NZ_FEATURES + MAX_EDGE_FEATURES;

const _: () = assert!(core::mem::size_of::<Octile>() == 24 && core::mem::align_of::<Octile>() == 8);
const _: () = assert!(core::mem::size_of::<GraphDesc>() == 16 && core::mem::align_of::<GraphDesc>() == 4);

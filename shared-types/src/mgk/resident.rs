//! The resident solver: one pair's whole product system in shared memory, one team per pair.
//!
//! For pairs whose product system fits a slice of shared memory (molecules, graphs of ~100 nodes)
//! the product is solved by one warp (small pairs) or one block (up to ~10⁴ unknowns) that keeps
//! both graphs and all five CG vectors in shared memory, so each CG iteration reads global memory
//! not at all. The XMV is evaluated on the fly, one product row (i, i') per thread, from the two
//! graphs in CSR form with their nodes sorted by degree (so neighbouring threads walk rows of similar
//! length and the lanes of a warp finish together).
//!
//! Each graph is one contiguous run of 32-bit words in `words`, copied into the team's slice with
//! one loop:
//!
//! ```text
//! ResidentGraph { offset, n_nodes, nnz, n_pieces }      words[offset ..]:
//!   [ row_ptr : n + 1  u32 ]  CSR over nodes, local (row_ptr[0] = 0)
//!   [ col     : nnz    u32 ]  neighbour of each nonzero
//!   [ pad     : 0 or 1 u32 ]  f64 sets only: the values start 8-byte aligned
//!   [ edge    : nnz · nz_stride  real ]   weight, edge features (as `layout::NZ_*`)
//!   [ node    : n · node_stride  real ]   ρ (d's relative low part), d, p, node features (`layout::NODE_*`)
//!   [ pieces  : n_pieces u32 ]  node << 16 | first nonzero, see `PIECE_NONZEROS`
//!   [ pad     : 0 or 1 u32 ]  f64 sets only: the run ends 8-byte aligned
//!
//! team slice (shared memory, `slice_words` words):
//!   [ graph 1 ][ graph 2 ][ dg : N ][ x : N ][ r : N ][ p : N ][ ap : N ]    N = n · n′, real
//! ```
//! `real` is the set's precision: f32 (one word per value; the default, as GraphDot: f32 everywhere
//! but the reductions, which are f64) or f64 (two words per value, `real_words` = 2: the same solver
//! in f64 for `precision = "f64"`). Why: a team reads each graph once per pair instead of once per
//! iteration, and the vectors never leave the SM. The host checks the true residual the kernel
//! reports and re-solves with the tile solver any pair that misses the tolerance.
use crate::kernel_spec::{BaseKernelKind, Combine, KernelSpec};

/// Where one graph lies in the resident word array.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResidentGraph {
    /// First word of the graph's run in `words`.
    pub offset: u32,
    /// Nodes (≥ 1).
    pub n_nodes: u32,
    /// Stored nonzeros (both triangles; a self-loop once).
    pub nnz: u32,
    /// Pieces of the graph's rows (0: no row is split, see `PIECE_NONZEROS`).
    pub n_pieces: u32,
}

/// Rows with more nonzeros than this are cut into pieces of this many (the last piece of a row
/// takes the rest) when the graph is the second of a pair, and the XMV gives each thread one
/// (row of G, piece of a row of G′) instead of one product row. The pieces are sorted by length,
/// longest first, so on graphs with hubs (BA) the lanes of a warp walk inner loops of equal length
/// instead of waiting for the hub's. A piece is `node << 16 | first nonzero` and ends at
/// min(first + PIECE_NONZEROS, row end); together the pieces cover every nonzero once. A graph
/// whose rows all fit, or with n or nnz ≥ 2^16, has no pieces and is never split.
pub const PIECE_NONZEROS: usize = 8;

/// Values a resident node row holds before the packed layout's `[d, p, features…]`: d's relative
/// low part ρ, first in the row, so that a kernel reads it at a fixed offset from the row's d. In
/// f32 sets d = d_hi·(1 + ρ) with d_hi = f32(d) and ρ = f32((d − d_hi)/d_hi) (in f64 sets ρ = 0),
/// and d is the f32-rounded weights' row sum over 1 − q. The iterations read d_hi; the true residual
/// reads d₁d₂ = d_hi₁d_hi₂·(1 + ρ₁ + ρ₂) in f64, so it checks the system of the stored weights with
/// d exact to ~1e-14. With d_hi alone it checked d rounded to f32, and for a structure-only kernel
/// (κv ≡ κe ≡ 1: nearly singular along the constant vector) K moved by ~ε_f32/q: 9.6e-5 at
/// q = 0.0005 for two cycles (`results/session36-scripts/f32_d_rounding.py`). (Read last in the row,
/// at row + stride − 1, it made six gradient and grid entries spill; the fused solver's true residual
/// reads ρ after the row's other values for the same reason.)
pub const RESIDENT_NODE_EXTRA: usize = 1;

/// A resident node row's length for the packed layout's `node_stride`.
pub const fn resident_node_stride(node_stride: usize) -> usize {
    node_stride + RESIDENT_NODE_EXTRA
}

/// Words of one graph's run whose values take `real_words` words each (1: f32, 2: f64).
pub const fn graph_words(n_nodes: usize, nnz: usize, node_stride: usize, nz_stride: usize, n_pieces: usize, real_words: usize) -> usize {
    let ints = (n_nodes + 1 + nnz).next_multiple_of(real_words);
    (ints + real_words * (nnz * nz_stride + n_nodes * node_stride) + n_pieces).next_multiple_of(real_words)
}

/// Words before a run's values (row pointers, columns, alignment): where its edge rows start.
pub const fn graph_value_offset(n_nodes: usize, nnz: usize, real_words: usize) -> usize {
    (n_nodes + 1 + nnz).next_multiple_of(real_words)
}

/// Vectors of the product system a team keeps: dg, x, r, p, ap (apart, or the f32 product form's
/// x, r and row records `[p ap dg]`: `octile_kernels::mgk::resident::solve_pair`).
pub const RESIDENT_VECTORS: usize = 5;

/// Global scratch of a resident gradient launch per team, in slices (`slice_words` f32 each): one
/// slice (≥ 5·N words) holds the fused solve's x and ap (4·N) of any pair whose vectors do not all
/// fit the team's shared memory (`octile_kernels::mgk::resident::FusedVectors::beside`).
pub const GRADIENT_SCRATCH_SLICES: usize = 1;

/// Words of a team slice for a pair: both graphs and the five vectors; a graph is (nodes, nonzeros,
/// pieces); values of `real_words` words each.
pub const fn slice_words(g1: (usize, usize, usize), g2: (usize, usize, usize), node_stride: usize, nz_stride: usize, real_words: usize) -> usize {
    graph_words(g1.0, g1.1, node_stride, nz_stride, g1.2, real_words)
        + graph_words(g2.0, g2.1, node_stride, nz_stride, g2.2, real_words)
        + RESIDENT_VECTORS * real_words * g1.0 * g2.0
}

/// The product form of the resident solver, for κe a Kronecker delta and every edge weight 1:
/// κe then takes two values (1 or h), so each nonzero of the product's off-diagonal part is one
/// 16-bit entry, built once per pair and read by every CG iteration:
///
/// ```text
/// entry = k′ << 2 | differs        k′ < 2^14: the column (j, j′)'s place in the vectors, differs: the labels differ
///
/// team slice (shared memory, `product_slice_words` words):
///   [ row_ptr 1 : n + 1 ][ row_ptr 2 : n′ + 1 ][ pad: f64 only ][ the vectors : 5·N real ][ spans : N u32 ][ entries : nnz·nnz′ u16 ][ order : N u16 ]
///   the vectors: f32 [ x | r | p₀ ap₀ dg₀ | p₁ ap₁ dg₁ | … ] (row records), f64 [ dg | x | r | p | ap ]
///   row (i, i′)'s entries: from rp1[i]·nnz′ + (rp1[i+1] − rp1[i])·rp2[i′], (rp1[i+1] − rp1[i])·(rp2[i′+1] − rp2[i′]) of them
///   spans[s] = the span of the XMV's s-th row (`product_row_position`): its first entry | its
///   entry count << PRODUCT_SPAN_START_BITS (`product_span`)
///   the vectors hold row s at place s, k′ is the column's place, order[k] = s: the place of row
///   k = i·n′ + i′
/// ```
/// The XMV walks its rows in the order with their spans at hand: one u32 load a row, where finding
/// the span from (i, i′) took four row-pointer loads and their arithmetic (33 SASS instructions a
/// row and iteration, 2026-12-02); the passes in the natural order (the setup, the true residual,
/// the gradients' contractions) find a row's span from the row pointers and its place in the
/// order table. Why the vectors follow the XMV's order: each lane then reads and writes its own
/// row's z at consecutive words across the warp, and its p, ap and dg 3 words apart in f32's row
/// records (3 and 32 share no factor: one shared-memory wavefront either way, where the rows'
/// natural places, scattered by the order, met bank conflicts) and the XMV loads no order table.
/// Why: the on-the-fly XMV reads two columns, two weights and two labels per product nonzero in
/// every iteration; the product form reads one 2-byte entry (the molecule regime of design note 1).
/// The graphs themselves stay in global memory: they are read once per pair. The entry is the
/// column's byte offset in an f32 vector (k′·4) with the flag in its free bit 0, so the XMV's inner
/// loop decodes it with one AND (the address; `product_entry_byte_offset`; a shift more for 8-byte
/// values: f64 and the fused solve's pairs) and one bit test (the flag), where a column in the low
/// 15 bits and the flag on top took four (mask, address, sign extension, compare). 14 column bits
/// lose no pair: a product-form slice of 2^14 unknowns (five f32 vectors, 320 KiB) is past any
/// GPU's shared memory.
pub const PRODUCT_COLUMN_BITS: u32 = 14;
/// Most unknowns n·n′ of a product-form pair (its columns fit `PRODUCT_COLUMN_BITS`).
pub const PRODUCT_MAX_UNKNOWNS: usize = 1 << PRODUCT_COLUMN_BITS;

/// The product-form entry of column `column` (< `PRODUCT_MAX_UNKNOWNS`) whose labels differ or not.
#[inline(always)]
pub const fn product_entry(column: u32, differs: bool) -> u16 {
    ((column << 2) | differs as u32) as u16
}

/// Whether a product-form entry's labels differ (κe = h) rather than match (κe = 1).
#[inline(always)]
pub const fn product_entry_differs(entry: u32) -> bool {
    entry & 1 != 0
}

/// Byte offset of a product-form entry's column in a vector of values `real_words` words wide
/// (1: f32, 2: f64): column · 4 · `real_words`.
#[inline(always)]
pub const fn product_entry_byte_offset(entry: u32, real_words: usize) -> u32 {
    (entry & 0xfffc) << (real_words == 2) as u32
}

/// Words of a product-form team slice (values of `real_words` words each): row pointers, the five
/// vectors, the rows' spans (u32 each), then the entries and the row order (u16 each).
pub const fn product_slice_words(g1: (usize, usize), g2: (usize, usize), real_words: usize) -> usize {
    let n = g1.0 * g2.0;
    product_vector_offset(g1.0, g2.0, real_words) + RESIDENT_VECTORS * real_words * n + n + (g1.1 * g2.1 + n).div_ceil(2)
}

/// Bits of a product row's span (`product_span`) that hold its first entry: a pair takes the
/// product form only with fewer than 2^17 entries (`PRODUCT_MAX_ENTRIES`; a slice that fits an
/// H100's or H200's 227 KiB of shared memory holds fewer than 116 k).
pub const PRODUCT_SPAN_START_BITS: u32 = 17;
/// Most entries nnz·nnz′ of a product-form pair.
pub const PRODUCT_MAX_ENTRIES: usize = 1 << PRODUCT_SPAN_START_BITS;
/// Most entries of one product row, deg(i)·deg(i′) (the span's other 15 bits). Never reached: a
/// row holds at most n·n′ ≤ `PRODUCT_MAX_UNKNOWNS` entries (a node's degree is at most n, with
/// its self-loop).
pub const PRODUCT_MAX_ROW_ENTRIES: usize = (1 << (32 - PRODUCT_SPAN_START_BITS)) - 1;
const _: () = assert!(PRODUCT_MAX_UNKNOWNS <= PRODUCT_MAX_ROW_ENTRIES);
// a slice holding PRODUCT_MAX_ENTRIES entries is past the largest shared memory of today's GPUs
// (227 KiB): no pair that fits one is refused for its entries
const _: () = assert!(PRODUCT_MAX_ENTRIES * 2 > 227 * 1024);

/// The span of a product row: its first entry (< `PRODUCT_MAX_ENTRIES`) and its entry count
/// (≤ `PRODUCT_MAX_ROW_ENTRIES`) in one word.
#[inline(always)]
pub const fn product_span(first: u32, len: u32) -> u32 {
    first | len << PRODUCT_SPAN_START_BITS
}

/// (first entry, entry count) of a product row's span.
#[inline(always)]
pub const fn product_span_parts(span: u32) -> (u32, u32) {
    (span & (PRODUCT_MAX_ENTRIES as u32 - 1), span >> PRODUCT_SPAN_START_BITS)
}

/// Where product row (i, i′) comes in the XMV's row order: the rows grouped by the degree of i
/// (G's nodes with i's degree are `a`, a run [a.0, a.1): the host sorts each graph's nodes by
/// degree), within that by the degree of i′ (run `b` of G′'s n′ nodes), each group row-major.
/// For any node order whose runs (maximal runs of equal degree) are given, the positions are a
/// permutation of 0..n·n′: sorting only makes the groups as large as they can be.
/// Row (i, i′) holds deg(i)·deg(i′) entries, so the rows of a group have equally many, and a
/// warp's 32 consecutive rows mostly come from one group: their lanes walk equally long loops.
/// In the natural order (i·n′ + i′) a warp's rows run over every degree of G′ (molecules: ~27
/// nodes of degrees 1–4), and the warp walks the longest row's entries with the others' lanes
/// idle: ChEMBL's rows took 1.66× the lane steps their entries need, 1.16× in this order
/// (2,000 random pairs).
///
/// ```text
///   G′'s degree runs:   b = 0      1        2
///   G's run a = 0     [ 0 1 2 ][ 3 4 5 6 ][ 7 ]       (a run of one node of G, n′ = 8)
///   G's run a = 1     [ 8..13 ][14 ... 21][22 23]     (two nodes: each group row-major)
/// ```
#[inline(always)]
pub const fn product_row_position(i: u32, a: (u32, u32), i2: u32, b: (u32, u32), n2: u32) -> u32 {
    a.0 * n2 + (a.1 - a.0) * b.0 + (i - a.0) * (b.1 - b.0) + (i2 - b.0)
}

/// Words before a product-form slice's vectors: both row-pointer arrays and alignment.
pub const fn product_vector_offset(n1: usize, n2: usize, real_words: usize) -> usize {
    (n1 + 1 + n2 + 1).next_multiple_of(real_words)
}

/// Threads of a block-team launch (one block per pair).
pub const RESIDENT_BLOCK_THREADS: u32 = 512;
/// Warps of a block team.
pub const RESIDENT_BLOCK_WARPS: u32 = RESIDENT_BLOCK_THREADS / 32;
/// Bytes at the start of a block team's shared memory for its reductions and broadcasts
/// (2 f64 per warp, then one u32).
pub const RESIDENT_BLOCK_HEADER_BYTES: usize = 2 * 8 * RESIDENT_BLOCK_WARPS as usize + 16;
/// Most warps (independent teams) in one block of a warp-team launch.
pub const RESIDENT_MAX_WARPS_PER_BLOCK: u32 = 8;

/// κe shapes with their own (monomorphized) kernel entries; anything else runs the general
/// interpreter of [`KernelSpec`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeShape {
    /// Any [`KernelSpec`].
    General = 0,
    /// One square-exponential term: κe = exp(coef · (a − b)²) on one feature.
    SquareExponential = 1,
    /// One Kronecker-delta term: κe = 1 if a == b else h, on one feature.
    KroneckerDelta = 2,
}

impl EdgeShape {
    /// The specialised shape of `spec`, if it has one: a single term with weight 1 (a product of
    /// one term, or a sum of one term of weight 1).
    pub fn of(spec: &KernelSpec) -> Self {
        let t = spec.terms();
        if t.len() != 1 || (spec.combine == Combine::Additive as u32 && t[0].weight != 1.0) {
            return EdgeShape::General;
        }
        match BaseKernelKind::from_u32(t[0].kind) {
            Some(BaseKernelKind::SquareExponential) => EdgeShape::SquareExponential,
            Some(BaseKernelKind::KroneckerDelta) => EdgeShape::KroneckerDelta,
            _ => EdgeShape::General,
        }
    }
}

/// Parameters of one resident-solver launch, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResidentParams {
    /// κv.
    pub node_kernel: KernelSpec,
    /// κe.
    pub edge_kernel: KernelSpec,
    /// A pair converges when its true residual ‖b − M·x‖ ≤ rtol·‖b‖; CG stops when the recurrence
    /// residual reaches `RECURRENCE_SHARE`·rtol.
    pub rtol: f64,
    /// Jobs in the job array.
    pub n_jobs: u32,
    /// Iteration limit per pair.
    pub max_iterations: u32,
    /// Values per node row.
    pub node_stride: u32,
    /// Values per nonzero row.
    pub nz_stride: u32,
    /// Words of each team's shared-memory slice (≥ [`slice_words`] of every job).
    pub slice_words: u32,
    /// Gradient entries: 0 where every job's fused vectors fit its slice (the slice holds
    /// [`fused_extra_words`] beyond the solver's needs), 1 where each job keeps p, r and dg there
    /// (the solver's room and [`FUSED_BESIDE_EXTRA_WORDS`]) and x and ap in the launch's scratch. The entries compile each case apart, so that the first
    /// reaches its vectors with shared-memory instructions. 0 for the solver entries.
    pub fused_beside: u32,
    /// Grid entries (`octile_kernels::mgk::resident::grid`): blocks per team; `slice_words` is then
    /// each team's slice of global scratch. 1 for the other entries (unread).
    pub team_blocks: u32,
    /// Gradient entries: 1 where the launch walks G′'s long rows in pieces in the solve's XMV
    /// (block teams whose second graph has pieces), else 0. The solver entries have split entries
    /// of their own (unread there).
    pub split: u32,
}

/// Words a gradient launch's slices hold beyond the solver's (the fused primal and adjoint solve's
/// extra vectors, `5·N`, and two words of alignment) where the fused vectors stay in the slice:
/// the kernel's layout takes at most `4·N + 2` more than the solver's five vectors.
#[inline(always)]
pub const fn fused_extra_words(n_unknowns: usize) -> usize {
    5 * n_unknowns + 2
}

/// Words a gradient launch's slices hold beyond the solver's where the fused vectors do not all fit
/// (`fused_beside`): p and r of both halves and dg (5·N, the solver's five vectors' room) stay in
/// the slice, after one word of alignment.
pub const FUSED_BESIDE_EXTRA_WORDS: usize = 1;

/// CG stops at a recurrence residual of this share of rtol, so that the true residual, which f32
/// rounding keeps a little above the recurrence, still meets rtol.
pub const RECURRENCE_SHARE: f64 = 0.5;

const _: () = assert!(core::mem::size_of::<ResidentGraph>() == 16 && core::mem::align_of::<ResidentGraph>() == 4);
const _: () = assert!(core::mem::size_of::<ResidentParams>() == 2 * 264 + 8 + 32 && core::mem::align_of::<ResidentParams>() == 8);
const _: () = assert!(RESIDENT_BLOCK_HEADER_BYTES.is_multiple_of(16) && RESIDENT_BLOCK_THREADS.is_multiple_of(32));

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    /// Per node, its run [first, end): the maximal run of consecutive nodes of its degree (in a
    /// sequence sorted by degree, all the nodes of that degree; as the kernel finds them).
    fn runs(deg: &[u32]) -> std::vec::Vec<(u32, u32)> {
        (0..deg.len())
            .map(|v| {
                let first = (0..=v).rev().take_while(|&u| deg[u] == deg[v]).last().unwrap();
                let end = (v..deg.len()).take_while(|&u| deg[u] == deg[v]).last().unwrap() + 1;
                (first as u32, end as u32)
            })
            .collect()
    }

    #[test]
    fn product_row_order_is_a_permutation_grouping_rows_of_equal_degrees() {
        let mut seed = 7u64;
        let mut rnd = |m: u32| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) % m as u64) as u32
        };
        for case in 0..200 {
            let (n1, n2) = (1 + rnd(40), 1 + rnd(40));
            let mut d1: std::vec::Vec<u32> = (0..n1).map(|_| rnd(5)).collect();
            let mut d2: std::vec::Vec<u32> = (0..n2).map(|_| rnd(5)).collect();
            // every third case unsorted: the runs are then shorter, the order still a permutation
            let sorted = case % 3 != 0;
            if sorted {
                d1.sort_unstable_by(|a, b| b.cmp(a));
                d2.sort_unstable_by(|a, b| b.cmp(a));
            }
            let (r1, r2) = (runs(&d1), runs(&d2));
            let mut at = std::vec![u32::MAX; (n1 * n2) as usize];
            for i in 0..n1 {
                for i2 in 0..n2 {
                    let s = product_row_position(i, r1[i as usize], i2, r2[i2 as usize], n2);
                    assert!(s < n1 * n2, "case {case}: row ({i}, {i2}) at {s} of {}", n1 * n2);
                    assert_eq!(at[s as usize], u32::MAX, "case {case}: position {s} taken twice");
                    at[s as usize] = i * n2 + i2;
                }
            }
            // each group of rows with the same (deg i, deg i′) is one run of positions
            let degs: std::vec::Vec<(u32, u32)> = at.iter().map(|&k| (d1[(k / n2) as usize], d2[(k % n2) as usize])).collect();
            let changes = degs.windows(2).filter(|w| w[0] != w[1]).count();
            let groups = {
                let mut g: std::vec::Vec<(u32, u32)> = degs.clone();
                g.sort_unstable();
                g.dedup();
                g.len()
            };
            if sorted {
                assert_eq!(changes + 1, groups, "case {case}: groups not contiguous");
            }
        }
    }

    #[test]
    fn product_spans_keep_first_entry_and_count() {
        for first in [0u32, 1, 4095, PRODUCT_MAX_ENTRIES as u32 - 1] {
            for len in [0u32, 1, 16, 12345, PRODUCT_MAX_ROW_ENTRIES as u32] {
                assert_eq!(product_span_parts(product_span(first, len)), (first, len), "first {first}, len {len}");
            }
        }
    }

    #[test]
    fn product_entries_keep_column_and_flag_and_give_the_columns_byte_offset() {
        for column in [0u32, 1, 2, 777, PRODUCT_MAX_UNKNOWNS as u32 - 1] {
            for differs in [false, true] {
                let e = product_entry(column, differs) as u32;
                assert_eq!(product_entry_differs(e), differs, "column {column}");
                assert_eq!(product_entry_byte_offset(e, 1), 4 * column, "f32 offset of column {column}");
                assert_eq!(product_entry_byte_offset(e, 2), 8 * column, "f64 offset of column {column}");
            }
        }
    }
}

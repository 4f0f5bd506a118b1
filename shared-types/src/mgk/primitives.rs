//! The tile-pair XMV primitives and the map that chooses between them — one implementation, used by
//! the GPU kernel (on tiles expanded in shared memory) and the CPU solver (on tiles expanded in a
//! per-pair workspace).
//!
//! For one pair of octiles A (of G) and B (of G') and the 8×8 block of p they multiply, the output
//! entry (ra, rb) of the 64-entry output block is
//!
//! ```text
//!   Σ_j Σ_j'  w_A[ra][j] · w_B[rb][j'] · κe(e_A[ra][j], e_B[rb][j']) · p[j][j']
//! ```
//!
//! Each side is walked either **dense** (all 8 columns, a fixed-trip unrolled loop: no branches, no
//! divergence, but κe is evaluated for every one of the 64 column pairs) or **sparse** (only the
//! set bits of the row's 8-bit mask: `trailing_zeros` + clear-lowest-bit, so κe is evaluated
//! only where both entries are nonzero, at the cost of a data-dependent loop). That gives four
//! primitives; which one is fastest depends on the two tiles' nonzero counts, the cost of κe and
//! the hardware, hence the [`PrimitiveMap`], measured by `octile tune`.
//!
//! Expanded tile layout (what both the GPU's shared-memory staging and the CPU's workspace hold):
//!
//! ```text
//! entry k = r·8 + c, k in 0..64, `stride` values each:  [ weight | edge features ... ]
//! absent entries: weight 0 and features 0 (finite, so a dense walk adds exact zeros)
//! ```
use crate::kernel_spec::{KernelSpec, PairKernel};
use crate::mgk::blocked::{GatheredKernel, rows_pair_blocked};
use crate::mgk::layout::{NZ_FEATURES, NZ_WEIGHT};
use crate::mgk::tiling::TILE;
use crate::real::Real;

/// One tile-pair primitive. The discriminant is the code stored in a [`PrimitiveMap`].
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// Both tiles walked dense.
    DenseDense = 0,
    /// Tile A (of G) dense, tile B (of G') sparse.
    DenseSparse = 1,
    /// Tile A sparse, tile B dense.
    SparseDense = 2,
    /// Both tiles walked by their set bits.
    SparseSparse = 3,
}

impl Primitive {
    /// All four, in code order.
    pub const ALL: [Primitive; 4] = [Primitive::DenseDense, Primitive::DenseSparse, Primitive::SparseDense, Primitive::SparseSparse];

    /// From a map code (codes above 3 read as sparse × sparse).
    #[inline(always)]
    pub const fn from_code(c: u8) -> Primitive {
        match c {
            0 => Primitive::DenseDense,
            1 => Primitive::DenseSparse,
            2 => Primitive::SparseDense,
            _ => Primitive::SparseSparse,
        }
    }

    /// One-letter name used in profiles and tables: `D`, `L` (dense left), `R` (dense right), `S`.
    pub const fn letter(self) -> char {
        match self {
            Primitive::DenseDense => 'D',
            Primitive::DenseSparse => 'L',
            Primitive::SparseDense => 'R',
            Primitive::SparseSparse => 'S',
        }
    }

    /// Inverse of [`Primitive::letter`].
    pub const fn from_letter(c: char) -> Option<Primitive> {
        match c {
            'D' => Some(Primitive::DenseDense),
            'L' => Some(Primitive::DenseSparse),
            'R' => Some(Primitive::SparseDense),
            'S' => Some(Primitive::SparseSparse),
            _ => None,
        }
    }
}

/// Nonzero counts are grouped into bins of this width: bin(nnz) = nnz / 4, so bin 16 is exactly 64.
pub const NNZ_BIN_WIDTH: u32 = 4;
/// Bins per axis (nnz 0..=64).
pub const NNZ_BINS: usize = 17;

/// Bin of a nonzero count.
#[inline(always)]
pub const fn nnz_bin(nnz: u32) -> usize {
    let b = (nnz / NNZ_BIN_WIDTH) as usize;
    if b < NNZ_BINS { b } else { NNZ_BINS - 1 }
}

/// Which primitive to use for a tile pair, by (bin of nnz(A), bin of nnz(B)): 17 × 17 codes,
/// row-major in the bin of A.
///
/// ```text
/// codes[bin(nnz_A) · 17 + bin(nnz_B)]   one Primitive code (u8) each; 289 bytes + 7 padding
/// ```
/// It travels inside [`crate::mgk::params::MgkParams`] by value (no extra pointer, no extra upload), so the
/// per-tile-pair choice costs one popcount pair and one byte load from the constant bank.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrimitiveMap {
    /// The codes.
    pub codes: [u8; NNZ_BINS * NNZ_BINS],
    /// Padding to a multiple of 8 bytes.
    pub _pad: [u8; 7],
}

impl PrimitiveMap {
    /// Every tile pair uses `p`.
    pub const fn uniform(p: Primitive) -> Self {
        PrimitiveMap { codes: [p as u8; NNZ_BINS * NNZ_BINS], _pad: [0; 7] }
    }

    /// Sparse × sparse while both bins are at most `sparse_max_bin`, dense × dense otherwise —
    /// the paper's production rule, used when no measured profile is available.
    pub const fn threshold(sparse_max_bin: usize) -> Self {
        let mut m = Self::uniform(Primitive::DenseDense);
        let mut a = 0;
        while a < NNZ_BINS {
            let mut b = 0;
            while b < NNZ_BINS {
                if a <= sparse_max_bin && b <= sparse_max_bin {
                    m.codes[a * NNZ_BINS + b] = Primitive::SparseSparse as u8;
                }
                b += 1;
            }
            a += 1;
        }
        m
    }

    /// The primitive for a pair of tiles with these nonzero counts.
    #[inline(always)]
    pub fn choose(&self, nnz_a: u32, nnz_b: u32) -> Primitive {
        Primitive::from_code(self.codes[nnz_bin(nnz_a) * NNZ_BINS + nnz_bin(nnz_b)])
    }

    /// Share of the tile pairs for which this map picks a primitive other than sparse × sparse, when
    /// both tiles of a pair are drawn from `hist` (tiles per nonzero-count bin): Σ over non-S bin
    /// pairs of hist[a]·hist[b], over (Σ hist)². 0 for an empty histogram, and exactly 0 when every
    /// pair of bins present maps to sparse × sparse (a launch then makes exactly the map's choices
    /// with the sparse-only kernel).
    pub fn non_sparse_share(&self, hist: &[f64; NNZ_BINS]) -> f64 {
        let mut total = 0.0;
        let mut other = 0.0;
        let mut a = 0;
        while a < NNZ_BINS {
            total += hist[a];
            let mut b = 0;
            while b < NNZ_BINS {
                if self.codes[a * NNZ_BINS + b] != Primitive::SparseSparse as u8 {
                    other += hist[a] * hist[b];
                }
                b += 1;
            }
            a += 1;
        }
        if total == 0.0 { 0.0 } else { other / (total * total) }
    }

    /// Set the code of bin pair (a, b).
    pub fn set(&mut self, bin_a: usize, bin_b: usize, p: Primitive) {
        self.codes[bin_a * NNZ_BINS + bin_b] = p as u8;
    }
}

/// Calls `f(j)` for the columns of one tile row: all 8 when `DENSE`, else the set bits of `mask`.
#[inline(always)]
fn for_cols<const DENSE: bool>(mask: u32, mut f: impl FnMut(usize)) {
    if DENSE {
        for j in 0..TILE {
            f(j);
        }
    } else {
        let mut m = mask;
        while m != 0 {
            let j = m.trailing_zeros() as usize;
            m &= m - 1;
            f(j);
        }
    }
}

/// Output entry (ra, rb) of one tile pair, with A walked dense iff `DA` and B dense iff `DB`.
///
/// # Safety
/// `tile_a` and `tile_b` point to expanded tiles (64 × `stride` values, layout above), `pblk` to 64
/// values (p[j·8 + j']); `stride ≥ 1`; `ra, rb < 8`; `mask_a`/`mask_b` are the 8-bit masks of row
/// ra of A / rb of B (only read by sparse walks).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn row_pair<T: Real, K: PairKernel, const DA: bool, const DB: bool>(
    edge_kernel: &K,
    tile_a: *const T,
    tile_b: *const T,
    pblk: *const T,
    stride: usize,
    ra: usize,
    rb: usize,
    mask_a: u32,
    mask_b: u32,
) -> T {
    let mut s = T::ZERO;
    for_cols::<DA>(mask_a, |j| {
        // SAFETY: ra·8 + j < 64 entries of `stride` values (caller's contract).
        let ea = unsafe { core::slice::from_raw_parts(tile_a.add((ra * TILE + j) * stride), stride) };
        let mut row = T::ZERO;
        for_cols::<DB>(mask_b, |jp| {
            // SAFETY: as above.
            let eb = unsafe { core::slice::from_raw_parts(tile_b.add((rb * TILE + jp) * stride), stride) };
            let ke = edge_kernel.eval(&ea[NZ_FEATURES..], &eb[NZ_FEATURES..]);
            // SAFETY: j·8 + jp < 64.
            row += eb[NZ_WEIGHT] * ke * unsafe { *pblk.add(j * TILE + jp) };
        });
        s += ea[NZ_WEIGHT] * row;
    });
    s
}

/// [`row_pair`] with the primitive chosen at run time: the shared-tiling walks (the solver's
/// default entries).
///
/// # Safety
/// See [`row_pair`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn row_pair_with<T: Real, K: PairKernel>(
    prim: Primitive,
    edge_kernel: &K,
    tile_a: *const T,
    tile_b: *const T,
    pblk: *const T,
    stride: usize,
    ra: usize,
    rb: usize,
    mask_a: u32,
    mask_b: u32,
) -> T {
    // SAFETY: forwarded.
    unsafe {
        match prim {
            Primitive::DenseDense => row_pair::<T, K, true, true>(edge_kernel, tile_a, tile_b, pblk, stride, ra, rb, mask_a, mask_b),
            Primitive::DenseSparse => row_pair::<T, K, true, false>(edge_kernel, tile_a, tile_b, pblk, stride, ra, rb, mask_a, mask_b),
            Primitive::SparseDense => row_pair::<T, K, false, true>(edge_kernel, tile_a, tile_b, pblk, stride, ra, rb, mask_a, mask_b),
            Primitive::SparseSparse => row_pair::<T, K, false, false>(edge_kernel, tile_a, tile_b, pblk, stride, ra, rb, mask_a, mask_b),
        }
    }
}

/// Output entries (ra0, rb) and (ra1, rb) of one tile pair with the primitive chosen at run time:
/// [`row_pair`] for each row, except that the walks dense in B (`D`, `R`) use the register-blocked
/// [`rows_pair_blocked`] (both rows at once) when `dense.usable` (κe reads ≤ 2 distinct features).
///
/// # Safety
/// See [`row_pair`] and [`rows_pair_blocked`]; `dense` is [`GatheredKernel::of`]`(edge_kernel)`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn rows_pair_with<T: Real>(
    prim: Primitive,
    edge_kernel: &KernelSpec,
    dense: &GatheredKernel,
    tile_a: *const T,
    tile_b: *const T,
    pblk: *const T,
    stride: usize,
    (ra0, ra1, rb): (usize, usize, usize),
    (mask_a0, mask_a1, mask_b): (u32, u32, u32),
) -> (T, T) {
    let blocked = dense.usable != 0;
    macro_rules! two {
        ($da:expr, $db:expr) => {
            (
                row_pair::<T, KernelSpec, $da, $db>(edge_kernel, tile_a, tile_b, pblk, stride, ra0, rb, mask_a0, mask_b),
                row_pair::<T, KernelSpec, $da, $db>(edge_kernel, tile_a, tile_b, pblk, stride, ra1, rb, mask_a1, mask_b),
            )
        };
    }
    // SAFETY: forwarded.
    unsafe {
        match prim {
            Primitive::DenseDense if blocked => rows_pair_blocked::<T, true>(dense, tile_a, tile_b, pblk, stride, ra0, ra1, rb, mask_a0, mask_a1),
            Primitive::DenseDense => two!(true, true),
            Primitive::DenseSparse => two!(true, false),
            Primitive::SparseDense if blocked => rows_pair_blocked::<T, false>(dense, tile_a, tile_b, pblk, stride, ra0, ra1, rb, mask_a0, mask_a1),
            Primitive::SparseDense => two!(false, true),
            Primitive::SparseSparse => two!(false, false),
        }
    }
}

const _: () = assert!(core::mem::size_of::<PrimitiveMap>() == 296 && core::mem::align_of::<PrimitiveMap>() == 1);
const _: () = assert!(NNZ_BINS == 64 / NNZ_BIN_WIDTH as usize + 1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_cover_0_to_64() {
        assert_eq!(nnz_bin(0), 0);
        assert_eq!(nnz_bin(3), 0);
        assert_eq!(nnz_bin(4), 1);
        assert_eq!(nnz_bin(63), 15);
        assert_eq!(nnz_bin(64), 16);
        assert_eq!(nnz_bin(1000), 16);
    }

    #[test]
    fn threshold_map_is_sparse_below_and_dense_above() {
        let m = PrimitiveMap::threshold(2);
        assert_eq!(m.choose(11, 11), Primitive::SparseSparse);
        assert_eq!(m.choose(12, 3), Primitive::DenseDense);
        assert_eq!(m.choose(3, 64), Primitive::DenseDense);
        let mut u = PrimitiveMap::uniform(Primitive::DenseSparse);
        u.set(16, 0, Primitive::SparseDense);
        assert_eq!(u.choose(64, 1), Primitive::SparseDense);
        assert_eq!(u.choose(1, 64), Primitive::DenseSparse);
    }

    #[test]
    fn non_sparse_share_is_zero_only_over_sparse_bin_pairs() {
        // one tile in each bin whose bit is set
        let hist = |bits: u32| -> [f64; NNZ_BINS] { core::array::from_fn(|b| (bits >> b & 1) as f64) };
        let mut m = PrimitiveMap::threshold(2);
        assert_eq!(m.non_sparse_share(&hist(0b111)), 0.0);
        // bins 0 and 3: (0,3), (3,0), (3,3) are dense × dense
        assert_eq!(m.non_sparse_share(&hist(0b1001)), 0.75);
        m.set(0, 2, Primitive::SparseDense);
        // bins 0 and 2: (0,2) only
        assert_eq!(m.non_sparse_share(&hist(0b101)), 0.25);
        assert_eq!(m.non_sparse_share(&hist(0b011)), 0.0);
        assert_eq!(m.non_sparse_share(&hist(0)), 0.0);
    }

    #[test]
    fn letters_and_codes_round_trip() {
        for p in Primitive::ALL {
            assert_eq!(Primitive::from_letter(p.letter()), Some(p));
            assert_eq!(Primitive::from_code(p as u8), p);
        }
        assert_eq!(Primitive::from_letter('x'), None);
    }
}

/// Tests of the tiling-blocking walks (`blocked`), here because they compare them with the
/// shared-tiling walks of this module (and `blocked` must not import this module back).
#[cfg(test)]
mod blocked_tests {
    use super::row_pair;
    use crate::kernel_spec::{BaseKernel, Combine, KernelSpec};
    use crate::mgk::blocked::{GatheredKernel, rows_pair_blocked};
    use crate::mgk::tiling::{TILE, TILE_AREA};

    fn kernel(terms: &[BaseKernel], combine: Combine) -> KernelSpec {
        let mut k = KernelSpec::unit();
        k.combine = combine as u32;
        k.n_terms = terms.len() as u32;
        for (i, t) in terms.iter().enumerate() {
            k.terms[i] = *t;
            k.terms[i].weight = 1.0 / terms.len() as f64;
        }
        k
    }

    #[test]
    fn gathering_assigns_slots_in_order_of_first_use() {
        let k = kernel(
            &[BaseKernel::kronecker_delta(2, 0.5), BaseKernel::constant(0.7), BaseKernel::square_exponential(0, 1.0), BaseKernel::kronecker_delta(2, 0.1)],
            Combine::Product,
        );
        let g = GatheredKernel::of(&k);
        assert_eq!((g.usable, g.slots, g.features), (1, 2, [2, 0]));
        let slots: [u32; 4] = core::array::from_fn(|i| g.spec.terms[i].feature);
        assert_eq!(slots, [0, 0, 1, 0]);
        let three = kernel(&[BaseKernel::kronecker_delta(0, 0.5), BaseKernel::kronecker_delta(1, 0.5), BaseKernel::kronecker_delta(2, 0.5)], Combine::Product);
        assert_eq!(GatheredKernel::of(&three).usable, 0);
        let additive = kernel(&[BaseKernel::kronecker_delta(0, 0.5)], Combine::Additive);
        assert_eq!(GatheredKernel::of(&additive).usable, 0);
        let unit = GatheredKernel::of(&KernelSpec::unit());
        assert_eq!((unit.usable, unit.slots), (1, 0));
    }

    /// A small deterministic generator (no std, no rand in this crate).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn blocked_walks_equal_the_shared_tiling_walks() {
        let kernels = [
            KernelSpec::unit(),
            kernel(&[BaseKernel::kronecker_delta(1, 0.3)], Combine::Product),
            kernel(&[BaseKernel::kronecker_delta(0, 0.5), BaseKernel::square_exponential(1, 0.8)], Combine::Product),
            kernel(&[BaseKernel::kronecker_delta(0, 0.5), BaseKernel::square_exponential(1, 0.8), BaseKernel::constant(0.4)], Combine::Product),
            kernel(&[BaseKernel::square_exponential(1, 2.0), BaseKernel::square_exponential(1, 0.5)], Combine::Product),
        ];
        let stride = 3; // weight + 2 features
        let mut rng = Lcg(7);
        for (ki, k) in kernels.iter().enumerate() {
            let g = GatheredKernel::of(k);
            assert_eq!(g.usable, 1);
            for trial in 0..20 {
                let density = trial as f64 / 19.0;
                let mut tiles = [[0.0f64; TILE_AREA * 3]; 2];
                let mut masks = [0u64; 2];
                for (t, tile) in tiles.iter_mut().enumerate() {
                    for e in 0..TILE_AREA {
                        if rng.next() < density {
                            masks[t] |= 1 << e;
                            tile[e * stride] = 0.1 + rng.next();
                            tile[e * stride + 1] = (rng.next() * 3.0).floor();
                            tile[e * stride + 2] = rng.next() * 2.0;
                        }
                    }
                }
                let p: [f64; TILE_AREA] = core::array::from_fn(|_| rng.next() - 0.5);
                for ra in 0..TILE {
                    for rb in 0..TILE {
                        let (ma, mb) = ((masks[0] >> (ra * 8)) as u32 & 0xff, (masks[1] >> (rb * 8)) as u32 & 0xff);
                        // SAFETY: 64-entry tiles of `stride` values, 64-value p block, features 0 and 1 < stride − 1.
                        let ra1 = (ra + 3) % TILE;
                        let ma1 = (masks[0] >> (ra1 * 8)) as u32 & 0xff;
                        let (dd, sd, want_dd, want_sd) = unsafe {
                            let (dd, dd1) = rows_pair_blocked::<f64, true>(&g, tiles[0].as_ptr(), tiles[1].as_ptr(), p.as_ptr(), stride, ra, ra1, rb, ma, ma1);
                            let (sd, sd1) = rows_pair_blocked::<f64, false>(&g, tiles[0].as_ptr(), tiles[1].as_ptr(), p.as_ptr(), stride, ra, ra1, rb, ma, ma1);
                            let want1 = row_pair::<f64, _, true, true>(k, tiles[0].as_ptr(), tiles[1].as_ptr(), p.as_ptr(), stride, ra1, rb, ma1, mb);
                            let want1s = row_pair::<f64, _, false, true>(k, tiles[0].as_ptr(), tiles[1].as_ptr(), p.as_ptr(), stride, ra1, rb, ma1, mb);
                            assert!(
                                (dd1 - want1).abs() <= 1e-13 * (1.0 + want1.abs()),
                                "kernel {ki} trial {trial} ({ra1},{rb}): second row D {dd1} vs {want1}"
                            );
                            assert!(
                                (sd1 - want1s).abs() <= 1e-13 * (1.0 + want1s.abs()),
                                "kernel {ki} trial {trial} ({ra1},{rb}): second row R {sd1} vs {want1s}"
                            );
                            (
                                dd,
                                sd,
                                row_pair::<f64, _, true, true>(k, tiles[0].as_ptr(), tiles[1].as_ptr(), p.as_ptr(), stride, ra, rb, ma, mb),
                                row_pair::<f64, _, false, true>(k, tiles[0].as_ptr(), tiles[1].as_ptr(), p.as_ptr(), stride, ra, rb, ma, mb),
                            )
                        };
                        let scale = 1e-13 * (1.0 + want_dd.abs());
                        assert!((dd - want_dd).abs() <= scale, "kernel {ki} trial {trial} ({ra},{rb}): blocked D {dd} vs {want_dd}");
                        assert!((sd - want_sd).abs() <= scale, "kernel {ki} trial {trial} ({ra},{rb}): blocked R {sd} vs {want_sd}");
                    }
                }
            }
        }
    }
}

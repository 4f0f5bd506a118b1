//! Register blocking for the walks that are dense in tile B — the paper's *tiling-blocking*
//! primitive (its Table III, "Tiling-Blocking"): the tile is staged in shared memory (or a CPU
//! workspace) as for every primitive, then row rb of B — its 8 weights and the edge features κe
//! reads — is loaded **once** into registers, and for each column j of row ra of A the values
//! κe(e_A[ra][j], e_B[rb][·]) are computed from registers, **term by term** over the row's columns
//! (the kind of each base kernel is dispatched once per r evaluations, not once per evaluation).
//!
//! ```text
//!   shared tiling (row_pair, D):  per output: 8 A entries + 64 B entries + 64 p   (stride values each)
//!   tiling-blocking (here):       per 2 outputs (rows ra0, ra1 of A): 16 A entries + 8 B entries
//!                                 + 64 p (≤ 3 values per entry; each p load serves both rows)
//!
//!   registers per thread:  wb[r] b0[r] b1[r]   a chunk of B's row: weights, feature slots 0 and 1
//!                          ke[r] p[r]          κe of one A entry against the chunk; p's row chunk
//!   r = 8 (f32), 4 (f64: two chunks per row)
//! ```
//!
//! Why "gathered": κe is a run-time [`KernelSpec`] whose terms index the feature row at run time,
//! and an array indexed at run time cannot live in registers (the compiler puts it in local
//! memory). So the host rewrites κe once per launch into a [`GatheredKernel`]: the (at most
//! [`GATHER_SLOTS`]) distinct features it reads are loaded into fixed slots, and each term names its
//! slot — a select between two registers, not an index. A κe that reads more distinct features, or
//! is a weighted sum (rare; kept out to bound the code this inlines into the solver's hot loop), is
//! marked unusable and the dense walks fall back to [`crate::mgk::primitives::row_pair`].
//!
//! The arithmetic is the same expression, in the same order, as `row_pair`'s dense×dense and
//! sparse×dense walks (κe's terms combined in term order, `row += w_B · κe · p`, `s += w_A · row`),
//! so the results are the same up to the compiler's contraction of multiply-adds.
use crate::kernel_spec::{Combine, KernelSpec};
use crate::mgk::layout::{NZ_FEATURES, NZ_WEIGHT};
use crate::mgk::tiling::TILE;
use crate::real::Real;

/// Feature slots a [`GatheredKernel`] holds in registers.
pub const GATHER_SLOTS: usize = 2;

/// κe rewritten for register blocking: the same terms, each term's `feature` replaced by its slot
/// (0 or 1), and the edge feature each slot holds.
///
/// ```text
/// offset   0: spec      KernelSpec (264 B)  terms' `feature` = slot; Constant terms: slot 0
/// offset 264: features  [u32; 2]            slot → index into the edge feature row
/// offset 272: slots     u32                 slots in use (0, 1 or 2)
/// offset 276: usable    u32                 0: κe reads > 2 distinct features or is a weighted
///                                           sum (the dense walks then use row_pair)
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GatheredKernel {
    /// κe with slots for features.
    pub spec: KernelSpec,
    /// Slot → edge feature index.
    pub features: [u32; GATHER_SLOTS],
    /// Slots in use.
    pub slots: u32,
    /// 1 if the register-blocked walks may be used.
    pub usable: u32,
}

impl GatheredKernel {
    /// Rewrite `k`: usable when it is a product of base kernels (the default combination) whose
    /// non-constant terms read at most [`GATHER_SLOTS`] distinct features.
    pub fn of(k: &KernelSpec) -> Self {
        let mut g = GatheredKernel { spec: *k, features: [0; GATHER_SLOTS], slots: 0, usable: (k.combine == Combine::Product as u32) as u32 };
        if g.usable == 0 {
            return g;
        }
        let n = k.terms().len();
        let mut i = 0;
        while i < n {
            let t = k.terms[i];
            if t.kind == crate::kernel_spec::BaseKernelKind::Constant as u32 {
                g.spec.terms[i].feature = 0;
            } else {
                let used = g.slots as usize;
                let mut slot = 0;
                while slot < used && g.features[slot] != t.feature {
                    slot += 1;
                }
                if slot == used {
                    if used == GATHER_SLOTS {
                        g.usable = 0;
                        return g;
                    }
                    g.features[used] = t.feature;
                    g.slots += 1;
                }
                g.spec.terms[i].feature = slot as u32;
            }
            i += 1;
        }
        g
    }
}

impl GatheredKernel {
    /// Whether the blocked walks may read this κe from nonzero rows of `stride` values (weight +
    /// features): usable, at most [`GATHER_SLOTS`] slots, every used slot's feature inside the row —
    /// the condition [`rows_pair_blocked`]'s safety contract names.
    pub fn fits(&self, stride: usize) -> bool {
        self.usable == 1 && self.slots as usize <= GATHER_SLOTS && self.features[..self.slots as usize].iter().all(|&f| NZ_FEATURES + (f as usize) < stride)
    }
}

/// κe of one A entry (slot values a0, a1) against R B entries of a row (slots b0, b1): the
/// same math as [`KernelSpec::eval`] for a product of base kernels (kind 0 constant, 1 Kronecker
/// delta, else square exponential), dispatched once per term for all R columns.
#[inline(always)]
fn kappa_row<T: Real, const R: usize>(spec: &KernelSpec, a0: T, a1: T, b0: &[T; R], b1: &[T; R]) -> [T; R] {
    let mut ke = [T::ONE; R];
    for t in spec.terms() {
        // the slot is a select, not an index: both slots' arrays stay in registers
        let second = t.feature != 0;
        let a = if second { a1 } else { a0 };
        let b = |jp: usize| if second { b1[jp] } else { b0[jp] };
        match t.kind {
            0 => {
                let c = T::from_f64(t.param);
                for k in ke.iter_mut() {
                    *k *= c;
                }
            }
            1 => {
                let h = T::from_f64(t.param);
                for (jp, k) in ke.iter_mut().enumerate() {
                    *k *= if a == b(jp) { T::ONE } else { h };
                }
            }
            _ => {
                let coef = T::from_f64(t.coef);
                for (jp, k) in ke.iter_mut().enumerate() {
                    let d = a - b(jp);
                    *k *= (coef * d * d).exp();
                }
            }
        }
    }
    ke
}

/// Columns of B held in registers at a time: the paper's chunk length r. f32: the whole row (r = 8,
/// the paper's choice); f64: half a row (r = 4), since 8 columns of three f64 values plus κe and p
/// exceed the register budget of the solver's launch bounds (measured: ptxas spilled ~1 KB).
pub const fn chunk_columns<T: Real>() -> usize {
    if T::BYTES == 4 { 8 } else { 4 }
}

/// Output entries (ra0, rb) and (ra1, rb) of one tile pair with B walked dense from registers and
/// A walked dense (`DA`) or by the set bits of its rows' masks — the register-blocked dense×dense
/// and sparse×dense primitives. Two rows of A share B's row in registers and each p value
/// (one shared load serves both); on the GPU a lane owns rows ra0 = ℓ/8 and ra1 = ℓ/8 + 4. B's row
/// is walked in [`chunk_columns`] chunks.
///
/// # Safety
/// As [`crate::mgk::primitives::row_pair`]: `tile_a`, `tile_b` expanded tiles (64 × `stride` values),
/// `pblk` 64 values, `ra0, ra1, rb < 8`, `mask_a0`/`mask_a1` the masks of rows ra0/ra1 of A (read
/// by the sparse walk only); and `g.usable == 1` with every used slot's feature inside the nonzero
/// row (`NZ_FEATURES + features[s] < stride` for `s < slots`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn rows_pair_blocked<T: Real, const DA: bool>(
    g: &GatheredKernel,
    tile_a: *const T,
    tile_b: *const T,
    pblk: *const T,
    stride: usize,
    ra0: usize,
    ra1: usize,
    rb: usize,
    mask_a0: u32,
    mask_a1: u32,
) -> (T, T) {
    let mut s = (T::ZERO, T::ZERO);
    // one of the two branches survives monomorphization
    // SAFETY: forwarded.
    unsafe {
        if chunk_columns::<T>() == 8 {
            rows_chunk::<T, DA, 8>(g, tile_a, tile_b, pblk, stride, (ra0, ra1, rb), (mask_a0, mask_a1), 0, &mut s);
        } else {
            rows_chunk::<T, DA, 4>(g, tile_a, tile_b, pblk, stride, (ra0, ra1, rb), (mask_a0, mask_a1), 0, &mut s);
            rows_chunk::<T, DA, 4>(g, tile_a, tile_b, pblk, stride, (ra0, ra1, rb), (mask_a0, mask_a1), 4, &mut s);
        }
    }
    s
}

/// Columns c0..c0 + R of B's row rb against rows ra0, ra1 of A, added to `s`.
///
/// # Safety
/// See [`rows_pair_blocked`]; `c0 + R ≤ 8`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn rows_chunk<T: Real, const DA: bool, const R: usize>(
    g: &GatheredKernel,
    tile_a: *const T,
    tile_b: *const T,
    pblk: *const T,
    stride: usize,
    (ra0, ra1, rb): (usize, usize, usize),
    (mask_a0, mask_a1): (u32, u32),
    c0: usize,
    s: &mut (T, T),
) {
    let (f0, f1) = (NZ_FEATURES + g.features[0] as usize, NZ_FEATURES + g.features[1] as usize);
    let slots = g.slots;
    let (mut wb, mut b0, mut b1) = ([T::ZERO; R], [T::ZERO; R], [T::ZERO; R]);
    for c in 0..R {
        // SAFETY: entry rb·8 + c0 + c < 64; the slots' offsets are inside the row (caller's contract).
        unsafe {
            let e = tile_b.add((rb * TILE + c0 + c) * stride);
            wb[c] = *e.add(NZ_WEIGHT);
            if slots > 0 {
                b0[c] = *e.add(f0);
            }
            if slots > 1 {
                b1[c] = *e.add(f1);
            }
        }
    }
    // w_A · Σ_c w_B[c] · κe(e_A[ra][j], e_B[rb][c0 + c]) · p[j][c0 + c] for entry ra·8 + j of A
    let row = |ra: usize, j: usize, p: &[T; R]| {
        // SAFETY: entry ra·8 + j < 64, slot offsets inside the row (caller's contract).
        unsafe {
            let e = tile_a.add((ra * TILE + j) * stride);
            let a0 = if slots > 0 { *e.add(f0) } else { T::ZERO };
            let a1 = if slots > 1 { *e.add(f1) } else { T::ZERO };
            let ke = kappa_row::<T, R>(&g.spec, a0, a1, &b0, &b1);
            let mut row = T::ZERO;
            for c in 0..R {
                row += wb[c] * ke[c] * p[c];
            }
            *e.add(NZ_WEIGHT) * row
        }
    };
    let prow = |j: usize| -> [T; R] {
        // SAFETY: p[j·8 + c0 + c] < 64 values.
        core::array::from_fn(|c| unsafe { *pblk.add(j * TILE + c0 + c) })
    };
    if DA {
        for j in 0..TILE {
            let p = prow(j);
            s.0 += row(ra0, j, &p);
            s.1 += row(ra1, j, &p);
        }
    } else {
        // both rows' set columns in one ascending walk (each row's terms still in column order)
        let mut m = mask_a0 | mask_a1;
        while m != 0 {
            let j = m.trailing_zeros() as usize;
            m &= m - 1;
            let p = prow(j);
            if mask_a0 >> j & 1 != 0 {
                s.0 += row(ra0, j, &p);
            }
            if mask_a1 >> j & 1 != 0 {
                s.1 += row(ra1, j, &p);
            }
        }
    }
}

const _: () = assert!(core::mem::size_of::<GatheredKernel>() == 264 + 16 && core::mem::align_of::<GatheredKernel>() == 8);

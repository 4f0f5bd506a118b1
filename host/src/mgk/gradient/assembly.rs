//! A gradient call's matrices from its pairs: K, the chosen columns of ∂K/∂θ and each entry's
//! info, row by row in one pass, normalized by the quotient rule where asked.
//!
//! ```text
//!   pairs (Layout)          K(X): the upper triangle, row-major      K(X, Y): every entry, then
//!                           (i ≤ j)                                   (normalized) both diagonals
//!   status[k], grads[k·P..]  one per pair, in the layout's order
//!   out: values  rows × cols           (row-major)
//!        gradient rows × cols × C       (C chosen columns, (h, factor): factor · ∂K/∂θ_h)
//!        info    rows × cols
//! ```
//! Why one pass: the gradient is P times K's size (ChEMBL: 180 MB); each output byte is written
//! once, and the convergence check a `NoConvergence` error needs is made as the entries are written
//! instead of by a second scan.
use super::{SelfFactor, info_of, normalized_entry};
use crate::matrix::PairInfo;
use octile_types::{MAX_HYPERPARAMETERS, PairStatus};
use rayon::prelude::*;

/// Where [`MarginalizedGraphKernel::gram_gradient`](crate::mgk::MarginalizedGraphKernel::gram_gradient)'s
/// pairs go: K(X) lists the upper triangle, K(X, Y) every entry and, normalized, both diagonals
/// after them.
pub(super) struct Layout {
    pub rows: usize,
    pub cols: usize,
    pub pairs: Vec<(u32, u32)>,
    pub symmetric: bool,
}

impl Layout {
    pub fn of(nx: usize, ny: Option<usize>, normalized: bool) -> Layout {
        let nxu = nx as u32;
        match ny {
            None => Layout { rows: nx, cols: nx, pairs: (0..nxu).flat_map(|i| (i..nxu).map(move |j| (i, j))).collect(), symmetric: true },
            Some(ny) => {
                let nyu = ny as u32;
                let mut pairs: Vec<(u32, u32)> = (0..nxu).flat_map(|i| (0..nyu).map(move |j| (i, nxu + j))).collect();
                if normalized {
                    pairs.extend((0..nxu + nyu).map(|i| (i, i)));
                }
                Layout { rows: nx, cols: ny, pairs, symmetric: false }
            }
        }
    }

    /// The pair of entry (r, c).
    #[inline]
    fn pair_of(&self, r: usize, c: usize) -> usize {
        if self.symmetric {
            let (i, j) = if r <= c { (r, c) } else { (c, r) };
            i * self.rows - i * i.saturating_sub(1) / 2 + j - i
        } else {
            r * self.cols + c
        }
    }

    /// The pair K(g, g) of graph g (normalized layouts; g < rows + cols for K(X, Y)).
    #[inline]
    fn self_pair(&self, g: usize) -> usize {
        if self.symmetric { self.pair_of(g, g) } else { self.rows * self.cols + g }
    }
}

/// What [`assemble`] returns.
pub(super) struct Assembled {
    /// K, rows × cols.
    pub values: Vec<f64>,
    /// The chosen columns of ∂K/∂θ, rows × cols × columns (empty for no column).
    pub gradient: Vec<f64>,
    /// Each entry's diagnostics (a normalized entry is converged only where both graphs' self
    /// pairs are).
    pub info: Vec<PairInfo>,
    /// Whether every entry converged.
    pub converged: bool,
    /// Pairs solved.
    pub pairs: usize,
}

/// The row of [`assemble`]'s outputs one task writes.
type RowOut<'a> = (usize, ((&'a mut [f64], &'a mut [f64]), &'a mut [PairInfo]));

/// K and the `picked` columns (hyperparameter, factor) of ∂K/∂θ from the layout's pairs
/// (`status`, and `grads` with `np` values per pair), normalized by the quotient rule through the
/// self pairs' gradients where `normalized`; rows in parallel.
pub(super) fn assemble(lay: &Layout, status: &[PairStatus], grads: &[f64], np: usize, picked: &[(usize, f64)], normalized: bool) -> Assembled {
    let (rows, cols, nc) = (lay.rows, lay.cols, picked.len());
    let value = |k: usize| status[k].value;
    let grad = |k: usize| &grads[k * np..(k + 1) * np];
    let mut values = vec![0.0; rows * cols];
    // (no column: one per entry while assembling, so that every row has its chunk; dropped after)
    let ncw = nc.max(1);
    let mut gv = vec![0.0; rows * cols * ncw];
    let mut info = vec![PairInfo::default(); rows * cols];
    // self pairs (normalized) and their gradients, as each graph's SelfFactor
    let n_self = match (normalized, lay.symmetric) {
        (false, _) => 0,
        (true, true) => rows,
        (true, false) => rows + cols,
    };
    let factors: Vec<Option<SelfFactor>> = (0..n_self).map(|g| SelfFactor::of(value(lay.self_pair(g)), grad(lay.self_pair(g)))).collect();
    let self_converged: Vec<bool> = (0..n_self).map(|g| info_of(&status[lay.self_pair(g)]).converged).collect();
    let identity = nc == np && picked.iter().enumerate().all(|(c, &(h, f))| c == h && f == 1.0);
    let pick = |out: &mut [f64], full: &[f64]| {
        if identity {
            out.copy_from_slice(full);
        } else {
            for (o, &(h, f)) in out.iter_mut().zip(picked) {
                *o = full[h] * f;
            }
        }
    };
    // one row per task (its values, gradients and infos are its own); true where all converged
    // (every row is written: the count below consumes them all)
    let row = |(r, ((vrow, grow), irow)): RowOut<'_>| -> bool {
        let mut all = true;
        for c in 0..cols {
            let k = lay.pair_of(r, c);
            let mut inf = info_of(&status[k]);
            let (kv, dk) = (value(k), grad(k));
            let out = &mut grow[c * ncw..c * ncw + nc];
            if normalized {
                let (ga, gb) = if lay.symmetric { (r, c) } else { (r, rows + c) };
                let mut full = [0.0; MAX_HYPERPARAMETERS];
                vrow[c] = normalized_entry(kv, dk, factors[ga].as_ref(), factors[gb].as_ref(), lay.symmetric && r == c, &mut full[..np]);
                pick(out, &full[..np]);
                inf.converged &= self_converged[ga] && self_converged[gb];
            } else {
                vrow[c] = kv;
                pick(out, dk);
            }
            all &= inf.converged;
            irow[c] = inf;
        }
        all
    };
    let width = cols.max(1);
    let converged = if crate::parallel::pooled(rows * cols) {
        values.par_chunks_mut(width).zip(gv.par_chunks_mut(width * ncw)).zip(info.par_chunks_mut(width)).enumerate().map(row).filter(|&ok| !ok).count() == 0
    } else {
        values.chunks_mut(width).zip(gv.chunks_mut(width * ncw)).zip(info.chunks_mut(width)).enumerate().map(row).filter(|&ok| !ok).count() == 0
    };
    if nc == 0 {
        gv = Vec::new();
    }
    Assembled { values, gradient: gv, info, converged, pairs: lay.pairs.len() }
}

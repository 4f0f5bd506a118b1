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
use crate::matrix::PairInfo;
use octile_types::{MAX_HYPERPARAMETERS, PairStatus};
use rayon::prelude::*;

/// A gradient pair's diagnostics: the solver's ([`crate::mgk::info`]), a non-finite value counted as not
/// converged (K's path marks those in the Gram driver, which the gradient does not go through).
pub(super) fn info_of(s: &PairStatus) -> PairInfo {
    let i = crate::mgk::info(s);
    PairInfo { converged: i.converged && s.value.is_finite(), ..i }
}

/// What normalizing by one graph's self-value takes, computed once per graph: 1/√K_ii and
/// ∂K_ii/∂θ / K_ii for each θ — `None` where K_ii is 0 or not finite. Per entry the quotient rule is
/// then one division and multiplications (it took two square roots and 3·P + 1 divisions per entry:
/// 20 ms of a 60 ms FreeSolv gradient call).
#[derive(Clone, Copy)]
pub struct SelfFactor {
    sqrt: f64,
    inv_sqrt: f64,
    rel: [f64; MAX_HYPERPARAMETERS],
}

impl SelfFactor {
    /// From K_ii and ∂K_ii/∂θ (P ≤ MAX_HYPERPARAMETERS values).
    pub fn of(k: f64, dk: &[f64]) -> Option<SelfFactor> {
        if k == 0.0 || !k.is_finite() {
            return None;
        }
        let mut rel = [0.0; MAX_HYPERPARAMETERS];
        for (r, d) in rel.iter_mut().zip(dk) {
            *r = d / k;
        }
        let sqrt = k.sqrt();
        Some(SelfFactor { sqrt, inv_sqrt: 1.0 / sqrt, rel })
    }
}

/// The normalized value K̃ = K/(√Ka·√Kb) of an entry whose value is `kv`, gradient `dk`, and whose
/// graphs' [`SelfFactor`]s are `a` and `b`, and the chosen `columns` (h, factor) of its gradient
/// (into `out`: factor · ∂K̃/∂θ_h) by the quotient rule ∂K̃ = ∂K/(√Ka·√Kb) − ½·K̃·(∂Ka/Ka + ∂Kb/Kb).
/// Where Ka or Kb is 0 or not finite (`None`): 1 on the diagonal of K(X) (`on_diagonal`), else 0,
/// with a zero gradient (as the normalized K).
pub fn normalized_entry(
    kv: f64,
    dk: &[f64],
    a: Option<&SelfFactor>,
    b: Option<&SelfFactor>,
    on_diagonal: bool,
    columns: &[(usize, f64)],
    out: &mut [f64],
) -> f64 {
    let (Some(a), Some(b)) = (a, b) else {
        out.fill(0.0);
        return if on_diagonal { 1.0 } else { 0.0 };
    };
    // K̃ itself as the Gram path's normalization divides (crate::gram::kernel::normalize), so that
    // K of a gradient call equals K of a plain call bit for bit
    let kn = kv / (a.sqrt * b.sqrt);
    let s = a.inv_sqrt * b.inv_sqrt;
    // (∂K − ½·K·(∂Ka/Ka + ∂Kb/Kb)) / (√Ka·√Kb): where the bracket cancels exactly (∂/∂p with p = 1:
    // 2K − ½·K·(2 + 2)), the derivative is an exact 0, as the normalized kernel's is
    for (o, &(h, f)) in out.iter_mut().zip(columns) {
        *o = (dk[h] - 0.5 * kv * (a.rel[h] + b.rel[h])) * s * f;
    }
    kn
}

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

/// The row one task of [`assemble`] writes: its index, and its values, gradients and infos.
type RowOut<'a> = (usize, ((&'a mut [f64], &'a mut [f64]), &'a mut [PairInfo]));

/// The matrices [`assemble`] writes, allocated with every page touched: values and infos of
/// `entries` entries, `columns` gradient values each (at least one, so that every row has its
/// chunk).
///
/// Why ahead: fresh memory is mapped page by page as it is first written, and a ChEMBL gradient's
/// 300 MB (K, six columns of ∂K/∂θ, the infos) took 40–50 ms of its assembly that way; allocated on
/// a thread of its own while the GPU solves ([`Buffers::ahead`]), the assembly only fills them.
pub(super) struct Buffers {
    values: Vec<f64>,
    gradient: Vec<f64>,
    info: Vec<PairInfo>,
}

impl Buffers {
    /// Allocated and touched here.
    pub fn new(entries: usize, columns: usize) -> Buffers {
        // f64 zeros come from calloc, whose pages are mapped when first written: one write per
        // page maps them now (volatile, so that it is not dropped as a store of what is there)
        let touched = |n: usize| {
            let mut v = vec![0.0f64; n];
            for i in (0..n).step_by(4096 / std::mem::size_of::<f64>()) {
                // SAFETY: i < n = v.len().
                unsafe { std::ptr::write_volatile(v.as_mut_ptr().add(i), 0.0) };
            }
            v
        };
        Buffers { values: touched(entries), gradient: touched(entries * columns.max(1)), info: vec![PairInfo::default(); entries] }
    }
    /// [`Buffers::new`] on a thread of its own, for the caller to join when it assembles.
    pub fn ahead(entries: usize, columns: usize) -> std::thread::JoinHandle<Buffers> {
        std::thread::spawn(move || Buffers::new(entries, columns))
    }
}

/// K and the `picked` columns (hyperparameter, factor) of ∂K/∂θ from the layout's pairs
/// (`status`, and `grads` with `np` values per pair), normalized by the quotient rule through the
/// self pairs' gradients where `normalized`; rows in parallel, into `buffers` (rows × cols entries,
/// `picked.len()` columns: [`Buffers::new`]).
pub(super) fn assemble(
    lay: &Layout,
    status: &[PairStatus],
    grads: &[f64],
    np: usize,
    picked: &[(usize, f64)],
    normalized: bool,
    buffers: Buffers,
) -> Assembled {
    let t0 = std::time::Instant::now();
    let (rows, cols, nc) = (lay.rows, lay.cols, picked.len());
    let value = |k: usize| status[k].value;
    let grad = |k: usize| &grads[k * np..(k + 1) * np];
    // (no column: one per entry while assembling, so that every row has its chunk; dropped after)
    let ncw = nc.max(1);
    let Buffers { mut values, gradient: mut gv, mut info } = buffers;
    assert!(values.len() == rows * cols && gv.len() == rows * cols * ncw && info.len() == rows * cols, "assembly buffers of another shape");
    let pooled = crate::parallel::pooled(rows * cols);
    // self pairs (normalized) and their gradients, as each graph's SelfFactor
    let n_self = match (normalized, lay.symmetric) {
        (false, _) => 0,
        (true, true) => rows,
        (true, false) => rows + cols,
    };
    let factors: Vec<Option<SelfFactor>> = (0..n_self).map(|g| SelfFactor::of(value(lay.self_pair(g)), grad(lay.self_pair(g)))).collect();
    let self_converged: Vec<bool> = (0..n_self).map(|g| info_of(&status[lay.self_pair(g)]).converged).collect();
    let pick = |out: &mut [f64], full: &[f64]| {
        for (o, &(h, f)) in out.iter_mut().zip(picked) {
            *o = full[h] * f;
        }
    };
    let buffers = t0.elapsed().as_secs_f64() * 1e3;
    // entry (r, c) into its slots; true where it converged
    let entry = |r: usize, c: usize, v: &mut f64, out: &mut [f64], i: &mut PairInfo| -> bool {
        let k = lay.pair_of(r, c);
        let mut inf = info_of(&status[k]);
        let (kv, dk) = (value(k), grad(k));
        if normalized {
            let (ga, gb) = if lay.symmetric { (r, c) } else { (r, rows + c) };
            *v = normalized_entry(kv, dk, factors[ga].as_ref(), factors[gb].as_ref(), lay.symmetric && r == c, picked, out);
            inf.converged &= self_converged[ga] && self_converged[gb];
        } else {
            *v = kv;
            pick(out, dk);
        }
        *i = inf;
        inf.converged
    };
    // one row per task (its values, gradients and infos are its own); true where all converged
    // (every row is written: the count below consumes them all)
    let row = |(r, ((vrow, grow), irow)): RowOut<'_>| -> bool {
        let mut all = true;
        for c in 0..cols {
            all &= entry(r, c, &mut vrow[c], &mut grow[c * ncw..c * ncw + nc], &mut irow[c]);
        }
        all
    };
    let width = cols.max(1);
    let converged = if pooled {
        values.par_chunks_mut(width).zip(gv.par_chunks_mut(width * ncw)).zip(info.par_chunks_mut(width)).enumerate().map(row).filter(|&ok| !ok).count() == 0
    } else {
        values.chunks_mut(width).zip(gv.chunks_mut(width * ncw)).zip(info.chunks_mut(width)).enumerate().map(row).filter(|&ok| !ok).count() == 0
    };
    log::debug!("gradient: assembly: buffers and factors in {buffers:.1} ms, {} entries at {:.1} ms", rows * cols, t0.elapsed().as_secs_f64() * 1e3);
    if nc == 0 {
        gv = Vec::new();
    }
    Assembled { values, gradient: gv, info, converged, pairs: lay.pairs.len() }
}

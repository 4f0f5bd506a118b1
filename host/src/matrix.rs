//! The Gram type every method returns: values, per-pair diagnostics and how they were computed.
//!
//! A base module (with [`crate::error`] and [`crate::report`]): it imports nothing of the crate but
//! the other base modules, so the error type can carry a partial [`Gram`] without an import running
//! upward (`scripts/check-imports` checks it).
use crate::report::Details;

/// Per-pair diagnostics (the Info of Params / Info / Error). Methods without an iterative solver
/// report `iterations = 0`, `residual = 0`, `converged = true`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairInfo {
    /// Solver iterations (MGK: CG iterations).
    pub iterations: u32,
    /// Final relative residual ‖r‖/‖b‖.
    pub residual: f64,
    /// Whether the pair's value met the method's tolerance.
    pub converged: bool,
}

/// A kernel matrix with its diagnostics.
#[derive(Clone, Debug, PartialEq)]
pub struct Gram {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Row-major values.
    pub values: Vec<f64>,
    /// Row-major per-entry diagnostics (a symmetric Gram mirrors the upper triangle); empty when
    /// every entry is exact (a method without a solver: converged, 0 iterations).
    pub info: Vec<PairInfo>,
    /// Pairs actually evaluated.
    pub pairs_solved: usize,
    /// "cpu" or "cuda".
    pub backend: String,
    /// Device description.
    pub device: String,
    /// Wall-clock seconds of the evaluation.
    pub seconds: f64,
    /// How the method computed the values, as its typed report (MGK: `mgk::report::MgkReport`:
    /// the solvers, the tile-pair primitive map and where it came from, the dense walks and, on
    /// the GPU, the entries that ran); its `Display` is the line people read.
    pub details: Details,
    /// ∂K/∂θ for each hyperparameter θ, when it was asked for (`MarginalizedGraphKernel::gram_gradient`).
    pub gradient: Option<Gradient>,
}

/// The derivatives of a kernel matrix with respect to the kernel's hyperparameters.
///
/// ```text
/// values[(i·cols + j)·P + h] = ∂K_ij/∂θ_h     rows × cols × P, row-major, θ fastest
/// ```
/// (NumPy's C order for shape (rows, cols, P): what scikit-learn's `eval_gradient` returns.) The
/// derivatives are with respect to the raw hyperparameters (q, h, ℓ, …), as GraphDot's.
#[derive(Clone, Debug, PartialEq)]
pub struct Gradient {
    /// θ's names in the order of the last axis (`MgkConfig::hyperparameters`).
    pub names: Vec<String>,
    /// The derivatives, layout above.
    pub values: Vec<f64>,
}

impl Gradient {
    /// Hyperparameters P.
    pub fn len(&self) -> usize {
        self.names.len()
    }
    /// No hyperparameters.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
    /// ∂K_ij/∂θ_h of a matrix with `cols` columns.
    pub fn get(&self, cols: usize, i: usize, j: usize, h: usize) -> f64 {
        self.values[(i * cols + j) * self.names.len() + h]
    }
}

impl Gram {
    /// Entry (i, j).
    ///
    /// # Panics
    /// If (i, j) is outside the rows × cols matrix.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.values[i * self.cols + j]
    }
    /// Entries that did not converge, as (row, col, info).
    pub fn failures(&self) -> Vec<(usize, usize, PairInfo)> {
        self.info.iter().enumerate().filter(|(_, f)| !f.converged).map(|(k, f)| (k / self.cols, k % self.cols, *f)).collect()
    }
    /// (min, median, max) of iterations over all entries.
    /// Counted, not sorted: a tile has millions of entries and iterations are few distinct values.
    /// Large matrices are counted in parallel (the same result).
    pub fn iteration_stats(&self) -> (u32, u32, u32) {
        use rayon::prelude::*;
        let its = || self.info.iter().map(|f| f.iterations);
        if !crate::parallel::pooled(self.info.len()) {
            return iteration_stats(its());
        }
        let (lo, hi) = self.info.par_iter().map(|f| (f.iterations, f.iterations)).reduce(|| (u32::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
        if hi - lo > 1 << 20 {
            return iteration_stats(its());
        }
        let width = (hi - lo) as usize + 1;
        let counts = self
            .info
            .par_chunks(1 << 16)
            .map(|chunk| {
                let mut c = vec![0usize; width];
                for f in chunk {
                    c[(f.iterations - lo) as usize] += 1;
                }
                c
            })
            .reduce(
                || vec![0usize; width],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        (lo, median_of_counts(&counts, lo, self.info.len()), hi)
    }
}

/// (min, median, max) of `iterations` — the median as the element at index len / 2 of the sorted
/// list — by counting (one pass for the range, one for the counts; no copy of the list).
pub fn iteration_stats(iterations: impl Iterator<Item = u32> + Clone) -> (u32, u32, u32) {
    let (mut lo, mut hi, mut n) = (u32::MAX, 0u32, 0usize);
    for it in iterations.clone() {
        (lo, hi, n) = (lo.min(it), hi.max(it), n + 1);
    }
    if n == 0 {
        return (0, 0, 0);
    }
    if hi - lo > 1 << 20 {
        // a range too wide to count (max_iterations in the millions): select in a copy
        let mut all: Vec<u32> = iterations.collect();
        return (lo, *all.select_nth_unstable(n / 2).1, hi);
    }
    let mut counts = vec![0usize; (hi - lo) as usize + 1];
    for it in iterations {
        counts[(it - lo) as usize] += 1;
    }
    (lo, median_of_counts(&counts, lo, n), hi)
}

/// The element at index n / 2 of the sorted list whose value lo + k occurs `counts[k]` times
/// (n of them in all, n ≥ 1).
fn median_of_counts(counts: &[usize], lo: u32, n: usize) -> u32 {
    let mut seen = 0usize;
    for (k, &c) in counts.iter().enumerate() {
        seen += c;
        if seen > n / 2 {
            return lo + k as u32;
        }
    }
    lo + counts.len().saturating_sub(1) as u32
}

#[cfg(test)]
mod tests {
    use super::iteration_stats;

    /// Counting gives the sorted list's (first, element len / 2, last), for lists of every length
    /// from 0 to 40 over narrow and wide ranges, runs of one value included.
    #[test]
    fn iteration_stats_equal_the_sorted_lists() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..=40usize {
            for spread in [1u32, 3, 50, 100_000, 4_000_000] {
                let list: Vec<u32> = (0..len)
                    .map(|_| {
                        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                        7 + (state >> 33) as u32 % spread
                    })
                    .collect();
                let mut sorted = list.clone();
                sorted.sort_unstable();
                let want = if len == 0 { (0, 0, 0) } else { (sorted[0], sorted[len / 2], sorted[len - 1]) };
                assert_eq!(iteration_stats(list.iter().copied()), want, "list {list:?}");
            }
        }
    }
}

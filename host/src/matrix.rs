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
    pub fn iteration_stats(&self) -> (u32, u32, u32) {
        let mut it: Vec<u32> = self.info.iter().map(|f| f.iterations).collect();
        if it.is_empty() {
            return (0, 0, 0);
        }
        it.sort_unstable();
        (it[0], it[it.len() / 2], it[it.len() - 1])
    }
}

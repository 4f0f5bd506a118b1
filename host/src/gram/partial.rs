//! Interrupted runs and their resumption: the entries of a Gram matrix computed before a
//! cancellation ([`Known`]), carried by [`OctileError::Interrupted`] and given back to
//! [`GraphKernel::gram_resumed`](super::GraphKernel::gram_resumed) /
//! [`gram_between_resumed`](super::GraphKernel::gram_between_resumed), which evaluate only the
//! other entries. Each pair's value does not depend on which other pairs are evaluated with it, so a
//! resumed matrix equals an uninterrupted one.
use crate::error::{OctileError, Result};

/// The computed entries of a rows × cols Gram matrix.
///
/// ```text
/// values  row-major f64, rows × cols   an entry's value where done, NaN elsewhere
/// done    row-major bool, rows × cols  computed (for K(X): mirrored, done[i][j] = done[j][i])
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Known {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Row-major values (meaningful where `done`).
    pub values: Vec<f64>,
    /// Row-major: whether the entry was computed.
    pub done: Vec<bool>,
}

impl Known {
    /// Entries computed: `done` set.
    pub fn n_done(&self) -> usize {
        self.done.iter().filter(|&&d| d).count()
    }

    /// Checks that these entries can finish a `rows` × `cols` matrix (`symmetric`: K(X), whose
    /// mask must be symmetric): the shapes agree, and every done entry is finite.
    pub fn check(&self, rows: usize, cols: usize, symmetric: bool) -> Result<()> {
        let bad = |m: String| Err(OctileError::InvalidRequest(format!("resuming: {m}")));
        if (self.rows, self.cols) != (rows, cols) {
            return bad(format!("the partial matrix is {} × {}, this run's is {rows} × {cols} (same inputs in the same order?)", self.rows, self.cols));
        }
        if self.values.len() != rows * cols || self.done.len() != rows * cols {
            return bad(format!("{} values and {} done marks for a {rows} × {cols} matrix", self.values.len(), self.done.len()));
        }
        if let Some(k) = (0..rows * cols).find(|&k| self.done[k] && !self.values[k].is_finite()) {
            return bad(format!("entry ({}, {}) is marked done but its value is {}", k / cols, k % cols, self.values[k]));
        }
        if symmetric && let Some(k) = (0..rows * cols).find(|&k| self.done[k] != self.done[(k % cols) * cols + k / cols]) {
            return bad(format!("entry ({}, {}) is marked done but ({1}, {0}) is not", k / cols, k % cols));
        }
        Ok(())
    }
}

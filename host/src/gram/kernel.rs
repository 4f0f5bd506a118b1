//! The Gram driver: K(X), K(X, Y), diag, listed pairs and their normalized forms, written once
//! for every pairwise graph kernel. A method implements [`GraphKernel::evaluate`] ("these pairs of
//! these graphs, on my backend") and gets the rest.
use super::control::RunControl;
use super::matrix::{Gram, PairInfo};
use crate::error::{OctileError, Result};
use crate::graph::Graph;

/// What a method returns for a list of pairs: one value and one [`PairInfo`] per pair, in pair
/// order, and how long it took.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// K(graphs[a], graphs[b]) per pair.
    pub values: Vec<f64>,
    /// Diagnostics per pair.
    pub info: Vec<PairInfo>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// How the values were computed (goes to [`Gram::details`]).
    pub details: String,
}

/// A pairwise graph kernel on a backend.
///
/// Required: [`evaluate`](Self::evaluate) and three descriptions. Provided (the driver): the
/// symmetric Gram matrix [`gram`](Self::gram) solving only its upper triangle, the rectangular
/// [`gram_between`](Self::gram_between), [`diag`](Self::diag), listed [`pairs`](Self::pairs) and
/// the normalized forms K_ij / √(K_ii K_jj). Every provided method reports a pair that did not
/// converge as [`OctileError::NoConvergence`] carrying the whole matrix (nothing computed is lost).
///
/// ```no_run
/// use octile::{GraphKernel, MarginalizedGraphKernel, generators::nws_set, mgk::config::synthetic_kernel};
/// let graphs = nws_set(16, 42);
/// let kernel = MarginalizedGraphKernel::new(synthetic_kernel(0.05)).unwrap();
/// let k = kernel.gram_normalized(&graphs).unwrap();
/// assert!((k.get(3, 3) - 1.0).abs() < 1e-12);
/// ```
pub trait GraphKernel {
    /// Evaluate K(graphs[a], graphs[b]) for each `(a, b)` of `pairs` (indices checked by the
    /// caller), streaming blocks of pairs through the backend with [`RunControl::stream`] so that
    /// progress is reported and cancellation honoured.
    fn evaluate(&self, graphs: &[Graph], pairs: &[(u32, u32)]) -> Result<Evaluation>;
    /// The progress / cancellation hooks the method's [`evaluate`](Self::evaluate) honours.
    fn control(&self) -> &RunControl;
    /// "cpu" or "cuda".
    fn backend_name(&self) -> &'static str;
    /// Human-readable device.
    fn device_name(&self) -> String;

    /// K(G, G) for each graph: the pairs (i, i). A method with a cheaper self-value overrides it.
    fn evaluate_self(&self, graphs: &[Graph]) -> Result<Evaluation> {
        let pairs: Vec<(u32, u32)> = (0..graphs.len() as u32).map(|i| (i, i)).collect();
        self.evaluate(graphs, &pairs)
    }

    /// K(X): the symmetric Gram matrix; only the upper triangle is evaluated.
    fn gram(&self, graphs: &[Graph]) -> Result<Gram> {
        let n = graphs.len() as u32;
        let pairs: Vec<(u32, u32)> = (0..n).flat_map(|i| (i..n).map(move |j| (i, j))).collect();
        let e = self.evaluate(graphs, &pairs)?;
        let mut g = empty(self, graphs.len(), graphs.len(), &e);
        for (k, &(i, j)) in pairs.iter().enumerate() {
            for (r, c) in [(i, j), (j, i)] {
                g.values[r as usize * g.cols + c as usize] = e.values[k];
                g.info[r as usize * g.cols + c as usize] = e.info[k];
            }
        }
        finish(g, failure(&e.info), &pairs, |i, j| (i, j))
    }

    /// K(X, Y).
    fn gram_between(&self, x: &[Graph], y: &[Graph]) -> Result<Gram> {
        let all: Vec<Graph> = x.iter().chain(y).cloned().collect();
        let (nx, ny) = (x.len() as u32, y.len() as u32);
        let pairs: Vec<(u32, u32)> = (0..nx).flat_map(|i| (0..ny).map(move |j| (i, nx + j))).collect();
        let e = self.evaluate(&all, &pairs)?;
        finish(filled(self, x.len(), y.len(), &e), failure(&e.info), &pairs, |i, j| (i, j - nx))
    }

    /// K(G, G) for each graph.
    fn diag(&self, graphs: &[Graph]) -> Result<Vec<f64>> {
        let pairs: Vec<(u32, u32)> = (0..graphs.len() as u32).map(|i| (i, i)).collect();
        let e = self.evaluate_self(graphs)?;
        Ok(finish(filled(self, graphs.len(), 1, &e), failure(&e.info), &pairs, |i, _| (i, i))?.values)
    }

    /// K(graphs[i], graphs[j]) for the listed index pairs only (e.g. a sample of a Gram matrix, or
    /// nearest-neighbour candidates): a `pairs.len()` × 1 result, row k = pair k. An index outside
    /// `graphs` is an `InvalidConfig` error naming it.
    fn pairs(&self, graphs: &[Graph], pairs: &[(usize, usize)]) -> Result<Gram> {
        let list = listed(graphs, pairs)?;
        let e = self.evaluate(graphs, &list)?;
        finish(filled(self, pairs.len(), 1, &e), failure(&e.info), &list, |i, j| (i, j))
    }

    /// K(X) normalized: K_ij / sqrt(K_ii K_jj) (unit diagonal).
    fn gram_normalized(&self, graphs: &[Graph]) -> Result<Gram> {
        let mut g = self.gram(graphs)?;
        let d: Vec<f64> = (0..g.rows).map(|i| g.get(i, i)).collect();
        normalize(&mut g, &d, &d);
        Ok(g)
    }

    /// K(X, Y) normalized with diag(X) and diag(Y).
    fn gram_between_normalized(&self, x: &[Graph], y: &[Graph]) -> Result<Gram> {
        let mut g = self.gram_between(x, y)?;
        let (dx, dy) = (self.diag(x)?, self.diag(y)?);
        normalize(&mut g, &dx, &dy);
        Ok(g)
    }
}

/// `pairs` as evaluation indices, or an error naming the first index outside `graphs`.
pub fn listed(graphs: &[Graph], pairs: &[(usize, usize)]) -> Result<Vec<(u32, u32)>> {
    if let Some((k, &(i, j))) = pairs.iter().enumerate().find(|(_, (i, j))| *i >= graphs.len() || *j >= graphs.len()) {
        return Err(OctileError::InvalidConfig(format!("pair {k} = ({i}, {j}) indexes past the {} graphs", graphs.len())));
    }
    Ok(pairs.iter().map(|&(i, j)| (i as u32, j as u32)).collect())
}

/// A rows × cols result whose row-major entry k is pair k's value and diagnostics.
pub fn filled<K: GraphKernel + ?Sized>(kernel: &K, rows: usize, cols: usize, e: &Evaluation) -> Gram {
    let mut g = empty(kernel, rows, cols, e);
    g.values[..e.values.len()].copy_from_slice(&e.values);
    g.info[..e.info.len()].copy_from_slice(&e.info);
    g
}

/// A zero rows × cols result carrying `e`'s timing and details.
fn empty<K: GraphKernel + ?Sized>(kernel: &K, rows: usize, cols: usize, e: &Evaluation) -> Gram {
    Gram {
        rows,
        cols,
        values: vec![0.0; rows * cols],
        info: vec![PairInfo::default(); rows * cols],
        pairs_solved: e.values.len(),
        backend: kernel.backend_name().into(),
        device: kernel.device_name(),
        seconds: e.seconds,
        details: e.details.clone(),
    }
}

/// The first pair (index into the pair list) that did not converge, its diagnostics, and how many
/// pairs did not converge.
pub fn failure(info: &[PairInfo]) -> Option<(usize, PairInfo, usize)> {
    let first = info.iter().position(|f| !f.converged)?;
    Some((first, info[first], info.iter().filter(|f| !f.converged).count()))
}

/// `g`, or — when a pair did not converge (`failure`) — `NoConvergence` carrying `g` whole; `at`
/// maps the failing pair's evaluation indices to the matrix entry it names.
pub fn finish(g: Gram, failure: Option<(usize, PairInfo, usize)>, pairs: &[(u32, u32)], at: impl Fn(u32, u32) -> (u32, u32)) -> Result<Gram> {
    let Some((k, info, n_failed)) = failure else { return Ok(g) };
    let (i, j) = at(pairs[k].0, pairs[k].1);
    Err(OctileError::NoConvergence { pair: (i as usize, j as usize), iterations: info.iterations, residual: info.residual, n_failed, partial: Box::new(g) })
}

fn normalize(g: &mut Gram, dx: &[f64], dy: &[f64]) {
    let cols = g.cols;
    for (row, &x) in g.values.chunks_mut(cols.max(1)).zip(dx) {
        for (v, &y) in row.iter_mut().zip(dy) {
            *v /= (x * y).sqrt();
        }
    }
}

//! The Gram driver: K(X), K(X, Y), diag, listed pairs and their normalized forms, written once
//! for every pairwise graph kernel. A method implements [`GraphKernel::evaluate`] ("these pairs of
//! these graphs, on my backend") and gets the rest.
use super::control::RunControl;
use super::partial::Known;
use crate::error::{OctileError, Result};
use crate::graph::Graph;
use crate::matrix::{Gram, PairInfo};
use crate::report::Details;
use rayon::prelude::*;

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
    /// How the values were computed: the method's typed run report (goes to [`Gram::details`]).
    pub details: Details,
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
    /// Host bytes the method's [`evaluate`](Self::evaluate) holds per pair of a call beside the
    /// driver's pair list, values and diagnostics (which [`check_memory`] counts itself): a solver's
    /// statuses, plans and job lists, counted before anything is allocated. Default: none.
    fn working_bytes_per_pair(&self) -> usize {
        0
    }
    /// Human-readable device.
    fn device_name(&self) -> String;
    /// The device as a typed report (e.g. `gpu::DeviceInfo`), for JSON summaries; its `Display` is
    /// [`device_name`](Self::device_name). Default: that line.
    fn device_report(&self) -> Details {
        self.device_name().into()
    }

    /// The same kernel once per device it spreads work over — one per selected GPU — so that a
    /// caller can give each device whole pieces of work of its own (the CLI's tiles with
    /// `--devices`); empty when the kernel uses one device.
    fn per_device(&self) -> Vec<Box<dyn GraphKernel + Send + Sync>> {
        Vec::new()
    }

    /// K(X) (`y` = None: the symmetric matrix) or K(X, Y) as one row-major matrix in
    /// [`Evaluation::values`], for a method that computes whole blocks faster than pair lists (the
    /// shortest-path histograms: no pair list, no per-pair transfer). Its `info` may be empty:
    /// exact values, no solver. `None` (the default): the driver lists pairs for
    /// [`evaluate`](Self::evaluate).
    fn evaluate_matrix(&self, _x: &[Graph], _y: Option<&[Graph]>) -> Result<Option<Evaluation>> {
        Ok(None)
    }

    /// K(G, G) for each graph: the pairs (i, i). A method with a cheaper self-value overrides it.
    fn evaluate_self(&self, graphs: &[Graph]) -> Result<Evaluation> {
        let pairs: Vec<(u32, u32)> = (0..graphs.len() as u32).map(|i| (i, i)).collect();
        self.evaluate(graphs, &pairs)
    }

    /// K(X): the symmetric Gram matrix; only the upper triangle is evaluated.
    /// Cancelled part way (Ctrl-C through [`RunControl::cancel`]): [`OctileError::Interrupted`]
    /// with the entries computed, to finish with [`gram_resumed`](Self::gram_resumed).
    fn gram(&self, graphs: &[Graph]) -> Result<Gram> {
        self.gram_resumed(graphs, None)
    }

    /// K(X), evaluating only the entries `known` does not have (all when `None`).
    fn gram_resumed(&self, graphs: &[Graph], known: Option<&Known>) -> Result<Gram> {
        let n = graphs.len();
        if let Some(k) = known {
            k.check(n, n, true)?;
        }
        check_memory(self, n, n, n * (n + 1) / 2)?;
        if known.is_none()
            && let Some(e) = self.evaluate_matrix(graphs, None)?
        {
            return from_matrix(self, n, n, n * (n + 1) / 2, e);
        }
        let nu = n as u32;
        let pairs: Vec<(u32, u32)> = (0..nu).flat_map(|i| (i..nu).map(move |j| (i, j))).collect();
        let (e, done, evaluated) = evaluate_rest(self, graphs, &pairs, known, |k| pairs[k].0 as usize * n + pairs[k].1 as usize)?;
        // entry (r, c) of the full matrix, built in parallel: pair (i, j), i ≤ j, is pair number
        // i·n − i(i−1)/2 + j − i
        let upper = |i: usize, j: usize| i * n - i * i.saturating_sub(1) / 2 + j - i;
        let at = |k: usize| if k / n <= k % n { upper(k / n, k % n) } else { upper(k % n, k / n) };
        let g = Gram {
            rows: n,
            cols: n,
            values: (0..n * n).into_par_iter().map(|k| e.values[at(k)]).collect(),
            info: (0..n * n).into_par_iter().map(|k| e.info[at(k)]).collect(),
            pairs_solved: evaluated,
            ..empty(self, 0, 0, &e)
        };
        if let Some(done) = done {
            return Err(interrupted(g, (0..n * n).into_par_iter().map(|k| done[at(k)]).collect(), &done));
        }
        finish(g, &e.info, |k| (pairs[k].0 as usize, pairs[k].1 as usize))
    }

    /// K(X, Y). Cancelled part way: [`OctileError::Interrupted`], as for [`gram`](Self::gram).
    fn gram_between(&self, x: &[Graph], y: &[Graph]) -> Result<Gram> {
        self.gram_between_resumed(x, y, None)
    }

    /// K(X, Y), evaluating only the entries `known` does not have (all when `None`).
    fn gram_between_resumed(&self, x: &[Graph], y: &[Graph], known: Option<&Known>) -> Result<Gram> {
        if let Some(k) = known {
            k.check(x.len(), y.len(), false)?;
        }
        check_memory(self, x.len(), y.len(), x.len() * y.len())?;
        if known.is_none()
            && let Some(e) = self.evaluate_matrix(x, Some(y))?
        {
            return from_matrix(self, x.len(), y.len(), x.len() * y.len(), e);
        }
        let all: Vec<Graph> = x.iter().chain(y).cloned().collect();
        let (nx, ny) = (x.len() as u32, y.len() as u32);
        // pair k is row-major entry k
        let pairs: Vec<(u32, u32)> = (0..nx).flat_map(|i| (0..ny).map(move |j| (i, nx + j))).collect();
        let (e, done, evaluated) = evaluate_rest(self, &all, &pairs, known, |k| k)?;
        let g = Gram { pairs_solved: evaluated, ..filled(self, x.len(), y.len(), &e) };
        if let Some(done) = done {
            return Err(interrupted(g, done.clone(), &done));
        }
        finish(g, &e.info, |k| (pairs[k].0 as usize, (pairs[k].1 - nx) as usize))
    }

    /// K(G, G) for each graph. Cancelled: [`OctileError::Cancelled`].
    fn diag(&self, graphs: &[Graph]) -> Result<Vec<f64>> {
        let e = finite(self.evaluate_self(graphs)?);
        if self.control().cancelled() {
            return Err(OctileError::Cancelled);
        }
        Ok(finish(filled(self, graphs.len(), 1, &e), &e.info, |k| (k, k))?.values)
    }

    /// K(graphs[i], graphs[j]) for the listed index pairs only (e.g. a sample of a Gram matrix, or
    /// nearest-neighbour candidates): a `pairs.len()` × 1 result, row k = pair k. An index outside
    /// `graphs` is an `InvalidRequest` error naming it. Cancelled: [`OctileError::Cancelled`].
    fn pairs(&self, graphs: &[Graph], pairs: &[(usize, usize)]) -> Result<Gram> {
        let list = listed_upper(graphs, pairs)?;
        let e = finite(self.evaluate(graphs, &list)?);
        if self.control().cancelled() {
            return Err(OctileError::Cancelled);
        }
        finish(filled(self, pairs.len(), 1, &e), &e.info, |k| pairs[k])
    }

    /// K(X) normalized: K_ij / sqrt(K_ii K_jj) (unit diagonal).
    /// When pairs fail, the error's partial matrix is normalized too (with the diagonal it has), so
    /// what is written is what the summary says. An interrupted run's partial matrix is not (it is
    /// what [`gram_resumed`](Self::gram_resumed) takes).
    fn gram_normalized(&self, graphs: &[Graph]) -> Result<Gram> {
        self.gram_of(graphs, None, true, None)
    }

    /// What `octile gram` computes: K(X) (`y` = None) or K(X, Y), normalized or not, evaluating
    /// only the entries `known` lacks. K(X, Y) normalized evaluates diag(X) and diag(Y) first.
    fn gram_of(&self, x: &[Graph], y: Option<&[Graph]>, normalized: bool, known: Option<&Known>) -> Result<Gram> {
        match y {
            None if normalized => normalized_symmetric(self.gram_resumed(x, known)),
            None => self.gram_resumed(x, known),
            Some(y) if normalized => {
                let (dx, dy) = (self.diag(x)?, self.diag(y)?);
                normalized_between(self.gram_between_resumed(x, y, known), &dx, &dy)
            }
            Some(y) => self.gram_between_resumed(x, y, known),
        }
    }

    /// K(X, Y) normalized with diag(X) and diag(Y).
    /// When pairs of K(X, Y) fail, the error's partial matrix is normalized too (a failing diagonal
    /// pair fails the call as before); an interrupted run's is not.
    fn gram_between_normalized(&self, x: &[Graph], y: &[Graph]) -> Result<Gram> {
        self.gram_of(x, Some(y), true, None)
    }
}

/// Pairs [`GraphKernel::gram_of`] evaluates (a progress total): the upper triangle of K(X)
/// (`n_y` = None), or every entry of K(X, Y) and, normalized, both diagonals.
pub fn pairs_of(n_x: usize, n_y: Option<usize>, normalized: bool) -> usize {
    // saturating: a count past usize is only ever a progress total
    match n_y {
        None => n_x.saturating_mul(n_x.saturating_add(1)) / 2,
        Some(n_y) => n_x.saturating_mul(n_y).saturating_add(if normalized { n_x.saturating_add(n_y) } else { 0 }),
    }
}

/// A K(X) result normalized, K_ij / √(K_ii K_jj) (0 where K_ii K_jj = 0, 1 on such a diagonal): the
/// matrix, or the partial matrix of a `NoConvergence` error (with the diagonal it has); other errors
/// (an interrupted run's partial matrix included) as they are.
pub fn normalized_symmetric(r: Result<Gram>) -> Result<Gram> {
    normalized_with(r, |g| {
        let d: Vec<f64> = (0..g.rows).map(|i| g.get(i, i)).collect();
        normalize(g, &d, &d, |i, j| i == j);
    })
}

/// A K(X, Y) result normalized with diag(X) = `dx` and diag(Y) = `dy`, as [`normalized_symmetric`]
/// (0 where dx_i dy_j = 0).
pub fn normalized_between(r: Result<Gram>, dx: &[f64], dy: &[f64]) -> Result<Gram> {
    normalized_with(r, |g| normalize(g, dx, dy, |_, _| false))
}

/// `norm` applied to the matrix of `r`, or to the partial matrix of its `NoConvergence` error;
/// other errors as they are.
fn normalized_with(r: Result<Gram>, norm: impl Fn(&mut Gram)) -> Result<Gram> {
    match r {
        Ok(mut g) => {
            norm(&mut g);
            Ok(g)
        }
        Err(OctileError::NoConvergence { pair, iterations, residual, n_failed, mut partial, cause }) => {
            norm(&mut partial);
            Err(OctileError::NoConvergence { pair, iterations, residual, n_failed, partial, cause })
        }
        Err(e) => Err(e),
    }
}

/// Evaluate the `pairs` (in order) that `known` does not have (all when `None`; `entry`: pair
/// index → row-major matrix entry) and return one value and diagnostics per pair of `pairs`, the
/// known ones taken from `known` (as exact: 0 iterations), non-finite values marked failed; and —
/// when the run was cancelled — which pairs are done (a pending pair's value is NaN); and how many
/// pairs were evaluated.
fn evaluate_rest<K: GraphKernel + ?Sized>(
    kernel: &K,
    graphs: &[Graph],
    pairs: &[(u32, u32)],
    known: Option<&Known>,
    entry: impl Fn(usize) -> usize + Sync,
) -> Result<(Evaluation, Option<Vec<bool>>, usize)> {
    let (e, was_known, evaluated) = match known {
        None => (kernel.evaluate(graphs, pairs)?, None, pairs.len()),
        Some(kn) => {
            let was: Vec<bool> = (0..pairs.len()).into_par_iter().map(|k| kn.done[entry(k)]).collect();
            let todo: Vec<usize> = (0..pairs.len()).filter(|&k| !was[k]).collect();
            let list: Vec<(u32, u32)> = todo.iter().map(|&k| pairs[k]).collect();
            let sub = kernel.evaluate(graphs, &list)?;
            let exact = PairInfo { iterations: 0, residual: 0.0, converged: true };
            let mut e = Evaluation {
                values: (0..pairs.len()).into_par_iter().map(|k| kn.values[entry(k)]).collect(),
                info: vec![exact; pairs.len()],
                seconds: sub.seconds,
                details: sub.details.clone(),
            };
            for (t, &k) in todo.iter().enumerate() {
                e.values[k] = sub.values[t];
                e.info[k] = sub.info[t];
            }
            (e, Some(was), todo.len())
        }
    };
    let e = finite(e);
    if !kernel.control().cancelled() {
        return Ok((e, None, evaluated));
    }
    let done = (0..pairs.len()).into_par_iter().map(|k| was_known.as_ref().is_some_and(|w| w[k]) || !e.values[k].is_nan()).collect();
    Ok((e, Some(done), evaluated))
}

/// The `Interrupted` error of a matrix `g` whose entries `done` (row-major) were computed, with
/// `pairs_done` per distinct pair; the other entries' values are NaN.
fn interrupted(mut g: Gram, done: Vec<bool>, pairs_done: &[bool]) -> OctileError {
    g.values.par_iter_mut().zip(&done).for_each(|(v, &d)| {
        if !d {
            *v = f64::NAN;
        }
    });
    let n_done = pairs_done.iter().filter(|&&d| d).count();
    OctileError::Interrupted { partial: Box::new(g), done, n_done, n_total: pairs_done.len() }
}

/// The driver's largest allocations for a rows × cols result of `pairs` evaluated pairs — the
/// matrix with per-entry diagnostics, the pair list with its values and diagnostics, and what the
/// method holds per pair while it evaluates them ([`GraphKernel::working_bytes_per_pair`]) —
/// against the control's `max_memory_bytes` and the memory available, before any of them is made.
pub fn check_memory<K: GraphKernel + ?Sized>(kernel: &K, rows: usize, cols: usize, pairs: usize) -> Result<()> {
    let entry = (8 + std::mem::size_of::<PairInfo>()) as u128;
    let pair = (8 + 8 + std::mem::size_of::<PairInfo>() + kernel.working_bytes_per_pair()) as u128;
    let need = rows as u128 * cols as u128 * entry + pairs as u128 * pair;
    crate::memory::check(need, kernel.control().max_memory_bytes, || format!("a {rows} × {cols} Gram matrix"))
}

/// `e` with every pair whose value is not finite (±inf, NaN: e.g. an overflowing p) marked as failed,
/// so it is reported as a failure, never passed on as a result.
pub fn finite(mut e: Evaluation) -> Evaluation {
    for (v, i) in e.values.iter().zip(e.info.iter_mut()) {
        if !v.is_finite() {
            i.converged = false;
        }
    }
    e
}

/// `pairs` as evaluation indices, or an error naming the first index outside `graphs`.
pub fn listed(graphs: &[Graph], pairs: &[(usize, usize)]) -> Result<Vec<(u32, u32)>> {
    if let Some((k, &(i, j))) = pairs.iter().enumerate().find(|(_, (i, j))| *i >= graphs.len() || *j >= graphs.len()) {
        return Err(OctileError::InvalidRequest(format!("pair {k} = ({i}, {j}) indexes past the {} graphs", graphs.len())));
    }
    Ok(pairs.iter().map(|&(i, j)| (i as u32, j as u32)).collect())
}

/// [`listed`], each pair turned to the orientation of K(X)'s upper triangle (i ≤ j): K(Gi, Gj) =
/// K(Gj, Gi), and so solved, a listed pair's value is the matrix's bit for bit (a solve is not
/// bit-symmetric in its two graphs: the CPU's product form, for one, lays them out differently).
/// For symmetric values only (K and ∂K), not the nodal matrices, whose rows are the first graph's.
pub fn listed_upper(graphs: &[Graph], pairs: &[(usize, usize)]) -> Result<Vec<(u32, u32)>> {
    Ok(listed(graphs, pairs)?.into_iter().map(|(i, j)| (i.min(j), i.max(j))).collect())
}

/// A rows × cols result whose row-major entry k is pair k's value and diagnostics.
pub fn filled<K: GraphKernel + ?Sized>(kernel: &K, rows: usize, cols: usize, e: &Evaluation) -> Gram {
    let mut g = empty(kernel, rows, cols, e);
    g.values[..e.values.len()].copy_from_slice(&e.values);
    g.info[..e.info.len()].copy_from_slice(&e.info);
    g
}

/// The rows × cols result of a whole-matrix evaluation (`pairs` distinct pairs in it): values as
/// they are; without per-entry info when every value is finite (exact), else with one marking the
/// non-finite entries as failed, reported as for pair lists.
pub(super) fn from_matrix<K: GraphKernel + ?Sized>(kernel: &K, rows: usize, cols: usize, pairs: usize, e: Evaluation) -> Result<Gram> {
    if e.values.len() != rows * cols || !(e.info.is_empty() || e.info.len() == rows * cols) {
        return Err(OctileError::Internal(format!("a {rows} × {cols} matrix evaluation returned {} values and {} diagnostics", e.values.len(), e.info.len())));
    }
    let failed = e.values.par_iter().any(|v| !v.is_finite()) || e.info.iter().any(|i| !i.converged);
    let mut g = Gram {
        rows,
        cols,
        values: e.values,
        info: e.info,
        pairs_solved: pairs,
        backend: kernel.backend_name().into(),
        device: kernel.device_name(),
        seconds: e.seconds,
        details: e.details,
        gradient: None,
    };
    if !failed {
        return Ok(g);
    }
    if g.info.is_empty() {
        g.info = vec![PairInfo { iterations: 0, residual: 0.0, converged: true }; rows * cols];
    }
    for (v, i) in g.values.iter().zip(g.info.iter_mut()) {
        i.converged &= v.is_finite();
    }
    finish_entries(g)
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
        gradient: None,
    }
}

/// `g`, or — when a pair did not converge (`info`: per pair, in pair order) — `NoConvergence`
/// naming the first such pair's matrix entry (`entry`: pair index → (row, column)) and carrying `g`
/// whole.
pub fn finish(g: Gram, info: &[PairInfo], entry: impl Fn(usize) -> (usize, usize)) -> Result<Gram> {
    let Some(k) = info.iter().position(|f| !f.converged) else { return Ok(g) };
    let n_failed = info[k..].iter().filter(|f| !f.converged).count();
    Err(OctileError::NoConvergence { pair: entry(k), iterations: info[k].iterations, residual: info[k].residual, n_failed, partial: Box::new(g), cause: None })
}

/// [`finish`] with the Gram's own per-entry info (entry k = row k / cols, column k % cols): no copy
/// of it (a tile's info is 16 bytes per entry).
pub fn finish_entries(g: Gram) -> Result<Gram> {
    let Some(k) = g.info.iter().position(|f| !f.converged) else { return Ok(g) };
    let n_failed = g.info[k..].iter().filter(|f| !f.converged).count();
    let (first, cols) = (g.info[k], g.cols.max(1));
    Err(OctileError::NoConvergence {
        pair: (k / cols, k % cols),
        iterations: first.iterations,
        residual: first.residual,
        n_failed,
        partial: Box::new(g),
        cause: None,
    })
}

/// K_ij / (√dx_i·√dy_j) in place. Where dx_i or dy_j is 0 (a graph whose self-similarity is 0, e.g. no
/// path for the shortest-path kernel: K(G, ·) = 0 then), the normalized value is 0, and 1 on the
/// diagonal of a symmetric K(X) (`on_diagonal(i, j)`), never 0/0 = NaN: the zero feature vector is
/// orthogonal to every other, and the result stays positive semi-definite.
pub(super) fn normalize(g: &mut Gram, dx: &[f64], dy: &[f64], on_diagonal: impl Fn(usize, usize) -> bool) {
    let cols = g.cols;
    for (i, (row, &x)) in g.values.chunks_mut(cols.max(1)).zip(dx).enumerate() {
        for (j, (v, &y)) in row.iter_mut().zip(dy).enumerate() {
            // √x·√y, not √(x·y): the product under- or overflows for K of 1e±200 (p = 1e±100)
            *v = if x != 0.0 && y != 0.0 {
                *v / (x.sqrt() * y.sqrt())
            } else if on_diagonal(i, j) {
                1.0
            } else {
                0.0
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A method whose K(a, b) = (1 + |V_a|)(1 + |V_b|) + [a == b], reporting pair (fail_a, fail_b)
    /// as not converged, and recording every pair list it is asked for.
    struct Toy {
        fail: Option<(usize, usize)>,
        asked: RefCell<Vec<Vec<(u32, u32)>>>,
        control: RunControl,
        /// What it says it holds per pair while it evaluates ([`GraphKernel::working_bytes_per_pair`]).
        working: usize,
    }

    impl Toy {
        fn new(fail: Option<(usize, usize)>) -> Self {
            Toy { fail, asked: RefCell::new(Vec::new()), control: RunControl::default(), working: 0 }
        }
        fn k(graphs: &[Graph], a: usize, b: usize) -> f64 {
            (1 + graphs[a].n_nodes()) as f64 * (1 + graphs[b].n_nodes()) as f64 + (a == b) as u8 as f64
        }
    }

    impl GraphKernel for Toy {
        fn evaluate(&self, graphs: &[Graph], pairs: &[(u32, u32)]) -> Result<Evaluation> {
            self.asked.borrow_mut().push(pairs.to_vec());
            let sizes: Vec<usize> = graphs.iter().map(|g| g.n_nodes()).collect();
            let info = pairs
                .iter()
                .map(|&(a, b)| {
                    let bad = self.fail.is_some_and(|(fa, fb)| (sizes[a as usize], sizes[b as usize]) == (fa, fb));
                    PairInfo { iterations: 7, residual: if bad { 0.5 } else { 1e-13 }, converged: !bad }
                })
                .collect();
            Ok(Evaluation { values: pairs.iter().map(|&(a, b)| Toy::k(graphs, a as usize, b as usize)).collect(), info, seconds: 0.25, details: "toy".into() })
        }
        fn working_bytes_per_pair(&self) -> usize {
            self.working
        }
        fn control(&self) -> &RunControl {
            &self.control
        }
        fn backend_name(&self) -> &'static str {
            "cpu"
        }
        fn device_name(&self) -> String {
            "toy device".into()
        }
    }

    #[test]
    fn failures_keep_the_partial_matrix_normalized_and_non_finite_values_fail() {
        let (toy, all) = (Toy::new(Some((2, 3))), graphs(4));
        match toy.gram_normalized(&all) {
            Err(OctileError::NoConvergence { partial, n_failed, .. }) => {
                assert_eq!(n_failed, 1);
                for i in 0..4 {
                    close(partial.get(i, i), 1.0, &format!("partial normalized diagonal {i}"));
                }
                close(partial.get(0, 3), Toy::k(&all, 0, 3) / (Toy::k(&all, 0, 0) * Toy::k(&all, 3, 3)).sqrt(), "partial normalized K[0][3]");
            }
            other => panic!("expected NoConvergence, got {other:?}"),
        }
        let mut e = Evaluation {
            values: vec![1.0, f64::INFINITY, f64::NAN],
            info: vec![PairInfo { iterations: 1, residual: 0.0, converged: true }; 3],
            seconds: 0.0,
            details: Details::default(),
        };
        e = finite(e);
        assert_eq!(e.info.iter().map(|i| i.converged).collect::<Vec<_>>(), [true, false, false]);
    }

    /// Graphs of 1, 2, ..., n nodes (no edges): graph i has i + 1 nodes.
    fn graphs(n: usize) -> Vec<Graph> {
        (0..n).map(|i| Graph::new(i + 1, &[], &[])).collect()
    }

    fn close(actual: f64, expected: f64, what: &str) {
        assert!((actual - expected).abs() <= 1e-14 * expected.abs().max(1.0), "{what}: actual {actual}, expected {expected}");
    }

    #[test]
    fn gram_evaluates_the_upper_triangle_once_and_mirrors_it() {
        let (toy, x) = (Toy::new(None), graphs(4));
        let g = toy.gram(&x).unwrap();
        assert_eq!(toy.asked.borrow().len(), 1);
        assert_eq!(toy.asked.borrow()[0], vec![(0, 0), (0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3), (2, 2), (2, 3), (3, 3)]);
        assert_eq!(
            (g.rows, g.cols, g.pairs_solved, g.backend.as_str(), g.device.as_str(), g.details.to_string().as_str(), g.seconds),
            (4, 4, 10, "cpu", "toy device", "toy", 0.25)
        );
        for i in 0..4 {
            for j in 0..4 {
                close(g.get(i, j), Toy::k(&x, i, j), &format!("K[{i}][{j}]"));
                assert_eq!(g.info[i * 4 + j].iterations, 7);
            }
        }
        assert_eq!(g.iteration_stats(), (7, 7, 7));
        assert!(g.failures().is_empty());
    }

    /// A method that computes whole matrices: K(a, b) = |V_a| + |V_b| as K(X) or K(X, Y), with a NaN
    /// at entry `bad` when set; `evaluate` is never needed for them.
    struct Whole {
        bad: Option<usize>,
        control: RunControl,
    }

    impl GraphKernel for Whole {
        fn evaluate(&self, _: &[Graph], _: &[(u32, u32)]) -> Result<Evaluation> {
            Err(OctileError::InvalidConfig("pair lists were not expected".into()))
        }
        fn evaluate_matrix(&self, x: &[Graph], y: Option<&[Graph]>) -> Result<Option<Evaluation>> {
            let y = y.unwrap_or(x);
            let mut values: Vec<f64> = x.iter().flat_map(|a| y.iter().map(move |b| (a.n_nodes() + b.n_nodes()) as f64)).collect();
            if let Some(k) = self.bad {
                values[k] = f64::NAN;
            }
            Ok(Some(Evaluation { values, info: Vec::new(), seconds: 0.5, details: "whole".into() }))
        }
        fn control(&self) -> &RunControl {
            &self.control
        }
        fn backend_name(&self) -> &'static str {
            "cpu"
        }
        fn device_name(&self) -> String {
            "whole device".into()
        }
    }

    #[test]
    fn whole_matrix_methods_skip_pair_lists_and_report_non_finite_entries() {
        let all = graphs(5);
        let ok = Whole { bad: None, control: RunControl::default() };
        let g = ok.gram(&all).unwrap();
        assert_eq!((g.rows, g.cols, g.pairs_solved, g.info.len(), g.details.to_string().as_str()), (5, 5, 15, 0, "whole"));
        assert!(g.failures().is_empty());
        assert_eq!(g.iteration_stats(), (0, 0, 0));
        close(g.get(4, 1), 7.0, "K[4][1]");
        let (x, y) = all.split_at(2);
        let b = ok.gram_between(x, y).unwrap();
        assert_eq!((b.rows, b.cols, b.pairs_solved), (2, 3, 6));
        close(b.get(1, 2), 2.0 + 5.0, "K(X, Y)[1][2]");
        let n = ok.gram_normalized(&all).unwrap();
        close(n.get(2, 2), 1.0, "normalized diagonal");
        // entry 7 = (1, 2): a non-finite value is a failure of that entry, the rest kept
        let bad = Whole { bad: Some(7), control: RunControl::default() };
        let Err(OctileError::NoConvergence { pair, n_failed, partial, .. }) = bad.gram(&all) else { panic!("expected NoConvergence") };
        assert_eq!((pair, n_failed), ((1, 2), 1));
        assert_eq!(partial.failures().iter().map(|f| (f.0, f.1)).collect::<Vec<_>>(), [(1, 2)]);
        close(partial.get(3, 4), 9.0, "a finite entry of the partial matrix");
    }

    #[test]
    fn a_matrix_past_the_memory_limit_is_refused_before_any_pair_is_asked_for() {
        let mut toy = Toy::new(None);
        toy.control.max_memory_bytes = Some(1 << 20);
        let all = graphs(400);
        let e = toy.gram(&all).unwrap_err();
        assert!(matches!(e, OctileError::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("a 400 × 400 Gram matrix needs") && e.to_string().contains("--max-memory limit"), "{e}");
        assert!(toy.asked.borrow().is_empty(), "nothing evaluated");
        let (x, y) = all.split_at(200);
        assert!(matches!(toy.gram_between(x, y), Err(OctileError::TooLarge { .. })), "200 × 200 (2.8 MiB) is past 1 MiB");
        assert!(toy.gram_between(&x[..10], &y[..10]).is_ok(), "a 10 × 10 block fits");
    }

    #[test]
    fn what_a_method_holds_per_pair_counts_against_the_memory_limit() {
        // 120 × 120: 461 KB of matrix (32 bytes an entry) and 290 KB of pair list (7,260 pairs of
        // 40 bytes) — under 1 MiB, until the method holds 100 bytes a pair more: 1.5 MB
        let all = graphs(120);
        let mut toy = Toy::new(None);
        toy.control.max_memory_bytes = Some(1 << 20);
        assert!(toy.gram(&all).is_ok(), "fits without the method's own bytes");
        toy.working = 100;
        let e = toy.gram(&all).unwrap_err();
        assert!(matches!(e, OctileError::TooLarge { .. }) && e.to_string().contains("a 120 × 120 Gram matrix needs"), "{e}");
        assert_eq!(toy.asked.borrow().len(), 1, "the refused call asked for nothing");
    }

    #[test]
    fn gram_between_diag_and_pairs_index_their_own_graphs() {
        let (toy, all) = (Toy::new(None), graphs(5));
        let (x, y) = all.split_at(2);
        let g = toy.gram_between(x, y).unwrap();
        assert_eq!((g.rows, g.cols, g.pairs_solved), (2, 3, 6));
        for i in 0..2 {
            for j in 0..3 {
                close(g.get(i, j), Toy::k(&all, i, 2 + j), &format!("K(X, Y)[{i}][{j}]"));
            }
        }
        let d = toy.diag(&all).unwrap();
        for (i, v) in d.iter().enumerate() {
            close(*v, Toy::k(&all, i, i), &format!("diag[{i}]"));
        }
        let p = toy.pairs(&all, &[(4, 0), (2, 2)]).unwrap();
        assert_eq!((p.rows, p.cols), (2, 1));
        close(p.get(0, 0), Toy::k(&all, 4, 0), "pair 0");
        close(p.get(1, 0), Toy::k(&all, 2, 2), "pair 1");
        let err = toy.pairs(&all, &[(0, 1), (1, 5)]).unwrap_err();
        assert!(matches!(err, OctileError::InvalidRequest(ref m) if m.contains("pair 1 = (1, 5)") && m.contains("5 graphs")), "{err}");
    }

    #[test]
    fn normalizing_tiny_and_huge_values_neither_under_nor_overflows() {
        for scale in [1e-200, 1e200] {
            let mut g = Gram {
                rows: 2,
                cols: 2,
                values: vec![4.0 * scale, 2.0 * scale, 2.0 * scale, 9.0 * scale],
                info: Vec::new(),
                pairs_solved: 3,
                backend: String::new(),
                device: String::new(),
                seconds: 0.0,
                details: Details::default(),
                gradient: None,
            };
            let d = [4.0 * scale, 9.0 * scale];
            normalize(&mut g, &d, &d, |i, j| i == j);
            for (k, want) in [1.0, 1.0 / 3.0, 1.0 / 3.0, 1.0].into_iter().enumerate() {
                close(g.values[k], want, &format!("scale {scale:e}, entry {k}"));
            }
        }
    }

    #[test]
    fn normalized_forms_divide_by_the_diagonals() {
        let (toy, all) = (Toy::new(None), graphs(4));
        let g = toy.gram_normalized(&all).unwrap();
        let (x, y) = all.split_at(1);
        let b = toy.gram_between_normalized(x, y).unwrap();
        for i in 0..4 {
            for j in 0..4 {
                let want = Toy::k(&all, i, j) / (Toy::k(&all, i, i) * Toy::k(&all, j, j)).sqrt();
                close(g.get(i, j), want, &format!("normalized K[{i}][{j}]"));
                if i == 0 && j >= 1 {
                    close(b.get(0, j - 1), want, &format!("normalized K(X, Y)[0][{}]", j - 1));
                }
            }
        }
    }

    #[test]
    fn non_convergence_names_the_entry_and_keeps_every_value() {
        // graphs of 2 and 3 nodes (indices 1 and 2) fail as the pair (2 nodes, 3 nodes)
        let (toy, all) = (Toy::new(Some((2, 3))), graphs(4));
        let Err(OctileError::NoConvergence { pair, iterations, residual, n_failed, partial, .. }) = toy.gram(&all) else { panic!("expected NoConvergence") };
        assert_eq!((pair, iterations, residual, n_failed), ((1, 2), 7, 0.5, 1));
        assert_eq!(partial.failures().len(), 2, "the failing pair and its mirror");
        close(partial.get(2, 1), Toy::k(&all, 2, 1), "mirrored failing entry");
        close(partial.get(3, 3), Toy::k(&all, 3, 3), "a converged entry");
        // K(X, Y): the entry is named in Y's own numbering
        let (x, y) = all.split_at(2);
        let Err(OctileError::NoConvergence { pair, partial, .. }) = toy.gram_between(x, y) else { panic!("expected NoConvergence") };
        assert_eq!(pair, (1, 0));
        assert_eq!((partial.rows, partial.cols), (2, 2));
    }

    /// A method streaming one pair per block that cancels its run once `stop_after` pairs were
    /// evaluated (a Ctrl-C part way), with the Toy's values, recording the pairs it evaluates.
    struct Stopper {
        stop_after: usize,
        evaluated: RefCell<Vec<(u32, u32)>>,
        control: RunControl,
    }

    impl Stopper {
        fn new(stop_after: usize) -> Self {
            let cancel = Some(std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)));
            Stopper { stop_after, evaluated: RefCell::new(Vec::new()), control: RunControl { cancel, ..RunControl::default() } }
        }
    }

    impl GraphKernel for Stopper {
        fn evaluate(&self, graphs: &[Graph], pairs: &[(u32, u32)]) -> Result<Evaluation> {
            let values = self.control.stream(super::super::control::blocks_of(pairs.len(), 1), |r| {
                let mut seen = self.evaluated.borrow_mut();
                seen.extend(&pairs[r.clone()]);
                if seen.len() >= self.stop_after {
                    self.control.cancel.as_ref().unwrap().store(true, std::sync::atomic::Ordering::Relaxed);
                }
                Ok(pairs[r].iter().map(|&(a, b)| Toy::k(graphs, a as usize, b as usize)).collect::<Vec<f64>>())
            })?;
            let info = vec![PairInfo { iterations: 3, residual: 1e-12, converged: true }; values.len()];
            Ok(Evaluation { values, info, seconds: 0.0, details: "stopper".into() })
        }
        fn control(&self) -> &RunControl {
            &self.control
        }
        fn backend_name(&self) -> &'static str {
            "cpu"
        }
        fn device_name(&self) -> String {
            "stopper".into()
        }
    }

    #[test]
    fn an_interrupted_gram_keeps_what_was_done_and_resuming_finishes_only_the_rest() {
        let all = graphs(5);
        let whole = Toy::new(None).gram(&all).unwrap();
        // K(X): 15 distinct pairs; interrupted after 6, then after 4 more, then finished
        let first = Stopper::new(6);
        let Err(OctileError::Interrupted { partial, done, n_done, n_total }) = first.gram_normalized(&all) else { panic!("expected Interrupted") };
        assert_eq!((n_done, n_total, partial.rows, partial.cols), (6, 15, 5, 5));
        assert_eq!(first.evaluated.borrow()[..], [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 1)]);
        for i in 0..5 {
            for j in 0..5 {
                let want_done = i.min(j) == 0 || (i, j) == (1, 1);
                assert_eq!(done[i * 5 + j], want_done, "done mark of ({i}, {j})");
                if want_done {
                    // un-normalized: what resuming needs
                    assert_eq!(
                        partial.get(i, j).to_bits(),
                        whole.get(i, j).to_bits(),
                        "partial K[{i}][{j}]: actual {}, expected {}",
                        partial.get(i, j),
                        whole.get(i, j)
                    );
                } else {
                    assert!(partial.get(i, j).is_nan(), "not-done K[{i}][{j}] = {}, expected NaN", partial.get(i, j));
                }
            }
        }
        let known = Known { rows: 5, cols: 5, values: partial.values.clone(), done };
        let second = Stopper::new(4);
        let Err(OctileError::Interrupted { partial, done, n_done, .. }) = second.gram_resumed(&all, Some(&known)) else {
            panic!("expected a second Interrupted")
        };
        assert_eq!(n_done, 10);
        assert_eq!(second.evaluated.borrow()[..], [(1, 2), (1, 3), (1, 4), (2, 2)], "only pairs not done are evaluated");
        let known = Known { rows: 5, cols: 5, values: partial.values.clone(), done };
        let last = Stopper::new(usize::MAX);
        let g = last.gram_resumed(&all, Some(&known)).unwrap();
        assert_eq!(last.evaluated.borrow().len(), 5);
        assert_eq!(g.pairs_solved, 5);
        assert_eq!(
            g.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            whole.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "resumed {:?} vs uninterrupted {:?}",
            g.values,
            whole.values
        );
        // K(X, Y): row-major pairs
        let (x, y) = all.split_at(2);
        let whole = Toy::new(None).gram_between(x, y).unwrap();
        let first = Stopper::new(4);
        let Err(OctileError::Interrupted { partial, done, n_done, n_total }) = first.gram_between(x, y) else { panic!("expected Interrupted") };
        assert_eq!((n_done, n_total), (4, 6));
        assert_eq!(done, [true, true, true, true, false, false]);
        let known = Known { rows: 2, cols: 3, values: partial.values.clone(), done };
        let g = Stopper::new(usize::MAX).gram_between_resumed(x, y, Some(&known)).unwrap();
        assert_eq!(g.values, whole.values);
        // a mask of another shape, or a done entry without a value, is refused
        let bad = Known { rows: 3, cols: 2, ..known.clone() };
        assert!(matches!(Toy::new(None).gram_between_resumed(x, y, Some(&bad)), Err(OctileError::InvalidRequest(m)) if m.contains("2 × 3")));
        let mut bad = known;
        bad.values[0] = f64::NAN;
        assert!(matches!(Toy::new(None).gram_between_resumed(x, y, Some(&bad)), Err(OctileError::InvalidRequest(m)) if m.contains("(0, 0)")));
        // a diagonal cancelled part way is just Cancelled
        assert!(matches!(Stopper::new(1).diag(&all), Err(OctileError::Cancelled)));
    }
}

//! The native kernel: a kernel TOML of any method ([`KernelFile`], the CLI's), a backend, and
//! the Gram driver's calls with the interpreter's lock released. Progress goes to a Python
//! callable; Ctrl-C stops the run after the current batch ([`octile::RunControl`]).
use crate::errors::{gradient_array, gram_matrix, to_py, to_py_listed};
use crate::graphs::PyGraph;
use numpy::PyArray1;
use octile::gram::Tile;
use octile::kernels::{DynKernel, KernelFile};
use octile::mgk::pack::feature_indices;
use octile::{Backend, Gram, Graph, MarginalizedGraphKernel, OctileError, Precision, RunControl};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A graph kernel of any octile method, built from its kernel TOML.
#[pyclass(frozen, name = "Kernel", module = "octile")]
pub struct PyKernel {
    file: KernelFile,
    backend: &'static str,
    device: String,
}

/// The graphs behind Python `Graph` objects, in order.
fn graphs(list: &[PyRef<'_, PyGraph>]) -> Vec<Graph> {
    list.iter().map(|g| g.graph.clone()).collect()
}

/// A base kernel's Python class name (messages name what the Python user wrote).
fn python_name(toml: &str) -> &str {
    match toml {
        "kronecker_delta" => "KroneckerDelta",
        "constant" => "Constant",
        "square_exponential" => "SquareExponential",
        other => other,
    }
}

/// Checks the graphs of one call (X then Y): no feature holds strings in one graph and numbers in
/// another (a string's code would equal a number), a feature holding strings is read by a
/// Kronecker delta (or constant) only (its codes are labels, not quantities), and a marginalized
/// kernel compares some feature of graphs that have features.
fn check_kinds(file: &KernelFile, all: &[&[PyRef<'_, PyGraph>]]) -> PyResult<()> {
    let mut seen: std::collections::BTreeMap<&str, (bool, usize)> = std::collections::BTreeMap::new();
    let mut last: Option<*const octile::io::FeatureKinds> = None;
    for (k, g) in all.iter().flat_map(|l| l.iter()).enumerate() {
        // graphs of one read share their kinds: check each set once
        let ptr = std::sync::Arc::as_ptr(&g.kinds);
        if last == Some(ptr) {
            continue;
        }
        last = Some(ptr);
        for (feature, &strings) in &g.kinds.0 {
            match seen.get(feature.as_str()) {
                Some(&(s, first)) if s != strings => {
                    let kind = |s: bool| if s { "strings" } else { "numbers" };
                    return Err(PyValueError::new_err(format!(
                        "{feature} holds {} in graph {first} but {} in graph {k} of this call; use one kind per feature (a string's code would equal a number)",
                        kind(s),
                        kind(strings)
                    )));
                }
                Some(_) => {}
                None => {
                    seen.insert(feature, (strings, k));
                }
            }
        }
    }
    for t in file.feature_terms() {
        if !t.labels_ok
            && let Some(&(true, g)) = seen.get(t.feature.as_str())
        {
            return Err(PyValueError::new_err(format!(
                "{} holds strings (labels, e.g. in graph {g}); {} would compare their arbitrary codes as numbers: use KroneckerDelta for labels",
                t.feature,
                python_name(t.kernel)
            )));
        }
    }
    // a kernel comparing no feature of graphs that have some: the library's check, in Python's words
    let merged = octile::io::FeatureKinds(seen.iter().map(|(f, &(s, _))| (f.to_string(), s)).collect());
    file.check_features([("these graphs".to_string(), &merged)]).map_err(|_| {
        let names: Vec<&str> = seen.keys().copied().collect();
        PyValueError::new_err(format!(
            "the kernel compares no node or edge feature, but the graphs have {}; give node_kernel / edge_kernel (e.g. TensorProduct(label=KroneckerDelta(0.5))), or to compare structure only a constant one (TensorProduct(label=Constant(1.0)))",
            names.join(", ")
        ))
    })
}

/// Checks that every graph of `graphs` has the node and edge features the kernel reads (an
/// edgeless graph needs no edge feature), by the library's own check (`pack::feature_indices`),
/// naming graph k "graph {first + k}{of}" ("graph 1 of Y"): the library numbers the graphs of
/// K(X, Y) through X and then Y, and a tile's from the tile's.
fn check_present(file: &KernelFile, graphs: &[PyRef<'_, PyGraph>], first: usize, of: &str) -> PyResult<()> {
    let wanted = |side: &str| -> Vec<String> { file.feature_terms().into_iter().filter_map(|t| t.feature.strip_prefix(side).map(str::to_string)).collect() };
    let (node, edge) = (wanted("node "), wanted("edge "));
    for (k, g) in graphs.iter().enumerate() {
        let g = &g.graph;
        feature_indices("node", &node, g.node_feature_names(), first + k)
            .and_then(|_| if g.n_edges() == 0 { Ok(Vec::new()) } else { feature_indices("edge", &edge, g.edge_feature_names(), first + k) })
            .map_err(|e| match e {
                OctileError::MissingFeature { kind, feature, graph, available } => {
                    PyValueError::new_err(format!("{kind} feature '{feature}' is not in graph {graph}{of}; it has: [{available}]"))
                }
                e => PyValueError::new_err(e.to_string()),
            })?;
    }
    Ok(())
}

/// A progress callback's exception, raised after the run (it also cancels the run).
type CallbackError = Arc<Mutex<Option<PyErr>>>;

/// Progress to `progress` (called with the pairs just finished) and Ctrl-C to cancellation.
fn control(progress: Option<Py<PyAny>>) -> (RunControl, CallbackError) {
    let cancel = Arc::new(AtomicBool::new(false));
    let error: Arc<Mutex<Option<PyErr>>> = Arc::new(Mutex::new(None));
    let (c, err) = (cancel.clone(), error.clone());
    let report = move |n: usize| {
        Python::attach(|py| {
            if let Some(cb) = &progress
                && let Err(e) = cb.call1(py, (n,))
            {
                err.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                c.store(true, Ordering::Relaxed);
            }
            // a pending Ctrl-C: stop after this batch (the driver keeps what was computed)
            if py.check_signals().is_err() {
                c.store(true, Ordering::Relaxed);
            }
        })
    };
    let ctl = RunControl { progress: Some(Arc::new(report)), cancel: Some(cancel), max_memory_bytes: None };
    (ctl, error)
}

impl PyKernel {
    /// `e` with the cause of a pair that stopped before any iteration named (the marginalized
    /// kernel's node kernel underflowing to zero), else as it is.
    fn explain(&self, e: OctileError, x: &[Graph], y: Option<&[Graph]>) -> OctileError {
        match &self.file {
            KernelFile::Marginalized(cfg) => octile::mgk::diagnose::explain(e, cfg, x, y),
            _ => e,
        }
    }

    /// Build the kernel with `progress`, run `f` on it without the interpreter's lock, and turn
    /// the outcome into Python: a callback's exception first, then octile's errors.
    fn run<T: Send>(&self, py: Python<'_>, progress: Option<Py<PyAny>>, f: impl FnOnce(&DynKernel) -> octile::Result<T> + Send) -> PyResult<octile::Result<T>> {
        let (ctl, error) = control(progress);
        let file = self.file.clone();
        let r = py.detach(move || file.build(ctl).and_then(|k| f(&k)));
        if let Some(e) = error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        Ok(r)
    }

    /// [`run`](Self::run) on the marginalized kernel itself (what has hyperparameter gradients);
    /// another method is a `ValueError`.
    fn run_mgk<T: Send>(
        &self,
        py: Python<'_>,
        progress: Option<Py<PyAny>>,
        f: impl FnOnce(&MarginalizedGraphKernel) -> octile::Result<T> + Send,
    ) -> PyResult<octile::Result<T>> {
        let KernelFile::Marginalized(cfg) = &self.file else {
            return Err(PyValueError::new_err(format!(
                "hyperparameter gradients are computed for the marginalized graph kernel only, not method \"{}\"",
                self.file.method()
            )));
        };
        let (ctl, error) = control(progress);
        let cfg = cfg.clone();
        let r = py.detach(move || MarginalizedGraphKernel::new(cfg).and_then(|k| f(&k.with_control(ctl))));
        if let Some(e) = error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        Ok(r)
    }
}

/// The hyperparameters' names of a gradient (an internal error when the library returned none).
fn gradient_of(g: &mut Gram) -> PyResult<octile::Gradient> {
    g.gradient.take().ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("internal: the gradient run returned no gradient"))
}

/// "auto", "cpu" or "cuda".
fn backend_of(s: &str) -> PyResult<Backend> {
    match s {
        "auto" => Ok(Backend::Auto),
        "cpu" => Ok(Backend::Cpu),
        "cuda" => Ok(Backend::Cuda),
        _ => Err(PyValueError::new_err(format!("backend must be 'auto', 'cpu' or 'cuda', got '{s}'"))),
    }
}

/// What a Gram call reports besides the values (the CLI's JSON summary fields).
fn info<'py>(py: Python<'py>, g: &Gram) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let (lo, med, hi) = g.iteration_stats();
    d.set_item("seconds", g.seconds)?;
    d.set_item("pairs", g.pairs_solved)?;
    d.set_item("backend", &g.backend)?;
    d.set_item("device", &g.device)?;
    d.set_item("details", g.details.to_string())?;
    d.set_item("iterations", (lo, med, hi))?;
    Ok(d)
}

#[pymethods]
impl PyKernel {
    /// `toml`: a kernel file's text (`octile gram --kernel`); `backend`: "auto", "cpu" or "cuda";
    /// `precision` (marginalized kernel): "f32" or "f64", default f32 on a GPU, f64 on the CPU.
    /// The kernel is checked and its backend chosen now.
    #[new]
    #[pyo3(signature = (toml, backend = "auto", precision = None))]
    fn new(py: Python<'_>, toml: &str, backend: &str, precision: Option<&str>) -> PyResult<Self> {
        let backend = backend_of(backend)?;
        let precision = match precision {
            None => None,
            Some("f32") => Some(Precision::F32),
            Some("f64") => Some(Precision::F64),
            Some(p) => return Err(PyValueError::new_err(format!("precision must be 'f32', 'f64' or None, got '{p}'"))),
        };
        let mut file = KernelFile::from_toml(toml).map_err(|e| to_py(py, e))?;
        file.set_backend(backend, precision);
        let probe = file.clone();
        let k = py.detach(move || probe.build(RunControl::default())).map_err(|e| to_py(py, e))?;
        Ok(PyKernel { backend: k.backend_name(), device: k.device_name(), file })
    }

    /// "cpu" or "cuda": where the kernel runs.
    #[getter]
    fn backend(&self) -> &'static str {
        self.backend
    }
    /// The device, in words.
    #[getter]
    fn device(&self) -> &str {
        &self.device
    }
    /// "marginalized", "shortest_path" or "graphlets".
    #[getter]
    fn method(&self) -> &'static str {
        self.file.method()
    }
    /// The settings that decide the values (the CLI summary's method fields), as JSON.
    fn describe(&self) -> String {
        self.file.describe().to_string()
    }

    /// K(X) (`y` None) or K(X, Y) as a float64 matrix, normalized K_ij / √(K_ii K_jj) or not, and
    /// the run's info; `progress(n)` is called with the pairs finished after each batch.
    #[pyo3(signature = (x, y = None, normalized = false, progress = None))]
    fn gram<'py>(
        &self,
        py: Python<'py>,
        x: Vec<PyRef<'py, PyGraph>>,
        y: Option<Vec<PyRef<'py, PyGraph>>>,
        normalized: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyDict>)> {
        check_kinds(&self.file, &[&x, y.as_deref().unwrap_or(&[])])?;
        check_present(&self.file, y.as_deref().unwrap_or(&[]), 0, " of Y")?;
        let x = graphs(&x);
        let y = y.map(|y| graphs(&y));
        let g = self.run(py, progress, |k| k.gram_of(&x, y.as_deref(), normalized, None))?.map_err(|e| to_py(py, self.explain(e, &x, y.as_deref())))?;
        let d = info(py, &g)?;
        Ok((gram_matrix(py, g)?, d))
    }

    /// K(G, G) of each graph.
    #[pyo3(signature = (x, progress = None))]
    fn diag<'py>(&self, py: Python<'py>, x: Vec<PyRef<'py, PyGraph>>, progress: Option<Py<PyAny>>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        check_kinds(&self.file, &[&x])?;
        let x = graphs(&x);
        let d = self.run(py, progress, |k| k.diag(&x))?.map_err(|e| to_py_listed(py, e, |k| (k, k)))?;
        Ok(PyArray1::from_vec(py, d))
    }

    /// K(x[i], x[j]) for the listed (i, j) pairs only.
    #[pyo3(signature = (x, pairs, progress = None))]
    fn pairs<'py>(
        &self,
        py: Python<'py>,
        x: Vec<PyRef<'py, PyGraph>>,
        pairs: Vec<(usize, usize)>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        check_kinds(&self.file, &[&x])?;
        let x = graphs(&x);
        let g = self.run(py, progress, |k| k.pairs(&x, &pairs))?.map_err(|e| to_py_listed(py, e, |k| pairs[k]))?;
        Ok(PyArray1::from_vec(py, g.values))
    }

    /// K(X) (`y` None) or K(X, Y), normalized or not, with ∂K/∂θ for every hyperparameter θ of
    /// the marginalized kernel (raw θ, not log): (K (n, m), dK (n, m, P), θ's names, the run's
    /// info). Names and order: [`hyperparameters`]. `columns`: `(h, factor)` pairs — dK (and a
    /// NonConvergenceError's partial_gradient) then holds only those hyperparameters, in that
    /// order, each times its factor (θ_h: ∂K/∂log θ_h), and the names are theirs.
    #[pyo3(signature = (x, y = None, normalized = false, progress = None, columns = None))]
    #[allow(clippy::type_complexity)]
    fn gram_gradient<'py>(
        &self,
        py: Python<'py>,
        x: Vec<PyRef<'py, PyGraph>>,
        y: Option<Vec<PyRef<'py, PyGraph>>>,
        normalized: bool,
        progress: Option<Py<PyAny>>,
        columns: Option<Vec<(usize, f64)>>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Vec<String>, Bound<'py, PyDict>)> {
        let t = std::time::Instant::now();
        check_kinds(&self.file, &[&x, y.as_deref().unwrap_or(&[])])?;
        check_present(&self.file, y.as_deref().unwrap_or(&[]), 0, " of Y")?;
        let x = graphs(&x);
        let y = y.map(|y| graphs(&y));
        let converted = t.elapsed().as_secs_f64() * 1e3;
        // the columns chosen and scaled as the gradient is assembled (no second pass over it); a
        // NonConvergenceError's partial_gradient has them too
        let mut g = self
            .run_mgk(py, progress, |k| k.gram_gradient_columns(&x, y.as_deref(), normalized, columns.as_deref()))?
            .map_err(|e| to_py(py, self.explain(e, &x, y.as_deref())))?;
        let ran = t.elapsed().as_secs_f64() * 1e3;
        let grad = gradient_of(&mut g)?;
        let d = info(py, &g)?;
        let dk = gradient_array(py, grad.values, &[g.rows, g.cols, grad.names.len()])?;
        let out = (gram_matrix(py, g)?, dk, grad.names, d);
        log::debug!(target: "octile::python", "python: graphs converted in {converted:.1} ms, run returned at {ran:.1} ms, arrays out at {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
        Ok(out)
    }

    /// K(G, G) of each graph (un-normalized) with ∂K(G, G)/∂θ: (d (n,), dD (n, P), θ's names).
    #[pyo3(signature = (x, progress = None))]
    #[allow(clippy::type_complexity)]
    fn diag_gradient<'py>(
        &self,
        py: Python<'py>,
        x: Vec<PyRef<'py, PyGraph>>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyAny>, Vec<String>)> {
        check_kinds(&self.file, &[&x])?;
        let x = graphs(&x);
        let pairs: Vec<(usize, usize)> = (0..x.len()).map(|i| (i, i)).collect();
        let mut g = self.run_mgk(py, progress, |k| k.pairs_gradient(&x, &pairs))?.map_err(|e| to_py_listed(py, e, |k| (k, k)))?;
        let grad = gradient_of(&mut g)?;
        let dd = gradient_array(py, grad.values, &[x.len(), grad.names.len()])?;
        Ok((PyArray1::from_vec(py, g.values), dd, grad.names))
    }

    /// The tile K[rows, cols] of K(X) (`y` None) or K(X, Y) (`rows`, `cols`: half-open index
    /// ranges): the same values as those entries of `gram`, bit for bit. Normalized when the
    /// diagonals are given (K_ii of the rows' graphs, of the columns'); with ∂K/∂θ when `gradient`
    /// (the diagonals' gradients then normalize it). Only the tile's graphs are converted.
    /// Returns (K tile, dK tile or None, θ's names, info).
    #[pyo3(signature = (x, y, rows, cols, diag_rows = None, diag_cols = None, gradient = false, diag_rows_gradient = None, diag_cols_gradient = None))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn tile<'py>(
        &self,
        py: Python<'py>,
        x: Vec<PyRef<'py, PyGraph>>,
        y: Option<Vec<PyRef<'py, PyGraph>>>,
        rows: (usize, usize),
        cols: (usize, usize),
        diag_rows: Option<Vec<f64>>,
        diag_cols: Option<Vec<f64>>,
        gradient: bool,
        diag_rows_gradient: Option<Vec<f64>>,
        diag_cols_gradient: Option<Vec<f64>>,
    ) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>, Vec<String>, Bound<'py, PyDict>)> {
        let n_cols = y.as_ref().map_or(x.len(), Vec::len);
        Tile { rows: rows.0..rows.1, cols: cols.0..cols.1 }.check(x.len(), n_cols).map_err(|e| to_py(py, e))?;
        // the columns' graphs: of Y when given (X may have fewer graphs than cols.1)
        let (col_graphs, of) = match &y {
            Some(y) => (&y[cols.0..cols.1], " of Y"),
            None => (&x[cols.0..cols.1], ""),
        };
        check_kinds(&self.file, &[&x[rows.0..rows.1], col_graphs])?;
        check_present(&self.file, &x[rows.0..rows.1], rows.0, "")?;
        check_present(&self.file, col_graphs, cols.0, of)?;
        let (cx, cy, tile) = compact(&x, y.as_deref(), rows.0..rows.1, cols.0..cols.1);
        let (nr, nc) = (tile.rows.len(), tile.cols.len());
        let diag = match (diag_rows, diag_cols) {
            (Some(r), Some(c)) if r.len() == nr && c.len() == nc => Some((r, c)),
            (None, None) => None,
            _ => return Err(PyValueError::new_err(format!("diag_rows and diag_cols must both be given, with {nr} and {nc} values"))),
        };
        let symmetric = y.is_none();
        let mut g = if gradient {
            let t = tile.clone();
            self.run_mgk(py, None, move |k| k.gram_gradient_tile(&cx, cy.as_deref(), &t))?
        } else {
            let t = tile.clone();
            self.run(py, None, move |k| octile::gram::gram_tile(k.as_ref(), &cx, cy.as_deref(), &t))?
        }
        .map_err(|e| to_py(py, e))?;
        let (names, np) = g.gradient.as_ref().map_or((Vec::new(), 0), |d| (d.names.clone(), d.len()));
        if let Some((dr, dc)) = &diag {
            if gradient {
                let (gr, gc) = (diag_rows_gradient.unwrap_or_default(), diag_cols_gradient.unwrap_or_default());
                if gr.len() != nr * np || gc.len() != nc * np {
                    return Err(PyValueError::new_err(format!("the diagonals' gradients must have {nr}·{np} and {nc}·{np} values")));
                }
                octile::mgk::gradient::normalize_gradient_tile(&mut g, &tile, (dr, &gr), (dc, &gc), symmetric);
            } else {
                octile::gram::normalize_tile(&mut g, &tile, dr, dc, symmetric);
            }
        }
        let d = info(py, &g)?;
        let dk = g.gradient.take().map(|grad| gradient_array(py, grad.values, &[nr, nc, np])).transpose()?;
        Ok((gram_matrix(py, g)?, dk, names, d))
    }

    fn __repr__(&self) -> String {
        format!("octile.Kernel({} on {} ({}))", self.file.method(), self.backend, self.device)
    }
}

/// The hyperparameters of a marginalized kernel's TOML, as (name, value) in the order of a
/// gradient's last axis: "p", "q", then the node terms' and the edge terms' (GraphDot's order).
/// Parses the text only: no kernel is built.
#[pyfunction]
fn hyperparameters(py: Python<'_>, toml: &str) -> PyResult<Vec<(String, f64)>> {
    match KernelFile::from_toml(toml).map_err(|e| to_py(py, e))? {
        KernelFile::Marginalized(cfg) => Ok(cfg.hyperparameters().into_iter().zip(cfg.hyperparameter_values()).collect()),
        f => Err(to_py(py, OctileError::InvalidConfig(format!("hyperparameters are those of the marginalized graph kernel, not method \"{}\"", f.method())))),
    }
}

/// Whether a GPU is usable, and the device or why not.
#[pyfunction]
fn gpu_available() -> (bool, String) {
    match octile::gpu::device() {
        Ok(d) => (true, d.describe()),
        Err(e) => (false, e),
    }
}

/// Threads for this process's host-side work (rayon's global pool: packing, planning, the CPU
/// backend), set before its first use; false when the pool already runs (its size then stays).
#[pyfunction]
fn _set_threads(n: usize) -> bool {
    n > 0 && rayon::ThreadPoolBuilder::new().num_threads(n).build_global().is_ok()
}

/// Pairs a Gram call evaluates (a progress bar's total).
#[pyfunction]
#[pyo3(signature = (n_x, n_y = None, normalized = false))]
fn pairs_of(n_x: usize, n_y: Option<usize>, normalized: bool) -> usize {
    octile::gram::kernel::pairs_of(n_x, n_y, normalized)
}

/// The graphs a tile reads, converted once, and the tile over them: K(X, Y)'s rows of X and
/// columns of Y; K(X)'s rows and columns of X in their order (one contiguous run where they
/// overlap), so every pair keeps its orientation (lower index first).
fn compact(x: &[PyRef<'_, PyGraph>], y: Option<&[PyRef<'_, PyGraph>]>, rows: Range<usize>, cols: Range<usize>) -> (Vec<Graph>, Option<Vec<Graph>>, Tile) {
    let take = |s: &[PyRef<'_, PyGraph>], r: Range<usize>| s[r].iter().map(|g| g.graph.clone()).collect::<Vec<Graph>>();
    let (nr, nc) = (rows.len(), cols.len());
    if let Some(y) = y {
        return (take(x, rows), Some(take(y, cols)), Tile { rows: 0..nr, cols: 0..nc });
    }
    if rows.start < cols.end && cols.start < rows.end {
        let (lo, hi) = (rows.start.min(cols.start), rows.end.max(cols.end));
        (take(x, lo..hi), None, Tile { rows: rows.start - lo..rows.end - lo, cols: cols.start - lo..cols.end - lo })
    } else if rows.end <= cols.start {
        let mut g = take(x, rows);
        g.extend(take(x, cols));
        (g, None, Tile { rows: 0..nr, cols: nr..nr + nc })
    } else {
        let mut g = take(x, cols);
        g.extend(take(x, rows));
        (g, None, Tile { rows: nc..nc + nr, cols: 0..nc })
    }
}

/// Band boundaries of `tile_size` graphs (about), cut at equal shares of the node counts `nodes`
/// (`octile::gram::tiles::bands`: the tiles of `octile gram` and `octile.dask`).
#[pyfunction]
fn tile_bands(nodes: Vec<usize>, tile_size: usize) -> Vec<usize> {
    octile::gram::tiles::bands(&nodes, tile_size)
}

/// Graphs per tile side when none is given (`octile::gram::default_tile_size`, as `octile gram`'s):
/// 2048 on a GPU, 128 on CPUs; with several GPUs smaller, until each has its share of the tiles.
#[pyfunction]
fn default_tile_size(gpu: bool, devices: usize, rows: usize, cols: usize, mirrored: bool) -> usize {
    octile::gram::default_tile_size(gpu, devices, rows, cols, mirrored)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tile_bands, m)?)?;
    m.add_function(wrap_pyfunction!(default_tile_size, m)?)?;
    m.add_class::<PyKernel>()?;
    m.add_function(wrap_pyfunction!(gpu_available, m)?)?;
    m.add_function(wrap_pyfunction!(pairs_of, m)?)?;
    m.add_function(wrap_pyfunction!(_set_threads, m)?)?;
    m.add_function(wrap_pyfunction!(hyperparameters, m)?)?;
    Ok(())
}

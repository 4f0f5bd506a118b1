//! octile's errors as Python exceptions, with the library's message: `ValueError` for bad input
//! or configuration, `FileNotFoundError` / `OSError` for files, `MemoryError` for a request
//! refused before allocating, `NonConvergenceError` (a `RuntimeError`) carrying the partial
//! matrix and the failing pairs, `Interrupted` (a `KeyboardInterrupt`) carrying the pairs done,
//! `RuntimeError` for the rest (CUDA).
use numpy::{PyArray1, PyArrayMethods};
use octile::OctileError;
use octile::gram::Gram;
use pyo3::exceptions::{PyBaseException, PyFileNotFoundError, PyKeyboardInterrupt, PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    octile,
    NonConvergenceError,
    PyRuntimeError,
    "Some pairs did not converge. `partial`: the whole matrix (failing entries included), `failures`: [(row, col, iterations, residual)], `n_failed`."
);
pyo3::create_exception!(
    octile,
    Interrupted,
    PyKeyboardInterrupt,
    "Ctrl-C stopped a Gram matrix part way. `partial`: the entries computed (NaN elsewhere, un-normalized), `done`: a boolean mask of them."
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NonConvergenceError", m.py().get_type::<NonConvergenceError>())?;
    m.add("Interrupted", m.py().get_type::<Interrupted>())?;
    Ok(())
}

/// A rows × cols matrix of `values` as a numpy float64 array.
pub fn matrix<'py>(py: Python<'py>, values: Vec<f64>, rows: usize, cols: usize) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyArray1::from_vec(py, values).reshape([rows, cols])?.into_any())
}

/// A gradient's values (C order) as a numpy float64 array of `shape`.
pub fn gradient_array<'py>(py: Python<'py>, values: Vec<f64>, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyArray1::from_vec(py, values).reshape(shape.to_vec())?.into_any())
}

/// A Gram result's matrix as numpy.
pub fn gram_matrix<'py>(py: Python<'py>, g: Gram) -> PyResult<Bound<'py, PyAny>> {
    // the per-entry infos (24 bytes an entry: ChEMBL's 90 MB) are freed off the calling thread
    let bytes = std::mem::size_of_val(&g.info[..]);
    octile::parallel::drop_aside(g.info, bytes);
    matrix(py, g.values, g.rows, g.cols)
}

/// `err` with the attributes `set` puts on its value (or the error setting them raised).
fn with_attrs(py: Python<'_>, err: PyErr, set: impl FnOnce(&Bound<'_, PyBaseException>) -> PyResult<()>) -> PyErr {
    match set(err.value(py)) {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// A `NonConvergenceError` with `message`, the whole result `partial` and the failing entries
/// `(row, col, iterations, residual)`.
fn non_convergence(py: Python<'_>, message: String, partial: PyResult<Bound<'_, PyAny>>, failures: Vec<(usize, usize, u32, f64)>, n_failed: usize) -> PyErr {
    with_attrs(py, NonConvergenceError::new_err(message), |v| {
        v.setattr("partial", partial?)?;
        v.setattr("failures", failures)?;
        v.setattr("n_failed", n_failed)
    })
}

/// `err` (a `NonConvergenceError`) with `partial_gradient`: the gradient of a gradient run (its
/// values and shape), or None for a run without one.
fn with_partial_gradient<const N: usize>(py: Python<'_>, err: PyErr, grad: Option<(Vec<f64>, [usize; N])>) -> PyErr {
    with_attrs(py, err, |v| match grad {
        Some((values, shape)) => v.setattr("partial_gradient", gradient_array(py, values, &shape)?),
        None => v.setattr("partial_gradient", py.None()),
    })
}

/// The Python exception of an error of a call on a list (diag: graph k, pairs: pair k), whose
/// partial result is a column: a `NonConvergenceError` carries it as a 1-D array and its
/// failures as the (i, j) `entry(k)` of each failing list item.
pub fn to_py_listed(py: Python<'_>, e: OctileError, entry: impl Fn(usize) -> (usize, usize)) -> PyErr {
    match e {
        OctileError::NoConvergence { n_failed, mut partial, .. } => {
            let failures: Vec<(usize, usize, u32, f64)> =
                partial.failures().into_iter().map(|(k, _, f)| (entry(k).0, entry(k).1, f.iterations, f.residual)).collect();
            let first =
                failures.first().map_or(String::new(), |f| format!("; first ({}, {}) after {} iterations, relative residual {:.3e}", f.0, f.1, f.2, f.3));
            let message = format!("{n_failed} listed pair(s) did not converge{first}");
            let grad = partial.gradient.take().map(|g| (g.values, [partial.rows, g.names.len()]));
            let err = non_convergence(py, message, Ok(PyArray1::from_vec(py, partial.values).into_any()), failures, n_failed);
            with_partial_gradient(py, err, grad)
        }
        e => to_py(py, e),
    }
}

/// The Python exception of an octile error (its message is the library's).
pub fn to_py(py: Python<'_>, e: OctileError) -> PyErr {
    let msg = e.to_string();
    match e {
        OctileError::InvalidGraph { .. }
        | OctileError::InvalidConfig(_)
        | OctileError::InvalidRequest(_)
        | OctileError::MeaninglessKernel(_)
        | OctileError::MissingFeature { .. }
        | OctileError::Parse { .. }
        | OctileError::Output { .. }
        | OctileError::CorruptPartial { .. } => PyValueError::new_err(msg),
        OctileError::Io { cause, .. } if cause.kind() == std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
        OctileError::Io { .. } => PyOSError::new_err(msg),
        OctileError::TooLarge { .. } => PyMemoryError::new_err(msg),
        OctileError::NoConvergence { n_failed, mut partial, .. } => {
            let failures: Vec<(usize, usize, u32, f64)> = partial.failures().into_iter().map(|(i, j, f)| (i, j, f.iterations, f.residual)).collect();
            let grad = partial.gradient.take().map(|g| (g.values, [partial.rows, partial.cols, g.names.len()]));
            let err = non_convergence(py, msg, gram_matrix(py, *partial), failures, n_failed);
            with_partial_gradient(py, err, grad)
        }
        OctileError::Interrupted { partial, done, n_done, n_total } => with_attrs(py, Interrupted::new_err(msg), |v| {
            let (rows, cols) = (partial.rows, partial.cols);
            v.setattr("partial", gram_matrix(py, *partial)?)?;
            v.setattr("done", PyArray1::from_vec(py, done).reshape([rows, cols])?)?;
            v.setattr("n_done", n_done)?;
            v.setattr("n_total", n_total)
        }),
        // a diagonal or listed pairs keep nothing: the attributes are there, empty
        OctileError::Cancelled => {
            with_attrs(py, Interrupted::new_err(msg), |v| ["partial", "done", "n_done", "n_total"].into_iter().try_for_each(|name| v.setattr(name, py.None())))
        }
        OctileError::NoGpu(_) | OctileError::Driver(_) | OctileError::MissingKernel { .. } | OctileError::LaunchContract { .. } | OctileError::Internal(_) => {
            PyRuntimeError::new_err(msg)
        }
    }
}

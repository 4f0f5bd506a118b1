//! octile's errors as Python exceptions, with the library's message: `ValueError` for bad input
//! or configuration, `FileNotFoundError` / `OSError` for files, `MemoryError` for a request
//! refused before allocating, `NonConvergenceError` (a `RuntimeError`) carrying the partial
//! matrix and the failing pairs, `Interrupted` (a `KeyboardInterrupt`) carrying the pairs done,
//! `RuntimeError` for the rest (CUDA).
use numpy::{PyArray1, PyArrayMethods};
use octile::OctileError;
use octile::gram::Gram;
use pyo3::exceptions::{PyFileNotFoundError, PyKeyboardInterrupt, PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(octile, NonConvergenceError, PyRuntimeError, "Some pairs did not converge. `partial`: the whole matrix (failing entries included), `failures`: [(row, col, iterations, residual)], `n_failed`.");
pyo3::create_exception!(octile, Interrupted, PyKeyboardInterrupt, "Ctrl-C stopped a Gram matrix part way. `partial`: the entries computed (NaN elsewhere, un-normalized), `done`: a boolean mask of them.");

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NonConvergenceError", m.py().get_type::<NonConvergenceError>())?;
    m.add("Interrupted", m.py().get_type::<Interrupted>())?;
    Ok(())
}

/// A rows × cols matrix of `values` as a numpy float64 array.
pub fn matrix<'py>(py: Python<'py>, values: Vec<f64>, rows: usize, cols: usize) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyArray1::from_vec(py, values).reshape([rows, cols])?.into_any())
}

/// A Gram result's matrix as numpy.
pub fn gram_matrix<'py>(py: Python<'py>, g: Gram) -> PyResult<Bound<'py, PyAny>> {
    matrix(py, g.values, g.rows, g.cols)
}

/// The Python exception of an octile error (its message is the library's).
pub fn to_py(py: Python<'_>, e: OctileError) -> PyErr {
    let msg = e.to_string();
    match e {
        OctileError::InvalidGraph { .. } | OctileError::InvalidConfig(_) | OctileError::MissingFeature { .. } | OctileError::Parse { .. } | OctileError::Output { .. } => PyValueError::new_err(msg),
        OctileError::Io { cause, .. } if cause.kind() == std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
        OctileError::Io { .. } => PyOSError::new_err(msg),
        OctileError::TooLarge { .. } => PyMemoryError::new_err(msg),
        OctileError::NoConvergence { n_failed, partial, .. } => {
            let failures: Vec<(usize, usize, u32, f64)> = partial.failures().into_iter().map(|(i, j, f)| (i, j, f.iterations, f.residual)).collect();
            let err = NonConvergenceError::new_err(msg);
            let attach = || -> PyResult<()> {
                let v = err.value(py);
                v.setattr("partial", gram_matrix(py, *partial)?)?;
                v.setattr("failures", failures)?;
                v.setattr("n_failed", n_failed)
            };
            attach().err().unwrap_or(err)
        }
        OctileError::Interrupted { partial, done, n_done, n_total } => {
            let err = Interrupted::new_err(msg);
            let attach = || -> PyResult<()> {
                let v = err.value(py);
                let (rows, cols) = (partial.rows, partial.cols);
                v.setattr("partial", gram_matrix(py, *partial)?)?;
                v.setattr("done", PyArray1::from_vec(py, done).reshape([rows, cols])?)?;
                v.setattr("n_done", n_done)?;
                v.setattr("n_total", n_total)
            };
            attach().err().unwrap_or(err)
        }
        OctileError::Cancelled => Interrupted::new_err(msg),
        OctileError::NoGpu(_) | OctileError::Cuda(_) => PyRuntimeError::new_err(msg),
    }
}

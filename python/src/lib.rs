//! `octile._octile`: the native half of the Python package (the Python half, `python/octile/`,
//! builds kernel TOML from GraphDot-style base kernels and converts networkx / RDKit inputs).
//!
//! Everything here calls the library the CLI calls: graphs come from octile's readers
//! ([`graphs`]), kernels from [`octile::kernels::KernelFile`] ([`kernel`]), and every
//! [`octile::OctileError`] becomes a Python exception with the same message ([`errors`]).
mod errors;
mod graphs;
mod kernel;
mod wire;

use pyo3::prelude::*;

#[pymodule]
fn _octile(m: &Bound<'_, PyModule>) -> PyResult<()> {
    octile::stderr_log::install(false);
    errors::register(m)?;
    graphs::register(m)?;
    kernel::register(m)?;
    wire::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

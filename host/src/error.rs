//! The one error type of the `octile` library.
//!
//! A base module: it imports nothing of the crate but the other base module, [`crate::matrix`]
//! (the partial results of [`OctileError::NoConvergence`] and [`OctileError::Interrupted`]);
//! `scripts/check-imports` checks it.
use crate::matrix::Gram;
use cudarc::driver::DriverError;
use std::path::PathBuf;

/// Everything that can go wrong in octile, typed.
#[derive(Debug, thiserror::Error)]
pub enum OctileError {
    /// A graph is malformed (bad node index, weight, feature...).
    #[error("{}{what}", graph.map(|g| format!("graph {g}: ")).unwrap_or_default())]
    InvalidGraph {
        /// Index of the graph in its list (`None` when raised by a [`crate::Graph`] method).
        graph: Option<usize>,
        /// What is wrong.
        what: String,
    },
    /// A kernel configuration is invalid (out-of-range hyperparameter, unknown key, ...).
    #[error("kernel configuration: {0}")]
    InvalidConfig(String),
    /// A request the inputs cannot meet (an index past the graphs, a tile outside the matrix, a
    /// partial result of another run, a count past a limit): not the kernel file's fault, so its
    /// message has no "kernel configuration" prefix.
    #[error("{0}")]
    InvalidRequest(String),
    /// A kernel that would compute values without meaning on these graphs: a continuous base
    /// kernel on string labels (their codes are no quantities), or a kernel comparing no feature of
    /// graphs that have some (unless the file says `features = "none"`).
    #[error("{0}")]
    MeaninglessKernel(String),
    /// A kernel names a feature the graphs do not have.
    #[error("{kind} feature '{feature}' is not in graph {graph}; it has: [{available}]")]
    MissingFeature {
        /// "node" or "edge".
        kind: &'static str,
        /// The feature asked for.
        feature: String,
        /// Graph index.
        graph: usize,
        /// The features the graph has, comma-separated.
        available: String,
    },
    /// Input file problem: file, line (1-based, 0 when not applicable: the message then names the
    /// file alone), and what is wrong.
    #[error("{}{}: {what}", path.display(), line_suffix(*line))]
    Parse {
        /// The file.
        path: PathBuf,
        /// Line (or record) number, 1-based.
        line: usize,
        /// What is wrong.
        what: String,
    },
    /// An output path that cannot take the result (checked before any work).
    #[error("output {}: {what}", path.display())]
    Output {
        /// The path asked for.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// An interrupted run's partial files do not hold what their list of finished tiles says (the
    /// values were edited or damaged, a checksum is missing): refused, never used. `what` names the
    /// tile (its rows and columns).
    #[error("{}: {what}", path.display())]
    CorruptPartial {
        /// The partial file whose values disagree (or the list that lacks a checksum).
        path: PathBuf,
        /// Which tile, and what disagrees.
        what: String,
    },
    /// I/O failure on a path.
    /// (The cause is in the message, not a `source()`: a message printed with its chain would
    /// otherwise say it twice.)
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        cause: std::io::Error,
    },
    /// Some pairs did not converge; `partial` holds every value computed (non-converged ones
    /// included, flagged in its per-pair info).
    #[error("{} ({n_failed} pair(s) failed in all)", match cause {
        Some(c) => format!("pair ({}, {}) could not be solved: {c}", pair.0, pair.1),
        None => format!("pair ({}, {}) did not converge: {iterations} iterations, relative residual {residual:.3e}", pair.0, pair.1),
    })]
    NoConvergence {
        /// The first failing pair (row, column) in the output matrix.
        pair: (usize, usize),
        /// Iterations it ran.
        iterations: u32,
        /// Its final relative residual.
        residual: f64,
        /// How many pairs failed.
        n_failed: usize,
        /// Everything computed.
        /// Why the first failing pair could not be solved, when known (e.g. its node kernel
        /// underflowed to zero: `mgk::diagnose`); `None`: it ran out of iterations or tolerance.
        cause: Option<String>,
        partial: Box<Gram>,
    },
    /// The CUDA backend was asked for but cannot be used.
    #[error("CUDA backend unavailable: {0}")]
    NoGpu(String),
    /// A CUDA driver call failed; its result code is kept. (The code is in the message, not a
    /// `source()`, as for [`OctileError::Io`].)
    #[error("CUDA: {}", driver_message(.0))]
    Driver(DriverError),
    /// The loaded GPU module has no kernel entry of this name (a PTX or cubin built from other
    /// sources, e.g. an older `OCTILE_PTX_FILE`).
    #[error("kernel {kernel}: not in the loaded GPU module ({})", driver_message(cause))]
    MissingKernel {
        /// The entry asked for.
        kernel: String,
        /// The driver's answer (`CUDA_ERROR_NOT_FOUND`).
        cause: DriverError,
    },
    /// A launch's (or a transfer's) contract, checked on the host before anything is launched or
    /// copied, does not hold: nothing ran. A bug in octile, or a launch this device cannot take
    /// (e.g. more shared memory than it has).
    #[error("{launch} launch check: {what}")]
    LaunchContract {
        /// The launch: a kernel entry's name, or the launches of a solver ("resident",
        /// "shortest-path") or a copy ("staged download").
        launch: String,
        /// What does not hold.
        what: String,
    },
    /// A check of octile's own consistency failed (a GPU result the host can verify disagrees
    /// with it, a helper thread panicked): a bug in octile.
    #[error("internal error (a bug in octile): {0}")]
    Internal(String),
    /// A request needs more memory than there is (or than `--max-memory` allows); refused before
    /// allocating.
    #[error("{what} needs {}, more than the {} of {} — {hint}", human_bytes(*need_bytes), of, human_bytes(*have_bytes as u128))]
    TooLarge {
        /// The request.
        what: String,
        /// Bytes it needs (an estimate of its largest allocations).
        need_bytes: u128,
        /// Bytes there are.
        have_bytes: u64,
        /// "available memory", "--max-memory limit", "free GPU memory", ...
        of: &'static str,
        /// What the user can do.
        hint: &'static str,
    },
    /// The run was cancelled (Ctrl-C) before any result could be kept (a diagonal, listed pairs,
    /// or a whole-matrix method).
    #[error("cancelled")]
    Cancelled,
    /// A Gram matrix run was cancelled (Ctrl-C) part way: `partial` holds every entry computed
    /// (others NaN), `done` marks them (row-major); give both back as [`Known`](crate::gram::Known)
    /// to finish only the rest.
    #[error("interrupted: {n_done} of {n_total} pairs done")]
    Interrupted {
        /// The entries computed (un-normalized), NaN elsewhere.
        partial: Box<Gram>,
        /// Row-major: whether the entry was computed.
        done: Vec<bool>,
        /// Distinct pairs done.
        n_done: usize,
        /// Distinct pairs of the whole matrix.
        n_total: usize,
    },
}

/// A byte count for messages: "12.3 GiB" style.
pub fn human_bytes(bytes: u128) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let (mut v, mut u) = (bytes as f64, 0);
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{bytes} bytes") } else { format!("{v:.1} {}", units[u]) }
}

/// Result with [`OctileError`].
pub type Result<T, E = OctileError> = std::result::Result<T, E>;

/// `?` on a cudarc call: [`OctileError::Driver`] (written by hand, not `#[from]`, so that the
/// driver error is not also a `source()`: its code is in the message already).
impl From<DriverError> for OctileError {
    fn from(e: DriverError) -> Self {
        OctileError::Driver(e)
    }
}

/// A driver error for messages: its code and the driver's text, e.g.
/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)". Only called for errors the driver returned (the
/// library is loaded then: asking it for the text is safe).
fn driver_message(e: &DriverError) -> String {
    match e.error_string() {
        Ok(text) => format!("{:?} ({})", e.0, text.to_string_lossy()),
        Err(_) => format!("{:?}", e.0),
    }
}

/// `:LINE` of a [`OctileError::Parse`], or nothing for line 0 (the whole file): `zzz:5:0:` read as
/// a line of a file named `zzz:5`.
fn line_suffix(line: usize) -> String {
    if line == 0 { String::new() } else { format!(":{line}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_error_without_a_line_names_the_file_alone() {
        let at = |line| OctileError::Parse { path: "nws:5".into(), line, what: "bad".into() }.to_string();
        assert_eq!(at(0), "nws:5: bad");
        assert_eq!(at(3), "nws:5:3: bad");
    }

    #[test]
    fn gpu_errors_name_what_failed() {
        let name = octile_types::Kernel::MgkResidentWarpKdelta.name();
        let e = OctileError::LaunchContract { launch: name.into(), what: "team of 48 threads, 1 per block".into() };
        assert_eq!(e.to_string(), format!("{name} launch check: team of 48 threads, 1 per block"));
        assert_eq!(OctileError::Internal("x".into()).to_string(), "internal error (a bug in octile): x");
        // only the kernel file's errors say "kernel configuration"
        assert_eq!(OctileError::InvalidConfig("q = 2".into()).to_string(), "kernel configuration: q = 2");
        assert_eq!(OctileError::InvalidRequest("pair 1 = (1, 5) indexes past the 5 graphs".into()).to_string(), "pair 1 = (1, 5) indexes past the 5 graphs");
        assert_eq!(OctileError::MeaninglessKernel("node x holds strings".into()).to_string(), "node x holds strings");
        // a driver error keeps its code (matched on, not parsed from a message)
        let e: OctileError = DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_FOUND).into();
        assert!(matches!(e, OctileError::Driver(DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_FOUND))));
    }
}

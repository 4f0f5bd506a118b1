//! What every reader shares: the [`Loaded`] result, reading a whole text file, and the errors of
//! a bad line or record (with `skip_invalid`: a warning and a count instead).
use crate::error::{OctileError, Result};
use crate::graph::Graph;
use std::path::{Path, PathBuf};

/// Graphs read from one input, and how many records were skipped.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The graphs, in file order.
    pub graphs: Vec<Graph>,
    /// Records skipped with `skip_invalid` (each was reported on stderr).
    pub skipped: usize,
}

pub(crate) fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| OctileError::Io { path: path.into(), source })
}

pub(crate) fn parse_err(path: &Path, line: usize, what: impl Into<String>) -> OctileError {
    OctileError::Parse { path: PathBuf::from(path), line, what: what.into() }
}

/// Handle a bad record: an error, or (with `skip_invalid`) a warning and a count.
pub(crate) fn bad_record(e: OctileError, skip_invalid: bool, skipped: &mut usize) -> Result<()> {
    if skip_invalid {
        eprintln!("warning: skipped: {e}");
        *skipped += 1;
        Ok(())
    } else {
        Err(e)
    }
}

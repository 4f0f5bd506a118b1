//! What every reader shares: the [`Loaded`] result, reading a whole text file, and the errors of
//! a bad line or record (with `skip_invalid`: a warning and a count instead).
use crate::error::{OctileError, Result};
use crate::graph::Graph;
use std::path::{Path, PathBuf};

/// Graphs read from one input, where each was, and the records skipped.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The graphs, in file order.
    pub graphs: Vec<Graph>,
    /// Records skipped with `skip_invalid` (each was reported as a `log` warning).
    pub skipped: usize,
    /// Where each graph of [`graphs`](Self::graphs) was in the file (same order), so that rows of
    /// a matrix can be matched back to records when some were skipped.
    pub places: Vec<Place>,
    /// The records skipped with `skip_invalid`: where, and why.
    pub skipped_records: Vec<Skipped>,
    /// Whether each feature holds strings (`true`, coded as integers) or numbers, keyed
    /// "node NAME" / "edge NAME"; see [`FeatureKinds::check_against`].
    pub kinds: FeatureKinds,
}

/// Where a record was in its file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// The record's index among the file's records (0-based, skipped ones counted).
    pub record: usize,
    /// Its first line (1-based); 0 where records are not lines (a JSON array, a TU folder, PDB).
    pub line: usize,
}

/// A record skipped with `skip_invalid`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// Where it was.
    pub place: Place,
    /// Why it was skipped.
    pub reason: String,
}

impl Loaded {
    /// Keep `g`, read from the record starting at `line` (1-based; 0: not a line).
    pub(crate) fn keep(&mut self, g: Graph, line: usize) {
        let place = Place { record: self.graphs.len() + self.skipped, line };
        self.graphs.push(g);
        self.places.push(place);
    }
}

/// Whether each feature holds strings (`true`) or numbers, keyed "node NAME" / "edge NAME". String
/// values are coded as integers, so a string feature and a number feature of the same name must
/// never meet in one computation: a code would equal a number.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FeatureKinds(pub std::collections::BTreeMap<String, bool>);

impl FeatureKinds {
    /// Every feature of `graphs` as a number feature (readers without strings).
    pub fn numbers_of(graphs: &[Graph]) -> Self {
        let mut k = FeatureKinds::default();
        for g in graphs.iter().take(1) {
            k.0.extend(g.node_feature_names().iter().map(|n| (format!("node {n}"), false)));
            k.0.extend(g.edge_feature_names().iter().map(|n| (format!("edge {n}"), false)));
        }
        k
    }

    /// Checks `other` (read from `other_path`) against these (read from `self_path`): a feature
    /// holding strings in one and numbers in the other is an error naming both inputs.
    pub fn check_against(&self, self_path: &Path, other: &FeatureKinds, other_path: &Path) -> Result<()> {
        let kind = |s: bool| if s { "strings" } else { "numbers" };
        match other.0.iter().find(|(key, s)| self.0.get(*key).is_some_and(|b| b != *s)) {
            Some((key, &s)) => Err(parse_err(
                other_path,
                0,
                format!(
                    "{key} holds {}, but in {} it holds {}; use one kind per feature across all inputs (a string's code would equal a number)",
                    kind(s),
                    self_path.display(),
                    kind(!s)
                ),
            )),
            None => Ok(()),
        }
    }
}

/// `bytes` without a leading UTF-8 byte-order mark (what some Windows editors write first): not
/// part of the text, for every reader (JSON, SMILES, CSV, SDF, TU, Matrix Market, edge lists).
pub(crate) fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// A whole text file. A byte sequence that is not UTF-8 is a parse error naming its line (1-based)
/// and column, not an I/O error about the whole file; a directory given as a file says so.
pub fn read_text(path: &Path) -> Result<String> {
    if path.is_dir() {
        return Err(parse_err(path, 0, "a folder where a file was expected (a TU dataset folder is read as one input; give files otherwise)"));
    }
    let mut bytes = std::fs::read(path).map_err(|cause| OctileError::Io { path: path.into(), cause })?;
    let bom = bytes.len() - without_bom(&bytes).len();
    bytes.drain(..bom);
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) + 1;
        parse_err(path, line, format!("byte {} at column {col} is not UTF-8 text", e.as_bytes()[good.len()]))
    })
}

/// `s` for a message: at most 60 characters, the rest elided with its length (a 1 MB line is not
/// echoed whole).
pub(crate) fn shorten(s: &str) -> String {
    const KEEP: usize = 60;
    match s.char_indices().nth(KEEP) {
        Some((cut, _)) => format!("{}… ({} bytes in all)", &s[..cut], s.len()),
        None => s.to_string(),
    }
}

pub(crate) fn parse_err(path: &Path, line: usize, what: impl Into<String>) -> OctileError {
    OctileError::Parse { path: PathBuf::from(path), line, what: what.into() }
}

/// Handle a bad record: an error, or (with `skip_invalid`) a `log` warning, and the record listed
/// in `out`'s skipped records (its line and the reason from the error).
pub(crate) fn bad_record(e: OctileError, skip_invalid: bool, out: &mut Loaded) -> Result<()> {
    if !skip_invalid {
        return Err(e);
    }
    log::warn!("skipped: {e}");
    let (line, reason) = match &e {
        OctileError::Parse { line, what, .. } => (*line, what.clone()),
        e => (0, e.to_string()),
    };
    out.skipped_records.push(Skipped { place: Place { record: out.graphs.len() + out.skipped, line }, reason });
    out.skipped += 1;
    Ok(())
}

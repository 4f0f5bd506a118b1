//! Readers (graph files in) and writers (matrices out).
//!
//! Every reader returns typed errors naming file and line/record; a bad record never silently
//! disappears: with `skip_invalid` it is skipped and counted in [`Loaded::skipped`].
pub mod edgelist;
pub mod hydrogens;
pub mod json;
pub mod mapped;
pub mod mtx;
pub mod npy;
pub mod pdb;
pub mod record;
pub mod sdf;
pub mod smiles;
mod smiles_syntax;
pub mod tu;

pub use record::{FeatureKinds, Loaded, Place, Skipped};

use crate::error::{OctileError, Result};
use record::bad_record;
use std::path::Path;

/// Input formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// networkx node-link JSON: one graph per line, or a JSON array.
    Json,
    /// SMILES, one molecule per line (first whitespace-separated token).
    Smiles,
    /// CSV with a `smiles` column.
    SmilesCsv,
    /// TU dataset folder (`*_A.txt`, `*_graph_indicator.txt`, ...).
    Tu,
    /// SDF / MOL (V2000).
    Sdf,
    /// PDB structure (plain or .gz): one graph per file.
    Pdb,
}

impl Format {
    /// Parse a `--format` value.
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "json" | "jsonl" | "networkx" => Some(Format::Json),
            "smi" | "smiles" => Some(Format::Smiles),
            "csv" => Some(Format::SmilesCsv),
            "tu" => Some(Format::Tu),
            "sdf" | "mol" => Some(Format::Sdf),
            "pdb" => Some(Format::Pdb),
            _ => None,
        }
    }
    /// Infer from a path: a directory is a TU folder, else by extension.
    pub fn infer(path: &Path) -> Option<Format> {
        if path.is_dir() {
            return Some(Format::Tu);
        }
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        match name.rsplit('.').next()? {
            "json" | "jsonl" | "ndjson" => Some(Format::Json),
            "smi" | "smiles" => Some(Format::Smiles),
            "csv" => Some(Format::SmilesCsv),
            "sdf" | "sd" | "mol" => Some(Format::Sdf),
            "pdb" | "ent" => Some(Format::Pdb),
            _ => None,
        }
    }
}

/// How to read an input.
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    /// The format; `None`: inferred from the path.
    pub format: Option<Format>,
    /// Skip (and count) bad records instead of failing.
    pub skip_invalid: bool,
    /// Contact cutoff of the PDB reader in Å.
    pub pdb_cutoff: f64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { format: None, skip_invalid: false, pdb_cutoff: pdb::DEFAULT_CUTOFF }
    }
}

/// Read one input with default options but `format` and `skip_invalid`.
pub fn read(path: &Path, format: Option<Format>, skip_invalid: bool) -> Result<Loaded> {
    read_with(path, &ReadOptions { format, skip_invalid, ..ReadOptions::default() })
}

/// Read one input.
pub fn read_with(path: &Path, opt: &ReadOptions) -> Result<Loaded> {
    let skip_invalid = opt.skip_invalid;
    if !(opt.pdb_cutoff.is_finite() && opt.pdb_cutoff > 0.0) {
        return Err(OctileError::InvalidRequest(format!("PDB cutoff {} must be a positive number of Å", opt.pdb_cutoff)));
    }
    let format = opt.format.or_else(|| Format::infer(path)).ok_or_else(|| OctileError::Parse {
        path: path.into(),
        line: 0,
        what: "cannot infer the format from the extension; use --format json|smi|csv|tu|sdf|pdb".into(),
    })?;
    let loaded = match format {
        Format::Json => json::read(path, skip_invalid)?,
        Format::Smiles => smiles::read_smi(path, skip_invalid)?,
        Format::SmilesCsv => smiles::read_csv(path, skip_invalid)?,
        Format::Tu => tu::read(path)?,
        Format::Sdf => sdf::read(path, skip_invalid)?,
        Format::Pdb => pdb::read(path, opt.pdb_cutoff).or_else(|e| {
            let mut l = Loaded::default();
            bad_record(e, skip_invalid, &mut l).map(|_| l)
        })?,
    };
    if loaded.graphs.is_empty() && loaded.skipped == 0 {
        return Err(OctileError::Parse { path: path.into(), line: 0, what: "no graphs in input".into() });
    }
    if loaded.graphs.is_empty() {
        return Err(OctileError::Parse {
            path: path.into(),
            line: 0,
            what: format!("every record was invalid ({} skipped): no graphs to compute with", loaded.skipped),
        });
    }
    let mut loaded = loaded;
    if loaded.places.len() != loaded.graphs.len() {
        // the readers of records that are not lines (TU: graph k of the folder, PDB: the one graph)
        loaded.places = (0..loaded.graphs.len()).map(|record| record::Place { record, line: 0 }).collect();
    }
    if format != Format::Json {
        loaded.kinds = FeatureKinds::numbers_of(&loaded.graphs);
    }
    Ok(loaded)
}

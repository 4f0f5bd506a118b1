//! Interrupted `octile gram` runs: on Ctrl-C the entries computed so far are saved beside the
//! output, and `--resume` finishes only the rest.
//!
//! ```text
//! --out K.npy  →  K.partial.npy        float64, rows × cols: values computed, NaN elsewhere
//!                 K.partial-mask.npy   bool, rows × cols: which entries were computed
//!                 K.partial.json       summary: pairs done, and the run's fingerprint
//! ```
//! The fingerprint (FNV-1a of the graphs, the kernel file and the method's settings) must match
//! when resuming, so a partial matrix finishes only the run it came from.
use anyhow::{Context, Result, bail};
use octile::io::npy;
use octile::{Gram, Graph, Known};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The files of an interrupted run whose output was `out`.
pub struct PartialFiles {
    pub values: PathBuf,
    pub mask: PathBuf,
    pub summary: PathBuf,
}

impl PartialFiles {
    pub fn of(out: &Path) -> Self {
        let base = out.with_extension("");
        let with = |suffix: &str| PathBuf::from(format!("{}{suffix}", base.display()));
        PartialFiles { values: with(".partial.npy"), mask: with(".partial-mask.npy"), summary: with(".partial.json") }
    }

    /// The files of the partial values file `values` (`NAME.partial.npy`).
    fn from_values(values: &Path) -> Result<Self> {
        let s = values.to_string_lossy();
        let Some(base) = s.strip_suffix(".partial.npy") else {
            bail!("--resume {s}: give the NAME.partial.npy file an interrupted run wrote");
        };
        Ok(PartialFiles::of(Path::new(&format!("{base}.npy"))))
    }

    /// Remove the files (after the run they came from finished).
    pub fn remove(&self) {
        for p in [&self.values, &self.mask, &self.summary] {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// FNV-1a (64-bit) of everything that decides the matrix's values: the graphs of X and Y in order,
/// the kernel file's text and the method's settings.
pub fn fingerprint(x: &[Graph], y: &[Graph], kernel_text: &str, method: &serde_json::Value) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for (tag, set) in [("X", x), ("Y", y)] {
        eat(format!("{tag}{}", set.len()).as_bytes());
        for g in set {
            eat(format!("{g:?}").as_bytes());
        }
    }
    eat(kernel_text.as_bytes());
    eat(method.to_string().as_bytes());
    format!("{h:016x}")
}

/// Save an interrupted run's entries (`done`: which were computed) beside `out`; returns the
/// values file to pass to `--resume`.
pub fn save(out: &Path, partial: &Gram, done: &[bool], n_done: usize, n_total: usize, fingerprint: &str, mut summary: serde_json::Value) -> Result<PathBuf> {
    let f = PartialFiles::of(out);
    npy::write_atomic(&f.values, &npy::npy_bytes(&partial.values, partial.rows, partial.cols))?;
    npy::write_atomic(&f.mask, &npy::mask_bytes(done, partial.rows, partial.cols))?;
    if let Some(s) = summary.as_object_mut() {
        s.extend([
            ("interrupted".to_string(), json!(true)),
            ("pairs_done".to_string(), json!(n_done)),
            ("pairs_total".to_string(), json!(n_total)),
            ("fingerprint".to_string(), json!(fingerprint)),
            ("mask".to_string(), json!(f.mask.display().to_string())),
            ("resume".to_string(), json!(format!("run the same command with --resume {}", f.values.display()))),
        ]);
    }
    npy::write_atomic(&f.summary, serde_json::to_string_pretty(&summary)?.as_bytes())?;
    Ok(f.values)
}

/// The entries saved in `values` (a `NAME.partial.npy`) and its mask, checked against this run's
/// `fingerprint`.
pub fn load(values: &Path, fingerprint: &str) -> Result<(Known, PartialFiles)> {
    let f = PartialFiles::from_values(values)?;
    let text = std::fs::read_to_string(&f.summary).with_context(|| format!("--resume: reading {}", f.summary.display()))?;
    let summary: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("--resume: {}", f.summary.display()))?;
    match summary["fingerprint"].as_str() {
        Some(fp) if fp == fingerprint => {}
        Some(fp) => bail!(
            "--resume {}: it was computed for other inputs or another kernel (fingerprint {fp}, this run's {fingerprint}); use the same inputs, kernel file and options",
            values.display()
        ),
        None => bail!("--resume: {} has no fingerprint", f.summary.display()),
    }
    let v = npy::read_matrix(&f.values)?;
    let m = npy::read_matrix(&f.mask)?;
    if (v.rows, v.cols) != (m.rows, m.cols) {
        bail!("--resume: {} is {} × {} but its mask {} is {} × {}", f.values.display(), v.rows, v.cols, f.mask.display(), m.rows, m.cols);
    }
    let known = Known { rows: v.rows, cols: v.cols, values: v.values, done: m.values.iter().map(|&d| d != 0.0).collect() };
    Ok((known, f))
}

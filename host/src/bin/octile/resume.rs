//! Interrupted `octile gram` runs: the matrix is written tile by tile into `NAME.partial.npy`; on
//! Ctrl-C (or an error part way) the tiles finished so far are listed beside it, and `--resume`
//! computes only the others, into the same file.
//!
//! ```text
//! --out K.npy  →  K.partial.npy        float64, the output's shape: the tiles done (0 elsewhere)
//!                 K.partial.grad.npy   with --gradient: ∂K/∂θ likewise
//!                 K.partial.json       the tiles done, pairs done, and the run's fingerprint
//! ```
//! The fingerprint (FNV-1a of the graphs, the kernel file and every setting that decides the
//! values or the tiles) must match when resuming, so a partial matrix finishes only the run it
//! came from.
use anyhow::{Context, Result, bail};
use octile::Graph;
use octile::gram::Tile;
use octile::io::npy;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The files of an interrupted run whose output was `out`.
pub struct PartialFiles {
    pub values: PathBuf,
    pub gradient: PathBuf,
    pub summary: PathBuf,
}

impl PartialFiles {
    pub fn of(out: &Path) -> Self {
        let base = out.with_extension("");
        let with = |suffix: &str| PathBuf::from(format!("{}{suffix}", base.display()));
        PartialFiles { values: with(".partial.npy"), gradient: with(".partial.grad.npy"), summary: with(".partial.json") }
    }

    /// The files of the partial values file `values` (`NAME.partial.npy`).
    fn from_values(values: &Path) -> Result<Self> {
        let s = values.to_string_lossy();
        let Some(base) = s.strip_suffix(".partial.npy") else {
            bail!("--resume {s}: give the NAME.partial.npy file an interrupted run wrote");
        };
        Ok(PartialFiles::of(Path::new(&format!("{base}.npy"))))
    }

    /// Remove the list of tiles done (the run finished, or starts afresh).
    pub fn remove_summary(&self) {
        let _ = std::fs::remove_file(&self.summary);
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

/// Record an interrupted run's finished `tiles` beside `out` (their values are already in the
/// partial files); returns the values file to pass to `--resume`.
pub fn save(out: &Path, tiles: &[Tile], n_done: usize, n_total: usize, fingerprint: &str, mut summary: serde_json::Value) -> Result<PathBuf> {
    let f = PartialFiles::of(out);
    if let Some(s) = summary.as_object_mut() {
        s.extend([
            ("interrupted".to_string(), json!(true)),
            ("pairs_done".to_string(), json!(n_done)),
            ("pairs_total".to_string(), json!(n_total)),
            ("fingerprint".to_string(), json!(fingerprint)),
            ("tiles_done".to_string(), json!(tiles.iter().map(|t| [t.rows.start, t.rows.end, t.cols.start, t.cols.end]).collect::<Vec<_>>())),
            ("resume".to_string(), json!(format!("run the same command with --resume {}", f.values.display()))),
        ]);
    }
    npy::write_atomic(&f.summary, serde_json::to_string_pretty(&summary)?.as_bytes())?;
    Ok(f.values)
}

/// The tiles an interrupted run finished (its `NAME.partial.npy` is `values`), checked against
/// this run's `fingerprint`.
pub fn load(values: &Path, fingerprint: &str) -> Result<(Vec<Tile>, PartialFiles)> {
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
    let bad = || anyhow::anyhow!("--resume: {} has no valid list of the tiles done (\"tiles_done\")", f.summary.display());
    let tiles = summary["tiles_done"]
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|t| {
            let v: Vec<usize> = t.as_array()?.iter().map(|x| x.as_u64().map(|x| x as usize)).collect::<Option<_>>()?;
            let [r0, r1, c0, c1] = v[..] else { return None };
            Some(Tile { rows: r0..r1, cols: c0..c1 })
        })
        .collect::<Option<Vec<Tile>>>()
        .ok_or_else(bad)?;
    Ok((tiles, f))
}

//! Interrupted `octile gram` runs: the matrix is written tile by tile into `NAME.partial.npy`; on
//! Ctrl-C (or an error part way) the tiles finished so far are listed beside it, and `--resume`
//! computes only the others, into the same file.
//!
//! ```text
//! --out K.npy  →  K.partial.npy        float64, the output's shape: the tiles done (0 elsewhere)
//!                 K.partial.grad.npy   with --gradient: ∂K/∂θ likewise
//!                 K.partial.json       the tiles done with each one's checksum, pairs done,
//!                                      and the run's fingerprint
//! ```
//! The fingerprint (FNV-1a of the graphs, the kernel file and every setting that decides the
//! values or the tiles) must match when resuming, so a partial matrix finishes only the run it
//! came from. Each tile's checksum (FNV-1a of its place and of the values written for it, its
//! gradient's too) must match what the partial files hold, so an edited or damaged partial is a
//! typed error naming the file and the tile, never silently part of a result.
use crate::tiled;
use anyhow::{Context, Result, bail};
use octile::checksum::Fnv64;
use octile::gram::Tile;
use octile::io::npy;
use octile::{Graph, OctileError};
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

    /// The files of the partial values file `values` (`NAME.partial.npy`, as [`of`](Self::of)
    /// names it).
    fn of_values(values: &Path) -> Self {
        let s = values.to_string_lossy();
        PartialFiles::of(Path::new(&format!("{}.npy", s.strip_suffix(".partial.npy").unwrap_or(&s))))
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
    let mut h = Fnv64::default();
    for (tag, set) in [("X", x), ("Y", y)] {
        h.bytes(format!("{tag}{}", set.len()).as_bytes());
        for g in set {
            h.bytes(format!("{g:?}").as_bytes());
        }
    }
    h.bytes(kernel_text.as_bytes());
    h.bytes(method.to_string().as_bytes());
    h.hex()
}

/// Record an interrupted run's finished `tiles` (each with the checksum of what was written for it)
/// beside `out` (their values are already in the partial files); returns the values file to pass
/// to `--resume`.
pub fn save(out: &Path, tiles: &[(Tile, String)], n_done: usize, n_total: usize, fingerprint: &str, mut summary: serde_json::Value) -> Result<PathBuf> {
    let f = PartialFiles::of(out);
    if let Some(s) = summary.as_object_mut() {
        s.extend([
            ("interrupted".to_string(), json!(true)),
            ("pairs_done".to_string(), json!(n_done)),
            ("pairs_total".to_string(), json!(n_total)),
            ("fingerprint".to_string(), json!(fingerprint)),
            ("tiles_done".to_string(), json!(tiles.iter().map(|(t, _)| [t.rows.start, t.rows.end, t.cols.start, t.cols.end]).collect::<Vec<_>>())),
            ("tile_checksums".to_string(), json!(tiles.iter().map(|(_, c)| c).collect::<Vec<_>>())),
            ("resume".to_string(), json!(format!("run the same command with --resume {}", f.values.display()))),
        ]);
    }
    npy::write_atomic(&f.summary, serde_json::to_string_pretty(&summary)?.as_bytes())?;
    Ok(f.values)
}

/// The tiles an interrupted run finished, each with its checksum (its `NAME.partial.npy` is
/// `values`), checked against this run's `fingerprint`; the values themselves are checked by
/// [`verify`] once the partial files are open.
pub fn load(values: &Path, fingerprint: &str) -> Result<(Vec<(Tile, String)>, PartialFiles)> {
    let f = PartialFiles::from_values(values)?;
    let text = std::fs::read_to_string(&f.summary).with_context(|| format!("--resume: reading {}", f.summary.display()))?;
    let summary: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("--resume: {}", f.summary.display()))?;
    match summary["fingerprint"].as_str() {
        Some(fp) if fp == fingerprint => {}
        Some(fp) => bail!(
            "--resume {}: it was computed for other inputs or another kernel (fingerprint {fp}, this run's {fingerprint}); use the same inputs, kernel file and options (and the same --tile-size: its default depends on --devices and on octile's version)",
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
            (r0 <= r1 && c0 <= c1).then_some(Tile { rows: r0..r1, cols: c0..c1 })
        })
        .collect::<Option<Vec<Tile>>>()
        .ok_or_else(bad)?;
    let sums = summary["tile_checksums"].as_array().map(|a| a.iter().map(|c| c.as_str().map(str::to_string)).collect::<Vec<_>>()).unwrap_or_default();
    let mut out = Vec::with_capacity(tiles.len());
    for (k, t) in tiles.into_iter().enumerate() {
        let Some(Some(sum)) = sums.get(k).cloned().filter(|s| s.as_deref().is_some_and(|s| s.starts_with(tiled::CHECKSUM_SCHEME))) else {
            return Err(OctileError::CorruptPartial {
                path: f.summary.clone(),
                what: format!(
                    "--resume: {} lists no checksum of this octile's kind for it (\"tile_checksums\", \"{}…\"); the list was edited or written by an older octile: remove the partial files and run afresh",
                    tile_name(&t),
                    tiled::CHECKSUM_SCHEME
                ),
            }
            .into());
        };
        out.push((t, sum));
    }
    Ok((out, f))
}

/// Checks that every tile `done` lists holds, in the partial files `outputs` opened, the values
/// its checksum covers: an edited or damaged partial is a typed error naming the file and the
/// tile, before any work.
pub fn verify(job: &tiled::Job, tiles: &[Tile], done: &[(Tile, String)], outputs: &tiled::Outputs) -> Result<()> {
    for (t, sum) in done {
        // the fingerprint matched, so this run's tiles are the interrupted run's: another is an edit,
        // or a block across K(X)'s diagonal cut by an octile built before 2026-12-07, whose tiles
        // held mirrored pairs twice (now `octile::gram::block_tiles`)
        if !tiles.contains(t) {
            return Err(OctileError::CorruptPartial {
                path: PartialFiles::of_values(outputs.values.path()).summary,
                what: format!(
                    "--resume: {} is not a tile of this run; the list was edited, or an older octile cut this block across the diagonal otherwise: remove the partial files and run afresh",
                    tile_name(t)
                ),
            }
            .into());
        }
        let now = tiled::tile_checksum(job, t, outputs)?;
        if &now != sum {
            let files = match &outputs.gradient {
                Some((g, _)) => format!("{} or {}", outputs.values.path().display(), g.path().display()),
                None => outputs.values.path().display().to_string(),
            };
            return Err(OctileError::CorruptPartial {
                path: outputs.values.path().to_path_buf(),
                what: format!(
                    "--resume: the values of {} do not match their checksum (listed {sum}, found {now}): {files} was edited or damaged after the run stopped; remove the partial files and run afresh",
                    tile_name(t)
                ),
            }
            .into());
        }
    }
    Ok(())
}

/// A tile for messages: its rows and columns, half-open and 0-based as `--rows`/`--cols` take them.
fn tile_name(t: &Tile) -> String {
    format!("the tile of rows {}:{}, columns {}:{}", t.rows.start, t.rows.end, t.cols.start, t.cols.end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use octile::io::npy::NpyWriter;
    use octile::{Backend, MarginalizedGraphKernel, Precision};

    /// `tiles` of `job` computed and written into `out`: each with its checksum, and the pairs the
    /// tiles evaluated (each tile's `pairs_solved`, checked against what the driver counts for it).
    fn compute_and_write(job: &tiled::Job, compute: &tiled::Compute, tiles: &[&Tile], out: &tiled::Outputs) -> (Vec<(Tile, String)>, usize) {
        let (mut written, mut solved) = (Vec::new(), 0);
        for &t in tiles {
            let g = tiled::compute_tile(job, compute, None, t).unwrap();
            assert_eq!(g.pairs_solved, job.pairs_of(t), "tile {t:?}: pairs solved {}, the driver counts {}", g.pairs_solved, job.pairs_of(t));
            solved += g.pairs_solved;
            written.push((t.clone(), tiled::write_outputs(job, t, &g, out).unwrap()));
        }
        (written, solved)
    }

    /// A `--rows/--cols` block across the diagonal of K(X), stopped after some of its tiles (saved as
    /// an interrupted run saves them) and resumed from its checkpoint files: the pairs done before
    /// (`pairs_done`, `pairs_resumed`) and those computed on resuming add up to the uninterrupted
    /// run's pairs, the block's unordered pairs (each counted once, not the tiles' entries), and the
    /// files hold the uninterrupted matrix.
    #[test]
    fn a_block_resumed_from_its_checkpoint_counts_each_pair_once() {
        let dir = std::env::temp_dir().join(format!("octile-resume-block-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let x = octile::generators::nws_set(20, 3);
        let mut cfg = octile::mgk::config::synthetic_kernel(0.05);
        (cfg.backend, cfg.precision) = (Backend::Cpu, Precision::F64);
        let k = MarginalizedGraphKernel::new(cfg).unwrap();
        let compute = tiled::Compute::Values(&k);
        // rows 0:14 × columns 5:20: graphs 5:14 on both sides, 9 · 8 / 2 mirrored pairs
        let job = tiled::Job { x: &x, y: None, rows: 0..14, cols: 5..20, normalized: false, tile_size: 4 };
        let want = 14 * 15 - 9 * 8 / 2;
        let tiles = job.tiles().unwrap();
        let all: Vec<&Tile> = tiles.iter().collect();
        let pairs_total: usize = tiles.iter().map(|t| job.pairs_of(t)).sum();
        assert_eq!(pairs_total, want, "the block's pairs as the driver counts them");
        let shape = [14, 15];
        let outputs = |path: &Path, create: bool| tiled::Outputs {
            values: if create { NpyWriter::create(path, &shape) } else { NpyWriter::open(path, &shape) }.unwrap(),
            gradient: None,
        };
        // uninterrupted
        let whole = outputs(&dir.join("W.npy"), true);
        let (_, solved_whole) = compute_and_write(&job, &compute, &all, &whole);
        assert_eq!(solved_whole, want, "uninterrupted: pairs evaluated {solved_whole}, expected {want}");
        // stopped after a third of the tiles, kept as an interrupted run keeps them
        let out = dir.join("K.npy");
        let first = outputs(&PartialFiles::of(&out).values, true);
        let (done, _) = compute_and_write(&job, &compute, &all[..all.len() / 3], &first);
        let pairs_done: usize = done.iter().map(|(t, _)| job.pairs_of(t)).sum();
        drop(first);
        let values = save(&out, &done, pairs_done, pairs_total, "fp", json!({})).unwrap();
        let listed: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(PartialFiles::of(&out).summary).unwrap()).unwrap();
        assert_eq!((listed["pairs_done"].as_u64(), listed["pairs_total"].as_u64()), (Some(pairs_done as u64), Some(want as u64)), "{listed}");
        // resumed: the tiles listed, checked, then the others
        let (resumed, files) = load(&values, "fp").unwrap();
        let second = outputs(&files.values, false);
        verify(&job, &tiles, &resumed, &second).unwrap();
        let pairs_resumed: usize = resumed.iter().map(|(t, _)| job.pairs_of(t)).sum();
        let todo: Vec<&Tile> = tiles.iter().filter(|t| !resumed.iter().any(|(d, _)| d == *t)).collect();
        assert!(pairs_resumed > 0 && !todo.is_empty(), "{pairs_resumed} pairs resumed, {} tiles to do", todo.len());
        let (_, solved_after) = compute_and_write(&job, &compute, &todo, &second);
        assert_eq!(pairs_resumed + solved_after, solved_whole, "resumed {pairs_resumed} + computed {solved_after}, uninterrupted {solved_whole}");
        // the same matrix, within a two-sided relative tolerance (the CPU's tiles are exact: 0)
        let rtol = 0.0;
        let (got, expected) = (second.values.read_at(0, 14 * 15).unwrap(), whole.values.read_at(0, 14 * 15).unwrap());
        for (e, (a, b)) in got.iter().zip(&expected).enumerate() {
            let err = (a - b).abs();
            assert!(err.is_finite() && err <= rtol * a.abs().max(b.abs()), "entry ({}, {}): resumed {a:.17e}, uninterrupted {b:.17e}", e / 15, e % 15);
        }
        // normalized: the graphs on both sides' K(G, G) computed once (5:14 shared)
        let mut tally = tiled::Tally::default();
        let normalized = tiled::Job { normalized: true, ..job };
        tiled::diagonals(&normalized, &compute, &mut tally).unwrap();
        assert_eq!((tally.pairs, normalized.diagonal_pairs()), (20, 20), "diagonal pairs of graphs 0:20");
        std::fs::remove_dir_all(&dir).ok();
    }
}

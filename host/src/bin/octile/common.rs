//! Helpers shared by several subcommands: argument enums, inputs, kernel configuration, progress, outputs.
use anyhow::{Context, Result};
use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};
use octile::generators::{ba_set, nws_set};
use octile::io::{FeatureKinds, Format, ReadOptions, npy};
use octile::mgk::config::{DenseWalk, synthetic_kernel};
use octile::mgk::gpu::options::GpuTuning;
use octile::reorder::Reordering;
use octile::{Backend, Graph, MgkConfig, Precision, RunControl};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

#[derive(Clone, Copy, ValueEnum)]
pub enum BackendArg {
    Auto,
    Cpu,
    Cuda,
}

/// `--dense-walk`: how the primitives dense in B (D, R) read it.
#[derive(Clone, Copy, ValueEnum)]
pub enum DenseWalkArg {
    /// Shared tiling (default): every operand from shared memory.
    Shared,
    /// Tiling-blocking: B's row and κe's features in registers.
    Blocked,
}

impl From<DenseWalkArg> for DenseWalk {
    fn from(w: DenseWalkArg) -> Self {
        match w {
            DenseWalkArg::Shared => DenseWalk::SharedTiling,
            DenseWalkArg::Blocked => DenseWalk::TilingBlocking,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ReorderArg {
    Pbr,
    Metis,
    Rcm,
    None,
}

impl From<ReorderArg> for Reordering {
    fn from(r: ReorderArg) -> Self {
        match r {
            ReorderArg::Pbr => Reordering::Pbr,
            ReorderArg::Metis => Reordering::Metis,
            ReorderArg::Rcm => Reordering::Rcm,
            ReorderArg::None => Reordering::Natural,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum PrecisionArg {
    F32,
    F64,
}

/// The library's backend for a `--backend` value.
pub fn backend_of(backend: BackendArg) -> Backend {
    match backend {
        BackendArg::Auto => Backend::Auto,
        BackendArg::Cpu => Backend::Cpu,
        BackendArg::Cuda => Backend::Cuda,
    }
}

pub fn apply(cfg: &mut MgkConfig, backend: BackendArg, precision: Option<PrecisionArg>) {
    cfg.set_backend(backend_of(backend), precision.map(precision_of));
}

/// The library's precision for a `--precision` value.
pub fn precision_of(p: PrecisionArg) -> Precision {
    match p {
        PrecisionArg::F32 => Precision::F32,
        PrecisionArg::F64 => Precision::F64,
    }
}

pub fn progress(total: usize, quiet: bool) -> (Option<ProgressBar>, RunControl) {
    let cancel = Arc::new(AtomicBool::new(false));
    let c2 = cancel.clone();
    let _ = ctrlc::set_handler(move || {
        if c2.swap(true, std::sync::atomic::Ordering::SeqCst) {
            eprintln!("\ninterrupt again: quitting without saving");
            std::process::exit(130);
        }
        eprintln!(
            "\ninterrupt (SIGINT, SIGTERM or SIGHUP): stopping after the current tile or batch; what is done will be saved (a second signal quits at once)"
        );
    });
    let bar = (!quiet).then(|| {
        let b = ProgressBar::new(total as u64);
        b.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} pairs  {per_sec}  ETA {eta}").unwrap());
        b
    });
    let b2 = bar.clone();
    let ctl = RunControl {
        progress: Some(Arc::new(move |n| {
            if let Some(b) = &b2 {
                b.inc(n as u64)
            }
        })),
        cancel: Some(cancel),
        max_memory_bytes: None,
    };
    (bar, ctl)
}

/// Graphs of `inputs` (files, folders or generators) and the records skipped; `kinds`: the feature
/// kinds of the inputs read so far (shared by X and Y), so that a feature holding strings in one
/// input and numbers in another is an error naming both.
pub fn load(inputs: &[String], opt: &ReadOptions, kinds: &mut Vec<(PathBuf, FeatureKinds)>) -> Result<(Vec<Graph>, usize)> {
    let mut graphs = Vec::new();
    let mut skipped = 0;
    for inp in inputs {
        let parts: Vec<&str> = inp.split(':').collect();
        if parts.len() >= 2 && (parts[0] == "nws" || parts[0] == "ba" || parts[0] == "molecules") {
            let count: usize = parts[1].parse().with_context(|| format!("{inp}: COUNT must be an integer"))?;
            let seed: u64 = parts.get(2).map(|s| s.parse()).transpose().with_context(|| format!("{inp}: SEED must be an integer"))?.unwrap_or(2020);
            // a generated graph (96 nodes, up to 540 edges, their features) takes under 32 KiB
            octile::memory::check(count as u128 * (32 << 10), None, || format!("{inp}: generating {count} graphs"))?;
            let set = match parts[0] {
                "nws" => nws_set(count, seed),
                "ba" => ba_set(count, seed),
                _ => octile::generators::molecule_set(count, seed),
            };
            merge_kinds(kinds, &FeatureKinds::numbers_of(&set), Path::new(inp))?;
            graphs.extend(set);
            continue;
        }
        let l = octile::io::read_with(Path::new(inp), opt)?;
        merge_kinds(kinds, &l.kinds, Path::new(inp))?;
        skipped += l.skipped;
        graphs.extend(l.graphs);
    }
    Ok((graphs, skipped))
}

fn merge_kinds(seen: &mut Vec<(PathBuf, FeatureKinds)>, new: &FeatureKinds, path: &Path) -> Result<()> {
    for (p, k) in seen.iter() {
        k.check_against(p, new, path)?;
    }
    seen.push((path.to_path_buf(), new.clone()));
    Ok(())
}

/// `--format` of `gram` and `nodal`.
pub fn parse_format(format: Option<&str>) -> Result<Option<Format>> {
    format.map(|f| Format::parse(f).with_context(|| format!("unknown --format {f}; use json, smi, csv or tu"))).transpose()
}

/// The GPU solvers' tuning knobs the environment sets, over those of the kernel file (the
/// library reads no environment for them; the CLI keeps these variables working):
/// `OCTILE_GPU_SCRATCH_BYTES` (bytes), `OCTILE_RESIDENT_PRODUCT=0` and `OCTILE_RESIDENT_SPLIT=0`
/// (a form off; any other value: on), `OCTILE_RESIDENT_ROWS`, `OCTILE_PRODUCT_WARPS_PER_SM`,
/// `OCTILE_RESIDENT_FILL` (positive integers). See `octile::mgk::gpu::options`.
pub fn tuning_from_env(t: &mut GpuTuning) -> Result<()> {
    fn positive(name: &str) -> Result<Option<usize>> {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().parse::<usize>().ok().filter(|&n| n > 0).with_context(|| format!("{name}={v}: expected a positive integer")))
            .transpose()
    }
    let on = |name: &str| std::env::var(name).ok().map(|v| v != "0");
    if let Some(b) = positive("OCTILE_GPU_SCRATCH_BYTES")? {
        t.scratch_bytes = Some(b);
    }
    let r = &mut t.resident;
    r.product = on("OCTILE_RESIDENT_PRODUCT").unwrap_or(r.product);
    r.split = on("OCTILE_RESIDENT_SPLIT").unwrap_or(r.split);
    r.rows_per_thread = positive("OCTILE_RESIDENT_ROWS")?.unwrap_or(r.rows_per_thread);
    r.product_warps_per_sm = positive("OCTILE_PRODUCT_WARPS_PER_SM")?.unwrap_or(r.product_warps_per_sm);
    r.fill = positive("OCTILE_RESIDENT_FILL")?.or(r.fill);
    Ok(())
}

/// The kernel of `gram` and `nodal`: the `--kernel` TOML (default: the paper's synthetic-set
/// kernel) with `--backend`, `--precision` and `--reorder` applied, and the GPU tuning the
/// environment sets ([`tuning_from_env`]).
pub fn kernel_config(kernel: Option<&Path>, backend: BackendArg, precision: Option<PrecisionArg>, reorder: Option<ReorderArg>) -> Result<MgkConfig> {
    let mut cfg = match kernel {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            MgkConfig::from_toml(&text).with_context(|| format!("{}", p.display()))?
        }
        None => synthetic_kernel(0.05),
    };
    apply(&mut cfg, backend, precision);
    if let Some(r) = reorder {
        cfg.reorder = r.into();
    }
    tuning_from_env(&mut cfg.gpu)?;
    Ok(cfg)
}

/// Write the JSON summary of `gram` and `nodal` beside their output matrix `out` (same stem,
/// `.json`); returns its path.
pub fn write_summary(out: &Path, summary: &serde_json::Value) -> Result<PathBuf> {
    let summary_path = out.with_extension("json");
    npy::write_atomic(&summary_path, serde_json::to_string_pretty(summary)?.as_bytes())?;
    Ok(summary_path)
}

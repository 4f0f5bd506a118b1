//! `octile gram`: the Gram matrix K(X) or K(X, Y) of graph files, written with a JSON summary.
use crate::common::{
    BackendArg, DenseWalkArg, PrecisionArg, ReorderArg, backend_of, load, parse_format, precision_of, progress, tuning_from_env, write_summary,
};
use crate::resume;
use anyhow::{Context, Result};
use clap::Args;
use octile::gram::kernel::pairs_of;
use octile::io::{ReadOptions, npy};
use octile::kernels::{DynKernel, KernelFile};
use octile::mgk::config::{MAX_BLOCKS_PER_PAIR, PrimitiveChoice, synthetic_kernel};
use octile::{GraphKernel, MarginalizedGraphKernel, OctileError, RunControl};
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct GramArgs {
    /// Inputs: .json/.jsonl (networkx node-link), .smi, .csv (smiles column), a TU folder, or a
    /// generator: nws:COUNT[:SEED] / ba:COUNT[:SEED].
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Second set Y: computes K(X, Y).
    #[arg(long, num_args = 1..)]
    against: Vec<String>,
    /// Kernel configuration (TOML). Default: the paper's synthetic-set kernel.
    #[arg(long)]
    kernel: Option<PathBuf>,
    /// Output matrix (.npy float64 or .csv); a JSON summary is written beside it.
    #[arg(long)]
    out: PathBuf,
    /// K_ij / sqrt(K_ii K_jj).
    #[arg(long)]
    normalize: bool,
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Default: f32 on the GPU, f64 on the CPU.
    #[arg(long, value_enum)]
    precision: Option<PrecisionArg>,
    /// Input format when the extension does not tell: json, smi, csv, tu.
    #[arg(long)]
    format: Option<String>,
    /// Skip records that cannot be read (each is reported) instead of failing.
    #[arg(long)]
    skip_invalid: bool,
    /// Node order for packing: pbr (partition-based), metis, rcm, none. Default: the kernel file's, else pbr.
    #[arg(long, value_enum)]
    reorder: Option<ReorderArg>,
    /// Contact cutoff of the PDB reader, in Å.
    #[arg(long, default_value_t = octile::io::pdb::DEFAULT_CUTOFF)]
    pdb_cutoff: f64,
    /// Tile-pair primitive: adaptive (default: the tuned profile), dense-dense, dense-sparse,
    /// sparse-dense, sparse-sparse.
    #[arg(long)]
    primitive: Option<String>,
    /// Tuning profile (JSON written by `octile tune`). Default: $OCTILE_PROFILE, the user store, the shipped one.
    #[arg(long)]
    profile: Option<PathBuf>,
    /// GPU blocks per pair: auto (default: teams of blocks only for pairs of large graphs), 1,
    /// or N ≥ 2 (every pair by a team of N blocks).
    #[arg(long)]
    blocks_per_pair: Option<String>,
    /// How dense×dense and sparse×dense walk tile B: shared (shared tiling, default) or
    /// blocked (the paper's tiling-blocking). Default: the kernel file's `dense_walk`, else shared.
    #[arg(long, value_enum)]
    dense_walk: Option<DenseWalkArg>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Finish an interrupted run: the NAME.partial.npy it saved (same inputs, kernel and options);
    /// only the pairs it lacks are computed, and the partial files are removed when done.
    #[arg(long)]
    resume: Option<PathBuf>,
    /// Most memory the Gram computation may need, e.g. 8G or 512M (default: the memory available);
    /// a larger request is refused before any work.
    #[arg(long, value_parser = max_memory)]
    max_memory: Option<u64>,
    /// Also write ∂K/∂θ for every hyperparameter θ of the (marginalized) kernel: NAME.grad.npy
    /// beside the output, float64 (rows, cols, P), C order; the summary lists θ's names and values.
    #[arg(long)]
    gradient: bool,
}

fn max_memory(s: &str) -> std::result::Result<u64, String> {
    octile::memory::parse_size(s).ok_or_else(|| format!("'{s}' is not a size such as 8G, 512M, 64k or a number of bytes"))
}

/// Some pairs did not converge; the values were still written (exit code 3).
#[derive(Debug)]
pub struct NotConverged(String);

impl std::fmt::Display for NotConverged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotConverged {}

pub fn gram(a: GramArgs) -> Result<()> {
    let mut file = match &a.kernel {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            KernelFile::from_toml(&text).with_context(|| format!("{}", p.display()))?
        }
        None => KernelFile::Marginalized(synthetic_kernel(0.05)),
    };
    // a graphlet kernel file names its own backend, which only an explicit --backend overrides
    if !(matches!(file, KernelFile::Graphlets(_)) && matches!(a.backend, BackendArg::Auto)) {
        file.set_backend(backend_of(a.backend), a.precision.map(precision_of));
    }
    if let KernelFile::Marginalized(cfg) = &mut file {
        if let Some(r) = a.reorder {
            cfg.reorder = r.into();
        }
        if let Some(p) = &a.primitive {
            cfg.tiles.primitive = PrimitiveChoice::parse(p)
                .with_context(|| format!("unknown --primitive {p}; use adaptive, dense-dense, dense-sparse, sparse-dense or sparse-sparse"))?;
        }
        if let Some(p) = &a.profile {
            cfg.tiles.profile = Some(p.clone());
        }
        if let Some(b) = &a.blocks_per_pair {
            cfg.tiles.blocks_per_pair = match b.as_str() {
                "auto" => 0,
                n => n
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=MAX_BLOCKS_PER_PAIR).contains(n))
                    .with_context(|| format!("--blocks-per-pair {b}: use auto or an integer in 1..={MAX_BLOCKS_PER_PAIR}"))?,
            };
        }
        if let Some(w) = a.dense_walk {
            cfg.tiles.dense_walk = w.into();
        }
        tuning_from_env(&mut cfg.gpu)?;
    }
    let method = file.describe();
    if a.gradient {
        let KernelFile::Marginalized(cfg) = file else {
            anyhow::bail!("--gradient: hyperparameter gradients are computed for the marginalized graph kernel only, not method \"{}\"", file.method());
        };
        if a.resume.is_some() {
            anyhow::bail!("--resume is not supported with --gradient (an interrupted gradient run keeps nothing to resume from)");
        }
        let names = cfg.hyperparameters();
        let values = cfg.hyperparameter_values();
        return run(&a, |ctl| Ok(Built::Gradient(Box::new(MarginalizedGraphKernel::new(cfg)?.with_control(ctl)), names, values)), method);
    }
    run(&a, |ctl| file.build(ctl).map(Built::Any), method)
}

/// The kernel a run computes with: any method's, or the marginalized kernel with its
/// hyperparameters' names and values when `--gradient` asks for ∂K/∂θ.
enum Built {
    Any(DynKernel),
    Gradient(Box<MarginalizedGraphKernel>, Vec<String>, Vec<f64>),
}

impl Built {
    fn kernel(&self) -> &dyn GraphKernel {
        match self {
            Built::Any(k) => k.as_ref(),
            Built::Gradient(k, ..) => k.as_ref(),
        }
    }
}

/// The gradient file of the output `out`: its stem + `.grad.npy` (`K.npy` → `K.grad.npy`).
fn gradient_path(out: &Path) -> PathBuf {
    PathBuf::from(format!("{}.grad.npy", out.with_extension("").display()))
}

/// Load the inputs, compute with the kernel `make` builds (given the progress hooks), write the
/// matrix and its JSON summary (`method`: the method's own fields, merged in).
fn run(a: &GramArgs, make: impl FnOnce(RunControl) -> octile::Result<Built>, method: serde_json::Value) -> Result<()> {
    // a bad output name fails now, not after the computation
    npy::check_output(&a.out)?;
    let format = parse_format(a.format.as_deref())?;
    let ropt = ReadOptions { format, skip_invalid: a.skip_invalid, pdb_cutoff: a.pdb_cutoff };
    let mut kinds = Vec::new();
    let (x, skipped_x) = load(&a.inputs, &ropt, &mut kinds)?;
    let (y, skipped_y) = if a.against.is_empty() { (Vec::new(), 0) } else { load(&a.against, &ropt, &mut kinds)? };
    if skipped_x + skipped_y > 0 {
        eprintln!("warning: {} invalid record(s) skipped", skipped_x + skipped_y);
    }
    // what decides the values, for --resume to check against
    let kernel_text = a.kernel.as_deref().map(std::fs::read_to_string).transpose()?.unwrap_or_default();
    let options = json!({"backend": format!("{:?}", backend_of(a.backend)), "primitive": a.primitive, "profile": a.profile, "blocks_per_pair": a.blocks_per_pair, "dense_walk": a.dense_walk.map(|w| format!("{:?}", octile::mgk::config::DenseWalk::from(w))), "pdb_cutoff": a.pdb_cutoff});
    let fp = resume::fingerprint(&x, &y, &kernel_text, &json!([method, options]));
    let resumed = a.resume.as_deref().map(|p| resume::load(p, &fp)).transpose()?;
    let known = resumed.as_ref().map(|(k, _)| k);
    let (rows, cols) = if y.is_empty() { (x.len(), x.len()) } else { (x.len(), y.len()) };
    // distinct pairs already done (K(X): the upper triangle)
    let known_pairs =
        known.map_or(0, |k| if y.is_empty() { (0..rows * cols).filter(|&e| e / cols <= e % cols && k.done.get(e) == Some(&true)).count() } else { k.n_done() });
    let pairs = pairs_of(x.len(), (!y.is_empty()).then_some(y.len()), a.normalize) - known_pairs.min(rows * cols);
    let (bar, mut ctl) = progress(pairs, a.quiet);
    ctl.max_memory_bytes = a.max_memory;
    let built = make(ctl)?;
    let k = built.kernel();
    if !a.quiet {
        eprintln!(
            "{} graphs{}; {} kernel, backend {} on {}",
            x.len(),
            if y.is_empty() { String::new() } else { format!(" against {}", y.len()) },
            method["method"].as_str().unwrap_or("?"),
            k.backend_name(),
            k.device_name()
        );
    }
    let t = std::time::Instant::now();
    let y_opt = (!y.is_empty()).then_some(&y[..]);
    let r = match &built {
        Built::Any(k) => k.gram_of(&x, y_opt, a.normalize, known),
        Built::Gradient(k, ..) => match k.gram_gradient(&x, y_opt, a.normalize) {
            Err(OctileError::Cancelled) => {
                return Err(anyhow::Error::new(OctileError::Cancelled)
                    .context("interrupted: a --gradient run keeps no partial result (it cannot be resumed); nothing was written"));
            }
            r => r,
        },
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let secs = t.elapsed().as_secs_f64();
    let (g, failure) = match r {
        Ok(g) => (g, None),
        Err(OctileError::NoConvergence { partial, pair, iterations, residual, n_failed }) => (
            *partial,
            Some(format!("{n_failed} pair(s) did not converge; first ({}, {}) after {iterations} iterations, residual {residual:.3e}", pair.0, pair.1)),
        ),
        Err(OctileError::Interrupted { partial, done, n_done, n_total }) => {
            let summary = json!({"output": a.out.display().to_string(), "shape": [partial.rows, partial.cols], "graphs": x.len(), "graphs_against": y.len(), "seconds": secs, "backend": k.backend_name(), "device": k.device_name(), "normalized": false, "method": method});
            let saved = resume::save(&a.out, &partial, &done, n_done, n_total, &fp, summary)?;
            return Err(anyhow::Error::new(OctileError::Interrupted { partial, done: Vec::new(), n_done, n_total }).context(format!(
                "saved the {n_done} pairs done to {} (un-normalized, NaN where not done); run the same command with --resume {} to finish",
                saved.display(),
                saved.display()
            )));
        }
        Err(e) => return Err(e.into()),
    };
    npy::write_matrix(&a.out, &g.values, g.rows, g.cols)?;
    let gradient = match (&built, &g.gradient) {
        (Built::Gradient(_, names, values), Some(grad)) => {
            let path = gradient_path(&a.out);
            npy::write_nd(&path, &grad.values, &[g.rows, g.cols, grad.len()])?;
            Some(
                json!({"gradient": path.display().to_string(), "gradient_shape": [g.rows, g.cols, grad.len()], "hyperparameters": names, "hyperparameter_values": values}),
            )
        }
        (Built::Gradient(..), None) => anyhow::bail!("internal: the gradient run returned no gradient"),
        _ => None,
    };
    let (lo, med, hi) = g.iteration_stats();
    let failures: Vec<_> = g.failures().iter().map(|(i, j, f)| json!({"row": i, "col": j, "iterations": f.iterations, "residual": f.residual})).collect();
    let mut summary = json!({
        "output": a.out.display().to_string(),
        "shape": [g.rows, g.cols],
        "graphs": x.len(),
        "graphs_against": y.len(),
        "skipped_records": skipped_x + skipped_y,
        "pairs": g.pairs_solved,
        "seconds": secs,
        "pairs_per_second": g.pairs_solved as f64 / secs,
        "backend": k.backend_name(),
        "device": k.device_name(),
        "device_info": k.device_report(),
        "normalized": a.normalize,
        "details": g.details.to_string(),
        "primitives": g.details.to_string(),
        "report": g.details,
        "iterations": {"min": lo, "median": med, "max": hi},
        "non_converged": failures,
        "resumed_from": a.resume.as_ref().map(|p| p.display().to_string()),
        "pairs_resumed": known_pairs,
    });
    if let (Some(s), Some(m)) = (summary.as_object_mut(), method.as_object()) {
        s.extend(m.clone());
    }
    if let (Some(s), Some(Some(gr))) = (summary.as_object_mut(), gradient.as_ref().map(|g| g.as_object())) {
        s.extend(gr.clone());
    }
    let summary_path = write_summary(&a.out, &summary)?;
    if let Some((_, files)) = &resumed {
        files.remove();
    }
    if !a.quiet {
        let grad = gradient
            .as_ref()
            .and_then(|gr| Some(format!(", {} ({}×{}×{})", gr["gradient"].as_str()?, g.rows, g.cols, gr["hyperparameters"].as_array()?.len())));
        eprintln!(
            "wrote {} ({}×{}){} and {} — {} pairs in {:.2} s ({:.0} pairs/s)",
            a.out.display(),
            g.rows,
            g.cols,
            grad.unwrap_or_default(),
            summary_path.display(),
            g.pairs_solved,
            secs,
            g.pairs_solved as f64 / secs
        );
    }
    if let Some(f) = failure {
        return Err(NotConverged(format!("{f}; values written with the failures listed in {}", summary_path.display())).into());
    }
    Ok(())
}

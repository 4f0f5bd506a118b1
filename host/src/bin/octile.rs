//! The `octile` command: Gram matrices of marginalized graph kernels from graph files.
use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use octile::config::{DenseWalk, MAX_BLOCKS_PER_PAIR, PrimitiveChoice, synthetic_kernel};
use octile::generators::{ba_set, nws_set};
use octile::io::{Format, ReadOptions, npy};
use octile::reorder::{Reordering, count_octiles};
use octile::{Backend, Graph, KernelConfig, MarginalizedGraphKernel, OctileError, Precision, RunControl};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

#[derive(Parser)]
#[command(name = "octile", version, about = "Marginalized graph kernels on GPUs and all CPU cores")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum BackendArg {
    Auto,
    Cpu,
    Cuda,
}

/// `--dense-walk`: how the primitives dense in B (D, R) read it.
#[derive(Clone, Copy, ValueEnum)]
enum DenseWalkArg {
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
enum ReorderArg {
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
enum PrecisionArg {
    F32,
    F64,
}

#[derive(Subcommand)]
enum Cmd {
    /// The main job on built-in data: the paper's 160 Newman–Watts–Strogatz graphs (96 nodes,
    /// k = 3, p = 0.1), normalized Gram matrix, on the GPU if present, else the CPU.
    Demo {
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Default: f32 on the GPU, f64 on the CPU.
        #[arg(long, value_enum)]
        precision: Option<PrecisionArg>,
        /// Number of graphs.
        #[arg(long, default_value_t = 160)]
        graphs: usize,
        /// Also write the matrix here (.npy or .csv).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Which devices and backends are available, and why not if not.
    Info,
    /// Non-empty octiles of each input under the natural, RCM and partition-based orders (like
    /// the paper's Fig. 7), with the time each reordering takes.
    Octiles {
        /// Inputs, as for `gram` (each is one row of the table).
        #[arg(required = true)]
        inputs: Vec<String>,
        #[arg(long)]
        format: Option<String>,
        /// Contact cutoff of the PDB reader, in Å.
        #[arg(long, default_value_t = octile::io::pdb::DEFAULT_CUTOFF)]
        pdb_cutoff: f64,
    },
    /// Node-wise similarities of two graphs of the inputs (the paper's nodal output): the n × m
    /// matrix R[i][i'] = p_i·x_ii'·p'_i' with K = ΣR, rows and columns in the input node order.
    Nodal {
        /// Inputs, as for `gram`; the graphs are numbered in input order from 0.
        #[arg(required = true)]
        inputs: Vec<String>,
        /// The two graphs, "I,J".
        #[arg(long, default_value = "0,1")]
        pair: String,
        /// Kernel configuration (TOML). Default: the paper's synthetic-set kernel.
        #[arg(long)]
        kernel: Option<PathBuf>,
        /// Output matrix (.npy float64 or .csv); a JSON summary is written beside it.
        #[arg(long)]
        out: PathBuf,
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Default: f32 on the GPU, f64 on the CPU.
        #[arg(long, value_enum)]
        precision: Option<PrecisionArg>,
        #[arg(long)]
        format: Option<String>,
        /// Node order for packing (the output is in input order whatever it is).
        #[arg(long, value_enum)]
        reorder: Option<ReorderArg>,
        /// Contact cutoff of the PDB reader, in Å.
        #[arg(long, default_value_t = octile::io::pdb::DEFAULT_CUTOFF)]
        pdb_cutoff: f64,
    },
    /// Gram matrix K(X) or K(X, Y) of graph files.
    Gram {
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
    },
    /// Time the four tile-pair primitives over the (nonzeros A, nonzeros B) grid on this GPU (or
    /// CPU), print the winner map, save it as SVG and write the profile the solver then uses.
    Tune {
        /// cuda: the GPU; cpu: this CPU; auto: the GPU if present.
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Precision(s) to tune.
        #[arg(long, value_enum, default_value = "both")]
        precision: TunePrecisionArg,
        /// Profile file to create or update. Default: the user store (~/.config/octile/profiles.json), which the solver reads.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Winner-map plot (one SVG per precision; "-f32"/"-f64" is appended to the stem).
        #[arg(long, default_value = "octile-tune.svg")]
        svg: PathBuf,
        /// Fewer repeats: quick but noisy.
        #[arg(long)]
        quick: bool,
        /// Measure nothing: print the tables and write the plots of every profile in this file.
        #[arg(long)]
        show: Option<PathBuf>,
        /// Time D and R with this walk of tile B: shared (default) or blocked (tiling-blocking); the
        /// profile records it, and runs with `--dense-walk blocked` use the blocked-walk profile.
        #[arg(long, value_enum, default_value = "shared")]
        dense_walk: DenseWalkArg,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum TunePrecisionArg {
    F32,
    F64,
    Both,
}

fn main() {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Info => info(),
        Cmd::Octiles { inputs, format, pdb_cutoff } => octiles(&inputs, format.as_deref(), pdb_cutoff),
        Cmd::Demo { backend, precision, graphs, out } => demo(backend, precision, graphs, out),
        Cmd::Gram { inputs, against, kernel, out, normalize, backend, precision, format, skip_invalid, reorder, pdb_cutoff, primitive, profile, blocks_per_pair, dense_walk, quiet } => {
            gram(GramArgs { inputs, against, kernel, out, normalize, backend, precision, format, skip_invalid, reorder, pdb_cutoff, primitive, profile, blocks_per_pair, dense_walk, quiet })
        }
        Cmd::Tune { show: Some(file), svg, .. } => show_profiles(&file, &svg),
        Cmd::Tune { backend, precision, out, svg, quick, show: None, dense_walk } => tune(backend, precision, out, svg, quick, dense_walk.into()),
        Cmd::Nodal { inputs, pair, kernel, out, backend, precision, format, reorder, pdb_cutoff } => nodal(&inputs, &pair, kernel, &out, backend, precision, format, reorder, pdb_cutoff),
    };
    if let Err(e) = r {
        eprintln!("error: {e:#}");
        let code = match e.downcast_ref::<OctileError>() {
            Some(OctileError::Cancelled) => 130,
            Some(OctileError::NoConvergence { .. }) => 3,
            _ if e.downcast_ref::<NotConverged>().is_some() => 3,
            _ => 1,
        };
        std::process::exit(code);
    }
}

fn info() -> Result<()> {
    println!("octile {}", env!("CARGO_PKG_VERSION"));
    println!("cpu backend: available, {} threads", rayon::current_num_threads());
    println!("embedded PTX: built for {} ({} bytes)", octile::gpu::PTX_ARCH, octile::gpu::PTX.len());
    match octile::gpu::device() {
        Ok(d) => println!("cuda backend: available: {}", d.describe()),
        Err(why) => println!("cuda backend: unavailable: {why}"),
    }
    Ok(())
}

fn octiles(inputs: &[String], format: Option<&str>, pdb_cutoff: f64) -> Result<()> {
    let format = format.map(|f| Format::parse(f).with_context(|| format!("unknown --format {f}"))).transpose()?;
    println!("| input | graphs | nodes (mean) | nonzeros | octiles natural | RCM | PBR | METIS | nnz/octile natural → PBR | RCM s | PBR s | METIS s |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for inp in inputs {
        let (graphs, _) = load(std::slice::from_ref(inp), &ReadOptions { format, skip_invalid: true, pdb_cutoff })?;
        let nodes: usize = graphs.iter().map(|g| g.n_nodes()).sum();
        let nnz: usize = graphs.iter().map(|g| g.edges().iter().map(|e| if e.i == e.j { 1 } else { 2 }).sum::<usize>()).sum();
        let mut counts = Vec::new();
        let mut secs = Vec::new();
        for r in [Reordering::Natural, Reordering::Rcm, Reordering::Pbr, Reordering::Metis] {
            let t = std::time::Instant::now();
            let c: usize = graphs.iter().map(|g| count_octiles(g, &r.order(g))).sum();
            secs.push(t.elapsed().as_secs_f64());
            counts.push(c);
        }
        println!(
            "| {inp} | {} | {:.1} | {nnz} | {} | {} | {} | {} | {:.2} → {:.2} | {:.3} | {:.3} | {:.3} |",
            graphs.len(),
            nodes as f64 / graphs.len() as f64,
            counts[0],
            counts[1],
            counts[2],
            counts[3],
            nnz as f64 / counts[0].max(1) as f64,
            nnz as f64 / counts[2].max(1) as f64,
            secs[1],
            secs[2],
            secs[3]
        );
    }
    Ok(())
}

fn apply(cfg: &mut KernelConfig, backend: BackendArg, precision: Option<PrecisionArg>) {
    cfg.backend = match backend {
        BackendArg::Auto => Backend::Auto,
        BackendArg::Cpu => Backend::Cpu,
        BackendArg::Cuda => Backend::Cuda,
    };
    let gpu = !matches!(backend, BackendArg::Cpu) && octile::gpu::device().is_ok();
    cfg.precision = match precision {
        Some(PrecisionArg::F32) => Precision::F32,
        Some(PrecisionArg::F64) => Precision::F64,
        None if gpu => Precision::F32,
        None => Precision::F64,
    };
}

fn progress(total: usize, quiet: bool) -> (Option<ProgressBar>, RunControl) {
    let cancel = Arc::new(AtomicBool::new(false));
    let c2 = cancel.clone();
    let _ = ctrlc::set_handler(move || {
        eprintln!("\ninterrupt: stopping after the current batch; no output file will be written");
        c2.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let bar = (!quiet).then(|| {
        let b = ProgressBar::new(total as u64);
        b.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} pairs  {per_sec}  ETA {eta}").unwrap());
        b
    });
    let b2 = bar.clone();
    let ctl = RunControl { progress: Some(Arc::new(move |n| if let Some(b) = &b2 { b.inc(n as u64) })), cancel: Some(cancel) };
    (bar, ctl)
}

fn demo(backend: BackendArg, precision: Option<PrecisionArg>, n: usize, out: Option<PathBuf>) -> Result<()> {
    let graphs = nws_set(n, 2020);
    let mut cfg = synthetic_kernel(0.05);
    apply(&mut cfg, backend, precision);
    let (bar, ctl) = progress(n * (n + 1) / 2, false);
    let k = MarginalizedGraphKernel::new(cfg.clone())?.with_control(ctl);
    println!("octile demo: {n} Newman–Watts–Strogatz graphs (96 nodes, k=3, p=0.1), κv = KroneckerDelta(0.5), κe = SquareExponential(1.0), q = 0.05");
    println!("backend: {} / {:?} on {}", k.backend_name(), cfg.precision, k.device_name());
    let g = k.gram_normalized(&graphs)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let (lo, med, hi) = g.iteration_stats();
    let off: Vec<f64> = (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j))).map(|(i, j)| g.get(i, j)).collect();
    let mean = off.iter().sum::<f64>() / off.len().max(1) as f64;
    println!("pairs solved: {} in {:.3} s = {:.0} pairs/s", g.pairs_solved, g.seconds, g.pairs_solved as f64 / g.seconds);
    println!("CG iterations min/median/max: {lo}/{med}/{hi}; all converged");
    println!(
        "normalized K: diagonal 1, off-diagonal mean {mean:.6}, min {:.6}, max {:.6}",
        off.iter().cloned().fold(f64::INFINITY, f64::min),
        off.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
    );
    if let Some(path) = out {
        npy::write_matrix(&path, &g.values, g.rows, g.cols)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// Some pairs did not converge; the values were still written (exit code 3).
#[derive(Debug)]
struct NotConverged(String);

impl std::fmt::Display for NotConverged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotConverged {}

struct GramArgs {
    inputs: Vec<String>,
    against: Vec<String>,
    kernel: Option<PathBuf>,
    out: PathBuf,
    normalize: bool,
    backend: BackendArg,
    precision: Option<PrecisionArg>,
    format: Option<String>,
    skip_invalid: bool,
    reorder: Option<ReorderArg>,
    pdb_cutoff: f64,
    primitive: Option<String>,
    profile: Option<PathBuf>,
    blocks_per_pair: Option<String>,
    dense_walk: Option<DenseWalkArg>,
    quiet: bool,
}

fn load(inputs: &[String], opt: &ReadOptions) -> Result<(Vec<Graph>, usize)> {
    let mut graphs = Vec::new();
    let mut skipped = 0;
    for inp in inputs {
        let parts: Vec<&str> = inp.split(':').collect();
        if parts.len() >= 2 && (parts[0] == "nws" || parts[0] == "ba") {
            let count: usize = parts[1].parse().with_context(|| format!("{inp}: COUNT must be an integer"))?;
            let seed: u64 = parts.get(2).map(|s| s.parse()).transpose().with_context(|| format!("{inp}: SEED must be an integer"))?.unwrap_or(2020);
            graphs.extend(if parts[0] == "nws" { nws_set(count, seed) } else { ba_set(count, seed) });
            continue;
        }
        let l = octile::io::read_with(Path::new(inp), opt)?;
        skipped += l.skipped;
        graphs.extend(l.graphs);
    }
    Ok((graphs, skipped))
}

/// `--format` of `gram` and `nodal`.
fn parse_format(format: Option<&str>) -> Result<Option<Format>> {
    format.map(|f| Format::parse(f).with_context(|| format!("unknown --format {f}; use json, smi, csv or tu"))).transpose()
}

/// The kernel of `gram` and `nodal`: the `--kernel` TOML (default: the paper's synthetic-set
/// kernel) with `--backend`, `--precision` and `--reorder` applied.
fn kernel_config(kernel: Option<&Path>, backend: BackendArg, precision: Option<PrecisionArg>, reorder: Option<ReorderArg>) -> Result<KernelConfig> {
    let mut cfg = match kernel {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            KernelConfig::from_toml(&text).with_context(|| format!("{}", p.display()))?
        }
        None => synthetic_kernel(0.05),
    };
    apply(&mut cfg, backend, precision);
    if let Some(r) = reorder {
        cfg.reorder = r.into();
    }
    Ok(cfg)
}

fn gram(a: GramArgs) -> Result<()> {
    let format = parse_format(a.format.as_deref())?;
    let mut cfg = kernel_config(a.kernel.as_deref(), a.backend, a.precision, a.reorder)?;
    if let Some(p) = &a.primitive {
        cfg.tiles.primitive = PrimitiveChoice::parse(p).with_context(|| format!("unknown --primitive {p}; use adaptive, dense-dense, dense-sparse, sparse-dense or sparse-sparse"))?;
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
    let ropt = ReadOptions { format, skip_invalid: a.skip_invalid, pdb_cutoff: a.pdb_cutoff };
    let (x, skipped_x) = load(&a.inputs, &ropt)?;
    let (y, skipped_y) = if a.against.is_empty() { (Vec::new(), 0) } else { load(&a.against, &ropt)? };
    if skipped_x + skipped_y > 0 {
        eprintln!("warning: {} invalid record(s) skipped", skipped_x + skipped_y);
    }
    let pairs = if y.is_empty() { x.len() * (x.len() + 1) / 2 } else { x.len() * y.len() + if a.normalize { x.len() + y.len() } else { 0 } };
    let (bar, ctl) = progress(pairs, a.quiet);
    let k = MarginalizedGraphKernel::new(cfg.clone())?.with_control(ctl);
    if !a.quiet {
        eprintln!("{} graphs{}; backend {} / {:?} on {}", x.len(), if y.is_empty() { String::new() } else { format!(" against {}", y.len()) }, k.backend_name(), cfg.precision, k.device_name());
    }
    let t = std::time::Instant::now();
    let r = match (y.is_empty(), a.normalize) {
        (true, false) => k.gram(&x),
        (true, true) => k.gram_normalized(&x),
        (false, false) => k.gram_between(&x, &y),
        (false, true) => k.gram_between_normalized(&x, &y),
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let secs = t.elapsed().as_secs_f64();
    let (g, failure) = match r {
        Ok(g) => (g, None),
        Err(OctileError::NoConvergence { partial, pair, iterations, residual, n_failed }) => {
            (*partial, Some(format!("{n_failed} pair(s) did not converge; first ({}, {}) after {iterations} iterations, residual {residual:.3e}", pair.0, pair.1)))
        }
        Err(e) => return Err(e.into()),
    };
    npy::write_matrix(&a.out, &g.values, g.rows, g.cols)?;
    let (lo, med, hi) = g.iteration_stats();
    let failures: Vec<_> = g.failures().iter().map(|(i, j, f)| json!({"row": i, "col": j, "iterations": f.iterations, "residual": f.residual})).collect();
    let summary = json!({
        "output": a.out.display().to_string(),
        "shape": [g.rows, g.cols],
        "graphs": x.len(),
        "graphs_against": y.len(),
        "skipped_records": skipped_x + skipped_y,
        "pairs": g.pairs_solved,
        "seconds": secs,
        "pairs_per_second": g.pairs_solved as f64 / secs,
        "backend": k.backend_name(),
        "precision": format!("{:?}", cfg.precision).to_lowercase(),
        "device": k.device_name(),
        "normalized": a.normalize,
        "q": cfg.q,
        "reorder": format!("{:?}", cfg.reorder).to_lowercase(),
        "primitives": g.primitives,
        "iterations": {"min": lo, "median": med, "max": hi},
        "non_converged": failures,
    });
    let summary_path = a.out.with_extension("json");
    npy::write_atomic(&summary_path, serde_json::to_string_pretty(&summary)?.as_bytes())?;
    if !a.quiet {
        eprintln!("wrote {} ({}×{}) and {} — {} pairs in {:.2} s ({:.0} pairs/s)", a.out.display(), g.rows, g.cols, summary_path.display(), g.pairs_solved, secs, g.pairs_solved as f64 / secs);
    }
    if let Some(f) = failure {
        return Err(NotConverged(format!("{f}; values written with the failures listed in {}", summary_path.display())).into());
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn nodal(inputs: &[String], pair: &str, kernel: Option<PathBuf>, out: &Path, backend: BackendArg, precision: Option<PrecisionArg>, format: Option<String>, reorder: Option<ReorderArg>, pdb_cutoff: f64) -> Result<()> {
    let (i, j) = pair
        .split_once(',')
        .and_then(|(a, b)| Some((a.trim().parse::<usize>().ok()?, b.trim().parse::<usize>().ok()?)))
        .with_context(|| format!("--pair {pair}: expected two graph indices \"I,J\""))?;
    let format = parse_format(format.as_deref())?;
    let cfg = kernel_config(kernel.as_deref(), backend, precision, reorder)?;
    let (graphs, _) = load(inputs, &ReadOptions { format, skip_invalid: false, pdb_cutoff })?;
    let k = MarginalizedGraphKernel::new(cfg.clone())?;
    let t = std::time::Instant::now();
    let r = k.nodal_pairs(&graphs, &[(i, j)])?.remove(0);
    let secs = t.elapsed().as_secs_f64();
    npy::write_matrix(out, &r.values, r.rows, r.cols)?;
    let summary = json!({
        "output": out.display().to_string(),
        "pair": [i, j],
        "shape": [r.rows, r.cols],
        "kernel_value": r.sum(),
        "iterations": r.info.iterations,
        "residual": r.info.residual,
        "seconds": secs,
        "backend": k.backend_name(),
        "precision": format!("{:?}", cfg.precision).to_lowercase(),
        "device": k.device_name(),
        "reorder": format!("{:?}", cfg.reorder).to_lowercase(),
        "node_order": "input",
    });
    let summary_path = out.with_extension("json");
    npy::write_atomic(&summary_path, serde_json::to_string_pretty(&summary)?.as_bytes())?;
    eprintln!("wrote {} ({}×{}, K = ΣR = {:.10e}) and {}", out.display(), r.rows, r.cols, r.sum(), summary_path.display());
    Ok(())
}

/// Print the winner tables of every profile in `file` and write its plots (stem-backend-device-precision.svg).
fn show_profiles(file: &Path, svg: &Path) -> Result<()> {
    use octile::tune::{winner_svg, winner_tables};
    let f = octile::profile::ProfileFile::read(file)?;
    for p in &f.profiles {
        println!("{} {} ({}) {}, {} dense walks", p.backend, p.device, p.arch, p.precision, p.walk());
        print!("{}", winner_tables(p));
        let stem = svg.file_stem().and_then(|s| s.to_str()).unwrap_or("octile-tune");
        let walk = if p.walk() == "shared" { String::new() } else { format!("-{}", p.walk()) };
        let tag: String = format!("{}-{}-{}{walk}", p.backend, p.device, p.precision).chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c.to_ascii_lowercase() } else { '-' }).collect();
        let path = svg.with_file_name(format!("{stem}-{tag}.svg"));
        npy::write_atomic(&path, winner_svg(p).as_bytes())?;
        println!("plot: {}", path.display());
    }
    Ok(())
}

fn tune(backend: BackendArg, precision: TunePrecisionArg, out: Option<PathBuf>, svg: PathBuf, quick: bool, dense_walk: DenseWalk) -> Result<()> {
    use octile::profile::{ProfileFile, user_store};
    use octile::tune::{TuneOptions, TuneTarget, winner_svg, winner_tables};
    let target = match backend {
        BackendArg::Cpu => TuneTarget::Cpu,
        BackendArg::Cuda => {
            octile::gpu::device().map_err(OctileError::NoGpu)?;
            TuneTarget::Cuda
        }
        BackendArg::Auto => {
            if octile::gpu::device().is_ok() {
                TuneTarget::Cuda
            } else {
                TuneTarget::Cpu
            }
        }
    };
    let out = match out {
        Some(p) => p,
        None => user_store().context("no HOME or XDG_CONFIG_HOME to place the profile store in; pass --out FILE")?,
    };
    let mut file = if out.is_file() { ProfileFile::read(&out)? } else { ProfileFile { version: 1, profiles: Vec::new() } };
    let precisions: &[Precision] = match precision {
        TunePrecisionArg::F32 => &[Precision::F32],
        TunePrecisionArg::F64 => &[Precision::F64],
        TunePrecisionArg::Both => &[Precision::F32, Precision::F64],
    };
    for &prec in precisions {
        let bar = ProgressBar::new(0);
        bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} cells  ETA {eta}").unwrap());
        let b2 = bar.clone();
        let t = std::time::Instant::now();
        let profile = octile::tune::tune(&TuneOptions { target, precision: prec, quick, dense_walk }, &move |done, total| {
            b2.set_length(total as u64);
            b2.set_position(done as u64);
        })?;
        bar.finish_and_clear();
        println!("tuned {} {} ({}) {}, {} dense walks, in {:.1} s", profile.backend, profile.device, profile.arch, profile.precision, profile.walk(), t.elapsed().as_secs_f64());
        print!("{}", winner_tables(&profile));
        let stem = svg.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "octile-tune".into());
        let walk = if profile.walk() == "shared" { String::new() } else { format!("-{}", profile.walk()) };
        let svg_path = svg.with_file_name(format!("{stem}-{}{walk}.svg", profile.precision));
        npy::write_atomic(&svg_path, winner_svg(&profile).as_bytes())?;
        println!("winner map plot: {}", svg_path.display());
        file.upsert(profile);
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    npy::write_atomic(&out, serde_json::to_string_pretty(&file)?.as_bytes())?;
    println!("profile written: {} (the solver reads it for this device from now on)", out.display());
    Ok(())
}

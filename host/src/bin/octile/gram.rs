//! `octile gram`: the Gram matrix K(X) or K(X, Y) of graph files, written with a JSON summary.
use crate::common::{
    self, BackendArg, DenseWalkArg, PrecisionArg, ReorderArg, backend_of, load, parse_format, precision_of, progress, provenance, tuning_from_env,
};
use crate::resume;
use crate::tiled;
use anyhow::{Context, Result};
use clap::Args;
use octile::io::{ReadOptions, npy};
use octile::kernels::{DynKernel, KernelFile};
use octile::mgk::config::{MAX_BLOCKS_PER_PAIR, PrimitiveChoice, synthetic_kernel};
use octile::{Graph, GraphKernel, MarginalizedGraphKernel, OctileError, RunControl};
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Args)]
#[command(after_help = crate::common::EXIT_CODES)]
pub struct GramArgs {
    /// Inputs: .json/.jsonl (networkx node-link), .smi, .csv (smiles column), .sdf/.mol, .pdb/.pdb.gz,
    /// a TU folder, or a generator: nws:COUNT[:SEED] / ba:COUNT[:SEED] / molecules:COUNT[:SEED]
    /// (molecule-like graphs).
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
    /// Input format when the extension does not tell: json, smi, csv, tu, sdf, pdb.
    #[arg(long)]
    format: Option<String>,
    /// Skip records that cannot be read (each is reported) instead of failing; the summary lists
    /// every record kept (row by row: file, record, line) and skipped (file, line, reason).
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
    /// No progress bar (on a terminal) or progress lines (elsewhere: every OCTILE_PROGRESS_SECONDS,
    /// default 10), no closing line.
    #[arg(long)]
    quiet: bool,
    /// Finish an interrupted run: the NAME.partial.npy it saved (same inputs, kernel and options);
    /// only the pairs it lacks are computed, and the partial files are removed when done. Its tiles
    /// are checked against the checksums in NAME.partial.json: an edited or damaged partial is refused.
    #[arg(long)]
    resume: Option<PathBuf>,
    /// Most memory the Gram computation may need, e.g. 8G or 512M (default: the memory available);
    /// a larger request is refused before any work.
    #[arg(long, value_parser = crate::common::max_memory)]
    max_memory: Option<u64>,
    /// Compute only rows A:B of the matrix (half-open, 0-based, over X's order), e.g. one block
    /// of a job array; the output is that block. Default: every row.
    #[arg(long, value_name = "A:B")]
    rows: Option<String>,
    /// Compute only columns C:D (over X's order, or Y's with --against). Default: every column.
    #[arg(long, value_name = "C:D")]
    cols: Option<String>,
    /// Graphs per tile side: the matrix is computed and written to disk tile by tile (memory holds
    /// one tile; an interruption keeps the tiles finished). Default: 128 on the CPU; on a GPU 2048,
    /// or smaller, down to 256 (512 for sets too small for sixteen tiles of 256), until each GPU
    /// (--devices) has sixteen tiles.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    tile_size: Option<u64>,
    /// Tiles computed at once on each GPU: with 4 (the default on a GPU) the tiles' host work —
    /// packing, planning, gathering and writing — runs while the others' launches keep the GPU
    /// busy (memory holds that many tiles per GPU; two H200s: 3 in flight took NCI 5K from 0.95 to
    /// 0.84-0.90 s on one GPU, 20,008 graphs from 22.6 to 20.8 s; 4: 20.7 s). Default 1 on the
    /// CPU, whose solver takes every core for one tile.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=8))]
    tiles_in_flight: Option<u64>,
    /// Also write ∂K/∂θ for every hyperparameter θ of the (marginalized) kernel: NAME.grad.npy
    /// beside the output, float64 (rows, cols, P), C order; the summary lists θ's names and values.
    #[arg(long)]
    gradient: bool,
}

/// Some pairs did not converge; the values were still written (exit code 3).
#[derive(Debug)]
pub struct NotConverged(pub String);

impl std::fmt::Display for NotConverged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotConverged {}

pub fn gram(a: GramArgs) -> Result<()> {
    let mut file = match &a.kernel {
        Some(p) => {
            let text = octile::io::record::read_text(p)?;
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
    // checked against the inputs' features once run has read them
    let terms = file.clone();
    if a.gradient {
        let KernelFile::Marginalized(cfg) = file else {
            anyhow::bail!("--gradient: hyperparameter gradients are computed for the marginalized graph kernel only, not method \"{}\"", file.method());
        };
        let names = cfg.hyperparameters();
        let values = cfg.hyperparameter_values();
        return run(&a, &terms, |ctl| Ok(Built::Gradient(Box::new(MarginalizedGraphKernel::new(cfg)?.with_control(ctl)), names, values)), method);
    }
    run(&a, &terms, |ctl| file.build(ctl).map(Built::Any), method)
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

/// No file this run writes (the matrix, its summary `NAME.json`, `NAME.grad.npy`, an interruption's
/// `NAME.partial.*`) may replace one of its inputs (graphs, `--against`, the kernel file): refused
/// before any work, naming both.
fn refuse_replacing_inputs(a: &GramArgs) -> Result<()> {
    let partial = resume::PartialFiles::of(&a.out);
    let outputs = [a.out.clone(), a.out.with_extension("json"), gradient_path(&a.out), partial.values, partial.gradient, partial.summary];
    let inputs: Vec<PathBuf> = a.inputs.iter().chain(&a.against).map(PathBuf::from).chain(a.kernel.clone()).collect();
    common::refuse_replacing_inputs(
        "--out",
        &a.out,
        &outputs,
        inputs.iter().map(PathBuf::as_path),
        " (the summary goes beside it as NAME.json, --gradient's as NAME.grad.npy, an interrupted run's as NAME.partial.*)",
    )
}

/// Why a pair whose solve met its tolerance is among the failures (marginalized kernel only): its
/// value over- or underflowed (`mgk::diagnose::out_of_range`).
fn overflow(file: &KernelFile, f: &octile::PairInfo) -> Option<String> {
    let KernelFile::Marginalized(cfg) = file else { return None };
    (f.residual <= cfg.solver.rtol_for(cfg.precision)).then(|| octile::mgk::diagnose::out_of_range(cfg, f.residual))
}

/// Why pair (i, j) of the output (rows of `x`, columns of `y`, or of `x` when `y` is empty) stopped
/// before any iteration, when its node kernel underflowed to zero (marginalized kernel only).
fn underflow(file: &KernelFile, x: &[Graph], y: &[Graph], i: usize, j: usize) -> Option<String> {
    let KernelFile::Marginalized(cfg) = file else { return None };
    let cols = if y.is_empty() { x } else { y };
    octile::mgk::diagnose::zero_node_kernel(cfg, x.get(i)?, cols.get(j)?, i, j)
}

/// Put the finished matrix (from its partial file; a `.csv` written from it first), its gradient
/// and its `summary` in place together: each to a temporary, then all renamed, so that they are all
/// new or (on a failure) all as before — never a new `K.npy` beside an old `K.json`. On failure the
/// partial files stay for `--resume`. Returns the summary's path.
fn put_in_place(a: &GramArgs, files: &resume::PartialFiles, (rows, cols): (usize, usize), gradient: bool, summary: &serde_json::Value) -> Result<PathBuf> {
    let summary_path = a.out.with_extension("json");
    let csv = a.out.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let temporaries = [npy::temporary_of(&a.out), npy::temporary_of(&summary_path)];
    let put = || -> Result<()> {
        let matrix = if csv {
            npy::npy_to_csv_temporary(&files.values, &a.out, rows, cols)?;
            temporaries[0].clone()
        } else {
            files.values.clone()
        };
        npy::write_temporary(&summary_path, serde_json::to_string_pretty(summary)?.as_bytes())?;
        let mut moves = vec![(matrix, a.out.clone())];
        if gradient {
            moves.push((files.gradient.clone(), gradient_path(&a.out)));
        }
        moves.push((temporaries[1].clone(), summary_path.clone()));
        npy::replace_together(&moves)?;
        Ok(())
    };
    let done = put();
    if done.is_err() {
        for t in &temporaries {
            let _ = std::fs::remove_file(t);
        }
    } else if csv {
        let _ = std::fs::remove_file(&files.values);
    }
    done.map(|_| summary_path)
}

/// The summary's `timeline`: the seconds the diagonals took (normalized runs), then per tile (in the
/// order written; the first [`TIMELINE_TILES`], the count of the others beside) its rows, columns,
/// device — its place among the GPUs used (`--devices` order; 0 on the CPU) — and the seconds
/// since the start when it was started, computed, taken by the writer and written, and the
/// solvers' phase marks while it was computed ([name, seconds] in order: checked, paired,
/// packed, planned, uploaded, streams, jobs, submitted, back, evaluated, gathered, …;
/// `octile::phases`): [r0, r1, c0, c1, device, start, computed, handed,
/// written, phases] (to the microsecond: a small call's phases take tenths of a millisecond).
fn timeline_json(diagonal_secs: f64, timeline: &[(octile::gram::Tile, tiled::TileTimes)], devices: usize) -> serde_json::Value {
    let secs = |s: f64| (s * 1e6).round() / 1e6;
    let tiles: Vec<serde_json::Value> = timeline
        .iter()
        .take(TIMELINE_TILES)
        .map(|(t, w)| {
            json!([
                t.rows.start,
                t.rows.end,
                t.cols.start,
                t.cols.end,
                w.worker % devices,
                secs(w.start),
                secs(w.computed),
                secs(w.handed),
                secs(w.written),
                w.phases.iter().map(|&(what, at)| json!([what, secs(at)])).collect::<Vec<_>>()
            ])
        })
        .collect();
    json!({"diagonals_seconds": secs(diagonal_secs), "columns": ["row_start", "row_end", "col_start", "col_end", "device", "start", "computed", "handed", "written", "phases"], "tiles": tiles, "tiles_left_out": timeline.len().saturating_sub(TIMELINE_TILES)})
}

/// `OCTILE_SLOT_THREADS`: the threads of each tile thread's own pool when several tiles are in
/// flight (0: the global pool), if set (`tiled::compute_on_devices`).
fn slot_threads_from_env() -> Result<Option<usize>> {
    std::env::var("OCTILE_SLOT_THREADS")
        .ok()
        .map(|v| v.trim().parse::<usize>().with_context(|| format!("OCTILE_SLOT_THREADS={v}: expected a number of threads (0: the global pool)")))
        .transpose()
}

/// Tiles the summary's timeline lists at most (~100 bytes each on the CPU, 1–3 KB with a GPU's
/// phase marks as the summary prints them): a CPU run of 10⁵ graphs has 3·10⁵ tiles, a GPU run of
/// 10⁵ ~1,300.
const TIMELINE_TILES: usize = 10_000;

/// The gradient file of the output `out`: its stem + `.grad.npy` (`K.npy` → `K.grad.npy`).
fn gradient_path(out: &Path) -> PathBuf {
    PathBuf::from(format!("{}.grad.npy", out.with_extension("").display()))
}

/// Load the inputs, check them against the kernel `file`'s features, compute with the kernel `make`
/// builds (given the progress hooks) tile by tile into the output, and write its JSON summary
/// (`method`: the method's own fields, merged in).
fn run(a: &GramArgs, file: &KernelFile, make: impl FnOnce(RunControl) -> octile::Result<Built>, method: serde_json::Value) -> Result<()> {
    // read before anything is made (a bad value leaves no output behind)
    let slot_threads_env = slot_threads_from_env()?;
    // a bad output name fails now, not after the computation
    npy::check_output(&a.out)?;
    npy::check_writable(&a.out.with_extension("json"))?;
    if a.gradient {
        npy::check_writable(&gradient_path(&a.out))?;
    }
    refuse_replacing_inputs(a)?;
    let format = parse_format(a.format.as_deref())?;
    let ropt = ReadOptions { format, skip_invalid: a.skip_invalid, pdb_cutoff: a.pdb_cutoff };
    let mut kinds = Vec::new();
    let mut xs = load(&a.inputs, &ropt, &mut kinds)?;
    let mut ys = if a.against.is_empty() { Default::default() } else { load(&a.against, &ropt, &mut kinds)? };
    // (the kernel file named where it is the file's fault)
    file.check_features(kinds.iter().map(|(p, k)| (p.display().to_string(), k))).with_context(|| match &a.kernel {
        Some(k) => format!("--kernel {}", k.display()),
        None => "the default kernel (examples/synthetic.toml)".into(),
    })?;
    if let KernelFile::Marginalized(cfg) = file {
        xs.check_features_present(cfg, &a.inputs)?;
        ys.check_features_present(cfg, &a.against)?;
    }
    if let KernelFile::ShortestPath(cfg) = file {
        xs.check_sp_features_present(cfg, &a.inputs)?;
        ys.check_sp_features_present(cfg, &a.against)?;
    }
    let (x, y) = (std::mem::take(&mut xs.graphs), std::mem::take(&mut ys.graphs));
    let skipped = xs.skipped.len() + ys.skipped.len();
    if skipped > 0 {
        eprintln!("warning: {skipped} invalid record(s) skipped (listed with the kept ones under \"records\" in the summary)");
    }
    let n_cols = if y.is_empty() { x.len() } else { y.len() };
    let rows = a.rows.as_deref().map(|r| tiled::parse_range(r, x.len(), "--rows")).transpose()?.unwrap_or(0..x.len());
    let cols = a.cols.as_deref().map(|c| tiled::parse_range(c, n_cols, "--cols")).transpose()?.unwrap_or(0..n_cols);
    let (bar, mut ctl) = progress(0, a.quiet);
    ctl.max_memory_bytes = a.max_memory;
    let built = make(ctl)?;
    let k = built.kernel();
    // with several GPUs (--devices), one kernel per GPU, each computing whole tiles
    let (any_per_gpu, mgk_per_gpu) = match &built {
        Built::Any(k) => (k.per_device(), Vec::new()),
        Built::Gradient(k, ..) => (Vec::new(), k.per_gpu()),
    };
    let devices = any_per_gpu.len() + mgk_per_gpu.len();
    let gpu = k.backend_name() == "cuda";
    let mirrored = y.is_empty() && rows == cols;
    let tile_size = a.tile_size.map_or_else(|| octile::gram::default_tile_size(gpu, devices, rows.len(), cols.len(), mirrored), |t| t as usize);
    let y_opt = (!y.is_empty()).then_some(&y[..]);
    let job = tiled::Job { x: &x, y: y_opt, rows: rows.clone(), cols: cols.clone(), normalized: a.normalize, tile_size };
    let (out_rows, out_cols) = job.shape();
    // what decides the values and the tiles, for --resume to check against
    let kernel_text = a.kernel.as_deref().map(octile::io::record::read_text).transpose()?.unwrap_or_default();
    let options = json!({"backend": format!("{:?}", backend_of(a.backend)), "primitive": a.primitive, "profile": a.profile, "blocks_per_pair": a.blocks_per_pair, "dense_walk": a.dense_walk.map(|w| format!("{:?}", octile::mgk::config::DenseWalk::from(w))), "pdb_cutoff": a.pdb_cutoff, "rows": [rows.start, rows.end], "cols": [cols.start, cols.end], "tile_size": tile_size, "normalized": a.normalize, "gradient": a.gradient});
    let fp = resume::fingerprint(&x, &y, &kernel_text, &json!([method, options]));
    let files = resume::PartialFiles::of(&a.out);
    // a partial is named after its run's --out (NAME.partial.npy of NAME.npy or NAME.csv), and the
    // run it finishes writes there: another --out would look for its own partial files
    if let Some(p) = a.resume.as_deref()
        && let Some(base) = p.to_string_lossy().strip_suffix(".partial.npy")
        && !common::same_file(p, &files.values)
    {
        anyhow::bail!(
            "--resume {} belongs to --out {base}.npy (or .csv), not --out {}: resume with the --out of the interrupted run",
            p.display(),
            a.out.display()
        );
    }
    let resumed = a.resume.as_deref().map(|p| resume::load(p, &fp)).transpose()?;
    let tiles = job.tiles()?;
    let done: std::collections::HashSet<octile::gram::Tile> = resumed.as_ref().map(|(t, _)| t.iter().map(|(t, _)| t.clone()).collect()).unwrap_or_default();
    let todo: Vec<&octile::gram::Tile> = tiles.iter().filter(|t| !done.contains(t)).collect();
    let pairs_total: usize = tiles.iter().map(|t| job.pairs_of(t)).sum();
    let pairs_resumed: usize = tiles.iter().filter(|t| done.contains(t)).map(|t| job.pairs_of(t)).sum();
    let diag_pairs = job.diagonal_pairs();
    if let Some(b) = &bar {
        b.set_length((pairs_total - pairs_resumed + diag_pairs) as u64);
    }
    if !a.quiet {
        eprintln!(
            "{} graphs{}; {} kernel, backend {} on {}; {} tile(s) of up to {tile_size}×{tile_size}{}",
            x.len(),
            if y.is_empty() { String::new() } else { format!(" against {}", y.len()) },
            method["method"].as_str().unwrap_or("?"),
            k.backend_name(),
            k.device_name(),
            tiles.len(),
            if done.is_empty() { String::new() } else { format!(", {} done before", tiles.len() - todo.len()) }
        );
    }
    let compute = match &built {
        Built::Any(k) => tiled::Compute::Values(k.as_ref()),
        Built::Gradient(k, ..) => tiled::Compute::Gradient(k.as_ref()),
    };
    let np = match &built {
        Built::Gradient(_, names, _) => names.len(),
        Built::Any(_) => 0,
    };
    let per_device: Vec<tiled::Compute> = any_per_gpu
        .iter()
        .map(|k| tiled::Compute::Values(k.as_ref() as &(dyn octile::GraphKernel + Sync)))
        .chain(mgk_per_gpu.iter().map(tiled::Compute::Gradient))
        .collect();
    // with several GPUs, `in_flight` tiles computing on each at once
    let in_flight = a.tiles_in_flight.map_or(if gpu { 4 } else { 1 }, |n| n as usize);
    // several tiles in flight: each tile thread's host work on a pool of its own, the cores
    // shared out (by default on a GPU; `OCTILE_SLOT_THREADS` sets the size, 0: the global pool)
    let tile_threads = in_flight * per_device.len().max(1);
    let slot_threads = match slot_threads_env {
        _ if tile_threads < 2 => 0,
        Some(n) => n,
        None if gpu => (rayon::current_num_threads() / tile_threads).max(1),
        None => 0,
    };
    let pools = tiled::slot_pools(tile_threads, slot_threads)?;
    // the largest tile's memory, before any file is made (the matrix itself goes to disk); the
    // worker threads (the global pool's and the tile threads' pools') are started first, so that
    // their stacks and allocator arenas (which count against an address-space limit, ulimit -v)
    // are in what the check sees as used
    rayon::broadcast(|_| drop(std::hint::black_box(vec![0u8; 1])));
    for p in &pools {
        p.broadcast(|_| drop(std::hint::black_box(vec![0u8; 1])));
    }
    let (tr, tc) = tiles.iter().map(|t| (t.rows.len(), t.cols.len())).max_by_key(|(r, c)| r * c).unwrap_or((0, 0));
    let per_entry = (8 * (np as u128 + 1) + 2 * std::mem::size_of::<octile::PairInfo>() as u128 + 16) * if np > 0 { 2 } else { 1 };
    // and the writer's transpose of a tile (× P with ∂K/∂θ)
    let transposing = tr as u128 * tc as u128 * np.max(1) as u128 * 8;
    // each computing thread's tile, as many computed tiles queued for the writer (a thread hands
    // its tile over and goes on: a writer behind holds no GPU back) and the one being written
    let tiles_held = 2 * per_device.len().max(1) * in_flight + 1;
    octile::memory::check_with(
        tr as u128 * tc as u128 * per_entry * tiles_held as u128 + transposing,
        a.max_memory,
        || format!("a {tr} × {tc} tile of the {out_rows} × {out_cols} matrix"),
        "use a smaller --tile-size (the matrix itself is written to disk tile by tile)",
    )?;
    // the output files, created at full size (or those of the run resumed)
    let writer = if resumed.is_some() { npy::NpyWriter::open } else { npy::NpyWriter::create };
    let outputs = tiled::Outputs {
        values: writer(&files.values, &[out_rows, out_cols]).with_context(|| format!("--out {}", a.out.display()))?,
        gradient: (np > 0)
            .then(|| writer(&files.gradient, &[out_rows, out_cols, np]).map(|w| (w, np)))
            .transpose()
            .with_context(|| format!("--out {} (its gradient)", a.out.display()))?,
    };
    if let Some((listed, _)) = &resumed {
        resume::verify(&job, &tiles, listed, &outputs)?;
    }
    let t = std::time::Instant::now();
    let mut tally = tiled::Tally::default();
    // where the seconds went: the diagonals (normalized), then each tile's times
    let (mut diagonal_secs, mut timeline) = (0.0, Vec::<(octile::gram::Tile, tiled::TileTimes)>::new());
    // the tiles finished, each with the checksum of what was written for it (those resumed: as listed)
    let mut finished: Vec<(octile::gram::Tile, String)> = resumed.as_ref().map(|(t, _)| t.clone()).unwrap_or_default();
    let mut pairs_done = pairs_resumed;
    let (backend_name, device_name) = (k.backend_name(), k.device_name());
    let (n_x, n_y) = (x.len(), y.len());
    let base_summary = |secs: f64| json!({"output": a.out.display().to_string(), "shape": [out_rows, out_cols], "graphs": n_x, "graphs_against": n_y, "seconds": secs, "backend": backend_name, "device": device_name, "normalized": a.normalize, "method": method});
    // keep the tiles finished (their values are on disk) and say how to go on
    let keep = |finished: &[(octile::gram::Tile, String)], pairs_done: usize, secs: f64| -> Result<PathBuf> {
        outputs.values.sync()?;
        if let Some((w, _)) = &outputs.gradient {
            w.sync()?;
        }
        resume::save(&a.out, finished, pairs_done, pairs_total, &fp, base_summary(secs))
    };
    // tiles are computed here and written (with the tally) by a writer thread, so writing tile k
    // overlaps computing tile k + 1
    let outcome = (|| -> octile::Result<()> {
        let diag = if job.normalized { Some(tiled::diagonals(&job, &compute, &mut tally)?) } else { None };
        diagonal_secs = t.elapsed().as_secs_f64();
        // each device's kernel `in_flight` times: one thread per tile in flight
        let one: Vec<tiled::Compute> = if per_device.len() > 1 { per_device.clone() } else { vec![compute] };
        let computes: Vec<tiled::Compute> = (0..in_flight).flat_map(|_| one.iter().copied()).collect();
        // room for one computed tile per thread (the memory check counts them)
        let (tx, rx) = std::sync::mpsc::sync_channel::<(&octile::gram::Tile, octile::Gram, tiled::TileTimes, tiled::Tally)>(computes.len());
        std::thread::scope(|s| {
            let (tally, finished, pairs_done, timeline) = (&mut tally, &mut finished, &mut pairs_done, &mut timeline);
            let (job, outputs, keep, n_tiles) = (&job, &outputs, &keep, tiles.len());
            let writer = s.spawn(move || -> octile::Result<()> {
                let mut last_kept = std::time::Instant::now();
                for (tile, g, mut times, part) in rx {
                    times.handed = t.elapsed().as_secs_f64();
                    let sum = tiled::write_outputs(job, tile, &g, outputs)?;
                    times.written = t.elapsed().as_secs_f64();
                    timeline.push((tile.clone(), times));
                    tally.merge(part);
                    finished.push((tile.clone(), sum));
                    *pairs_done += job.pairs_of(tile);
                    // a run killed outright (SIGKILL, power) loses at most a minute of tiles
                    if last_kept.elapsed().as_secs() >= 60 && finished.len() < n_tiles {
                        keep(finished, *pairs_done, t.elapsed().as_secs_f64()).map_err(|e| OctileError::InvalidRequest(format!("{e:#}")))?;
                        last_kept = std::time::Instant::now();
                    }
                }
                Ok(())
            });
            let computed = tiled::compute_on_devices(job, &computes, &pools, diag.as_ref(), &todo, t, &tx);
            drop(tx);
            let written = writer.join().unwrap_or_else(|_| Err(OctileError::InvalidConfig("the tile writer thread panicked".into())));
            // a write error first (it stopped the run), else the computation's
            written.and(computed)
        })
    })();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let secs = t.elapsed().as_secs_f64();
    if let Err(e) = outcome {
        if finished.is_empty() {
            // nothing to resume from
            drop(outputs);
            for p in [&files.values, &files.gradient, &files.summary] {
                let _ = std::fs::remove_file(p);
            }
            return Err(anyhow::Error::new(e));
        }
        let saved = keep(&finished, pairs_done, secs)?;
        let n_done = pairs_done - pairs_resumed;
        let how = format!(
            "the {} tile(s) finished ({pairs_done} of {pairs_total} pairs) are kept in {}; run the same command with --resume {} to finish",
            finished.len(),
            saved.display(),
            saved.display()
        );
        let e = match e {
            OctileError::Cancelled => anyhow::Error::new(OctileError::Cancelled).context(format!("interrupted after {n_done} pair(s): {how}")),
            e => anyhow::Error::new(e).context(how),
        };
        return Err(e);
    }
    // the finished files are flushed here and put in place below, with the summary, together
    outputs.values.sync()?;
    if let Some((w, _)) = &outputs.gradient {
        w.sync()?;
    }
    let gradient = match (&built, &outputs.gradient) {
        (Built::Gradient(_, names, values), Some(_)) => Some(
            json!({"gradient": gradient_path(&a.out).display().to_string(), "gradient_shape": [out_rows, out_cols, names.len()], "hyperparameters": names, "hyperparameter_values": values}),
        ),
        _ => None,
    };
    drop(outputs);
    let (lo, med, hi) = tally.iteration_stats();
    let failures: Vec<_> = tally.failures.iter().map(|(i, j, f)| json!({"row": i, "col": j, "iterations": f.iterations, "residual": f.residual})).collect();
    let details = tally.details.clone().unwrap_or_default();
    let mut summary = json!({
        "output": a.out.display().to_string(),
        "shape": [out_rows, out_cols],
        "rows": [rows.start, rows.end],
        "cols": [cols.start, cols.end],
        "graphs": x.len(),
        "graphs_against": y.len(),
        "skipped_records": skipped,
        "pairs": tally.pairs,
        "seconds": secs,
        "pairs_per_second": tally.pairs as f64 / secs,
        "tiles": tiles.len(),
        "tile_size": tile_size,
        "tiles_in_flight": in_flight,
        "timeline": timeline_json(diagonal_secs, &timeline, per_device.len().max(1)),
        "backend": k.backend_name(),
        "device": k.device_name(),
        "device_info": k.device_report(),
        "normalized": a.normalize,
        "details": details.to_string(),
        "primitives": details.to_string(),
        "report": details,
        "iterations": {"min": lo, "median": med, "max": hi},
        "non_converged": failures,
        "resumed_from": a.resume.as_ref().map(|p| p.display().to_string()),
        "pairs_resumed": pairs_resumed,
        "pairs_in_result": tally.pairs + pairs_resumed,
    });
    if let (Some(s), Some(m)) = (summary.as_object_mut(), method.as_object()) {
        s.extend(m.clone());
    }
    if let Some(s) = summary.as_object_mut() {
        s.insert("inputs".into(), json!(xs.sources));
        s.insert("inputs_against".into(), json!(ys.sources));
        s.insert("provenance".into(), provenance());
        // rows (and columns) matched back to records: only where some may have been skipped
        if a.skip_invalid {
            s.insert("records".into(), xs.records_json());
            s.insert("records_against".into(), ys.records_json());
        }
    }
    if let (Some(s), Some(Some(gr))) = (summary.as_object_mut(), gradient.as_ref().map(|g| g.as_object())) {
        s.extend(gr.clone());
    }
    let summary_path = match put_in_place(a, &files, (out_rows, out_cols), gradient.is_some(), &summary) {
        Ok(p) => p,
        Err(e) => {
            // every tile is in the partial files: list them all, so --resume only writes
            let saved = resume::save(&a.out, &finished, pairs_done, pairs_total, &fp, base_summary(secs))?;
            return Err(e.context(format!(
                "the finished matrix is kept in {}; run the same command with --resume {} to write it",
                saved.display(),
                saved.display()
            )));
        }
    };
    files.remove_summary();
    if !a.quiet {
        let grad = gradient
            .as_ref()
            .and_then(|gr| Some(format!(", {} ({out_rows}×{out_cols}×{})", gr["gradient"].as_str()?, gr["hyperparameters"].as_array()?.len())));
        eprintln!(
            "wrote {} ({out_rows}×{out_cols}){} and {} — {} pairs in {:.2} s ({:.0} pairs/s)",
            a.out.display(),
            grad.unwrap_or_default(),
            summary_path.display(),
            tally.pairs,
            secs,
            tally.pairs as f64 / secs
        );
    }
    if let Some((i, j, f)) = tally.failures.first() {
        // a pair stopped before its first iteration: say why when the node kernel underflowed
        let cause = if f.iterations == 0 { underflow(file, &x, &y, *i, *j) } else { overflow(file, f) };
        return Err(NotConverged(match cause {
            Some(cause) => format!(
                "{} pair(s) could not be solved; first ({i}, {j}): {cause}; values written with the failures listed in {}",
                tally.failed_pairs,
                summary_path.display()
            ),
            None => format!(
                "{} pair(s) did not converge; first ({i}, {j}) after {} iterations, residual {:.3e}; values written with the failures listed in {}",
                tally.failed_pairs,
                f.iterations,
                f.residual,
                summary_path.display()
            ),
        })
        .into());
    }
    Ok(())
}

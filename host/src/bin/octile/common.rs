//! Helpers shared by several subcommands: argument enums, inputs, kernel configuration, progress, outputs.
use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};
use octile::generators::{ba_set, nws_set};
use octile::io::{FeatureKinds, Format, Place, ReadOptions, Skipped};
use octile::mgk::config::{DenseWalk, synthetic_kernel};
use octile::mgk::gpu::options::GpuTuning;
use octile::reorder::Reordering;
use octile::{Backend, Graph, MgkConfig, Precision, RunControl};
use serde_json::json;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// The progress of a run, and the Ctrl-C / SIGTERM / SIGHUP handler that stops it keeping the work.
/// On a terminal: a bar. Elsewhere (a log file, nohup, a batch job), where a bar draws nothing: a
/// line every `OCTILE_PROGRESS_SECONDS` (default 10) seconds, so a long run shows it is alive and
/// how far it is. `quiet`: neither.
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
        b.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} pairs  {per_sec}  ETA {eta}").unwrap_or_else(|_| ProgressStyle::default_bar()));
        b
    });
    let b2 = bar.clone();
    let lines = (!quiet && !std::io::stderr().is_terminal()).then(progress_interval).flatten().map(|every| (every, Mutex::new(Instant::now())));
    let ctl = RunControl {
        progress: Some(Arc::new(move |n| {
            if let Some(b) = &b2 {
                b.inc(n as u64);
                if let Some((every, last)) = &lines {
                    progress_line(b, *every, last);
                }
            }
        })),
        cancel: Some(cancel),
        max_memory_bytes: None,
    };
    (bar, ctl)
}

/// Seconds between progress lines off a terminal: `OCTILE_PROGRESS_SECONDS` (a positive number;
/// 0: none), else 10. A value that is not a number is warned about and the default used.
fn progress_interval() -> Option<Duration> {
    const DEFAULT: Duration = Duration::from_secs(10);
    let Ok(v) = std::env::var("OCTILE_PROGRESS_SECONDS") else { return Some(DEFAULT) };
    match v.trim().parse::<f64>() {
        Ok(0.0) => None,
        Ok(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        _ => {
            eprintln!("warning: OCTILE_PROGRESS_SECONDS={v} is not a number of seconds; a progress line every {} s", DEFAULT.as_secs());
            Some(DEFAULT)
        }
    }
}

/// Print a progress line when `every` has passed since the `last` one (a worker that finds another
/// printing goes on: progress is reported from many threads).
fn progress_line(b: &ProgressBar, every: Duration, last: &Mutex<Instant>) {
    let Ok(mut last) = last.try_lock() else { return };
    if last.elapsed() < every {
        return;
    }
    *last = Instant::now();
    let (pos, len) = (b.position(), b.length().unwrap_or(0));
    let percent = if len > 0 { format!(" ({:.1}%)", 100.0 * pos as f64 / len as f64) } else { String::new() };
    eprintln!("progress: {pos}/{len} pairs{percent}, {:.0} pairs/s, ETA {} s, {:.0} s elapsed", b.per_sec(), b.eta().as_secs(), b.elapsed().as_secs_f64());
}

/// Graphs read from the inputs of a run, and where each came from (for the summary).
#[derive(Default)]
pub struct Inputs {
    /// The graphs, in input order.
    pub graphs: Vec<Graph>,
    /// Each input as given: what it was (path, size and checksum; or generator, count and seed).
    pub sources: Vec<serde_json::Value>,
    /// For each graph: its input (an index into `sources`) and its place there.
    pub places: Vec<(usize, Place)>,
    /// The records skipped with `--skip-invalid`: their input and where and why.
    pub skipped: Vec<(usize, Skipped)>,
}

impl Inputs {
    /// Every graph reads as the marginalized kernel `cfg` reads it (`mgk::pack::GraphRows::read`,
    /// the packing's own check: every feature the kernel compares is there — an edge feature in
    /// every graph with edges —, a Kronecker delta's values are labels), checked before any work:
    /// an error names the input (`names[k]`, as given), the graph's line and its record in that
    /// input. (At packing the same check names the graph's index in the pairs it was given: a
    /// tile's, or X and Y's together.)
    pub fn check_features_present(&self, cfg: &MgkConfig, names: &[String]) -> Result<()> {
        let resolved = cfg.resolve()?;
        let opt = octile::mgk::pack::PackOptions::new(&resolved, cfg.q, cfg.p);
        self.check_each(names, |g, record| octile::mgk::pack::GraphRows::read(g, record, &opt).map(drop))
    }

    /// [`Self::check_features_present`] for the shortest-path kernel: every node feature its κv
    /// compares is in every graph (the error names the input, line and record, as for the
    /// marginalized kernel's).
    pub fn check_sp_features_present(&self, cfg: &octile::sp::config::SpConfig, names: &[String]) -> Result<()> {
        let (_, features) = cfg.node_spec();
        self.check_each(names, |g, record| octile::mgk::pack::feature_indices("node", &features, g.node_feature_names(), record).map(drop))
    }

    /// `check` on every graph; its first error with the graph's input, line and record.
    fn check_each(&self, names: &[String], check: impl Fn(&octile::Graph, usize) -> octile::Result<()>) -> Result<()> {
        use octile::OctileError;
        for (g, &(k, place)) in self.graphs.iter().zip(&self.places) {
            let Err(e) = check(g, place.record) else { continue };
            let input = names.get(k).map_or("an input", String::as_str);
            let at = if place.line > 0 { format!("{input}:{}", place.line) } else { input.to_string() };
            let record = place.record;
            match e {
                OctileError::MissingFeature { kind, feature, available, .. } => {
                    bail!("{at}: graph {record} of this input: {kind} feature '{feature}' is not in it; it has: [{available}]")
                }
                OctileError::InvalidGraph { what, .. } => bail!("{at}: graph {record} of this input, {what}"),
                e => bail!("{at}: graph {record} of this input: {e}"),
            }
        }
        Ok(())
    }

    /// The summary's record of the inputs' records: each graph (its row or column, in order) with
    /// its input and record, and each record skipped with its input, line and reason.
    pub fn records_json(&self) -> serde_json::Value {
        let file = |i: usize| self.sources[i]["input"].clone();
        let kept: Vec<_> = self.places.iter().map(|&(i, p)| json!({"input": file(i), "record": p.record, "line": p.line})).collect();
        let skipped: Vec<_> =
            self.skipped.iter().map(|(i, s)| json!({"input": file(*i), "record": s.place.record, "line": s.place.line, "reason": s.reason})).collect();
        json!({"kept": kept, "skipped": skipped})
    }
}

/// Whether input `inp` names one of `gram`'s generated sets (`nws:COUNT[:SEED]`, `ba:…`,
/// `molecules:…`) rather than a file.
pub fn is_generated_set(inp: &str) -> bool {
    inp.split_once(':').is_some_and(|(g, _)| matches!(g, "nws" | "ba" | "molecules"))
}

/// Graphs of `inputs` (files, folders or generators), where each came from, and the records
/// skipped; `kinds`: the feature kinds of the inputs read so far (shared by X and Y), so that a
/// feature holding strings in one input and numbers in another is an error naming both.
pub fn load(inputs: &[String], opt: &ReadOptions, kinds: &mut Vec<(PathBuf, FeatureKinds)>) -> Result<Inputs> {
    let mut out = Inputs::default();
    for (k, inp) in inputs.iter().enumerate() {
        let parts: Vec<&str> = inp.split(':').collect();
        if is_generated_set(inp) {
            if parts.len() > 3 {
                bail!("{inp}: too many fields; use {}:COUNT[:SEED]", parts[0]);
            }
            let count = generated_count(inp, parts[1])?;
            let seed: u64 = parts.get(2).map(|s| s.parse()).transpose().with_context(|| format!("{inp}: SEED must be an integer"))?.unwrap_or(2020);
            let set = match parts[0] {
                "nws" => nws_set(count, seed),
                "ba" => ba_set(count, seed),
                _ => octile::generators::molecule_set(count, seed),
            };
            merge_kinds(kinds, &FeatureKinds::numbers_of(&set), Path::new(inp))?;
            out.sources.push(json!({"input": inp, "generator": parts[0], "count": count, "seed": seed}));
            out.places.extend((0..set.len()).map(|record| (k, Place { record, line: 0 })));
            out.graphs.extend(set);
            continue;
        }
        let l = octile::io::read_with(Path::new(inp), opt)?;
        merge_kinds(kinds, &l.kinds, Path::new(inp))?;
        out.sources.push(file_source(inp)?);
        out.places.extend(l.places.into_iter().map(|p| (k, p)));
        out.skipped.extend(l.skipped_records.into_iter().map(|s| (k, s)));
        out.graphs.extend(l.graphs);
    }
    Ok(out)
}

/// The COUNT of a generator input (`nws:COUNT`, `demo --graphs COUNT`): at least one graph, and
/// the graphs within memory before any is made (a generated graph — 96 nodes, up to 540 edges,
/// their features — takes under 32 KiB).
pub fn generated_count(what: &str, count: &str) -> Result<usize> {
    let count: usize = count.parse().with_context(|| format!("{what}: COUNT '{count}' must be a non-negative integer"))?;
    check_generated_count(what, count)?;
    Ok(count)
}

/// [`generated_count`]'s checks of a count already parsed (`demo --graphs`).
pub fn check_generated_count(what: &str, count: usize) -> Result<()> {
    if count == 0 {
        bail!("{what}: COUNT is 0; a Gram matrix needs at least one graph");
    }
    octile::memory::check(count as u128 * (32 << 10), None, || format!("{what}: generating {count} graphs"))?;
    Ok(())
}

/// A summary written beside an output may not be that output (the same file by any path).
pub fn refuse_summary_over_output(summary: &Path, out: &Path) -> Result<()> {
    if summary == out || same_file(summary, out) {
        bail!("--summary {} would overwrite the output {}", summary.display(), out.display());
    }
    Ok(())
}

/// No file a run writes (`outputs`) may replace one of its inputs (graph files, the kernel file;
/// the same file by any path): refused before any work, naming both. `flag`: the option the
/// outputs come from, for the message; `beside`: what else it writes next to the output.
pub fn refuse_replacing_inputs<'a>(flag: &str, out: &Path, outputs: &[PathBuf], inputs: impl IntoIterator<Item = &'a Path>, beside: &str) -> Result<()> {
    for input in inputs {
        if let Some(o) = outputs.iter().find(|o| same_file(o, input)) {
            bail!(
                "{flag} {}: this run would write {}, which is the input {}; name the output differently{beside}",
                out.display(),
                o.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// What the summary says of an input file or folder: its path, size in bytes and FNV-1a checksum
/// (of a folder: of its files' names and bytes, in name order), so a result can be traced to the
/// exact data it came from.
pub fn file_source(input: &str) -> Result<serde_json::Value> {
    let path = Path::new(input);
    let absolute = std::fs::canonicalize(path).map(|p| p.display().to_string()).unwrap_or_else(|_| input.to_string());
    if !path.is_dir() {
        let (sum, bytes) = octile::checksum::file(path).with_context(|| format!("{input}: reading it for its checksum"))?;
        return Ok(json!({"input": input, "path": absolute, "bytes": bytes, "fnv1a64": sum}));
    }
    let mut names: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("{input}: listing it for its checksum"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    names.sort();
    let (mut h, mut bytes) = (octile::checksum::Fnv64::default(), 0u64);
    for p in &names {
        let (sum, size) = octile::checksum::file(p).with_context(|| format!("{}: reading it for its checksum", p.display()))?;
        h.bytes(p.file_name().map(|n| n.as_encoded_bytes()).unwrap_or_default()).bytes(sum.as_bytes());
        bytes += size;
    }
    Ok(json!({"input": input, "path": absolute, "bytes": bytes, "files": names.len(), "fnv1a64": h.hex()}))
}

/// Where a run's results came from, for its summary: the command line as given, the folder it
/// ran in (relative paths are relative to it), and octile's version and git commit.
pub fn provenance() -> serde_json::Value {
    json!({
        "command": std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>(),
        "working_directory": std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default(),
        "octile_version": env!("CARGO_PKG_VERSION"),
        "git_commit": env!("OCTILE_GIT_COMMIT"),
    })
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
    format.map(|f| Format::parse(f).with_context(|| format!("unknown --format {f}; use json, smi, csv, tu, sdf or pdb"))).transpose()
}

/// The GPU solvers' tuning knobs the environment sets, over those of the kernel file (the
/// library reads no environment for them; the CLI keeps these variables working):
/// `OCTILE_GPU_SCRATCH_BYTES` (bytes), `OCTILE_RESIDENT_PRODUCT=0` and `OCTILE_RESIDENT_SPLIT=0`
/// (a form off; any other value: on), `OCTILE_RESIDENT_ROWS`, `OCTILE_PRODUCT_WARPS_PER_SM`,
/// `OCTILE_RESIDENT_FILL` (positive integers), `OCTILE_FUSED_IN_SLICE=0`, `OCTILE_RESIDENT_GRID=0`. See `octile::mgk::gpu::options`.
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
    r.fused_in_slice = on("OCTILE_FUSED_IN_SLICE").unwrap_or(r.fused_in_slice);
    r.grid = on("OCTILE_RESIDENT_GRID").unwrap_or(r.grid);
    Ok(())
}

/// The kernel of `gram` and `nodal`: the `--kernel` TOML (default: the paper's synthetic-set
/// kernel) with `--backend`, `--precision` and `--reorder` applied, and the GPU tuning the
/// environment sets ([`tuning_from_env`]).
pub fn kernel_config(kernel: Option<&Path>, backend: BackendArg, precision: Option<PrecisionArg>, reorder: Option<ReorderArg>) -> Result<MgkConfig> {
    let mut cfg = match kernel {
        Some(p) => {
            let text = octile::io::record::read_text(p)?;
            // another method's file: say so, not its first key this method does not know
            if let Some(m) = octile::toml_file::parse_table(&text).ok().and_then(|t| octile::toml_file::method_of(&t).ok())
                && m != "marginalized"
            {
                bail!("{}: a {m} kernel (method = \"{m}\"); this command computes the marginalized graph kernel only", p.display());
            }
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

/// `--max-memory`'s parser: a size such as 8G, 512M, 64k or a number of bytes.
pub fn max_memory(s: &str) -> std::result::Result<u64, String> {
    octile::memory::parse_size(s).ok_or_else(|| match octile::memory::size_parts(s) {
        Some((v, _)) if v <= 0.0 => format!("'{s}': the memory bound must be more than 0 bytes"),
        _ => format!("'{s}' is not a size such as 8G, 512M, 64k or a number of bytes"),
    })
}

/// Whether `output` and `input` name the same file, by any path (either maybe not there yet).
pub fn same_file(output: &Path, input: &Path) -> bool {
    match (resolved(output), resolved(input)) {
        (Some(o), Some(i)) => o == i,
        _ => false,
    }
}

/// `path` with its folder's links and `.`/`..` resolved: the file itself where it exists, else its
/// folder's real path joined with its name (a file still to be written).
fn resolved(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok().or_else(|| {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        Some(std::fs::canonicalize(parent).ok()?.join(path.file_name()?))
    })
}

/// The exit codes, shown after every `--help` (docs/usage.md says the same).
pub const EXIT_CODES: &str = "Exit codes: 0 success; 1 error (the message names the file, line or flag); 2 the command line is not understood (an unknown flag, a missing or bad value); 3 some pairs did not converge (the values are written, the failures listed in the summary); 130 interrupted by SIGINT (Ctrl-C), SIGTERM or SIGHUP (gram keeps the tiles done: run the same command with --resume NAME.partial.npy).";

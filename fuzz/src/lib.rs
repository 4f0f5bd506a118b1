//! What the fuzz targets share: a scratch folder for the files the readers take (octile's readers
//! read paths, so each input is written to a file first), the checks every reader result must pass,
//! the split of one input into several files or parts, and the CLI's `gram` path on the CPU.
//!
//! A target fails (a "crash" to libFuzzer) on a panic, an abort, a sanitizer report, or one of the
//! `assert!`s here: an `Ok` that breaks what the API promises (a graph that does not validate, a
//! non-finite value in a Gram matrix, a matrix of the wrong shape). A typed `Err` is a pass.
use octile::io::{Format, Loaded, ReadOptions};
use octile::mgk::config::synthetic_kernel;
use octile::toml_file::{method_of, parse_table};
use octile::{Backend, Gram, GraphKernel, MarginalizedGraphKernel, MgkConfig, OctileError, Precision, ShortestPathKernel, SpConfig};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

unsafe extern "C" {
    fn atexit(cb: extern "C" fn()) -> std::ffi::c_int;
}

extern "C" fn remove_scratch() {
    if let Some(d) = SCRATCH.get() {
        let _ = std::fs::remove_dir_all(d);
    }
}

static SCRATCH: OnceLock<PathBuf> = OnceLock::new();

/// This process's scratch folder: `/dev/shm/octile-fuzz-<pid>` (else under the temp dir), made on
/// first use and removed when the process exits normally.
pub fn scratch() -> &'static Path {
    SCRATCH.get_or_init(|| {
        let base = if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
        let d = base.join(format!("octile-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch folder");
        // SAFETY: registers a plain extern "C" function with the C runtime.
        unsafe { atexit(remove_scratch) };
        d
    })
}

/// Write `bytes` to `name` in the scratch folder; returns its path.
pub fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let p = scratch().join(name);
    std::fs::write(&p, bytes).expect("write scratch file");
    p
}

/// Every target's `init`: no profile from the environment or the user's store (a run must not
/// depend on the machine's files: `$OCTILE_PROFILE` unset, `$XDG_CONFIG_HOME` the scratch folder),
/// and one rayon thread (deterministic runs; the other core stays free).
pub fn init_config() {
    // SAFETY: called from libFuzzer's initialisation, before any thread of ours exists.
    unsafe {
        std::env::remove_var("OCTILE_PROFILE");
        std::env::set_var("XDG_CONFIG_HOME", scratch());
    }
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    hook_purr_panics();
}

/// `value` as JSON (`None` if serde refuses it).
pub fn to_json<T: serde::Serialize>(value: &T) -> Option<String> {
    serde_json::to_string(value).ok()
}

/// `data` cut at every line that is exactly `%%` (the separator of the multi-part targets).
pub fn sections(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut k = 0;
    while k < data.len() {
        let line_end = data[k..].iter().position(|&b| b == b'\n').map_or(data.len(), |p| k + p);
        let line = &data[k..line_end];
        if line == b"%%" || line == b"%%\r" {
            out.push(&data[start..k]);
            start = (line_end + 1).min(data.len());
        }
        k = line_end + 1;
    }
    out.push(&data[start.min(data.len())..]);
    out
}

/// Findings of the fuzz targets in code this crate's maintainers leave to others, reported and
/// not yet fixed (docs/fuzzing.md, "Open findings"): each is tolerated — noted on stderr, not a
/// crash — so that the other paths of its target keep being fuzzed and CI stays green. With
/// `OCTILE_FUZZ_STRICT` set they are crashes again (to check a fix: `OCTILE_FUZZ_STRICT=1
/// scripts/fuzz replay`); remove an entry once its fix is in.
pub const OPEN_FINDINGS: &[(&str, &str)] = &[
    // none open: smiles-duplicate-bond, smiles-purr-panic and normalize-overflow were fixed in
    // io/smiles.rs and gram/kernel.rs (docs/fuzzing.md, "Findings"); their checks are crashes again
];

fn strict() -> bool {
    static STRICT: OnceLock<bool> = OnceLock::new();
    *STRICT.get_or_init(|| std::env::var_os("OCTILE_FUZZ_STRICT").is_some())
}

/// Whether the finding `id` of [`OPEN_FINDINGS`] is tolerated now (not under `OCTILE_FUZZ_STRICT`).
pub fn tolerated(id: &str) -> bool {
    // a finding no longer listed (fixed) is a crash again
    if strict() || !OPEN_FINDINGS.iter().any(|(k, _)| *k == id) {
        return false;
    }
    if verbose() {
        eprintln!("open finding {id} (tolerated)");
    }
    true
}

thread_local! {
    static IN_GUARD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Around libFuzzer's panic hook (which aborts: a crash): a panic raised inside the purr crate
/// while [`guarded`] runs is the open finding `smiles-purr-panic` and unwinds to `guarded` instead.
fn hook_purr_panics() {
    let abort = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let in_purr = info.location().is_some_and(|l| l.file().contains("/purr-"));
        // only while the finding is listed as open: a fixed one is a crash again
        if in_purr && IN_GUARD.with(|g| g.get()) && !strict() && OPEN_FINDINGS.iter().any(|(k, _)| *k == "smiles-purr-panic") {
            if verbose() {
                eprintln!("open finding smiles-purr-panic (tolerated): {info}");
            }
            return;
        }
        abort(info)
    }));
}

/// `f()`, or `None` when it panicked inside purr (the open finding `smiles-purr-panic`; any other
/// panic aborts as always).
pub fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    IN_GUARD.with(|g| g.set(true));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    IN_GUARD.with(|g| g.set(false));
    match r {
        Ok(v) => Some(v),
        Err(_) => {
            // (the hook aborts on any panic it does not tolerate, so this is a tolerated one)
            assert!(tolerated("smiles-purr-panic"), "a purr panic unwound past the hook");
            None
        }
    }
}

/// `OCTILE_FUZZ_VERBOSE` set: the targets say what each input led to (to check that seeds reach
/// the code they are meant for: `OCTILE_FUZZ_VERBOSE=1 fuzz/target/…/gram_mgk fuzz/corpus/gram_mgk/*`).
pub fn verbose() -> bool {
    static V: OnceLock<bool> = OnceLock::new();
    *V.get_or_init(|| std::env::var_os("OCTILE_FUZZ_VERBOSE").is_some())
}

/// Every graph a reader returns must be one the API accepts (`path`: the file it came from).
pub fn check_graphs(l: &Loaded, path: &Path) {
    let smiles = path.extension().is_some_and(|e| e == "smi" || e == "csv");
    for (k, g) in l.graphs.iter().enumerate() {
        if let Err(e) = g.validate() {
            if smiles && e.to_string().contains("duplicate edge") && tolerated("smiles-duplicate-bond") {
                continue;
            }
            panic!("reader returned graph {k} that does not validate: {e}");
        }
        for i in 0..g.n_nodes() {
            assert!(g.node_features(i).iter().all(|v| v.is_finite()), "graph {k}: node {i} has a non-finite feature");
        }
        for (e, edge) in g.edges().iter().enumerate() {
            assert!(edge.weight.is_finite() && edge.weight > 0.0, "graph {k}: edge {e} weight {}", edge.weight);
            assert!((edge.i as usize) < g.n_nodes() && (edge.j as usize) < g.n_nodes(), "graph {k}: edge {e} past the nodes");
            assert!(g.edge_features(e).iter().all(|v| v.is_finite()), "graph {k}: edge {e} has a non-finite feature");
        }
    }
}

/// Read `path` as the CLI does (`read_with`), strictly and with `skip_invalid`, and check both
/// results: graphs valid, error messages printable, and the two modes consistent (a strict success
/// is the same with skipping; a strict failure is a failure or at least one skipped record).
pub fn read_checked(path: &Path, format: Option<Format>, pdb_cutoff: f64) -> Option<Loaded> {
    let strict = guarded(|| octile::io::read_with(path, &ReadOptions { format, skip_invalid: false, pdb_cutoff }))?;
    let lenient = guarded(|| octile::io::read_with(path, &ReadOptions { format, skip_invalid: true, pdb_cutoff }))?;
    if verbose() {
        let say = |r: &octile::Result<Loaded>| match r {
            Ok(l) => format!("{} graphs ({} nodes in all), {} skipped", l.graphs.len(), l.graphs.iter().map(|g| g.n_nodes()).sum::<usize>(), l.skipped),
            Err(e) => format!("error: {e}"),
        };
        eprintln!("read {}: strict: {}; skip_invalid: {}", path.display(), say(&strict), say(&lenient));
    }
    for r in [&strict, &lenient] {
        match r {
            Ok(l) => {
                check_graphs(l, path);
                assert!(!l.graphs.is_empty() || l.skipped > 0, "Ok with no graphs and nothing skipped");
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
    match (&strict, &lenient) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.skipped, 0, "strict read skipped records");
            assert_eq!(a.graphs, b.graphs, "skip_invalid changed the graphs of a file without bad records");
            assert_eq!(b.skipped, 0);
        }
        (Ok(_), Err(e)) => panic!("strict read succeeded but skip_invalid failed: {e}"),
        (Err(e), Ok(b)) => assert!(b.skipped > 0, "strict read failed ({e}) but skip_invalid skipped nothing"),
        (Err(_), Err(_)) => {}
    }
    strict.ok()
}

/// Options of a `gram` input: its first line, when it starts with `#!` (a TOML comment, so the
/// kernel text stays valid), lists words: `json` (default), `smi`, `csv`, `sdf`, `pdb`: the format
/// of the graph parts; `normalize`; `f32` (else f64); `skip` (skip_invalid).
#[derive(Debug, Default)]
pub struct GramOptions {
    pub ext: &'static str,
    pub normalize: bool,
    pub f32: bool,
    pub skip: bool,
}

impl GramOptions {
    fn of(toml: &str) -> Self {
        let mut o = GramOptions { ext: "jsonl", ..Default::default() };
        if let Some(head) = toml.lines().next().and_then(|l| l.strip_prefix("#!")) {
            for w in head.split_whitespace() {
                match w {
                    "json" => o.ext = "jsonl",
                    "smi" => o.ext = "smi",
                    "csv" => o.ext = "csv",
                    "sdf" => o.ext = "sdf",
                    "pdb" => o.ext = "pdb",
                    "normalize" => o.normalize = true,
                    "f32" => o.f32 = true,
                    "skip" => o.skip = true,
                    _ => {}
                }
            }
        }
        o
    }
}

/// Which kernel a `gram` target builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `MgkConfig::from_toml` → `MarginalizedGraphKernel` (no TOML text at all: the CLI's
    /// default kernel, as without `--kernel`).
    Marginalized,
    /// `SpConfig::from_toml` → `ShortestPathKernel`.
    ShortestPath,
}

/// Size caps of a `gram` input (the solver's cost grows with their product; a larger input is
/// dropped after reading, which the readers' own targets cover).
pub struct Caps {
    pub graphs: usize,
    pub nodes: usize,
    pub edges: usize,
}

/// `octile gram` on the CPU: input = kernel TOML, `%%`, the graphs X (a file's text), and
/// optionally `%%`, the graphs Y (then K(X, Y)). Every value of an `Ok` must be finite and the
/// matrix of the right shape; so must a `NoConvergence` error's partial matrix's shape.
pub fn gram(data: &[u8], method: Method, caps: &Caps) {
    let parts = sections(data);
    let Ok(toml) = std::str::from_utf8(parts[0]) else { return };
    let opt = GramOptions::of(toml);
    // the CLI's dispatch (its error is a typed one)
    let dispatch = parse_table(toml).and_then(|t| method_of(&t));
    let kernel: Box<dyn GraphKernel> = match method {
        Method::Marginalized => {
            // no kernel text: no --kernel (the paper's synthetic kernel); else the file as read
            let cfg = if toml.is_empty() { Ok(synthetic_kernel(0.05)) } else { MgkConfig::from_toml(toml) };
            let Ok(mut cfg) = cfg else { return };
            assert!(dispatch.is_ok_and(|m| m == "marginalized"), "a marginalized TOML that method_of does not call marginalized");
            cfg.backend = Backend::Cpu;
            cfg.precision = if opt.f32 { Precision::F32 } else { Precision::F64 };
            // no file reads from the fuzz input (profile_json fuzzes profiles), and a bounded solve
            cfg.tiles.profile = None;
            cfg.solver.max_iterations = cfg.solver.max_iterations.min(1000);
            match MarginalizedGraphKernel::new(cfg) {
                Ok(k) => Box::new(k),
                Err(e) => panic!("a validated kernel TOML was refused by MarginalizedGraphKernel::new on the CPU: {e}"),
            }
        }
        Method::ShortestPath => {
            let Ok(mut cfg) = SpConfig::from_toml(toml) else { return };
            assert!(dispatch.is_ok(), "an SP TOML that method_of refuses");
            cfg.backend = Backend::Cpu;
            match ShortestPathKernel::new(cfg) {
                Ok(k) => Box::new(k),
                Err(e) => panic!("a validated SP TOML was refused by ShortestPathKernel::new on the CPU: {e}"),
            }
        }
    };
    let read = |k: usize, bytes: &[u8]| -> Option<Vec<octile::Graph>> {
        let path = write(&format!("g{k}.{}", opt.ext), bytes);
        let l = guarded(|| octile::io::read_with(&path, &ReadOptions { format: None, skip_invalid: opt.skip, pdb_cutoff: octile::io::pdb::DEFAULT_CUTOFF }))?
            .ok()?;
        check_graphs(&l, &path);
        Some(l.graphs)
    };
    let Some(x) = parts.get(1).and_then(|b| read(1, b)) else { return };
    let y = match parts.get(2) {
        Some(b) => match read(2, b) {
            Some(y) => Some(y),
            None => return,
        },
        None => None,
    };
    let all = x.iter().chain(y.iter().flatten());
    if x.len() + y.as_ref().map_or(0, Vec::len) > caps.graphs || all.clone().any(|g| g.n_nodes() > caps.nodes || g.n_edges() > caps.edges) {
        return;
    }
    let (rows, cols) = (x.len(), y.as_ref().map_or(x.len(), Vec::len));
    let r = match (&y, opt.normalize) {
        (None, false) => kernel.gram(&x),
        (None, true) => kernel.gram_normalized(&x),
        (Some(y), false) => kernel.gram_between(&x, y),
        (Some(y), true) => kernel.gram_between_normalized(&x, y),
    };
    let shape = |g: &Gram| {
        assert_eq!((g.rows, g.cols), (rows, cols), "Gram shape");
        assert_eq!(g.values.len(), rows * cols, "Gram values");
    };
    if verbose() {
        eprintln!("gram {method:?} {opt:?}: {} x {} graphs: {:?}", rows, cols, r.as_ref().map(|g| &g.values).map_err(|e| e.to_string()));
    }
    // K_ii·K_jj outside f64's range: normalizing over- or underflows (an open finding)
    let normalize_overflows = || {
        let d = |set: &[octile::Graph]| kernel.diag(set).is_ok_and(|d| d.iter().any(|&v| v > 0.0 && !(v * v).is_normal()));
        opt.normalize && (d(&x) || y.as_deref().is_some_and(d)) && tolerated("normalize-overflow")
    };
    match r {
        Ok(g) => {
            shape(&g);
            if let Some((k, v)) = g.values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                if normalize_overflows() {
                    return;
                }
                panic!("Ok Gram matrix ({method:?}, normalize {}) has the non-finite value {v} at ({}, {})", opt.normalize, k / cols, k % cols);
            }
            // normalized: K_ij / √(K_ii K_jj) of the same kernel's plain matrix and diagonals (0
            // where K_ii or K_jj is 0; 1 on such a diagonal of K(X))
            if opt.normalize {
                let (raw, dx, dy) = match &y {
                    None => (kernel.gram(&x), None, None),
                    Some(y) => (kernel.gram_between(&x, y), kernel.diag(&x).ok(), kernel.diag(y).ok()),
                };
                if let Ok(raw) = raw {
                    let d_row = |i: usize| dx.as_ref().map_or_else(|| raw.values[i * cols + i], |d| d[i]);
                    let d_col = |j: usize| dy.as_ref().map_or_else(|| raw.values[j * cols + j], |d| d[j]);
                    for i in 0..rows {
                        for j in 0..cols {
                            if y.is_some() && (dx.is_none() || dy.is_none()) {
                                continue;
                            }
                            let (a, b) = (d_row(i), d_col(j));
                            let want = if a == 0.0 || b == 0.0 {
                                if y.is_none() && i == j { 1.0 } else { 0.0 }
                            } else {
                                raw.values[i * cols + j] / (a.sqrt() * b.sqrt())
                            };
                            let got = g.values[i * cols + j];
                            if (got - want).abs() > 1e-9 * want.abs().max(1.0) && !normalize_overflows() {
                                panic!(
                                    "normalized ({method:?}) entry ({i}, {j}) is {got:e}, but K_ij / √(K_ii K_jj) = {:e} / √({a:e}·{b:e}) = {want:e}",
                                    raw.values[i * cols + j]
                                );
                            }
                        }
                    }
                }
            }
            // what the CLI writes
            let bytes = octile::io::npy::npy_bytes(&g.values, g.rows, g.cols);
            assert_eq!(bytes.len() % 64, (rows * cols * 8) % 64);
        }
        Err(OctileError::NoConvergence { partial, .. }) => shape(&partial),
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

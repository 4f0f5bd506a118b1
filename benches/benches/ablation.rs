//! The ablation benchmark (the paper's Fig. 9): the solver with one optimisation added per step,
//! each step inheriting the ones before, on four datasets:
//!
//! | step       | tiles stored        | node order | tile-pair primitive      | tile storage |
//! |------------|---------------------|------------|--------------------------|--------------|
//! | Dense      | all ⌈n/8⌉² tiles    | natural    | dense×dense              | 64 entries   |
//! | Sparse     | non-empty only      | natural    | dense×dense              | 64 entries   |
//! | +Reorder   | non-empty only      | PBR        | dense×dense              | 64 entries   |
//! | +Adaptive  | non-empty only      | PBR        | per tile pair, profile   | 64 entries   |
//! | +Compact   | non-empty only      | PBR        | per tile pair, profile   | nonzeros     |
//!
//! (+Block and +DynSched — tile sharing in a block, dynamic pair scheduling — are always on.)
//! Datasets: NWS and BA synthetic sets (96 nodes), ChEMBL approved drugs (`data/chembl_drugs.csv`),
//! and the `PROTEINS` smallest whole protein chains in `data/proteins/` (5 Å contacts, 800–1,000
//! heavy atoms). The protein set's Dense step is projected (the paper's Fig. 9 asterisk): it
//! multiplies all ⌈n/8⌉⁴ tile pairs per XMV (~35 s per pair on an H100), so it runs once on one
//! pair of the set, the Sparse step runs once on the same pair, and Dense(set) = Sparse(set) ×
//! Dense(pair) / Sparse(pair) — a ratio of two runs in the same configuration. Every other step
//! is measured on the whole set. Missing data is reported as SKIP; `OCTILE_ABLATION_SETS=ChEMBL,NWS`
//! runs a subset. Runs on the GPU (f32) when present, else the CPU (f64, smaller sets; protein
//! fragments of `FRAGMENT_CPU` atoms, Dense measured).
//!
//! Each step is a criterion benchmark (throughput = pairs/s; every sample ends after the results
//! are copied back, i.e. after a stream synchronize). After criterion, a table of the median time
//! and pairs/s per step, with the ratio to the Dense step of the same dataset measured in the same
//! run, is printed and written to `ablation.md` / `ablation.json` (in `$OCTILE_BENCH_OUT` or the
//! current directory), followed by the non-empty octile counts per order (the paper's Fig. 7).
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use octile::GraphKernel;
use octile::generators::{ba_set, nws_set};
use octile::mgk::config::{PrimitiveChoice, TileOptions, synthetic_kernel};
use octile::reorder::{Reordering, count_octiles};
use octile::{Backend, Graph, MarginalizedGraphKernel, MgkConfig, Precision};
use octile_types::Primitive;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Atoms kept per protein chain on the CPU (the GPU takes whole chains).
const FRAGMENT_CPU: usize = 64;
/// Whole protein chains in the GPU set (the smallest by file size).
const PROTEINS: usize = 5;

/// One dataset of the ablation.
struct Dataset {
    name: String,
    graphs: Vec<Graph>,
    kernel: MgkConfig,
    /// Project the Dense step from this one pair (see the module docs).
    dense_pair: Option<(usize, usize)>,
}

static TIMES: Mutex<BTreeMap<(String, usize), Vec<f64>>> = Mutex::new(BTreeMap::new());
/// Per dataset with a projected Dense step: how it was projected.
static PROJECTED: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

fn steps() -> Vec<(&'static str, Reordering, TileOptions)> {
    let dd = PrimitiveChoice::Fixed(Primitive::DenseDense);
    vec![
        ("Dense", Reordering::Natural, TileOptions { primitive: dd, compact: false, skip_empty: false, ..TileOptions::default() }),
        ("Sparse", Reordering::Natural, TileOptions { primitive: dd, compact: false, skip_empty: true, ..TileOptions::default() }),
        ("+Reorder", Reordering::Pbr, TileOptions { primitive: dd, compact: false, skip_empty: true, ..TileOptions::default() }),
        ("+Adaptive", Reordering::Pbr, TileOptions { primitive: PrimitiveChoice::Adaptive, compact: false, skip_empty: true, ..TileOptions::default() }),
        ("+Compact", Reordering::Pbr, TileOptions::default()),
    ]
}

fn data_dir() -> Option<PathBuf> {
    std::env::var_os("OCTILE_DATA").map(PathBuf::from).into_iter().chain(["data", "../data"].map(PathBuf::from)).find(|p| p.is_dir())
}

fn fragment(g: &Graph, k: usize) -> Graph {
    let k = k.min(g.n_nodes());
    let mut f = Graph::with_names(k, g.node_feature_names().to_vec(), g.edge_feature_names().to_vec());
    for i in 0..k {
        f.set_node_features(i, g.node_features(i)).unwrap();
    }
    for (e, edge) in g.edges().iter().enumerate() {
        if (edge.i as usize) < k && (edge.j as usize) < k {
            f.add_edge(edge.i as usize, edge.j as usize, edge.weight, g.edge_features(e)).unwrap();
        }
    }
    f
}

fn toml_kernel(text: &str) -> MgkConfig {
    MgkConfig::from_toml(text).unwrap()
}

/// The datasets; `small` for the CPU.
fn datasets(small: bool) -> Vec<Dataset> {
    let plain = |name: &str, graphs: Vec<Graph>, kernel: MgkConfig| Dataset { name: name.into(), graphs, kernel, dense_pair: None };
    let mut out = vec![
        plain("NWS", nws_set(if small { 2 } else { 32 }, 7), synthetic_kernel(0.05)),
        plain("BA", ba_set(if small { 2 } else { 24 }, 7), synthetic_kernel(0.05)),
    ];
    let Some(dir) = data_dir() else {
        eprintln!("SKIP ablation ChEMBL, proteins: no data/ folder (run scripts/fetch-datasets, or set OCTILE_DATA)");
        return out;
    };
    let molecules = include_str!("../../examples/molecules.toml");
    match octile::io::read(&dir.join("chembl_drugs.csv"), None, true) {
        Ok(l) => out.push(plain("ChEMBL", l.graphs.into_iter().take(if small { 12 } else { 200 }).collect(), toml_kernel(molecules))),
        Err(e) => eprintln!("SKIP ablation ChEMBL: {e}"),
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("proteins"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.to_string_lossy().ends_with(".pdb.gz")).collect())
        .unwrap_or_default();
    files.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(u64::MAX));
    let prot: Vec<Graph> = files
        .iter()
        .take(if small { 2 } else { PROTEINS })
        .filter_map(|p| octile::io::read(p, None, false).map_err(|e| eprintln!("SKIP protein {}: {e}", p.display())).ok())
        .flat_map(|l| l.graphs)
        .map(|g| if small { fragment(&g, FRAGMENT_CPU) } else { g })
        .collect();
    if prot.is_empty() {
        eprintln!("SKIP ablation proteins: no readable data/proteins/*.pdb.gz");
    } else {
        let proteins = toml_kernel(include_str!("../../examples/proteins.toml"));
        let (lo, hi) = (prot.iter().map(|g| g.n_nodes()).min().unwrap(), prot.iter().map(|g| g.n_nodes()).max().unwrap());
        if small {
            out.push(plain(&format!("Proteins ({} × {FRAGMENT_CPU}-atom fragments)", prot.len()), prot, proteins));
        } else {
            let pair = (0, prot.len() - 1);
            out.push(Dataset {
                name: format!("Proteins ({} whole chains, {lo}–{hi} atoms)", prot.len()),
                graphs: prot,
                kernel: proteins,
                dense_pair: Some(pair),
            });
        }
    }
    out
}

fn main() {
    let mut c = Criterion::default().sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2)).configure_from_args();
    let gpu = octile::gpu::device().is_ok();
    if !gpu {
        eprintln!("SKIP GPU ablation: {} — running the ablation on the CPU (f64, small sets)", octile::gpu::device().unwrap_err());
    }
    let (backend, precision) = if gpu { (Backend::Cuda, Precision::F32) } else { (Backend::Cpu, Precision::F64) };
    let mut sets = datasets(!gpu);
    if let Ok(only) = std::env::var("OCTILE_ABLATION_SETS") {
        // e.g. OCTILE_ABLATION_SETS=ChEMBL,NWS: a subset (names are matched by prefix)
        sets.retain(|d| only.split(',').any(|o| !o.is_empty() && d.name.starts_with(o)));
    }
    let mut pairs_of = BTreeMap::new();
    let mut device = String::new();
    let mut maps = BTreeMap::new();
    for set in &sets {
        let (name, graphs, base) = (&set.name, &set.graphs, &set.kernel);
        let mut group = c.benchmark_group(format!("ablation/{name}"));
        let pairs = graphs.len() * (graphs.len() + 1) / 2;
        pairs_of.insert(name.clone(), pairs);
        group.throughput(Throughput::Elements(pairs as u64));
        if set.dense_pair.is_some() {
            group.sampling_mode(SamplingMode::Flat); // seconds per sample
        }
        let kernel_of = |k: usize| {
            let (_, reorder, tiles) = steps().swap_remove(k);
            MarginalizedGraphKernel::new(MgkConfig { backend, precision, reorder, tiles, ..base.clone() }).unwrap()
        };
        let mut dense_over_sparse = None;
        for (k, (step, _, _)) in steps().into_iter().enumerate() {
            let kernel = kernel_of(k);
            device = kernel.device_name();
            if k == 3 {
                maps.insert(name.clone(), kernel.primitive_map().unwrap().origin.to_string());
            }
            let key = (name.clone(), k);
            if let (0, Some(pair)) = (k, set.dense_pair) {
                // projected Dense: Dense and Sparse once each on the same pair
                let time = |kern: &MarginalizedGraphKernel| {
                    let t = Instant::now();
                    std::hint::black_box(kern.pairs(graphs, &[pair]).expect("ablation solve"));
                    t.elapsed().as_secs_f64()
                };
                let (d, s) = (time(&kernel), time(&kernel_of(1)));
                eprintln!("ablation/{name}: pair {pair:?}: Dense {d:.3} s, Sparse {s:.3} s (one run each): Dense = Sparse × {:.2}", d / s);
                dense_over_sparse = Some((pair, d, s));
                continue;
            }
            group.bench_with_input(BenchmarkId::new(format!("{}-{step}", k + 1), format!("{pairs}pairs")), graphs, |b, g| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let t = Instant::now();
                        let r = kernel.gram(g).expect("ablation solve");
                        let d = t.elapsed();
                        std::hint::black_box(r);
                        TIMES.lock().unwrap().entry(key.clone()).or_default().push(d.as_secs_f64());
                        total += d;
                    }
                    total
                })
            });
        }
        if let Some((pair, d, s)) = dense_over_sparse {
            let mut t = TIMES.lock().unwrap();
            let sparse = median(&t[&(name.clone(), 1)]);
            t.insert((name.clone(), 0), vec![sparse * d / s]);
            PROJECTED.lock().unwrap().insert(
                name.clone(),
                format!("{name}: Dense projected = Sparse (median, whole set) × Dense / Sparse on pair {pair:?} = × {d:.3} s / {s:.3} s (one run each)."),
            );
        }
        group.finish();
        // write the tables after every dataset: a run cut short still leaves what it measured
        report(&sets[..=pairs_of.len() - 1], &pairs_of, &device, &maps, backend, precision, false);
    }
    report(&sets, &pairs_of, &device, &maps, backend, precision, true);
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn report(
    sets: &[Dataset],
    pairs_of: &BTreeMap<String, usize>,
    device: &str,
    maps: &BTreeMap<String, String>,
    backend: Backend,
    precision: Precision,
    last: bool,
) {
    let times = TIMES.lock().unwrap();
    let names: Vec<&str> = steps().iter().map(|s| s.0).collect();
    let mut md = format!(
        "Ablation on {device} ({backend:?}, {precision:?}); median of the criterion samples per step; ratio = speed-up over the Dense step of the same dataset, same run.\n"
    );
    for line in PROJECTED.lock().unwrap().values() {
        md += &format!("{line}\n");
    }
    md += "\n";
    md += "| dataset | pairs | step | median s | pairs/s | vs Dense | vs previous |\n|---|---:|---|---:|---:|---:|---:|\n";
    let mut json = Vec::new();
    for set in sets {
        let name = &set.name;
        let pairs = pairs_of[name];
        let mut first = None;
        let mut prev: Option<f64> = None;
        for (k, step) in names.iter().enumerate() {
            let Some(v) = times.get(&(name.clone(), k)) else { continue };
            let m = median(v);
            let base = *first.get_or_insert(m);
            md += &format!(
                "| {name} | {pairs} | {step} | {m:.4} | {:.0} | {:.2}× | {} |\n",
                pairs as f64 / m,
                base / m,
                prev.map(|p| format!("{:.2}×", p / m)).unwrap_or_else(|| "—".into())
            );
            json.push(serde_json::json!({"dataset": name, "pairs": pairs, "step": step, "median_s": m, "pairs_per_s": pairs as f64 / m, "speedup_vs_dense": base / m, "samples": v.len()}));
            prev = Some(m);
        }
    }
    md += "\nPrimitive maps used by +Adaptive / +Compact:\n";
    for (name, m) in maps {
        md += &format!("- {name}: {m}\n");
    }
    md += "\nNon-empty octiles (sum over the dataset) per node order, and mean nonzeros per octile:\n\n| dataset | graphs | nonzeros | natural | RCM | PBR | nnz/octile (PBR) |\n|---|---:|---:|---:|---:|---:|---:|\n";
    for set in sets {
        let (name, graphs) = (&set.name, &set.graphs);
        let count = |r: Reordering| graphs.iter().map(|g| count_octiles(g, &r.order(g))).sum::<usize>();
        let nnz: usize = graphs.iter().map(|g| g.edges().iter().map(|e| if e.i == e.j { 1 } else { 2 }).sum::<usize>()).sum();
        let (nat, rcm, pbr) = (count(Reordering::Natural), count(Reordering::Rcm), count(Reordering::Pbr));
        md += &format!("| {name} | {} | {nnz} | {nat} | {rcm} | {pbr} | {:.1} |\n", graphs.len(), nnz as f64 / pbr.max(1) as f64);
    }
    if last {
        println!("\n{md}");
    }
    let dir = std::env::var_os("OCTILE_BENCH_OUT").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    let _ = std::fs::create_dir_all(&dir);
    for (file, text) in [("ablation.md", md), ("ablation.json", serde_json::to_string_pretty(&json).unwrap())] {
        let p: &Path = &dir.join(file);
        match std::fs::write(p, text) {
            Ok(()) if last => println!("wrote {}", p.display()),
            Ok(()) => {}
            Err(e) => eprintln!("could not write {}: {e}", p.display()),
        }
    }
}

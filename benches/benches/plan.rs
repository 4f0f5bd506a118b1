//! The resident solver's host-side planning (`octile::mgk::gpu::resident::plan`), which runs on
//! every GPU Gram call (and on every tile of a tiled one) before the first launch: a ChEMBL-sized
//! call (1,935 molecule-like graphs, 1.87 M pairs) packed (octiles for the tile solver, and the
//! resident layout) and planned, for plain and gradient
//! launches, on the host alone (no GPU: H100-like limits and occupancy stand in for the driver's).
//! Group `tile`: one GPU tile's host work before its first launch (its pairs, resident set and plan).
//! Group `cold`: the whole set as one tile's pairs, resident set and plan, each run after the
//! allocator's free memory went back to the system (first-touch page faults, as in a fresh process).
//! `OCTILE_BENCH_GRAPHS` sets the number of graphs; `OCTILE_BENCH_SET=NAME.jsonl` (with its kernel
//! in `NAME.toml` beside it, as the peer kits' sets) takes a set from a file instead.
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use octile::generators::molecule_set;
use octile::gram::Tile;
use octile::gram::tiles::TilePairs;
use octile::mgk::gpu::options::ResidentOptions;
use octile::mgk::gpu::resident::{PlanDevice, pack_resident, plan_with};
use octile::mgk::pack::{PackOptions, pack};
use octile::{MgkConfig, Precision};
use octile_types::EdgeShape;

fn bench(c: &mut Criterion) {
    let n: usize = std::env::var("OCTILE_BENCH_GRAPHS").ok().and_then(|v| v.parse().ok()).unwrap_or(1935);
    let file = std::env::var("OCTILE_BENCH_SET").ok();
    let (cfg, graphs) = match &file {
        Some(f) => {
            let toml = std::fs::read_to_string(f.replace(".jsonl", ".toml")).expect("the set's NAME.toml beside it");
            let graphs = octile::io::read(std::path::Path::new(f), None, false).expect("the set reads").graphs;
            (MgkConfig::from_toml(&toml).expect("its kernel parses"), graphs)
        }
        None => (MgkConfig::from_toml(include_str!("../../examples/molecules.toml")).expect("examples/molecules.toml parses"), molecule_set(n, 7)),
    };
    let resolved = cfg.resolve().expect("the kernel resolves");
    let n = graphs.len();
    let shape = EdgeShape::of(&resolved.edge_spec);
    let pairs: Vec<(u32, u32)> = (0..n as u32).flat_map(|i| (i..n as u32).map(move |j| (i, j))).collect();
    let dev = PlanDevice { max_smem_bytes: 227 * 1024, sm_count: 132 };
    let opts = ResidentOptions::default();
    let mut g = c.benchmark_group("plan");
    g.sample_size(10).throughput(Throughput::Elements(pairs.len() as u64));
    g.bench_function("pack", |b| b.iter(|| pack::<f64>(&graphs, &PackOptions::new(&resolved, cfg.q, cfg.p)).expect("packs")));
    let opt = PackOptions::new(&resolved, cfg.q, cfg.p);
    g.bench_function("pack-resident", |b| b.iter(|| pack_resident(&graphs, &opt, Precision::F32).expect("packs")));
    let set = pack_resident(&graphs, &opt, Precision::F32).expect("packs");
    for gradient in [false, true] {
        g.bench_function(if gradient { "plan-gradient" } else { "plan" }, |b| b.iter(|| plan_with(&set, &pairs, shape, dev, &opts, |_, _| Some(2), gradient)));
    }
    g.finish();
    // one GPU tile's host work before its first launch, as `gram_tile` does it (the tile's pairs
    // and graphs, its resident set, its plan): the first of the upper tiles of a quarter of the set
    // against its last quarter (ChEMBL: rows 0..484 × columns 1451..1935, 234 k pairs)
    let q = n / 4;
    let tile = Tile { rows: 0..q, cols: n - q..n };
    let mut t = c.benchmark_group("tile");
    t.sample_size(10).throughput(Throughput::Elements((q * q) as u64));
    t.bench_function("pairs", |b| b.iter(|| TilePairs::of(&graphs, None, &tile).expect("pairs")));
    let tp = TilePairs::of(&graphs, None, &tile).expect("pairs");
    t.bench_function("pack-resident", |b| b.iter(|| pack_resident(&tp.graphs, &opt, Precision::F32).expect("packs")));
    let tset = pack_resident(&tp.graphs, &opt, Precision::F32).expect("packs");
    t.bench_function("plan", |b| b.iter(|| plan_with(&tset, &tp.pairs, shape, dev, &opts, |_, _| Some(2), false)));
    t.finish();
    // a one-tile call's host work as a fresh process meets it: the allocator's free memory handed
    // back to the system before each run (`malloc_trim`), so every buffer is touched for the first
    // time (page faults: ~2 µs a page on the CI machine) as in a CLI call, not reused as in a loop
    let whole = Tile { rows: 0..n, cols: 0..n };
    let mut cold = c.benchmark_group("cold");
    cold.sample_size(20).throughput(Throughput::Elements(pairs.len() as u64));
    cold.bench_function("pairs", |b| b.iter_custom(|iters| trimmed(iters, || drop(TilePairs::of(&graphs, None, &whole).expect("pairs")))));
    let wp = TilePairs::of(&graphs, None, &whole).expect("pairs");
    cold.bench_function("pack-resident", |b| b.iter_custom(|iters| trimmed(iters, || drop(pack_resident(&wp.graphs, &opt, Precision::F32).expect("packs")))));
    let wset = pack_resident(&wp.graphs, &opt, Precision::F32).expect("packs");
    cold.bench_function("plan", |b| b.iter_custom(|iters| trimmed(iters, || drop(plan_with(&wset, &wp.pairs, shape, dev, &opts, |_, _| Some(2), false)))));
    cold.finish();
}

/// `iters` runs of `f`, timed, each after the allocator's free memory went back to the system
/// (`malloc_trim`, glibc): every buffer `f` makes is touched for the first time, as in a fresh
/// process.
fn trimmed(iters: u64, f: impl Fn()) -> std::time::Duration {
    let mut t = std::time::Duration::ZERO;
    for _ in 0..iters {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only hands the allocator's free memory back to the system.
        unsafe {
            libc::malloc_trim(0);
        }
        let s = std::time::Instant::now();
        f();
        t += s.elapsed();
    }
    t
}

criterion_group!(benches, bench);
criterion_main!(benches);

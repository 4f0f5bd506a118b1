//! The resident solver's host-side planning (`octile::mgk::gpu::resident::plan`), which runs on
//! every GPU Gram call (and on every tile of a tiled one) before the first launch: a ChEMBL-sized
//! call (1,935 molecule-like graphs, 1.87 M pairs) repacked and planned, for plain and gradient
//! launches, on the host alone (no GPU: H100-like limits and occupancy stand in for the driver's).
//! `OCTILE_BENCH_GRAPHS` sets the number of graphs.
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use octile::generators::molecule_set;
use octile::mgk::gpu::options::ResidentOptions;
use octile::mgk::gpu::resident::{PlanDevice, pack_resident, plan_with};
use octile::mgk::pack::{PackOptions, pack};
use octile::{MgkConfig, Precision};
use octile_types::EdgeShape;

fn bench(c: &mut Criterion) {
    let n: usize = std::env::var("OCTILE_BENCH_GRAPHS").ok().and_then(|v| v.parse().ok()).unwrap_or(1935);
    let cfg = MgkConfig::from_toml(include_str!("../../examples/molecules.toml")).expect("examples/molecules.toml parses");
    let resolved = cfg.resolve().expect("the kernel resolves");
    let graphs = molecule_set(n, 7);
    let set64 = pack::<f64>(&graphs, &PackOptions::new(&resolved, cfg.q, cfg.p)).expect("packs");
    let pairs: Vec<(u32, u32)> = (0..n as u32).flat_map(|i| (i..n as u32).map(move |j| (i, j))).collect();
    let dev = PlanDevice { max_smem_bytes: 227 * 1024, sm_count: 132 };
    let opts = ResidentOptions::default();
    let mut g = c.benchmark_group("plan");
    g.sample_size(10).throughput(Throughput::Elements(pairs.len() as u64));
    g.bench_function("pack", |b| b.iter(|| pack::<f64>(&graphs, &PackOptions::new(&resolved, cfg.q, cfg.p)).expect("packs")));
    g.bench_function("repack", |b| b.iter(|| pack_resident(&set64, Precision::F32).expect("repacks")));
    let set = pack_resident(&set64, Precision::F32).expect("repacks");
    for gradient in [false, true] {
        g.bench_function(if gradient { "plan-gradient" } else { "plan" }, |b| {
            b.iter(|| plan_with(&set, &pairs, EdgeShape::KroneckerDelta, dev, &opts, |_, _| Some(2), gradient))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! The CPU backend per regime (issue 34): pairs/s of the f64 solver in its two forms — the product
//! form (`solver = "auto"`, the default: each pair's A×⊙K× built once, streamed by every CG
//! iteration; `host/src/mgk/cpu/product.rs`) and the tile path (`solver = "tiles"`: κe evaluated
//! on the fly from the octiles in every iteration) — on
//!
//! | regime        | graphs                                    | kernel                                   |
//! |---------------|-------------------------------------------|------------------------------------------|
//! | nws           | the paper's NWS (96 nodes, k=3, p=0.1)    | KroneckerDelta(0.5) ⊗ SquareExponential, q = 0.05 |
//! | nws-small-q   | the same                                  | q = 0.0005 (more iterations)             |
//! | ba            | the paper's BA (96 nodes, m=6)            | as nws                                   |
//! | molecules     | generated molecule-like graphs (6–60 atoms) | examples/molecules.toml (labels only)  |
//!
//! Criterion reports elements/s = pairs/s; the whole Gram call is timed (all threads: rayon over
//! pairs; `RAYON_NUM_THREADS=1` for one core). `OCTILE_BENCH_GRAPHS` multiplies the set sizes.
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use octile::GraphKernel;
use octile::generators::{ba_set, molecule_set, nws_set};
use octile::mgk::config::synthetic_kernel;
use octile::{Backend, Graph, MarginalizedGraphKernel, MgkConfig, Precision};

fn regimes(scale: usize) -> Vec<(&'static str, Vec<Graph>, MgkConfig)> {
    let molecules = MgkConfig::from_toml(include_str!("../../examples/molecules.toml")).expect("examples/molecules.toml parses");
    vec![
        ("nws", nws_set(24 * scale, 7), synthetic_kernel(0.05)),
        ("nws-small-q", nws_set(16 * scale, 7), synthetic_kernel(0.0005)),
        ("ba", ba_set(12 * scale, 7), synthetic_kernel(0.05)),
        ("molecules", molecule_set(60 * scale, 7), molecules),
    ]
}

fn bench(c: &mut Criterion) {
    let scale: usize = std::env::var("OCTILE_BENCH_GRAPHS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    for (name, graphs, base) in regimes(scale) {
        let mut group = c.benchmark_group(format!("cpu-{name}"));
        group.sample_size(10);
        let n = graphs.len();
        group.throughput(Throughput::Elements((n * (n + 1) / 2) as u64));
        for (form, product) in [("product", true), ("tiles", false)] {
            let mut cfg = base.clone();
            cfg.backend = Backend::Cpu;
            cfg.precision = Precision::F64;
            cfg.solver.resident = product;
            let k = MarginalizedGraphKernel::new(cfg).expect("the regime's kernel is valid");
            group.bench_with_input(BenchmarkId::new(form, format!("{n}graphs")), &graphs, |b, g| b.iter(|| k.gram(g).expect("the Gram converges")));
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

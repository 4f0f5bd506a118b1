//! Pairs/s of the MGK solver on the paper's synthetic sets (NWS: 96 nodes, k=3, p=0.1; BA: 96
//! nodes, m=6; κv = KroneckerDelta(0.5), κe = SquareExponential(1.0), q = 0.05), CPU and GPU.
//! Criterion reports throughput in elements/s = pairs/s; each GPU sample ends with a stream
//! synchronize (the Gram call returns only after the statuses are copied back).
//! The CPU f64 group is the in-run baseline; `OCTILE_BENCH_GRAPHS` overrides the set sizes.
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use octile::GraphKernel;
use octile::generators::{ba_set, nws_set};
use octile::mgk::config::synthetic_kernel;
use octile::{Backend, MarginalizedGraphKernel, Precision};

fn bench(c: &mut Criterion) {
    let scale: usize = std::env::var("OCTILE_BENCH_GRAPHS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let gpu = octile::gpu::device().is_ok();
    if !gpu {
        eprintln!("SKIP GPU benches: {}", octile::gpu::device().unwrap_err());
    }
    for (name, make, gpu_graphs, cpu_graphs) in
        [("nws", nws_set as fn(usize, u64) -> Vec<octile::Graph>, 160, 16), ("ba", ba_set as fn(usize, u64) -> Vec<octile::Graph>, 48, 6)]
    {
        let mut group = c.benchmark_group(format!("mgk-{name}"));
        group.sample_size(10);
        let mut targets = vec![("cpu-f64", Backend::Cpu, Precision::F64, cpu_graphs * scale)];
        if gpu {
            targets.push(("cuda-f32", Backend::Cuda, Precision::F32, gpu_graphs * scale));
            targets.push(("cuda-f64", Backend::Cuda, Precision::F64, gpu_graphs * scale));
        }
        for (label, backend, precision, n) in targets {
            let graphs = make(n, 7);
            let mut cfg = synthetic_kernel(0.05);
            cfg.backend = backend;
            cfg.precision = precision;
            let k = MarginalizedGraphKernel::new(cfg).unwrap();
            let pairs = n * (n + 1) / 2;
            group.throughput(Throughput::Elements(pairs as u64));
            group.bench_with_input(BenchmarkId::new(label, format!("{n}graphs")), &graphs, |b, g| b.iter(|| k.gram(g).unwrap()));
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

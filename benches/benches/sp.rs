//! The shortest-path kernel's criterion benchmark: K(X) on the slides' synthetic sizes
//! (`../shared/papers/shortest-path-kernel-gpu-slides.txt`: G(n, 0.4), 4 node labels) — the 60-node
//! set and the M3 mix (half 10-node, half 60-node graphs) — in the histogram form (Kronecker
//! deltas of h = 0: GraKeL's kernel) and the general form (soft node delta, Brownian-bridge
//! lengths), on the CPU and, when one is usable, the GPU (else an explicit SKIP line).
//! Throughput = pairs/s of the upper triangle; every GPU sample ends after the matrix is copied
//! back. The side-by-side with GraKeL is `benches/peers/grakel/sp_compare.py`.
//! `OCTILE_BENCH_GRAPHS` scales the set sizes.
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use octile::mgk::config::{BaseKernelConfig, FeatureKernel};
use octile::sp::config::{LengthKernelConfig, SpConfig};
use octile::{Backend, Graph, GraphKernel, ShortestPathKernel};

/// A seeded xorshift: the same graphs on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `count` G(n, 0.4) graphs with 4 labels; a graph has 60 nodes with probability `big`, else 10.
fn set(count: usize, big: f64, seed: u64) -> Vec<Graph> {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    (0..count)
        .map(|_| {
            let n = if r.next() < big { 60 } else { 10 };
            let mut g = Graph::new(n, &["label"], &[]);
            for i in 0..n {
                g.set_node_features(i, &[(r.next() * 4.0).floor()]).unwrap();
            }
            for i in 0..n {
                for j in i + 1..n {
                    if r.next() < 0.4 {
                        g.add_edge(i, j, 1.0, &[]).unwrap();
                    }
                }
            }
            g
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let scale: usize = std::env::var("OCTILE_BENCH_GRAPHS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let mut backends = vec![("cpu", Backend::Cpu)];
    match octile::gpu::device() {
        Ok(_) => backends.push(("cuda", Backend::Cuda)),
        Err(e) => eprintln!("SKIP shortest-path GPU benches: {e}"),
    }
    let label = |h: f64| vec![FeatureKernel { feature: "label".into(), kernel: BaseKernelConfig::KroneckerDelta { h }, weight: 1.0 }];
    let forms = [
        ("histogram", SpConfig { node: label(0.0), ..SpConfig::default() }, 1.0),
        ("general", SpConfig { node: label(0.5), path_length: LengthKernelConfig::BrownianBridge { c: 3.0 }, ..SpConfig::default() }, 0.05),
    ];
    for (set_name, big) in [("n60", 1.0), ("m3", 0.5)] {
        let mut group = c.benchmark_group(format!("sp-{set_name}"));
        group.sample_size(10);
        for (form, cfg, share) in &forms {
            for (name, backend) in &backends {
                // the general form sums all pairs of paths: a twentieth of the graphs
                let n = ((if *backend == Backend::Cpu { 200.0 } else { 500.0 }) * share * scale as f64) as usize;
                let graphs = set(n.max(2), big, 7);
                let k = ShortestPathKernel::new(SpConfig { backend: *backend, ..cfg.clone() }).unwrap();
                group.throughput(Throughput::Elements((n * (n + 1) / 2) as u64));
                group.bench_with_input(BenchmarkId::new(format!("{form}-{name}"), format!("{n}graphs")), &graphs, |b, g| b.iter(|| k.gram(g).unwrap()));
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

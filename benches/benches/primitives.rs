//! Microbenchmark of the four tile-pair primitives (criterion): time per tile pair at a few
//! (nnz_A, nnz_B) cells — sparse/sparse, sparse/dense, dense/dense — for the unlabeled and the
//! labeled edge kernel, on the CPU (one thread, f64) and, when present, the GPU (f32, the
//! `tile_bench_f32` kernel, one warp per pair over every resident warp slot; every sample ends with
//! an event synchronize and the copy-back). D and R are also timed with the tiling-blocking walks
//! (`-tb`; `dense_walk = "blocked"`). `octile tune` runs the same measurement (shared walks) over the
//! whole 17 × 17 grid and writes the profile; this bench is for tracking the primitives over time.
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use octile::mgk::config::DenseWalk;
use octile::mgk::tune::tile_pairs::{TilePairs, cpu_products, labeled_edge_kernel, random_pairs};
use octile_types::{KernelSpec, Primitive};
use std::time::Duration;

const CELLS: [(u32, u32); 4] = [(6, 6), (6, 40), (24, 24), (64, 64)];

/// The four primitives with shared-tiling walks, then D and R with tiling-blocking ones; the id
/// suffix names the walk.
fn cases() -> impl Iterator<Item = (Primitive, DenseWalk, &'static str)> {
    Primitive::ALL
        .into_iter()
        .map(|p| (p, DenseWalk::SharedTiling, ""))
        .chain([(Primitive::DenseDense, DenseWalk::TilingBlocking, "-tb"), (Primitive::SparseDense, DenseWalk::TilingBlocking, "-tb")])
}

fn bench(c: &mut Criterion) {
    let gpu = octile::gpu::device().ok();
    if gpu.is_none() {
        eprintln!("SKIP GPU primitive benches: {}", octile::gpu::device().unwrap_err());
    }
    for (kind, labeled, edge) in [("unlabeled", false, KernelSpec::unit()), ("labeled", true, labeled_edge_kernel())] {
        let mut group = c.benchmark_group(format!("primitives-{kind}"));
        // 96 benchmarks: short windows keep the whole bench to a few minutes on a GPU machine
        group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
        for (a, b) in CELLS {
            let pairs = random_pairs(a, b, 16, labeled, 5);
            let p64: TilePairs<f64> = pairs.to::<f64>();
            group.throughput(Throughput::Elements(p64.len() as u64));
            for (prim, walk, tag) in cases() {
                group.bench_with_input(BenchmarkId::new(format!("cpu-f64-{}{tag}", prim.letter()), format!("{a}x{b}")), &p64, |bch, p| {
                    bch.iter(|| cpu_products(p, &edge, prim, walk, 1))
                });
            }
            if let Some(dev) = &gpu {
                use octile::mgk::gpu::launch::{SolverEntry, solver_blocks_per_sm};
                use octile::mgk::tune::tile_bench::{tile_bench, upload_tile_pairs};
                let blocks = dev.sm_count * solver_blocks_per_sm::<f32>(dev, SolverEntry::Adaptive);
                let n = (blocks * 4) as usize;
                let up = upload_tile_pairs(dev, &pairs.to::<f32>().cycled(n)).unwrap();
                let reps = 32;
                group.throughput(Throughput::Elements((n * reps as usize) as u64));
                for (prim, walk, tag) in cases() {
                    group.bench_function(BenchmarkId::new(format!("cuda-f32-{}{tag}", prim.letter()), format!("{a}x{b}")), |bch| {
                        bch.iter(|| tile_bench(dev, &up, &edge, prim, walk, reps, Some(blocks)).unwrap())
                    });
                }
                group.throughput(Throughput::Elements(p64.len() as u64));
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

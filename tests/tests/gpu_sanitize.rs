//! A small GPU workload for compute-sanitizer (memcheck, racecheck): a few labeled graphs of
//! 1–21 nodes, both precisions, one block and a team of blocks per pair, with the default
//! configuration and with the tiling-blocking dense walks on every tile pair (the blocked entries),
//! and the resident solver's entries, its grid entries on two graphs of 110 and 120 nodes,
//! checked against the CPU.
use octile::GraphKernel;
use octile::mgk::config::{DenseWalk, PrimitiveChoice, synthetic_kernel};
use octile::{Backend, MarginalizedGraphKernel, Precision};
use octile_tests::{Shape, check_rel, gpu_or_skip, random_graph};
use octile_types::Primitive;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[test]
fn gpu_small_gram_matches_cpu() {
    if !gpu_or_skip("gpu_small_gram_matches_cpu") {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let graphs: Vec<_> = [1usize, 7, 13, 21].iter().map(|&n| synthetic_graph(&mut rng, n, 0.3)).collect();
    let mut cfg = synthetic_kernel(0.05);
    cfg.backend = Backend::Cpu;
    let cpu = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(&graphs).unwrap();
    let mut errors = Vec::new();
    // one block per pair, then teams of 3 blocks per pair (the cross-block barrier and reductions);
    // default tiles, then dense×dense with the tiling-blocking walks for every tile pair
    let modes = [
        ("default", DenseWalk::SharedTiling, PrimitiveChoice::Adaptive),
        ("tiling-blocking D", DenseWalk::TilingBlocking, PrimitiveChoice::Fixed(Primitive::DenseDense)),
    ];
    for (mode, walk, primitive) in modes {
        for blocks_per_pair in [1u32, 3] {
            for p in [Precision::F32, Precision::F64] {
                cfg.backend = Backend::Cuda;
                cfg.precision = p;
                cfg.tiles.blocks_per_pair = blocks_per_pair;
                cfg.tiles.dense_walk = walk;
                cfg.tiles.primitive = primitive;
                cfg.solver.resident = false; // the tile solver's entries (the resident one below)
                let gpu = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(&graphs).unwrap();
                if walk == DenseWalk::TilingBlocking {
                    assert!(
                        gpu.details.to_string().contains("tiling-blocking)") || gpu.details.to_string().contains("adaptive, tiling-blocking"),
                        "{mode}: {}",
                        gpu.details
                    );
                }
                for k in 0..gpu.values.len() {
                    let tol = if p == Precision::F32 { 1e-6 } else { 1e-9 };
                    errors.extend(check_rel(&format!("{mode} {p:?} blocks_per_pair {blocks_per_pair} entry {k}"), gpu.values[k], cpu.values[k], tol).err());
                }
            }
        }
    }
    // the resident solver's entries (warp and block teams), f32 and f64
    cfg.solver.resident = true;
    for (p, tol) in [(Precision::F32, 1e-5), (Precision::F64, 1e-9)] {
        cfg.precision = p;
        let gpu = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(&graphs).unwrap();
        assert!(gpu.details.to_string().contains("resident solver"), "{p:?}: {}", gpu.details);
        for k in 0..gpu.values.len() {
            errors.extend(check_rel(&format!("resident {p:?} entry {k}"), gpu.values[k], cpu.values[k], tol).err());
        }
    }
    // pairs past shared memory (110 × 120 nodes: 13,200 unknowns, 264 KB of f32 vectors): the
    // resident solver's grid entries, teams of several blocks with the vectors in global memory
    let mut large = graphs.clone();
    large.extend([110usize, 120].iter().map(|&n| synthetic_graph(&mut rng, n, 0.05)));
    cfg.backend = Backend::Cpu;
    cfg.precision = Precision::F64;
    let cpu = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(&large).unwrap();
    cfg.backend = Backend::Cuda;
    for (p, tol) in [(Precision::F32, 1e-5), (Precision::F64, 1e-9)] {
        cfg.precision = p;
        let gpu = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(&large).unwrap();
        assert!(gpu.details.to_string().contains("blocks in global memory"), "{p:?}: {}", gpu.details);
        for k in 0..gpu.values.len() {
            errors.extend(check_rel(&format!("resident grid {p:?} entry {k}"), gpu.values[k], cpu.values[k], tol).err());
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// A random weighted graph with self-loops, renamed to the synthetic kernel's features (`label`,
/// `length`).
fn synthetic_graph(rng: &mut ChaCha8Rng, n: usize, density: f64) -> octile::Graph {
    let g = random_graph(rng, Shape { n, density, self_loops: 0.2, disconnected: false, weighted: true });
    let mut h = octile::Graph::new(n, &["label"], &["length"]);
    for i in 0..n {
        h.set_node_features(i, &[g.node_features(i)[0]]).unwrap();
    }
    for (k, e) in g.edges().iter().enumerate() {
        h.add_edge(e.i as usize, e.j as usize, e.weight, &[g.edge_features(k)[1]]).unwrap();
    }
    h
}

//! A tiny scratch budget forces many GPU batches; every pair must still be written exactly once
//! and agree with the CPU. (Own test binary: it sets OCTILE_GPU_SCRATCH_BYTES for its process.)
use octile::config::synthetic_kernel;
use octile::generators::nws_set;
use octile::{Backend, MarginalizedGraphKernel, Precision};
use octile_tests::{check_rel, gpu_or_skip};

#[test]
fn gpu_batches_under_a_small_budget_write_every_pair_once() {
    if !gpu_or_skip("gpu_batches_under_a_small_budget_write_every_pair_once") {
        return;
    }
    // 96-node pairs need 5·96·96·8 B ≈ 369 KB of f64 scratch: 1 MB holds 2 pairs per batch
    // SAFETY: set before any other thread of this process reads the environment.
    unsafe { std::env::set_var("OCTILE_GPU_SCRATCH_BYTES", "1000000") };
    let graphs = nws_set(12, 3);
    let mut cfg = synthetic_kernel(0.05);
    cfg.precision = Precision::F64;
    cfg.backend = Backend::Cuda;
    let gpu = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(&graphs).unwrap();
    cfg.backend = Backend::Cpu;
    let cpu = MarginalizedGraphKernel::new(cfg).unwrap().gram(&graphs).unwrap();
    assert_eq!(gpu.pairs_solved, 12 * 13 / 2);
    let mut errors = Vec::new();
    for i in 0..12 {
        for j in 0..12 {
            if let Err(e) = check_rel(&format!("K[{i},{j}]"), gpu.get(i, j), cpu.get(i, j), 1e-9) {
                errors.push(e);
            }
            assert!(gpu.info[i * 12 + j].iterations > 0, "pair ({i},{j}) never solved");
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

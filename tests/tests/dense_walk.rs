//! The two dense walks of tile B (`dense_walk = "shared"`, the default, and `"blocked"`, the paper's
//! tiling-blocking): the same kernel values, the run summary names the walk that ran, and a κe
//! the blocked walks cannot gather falls back to shared tiling and says so. The GPU half checks
//! that the blocked entries (`mgk_solve_blocked_*`, `mgk_solve_team_blocked_*`) are the ones launched.
use octile::GraphKernel;
use octile::generators::ba_set;
use octile::mgk::config::{BaseKernelConfig, DenseWalk, FeatureKernel, PrimitiveChoice, synthetic_kernel};
use octile::{Backend, MarginalizedGraphKernel, Precision};
use octile_tests::{check_rel, gpu_or_skip};
use octile_types::Primitive;
use octile_types::kernel_spec::Combine;

fn kernel(walk: DenseWalk, backend: Backend, precision: Precision) -> octile::MgkConfig {
    let mut cfg = synthetic_kernel(0.05);
    cfg.tiles.dense_walk = walk;
    cfg.solver.resident = false; // the tile solver's walks are under test
    // every tile pair through a walk dense in B, so the walk under test does all the work
    cfg.tiles.primitive = PrimitiveChoice::Fixed(Primitive::SparseDense);
    cfg.backend = backend;
    cfg.precision = precision;
    cfg
}

#[test]
fn cpu_blocked_walks_give_the_shared_values_and_say_so() {
    let graphs = ba_set(5, 11);
    let shared = MarginalizedGraphKernel::new(kernel(DenseWalk::SharedTiling, Backend::Cpu, Precision::F64)).unwrap().gram(&graphs).unwrap();
    let blocked = MarginalizedGraphKernel::new(kernel(DenseWalk::TilingBlocking, Backend::Cpu, Precision::F64)).unwrap().gram(&graphs).unwrap();
    assert!(shared.details.to_string().contains("dense walks (D, R): shared tiling"), "{}", shared.details);
    assert!(blocked.details.to_string().contains("dense walks (D, R): tiling-blocking, κe gathered to 1 feature(s)"), "{}", blocked.details);
    let mut errors = Vec::new();
    for (k, (b, s)) in blocked.values.iter().zip(&shared.values).enumerate() {
        errors.extend(check_rel(&format!("K[{k}] blocked vs shared"), *b, *s, 1e-12).err());
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(shared.values.iter().all(|v| *v > 0.0), "kernel values must be positive: {:?}", shared.values);
}

#[test]
fn cpu_blocked_walks_fall_back_for_a_weighted_sum_kappa_e() {
    let graphs = ba_set(3, 5);
    let mut cfg = kernel(DenseWalk::TilingBlocking, Backend::Cpu, Precision::F64);
    cfg.edge = vec![
        FeatureKernel { feature: "length".into(), kernel: BaseKernelConfig::SquareExponential { length_scale: 1.0 }, weight: 0.5 },
        FeatureKernel { feature: "length".into(), kernel: BaseKernelConfig::Constant { c: 0.5 }, weight: 0.5 },
    ];
    cfg.edge_combine = Combine::Additive;
    let fallback = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(&graphs).unwrap();
    assert!(fallback.details.to_string().contains("shared tiling (tiling-blocking asked for, but κe is not a product"), "{}", fallback.details);
    cfg.tiles.dense_walk = DenseWalk::SharedTiling;
    let shared = MarginalizedGraphKernel::new(cfg).unwrap().gram(&graphs).unwrap();
    for (k, (a, b)) in fallback.values.iter().zip(&shared.values).enumerate() {
        check_rel(&format!("K[{k}] fallback vs shared"), *a, *b, 0.0).unwrap();
    }
}

#[test]
fn gpu_blocked_entries_run_and_agree_with_the_cpu() {
    if !gpu_or_skip("gpu_blocked_entries_run_and_agree_with_the_cpu") {
        return;
    }
    let graphs = ba_set(8, 3);
    let cpu = MarginalizedGraphKernel::new(kernel(DenseWalk::SharedTiling, Backend::Cpu, Precision::F64)).unwrap().gram(&graphs).unwrap();
    let mut errors = Vec::new();
    for precision in [Precision::F64, Precision::F32] {
        // one block per pair (mgk_solve_blocked_*) and teams of 3 (mgk_solve_team_blocked_*)
        for (blocks_per_pair, entry) in
            [(1u32, "GPU solver entry: adaptive, tiling-blocking"), (3, "team of 3 blocks per pair for 36 pair(s) (adaptive, tiling-blocking)")]
        {
            let mut cfg = kernel(DenseWalk::TilingBlocking, Backend::Cuda, precision);
            cfg.tiles.blocks_per_pair = blocks_per_pair;
            let gpu = MarginalizedGraphKernel::new(cfg).unwrap().gram(&graphs).unwrap();
            assert!(gpu.details.to_string().contains(entry), "{precision:?} blocks_per_pair {blocks_per_pair}: expected «{entry}» in «{}»", gpu.details);
            let rtol = if precision == Precision::F64 { 1e-9 } else { 1e-5 };
            for (k, (g, c)) in gpu.values.iter().zip(&cpu.values).enumerate() {
                errors.extend(check_rel(&format!("{precision:?} blocks_per_pair {blocks_per_pair} K[{k}]"), *g, *c, rtol).err());
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

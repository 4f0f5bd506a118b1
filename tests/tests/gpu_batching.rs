//! A tiny scratch budget forces many GPU batches; every pair must still be written exactly once
//! and agree with the CPU — with one block per pair and with teams of blocks per pair.
use octile::GraphKernel;
use octile::generators::nws_set;
use octile::mgk::config::synthetic_kernel;
use octile::{Backend, MarginalizedGraphKernel, Precision};
use octile_tests::{check_rel, gpu_or_skip};

#[test]
fn gpu_batches_under_a_small_budget_write_every_pair_once() {
    if !gpu_or_skip("gpu_batches_under_a_small_budget_write_every_pair_once") {
        return;
    }
    let graphs = nws_set(12, 3);
    let mut cfg = synthetic_kernel(0.05);
    // 96-node pairs need 5·96·96·8 B ≈ 369 KB of f64 scratch: 1 MB holds 2 pairs per batch
    cfg.gpu.scratch_bytes = Some(1_000_000);
    cfg.precision = Precision::F64;
    // the tile solver's batches (the resident solver, which f64 pairs of this size would not fit
    // anyway, is tested in resident.rs)
    cfg.solver.resident = false;
    cfg.backend = Backend::Cpu;
    let cpu = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(&graphs).unwrap();
    let mut errors = Vec::new();
    // one block per pair; automatic (78 pairs of 96-node graphs: teams, see team_blocks_for);
    // teams of 5 blocks
    // (whether the automatic choice forms teams depends on how many blocks the GPU holds: not asserted)
    for (blocks_per_pair, team) in [(1u32, Some(false)), (0, None), (5, Some(true))] {
        cfg.backend = Backend::Cuda;
        cfg.tiles.blocks_per_pair = blocks_per_pair;
        let gpu = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(&graphs).unwrap();
        assert_eq!(gpu.pairs_solved, 12 * 13 / 2);
        if let Some(team) = team {
            assert_eq!(gpu.details.to_string().contains("team of"), team, "blocks_per_pair {blocks_per_pair}: entry reported as {}", gpu.details);
        }
        if blocks_per_pair == 5 {
            assert!(gpu.details.to_string().contains("team of 5 blocks per pair for 78 pair(s)"), "{}", gpu.details);
        }
        for i in 0..12 {
            for j in 0..12 {
                if let Err(e) = check_rel(&format!("blocks_per_pair {blocks_per_pair} K[{i},{j}]"), gpu.get(i, j), cpu.get(i, j), 1e-9) {
                    errors.push(e);
                }
                assert!(gpu.info[i * 12 + j].iterations > 0, "blocks_per_pair {blocks_per_pair}: pair ({i},{j}) never solved");
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

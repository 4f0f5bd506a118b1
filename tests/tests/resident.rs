//! The resident GPU solver (`octile::mgk::gpu::resident`) on every kind of pair it meets: warp
//! teams (small systems), block teams (up to ~10⁴ unknowns), pairs too large for shared memory
//! (teams of blocks with the vectors in global memory: the grid entries; with those off, the tile
//! solver), every κe entry (general, square exponential, Kronecker delta, and
//! the product form for a Kronecker delta on unweighted graphs), and
//! pairs it cannot converge, in f32 and in f64 — each value checked against the CPU f64 solver
//! (itself checked against the dense reference in `reference.rs`).
use octile::GraphKernel;
use octile::generators::{ba_set, barabasi_albert, labeled, newman_watts_strogatz, nws_set};
use octile::mgk::config::{BaseKernelConfig, FeatureKernel, synthetic_kernel};
use octile::{Backend, Graph, MarginalizedGraphKernel, MgkConfig, OctileError, Precision};
use octile_tests::{Shape, check_rel, gpu_or_skip, random_config, random_graph, random_shape};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The precisions every resident test runs in, with the relative tolerance of its values against
/// the CPU's f64 (f32: rtol 1e-6 on the residual; f64: rtol 1e-12, values to ~cond·1e-12).
const PRECISIONS: [(Precision, f64); 2] = [(Precision::F32, 1e-5), (Precision::F64, 1e-9)];

/// K(X, X) on the GPU in `precision` (resident solver on) against the CPU in f64 within `tol`;
/// returns the GPU's details.
fn check_set(label: &str, graphs: &[Graph], cfg: &MgkConfig, (precision, tol): (Precision, f64)) -> Result<String, String> {
    let label = &format!("{label} [{precision:?}]");
    let mut cpu = cfg.clone();
    (cpu.backend, cpu.precision) = (Backend::Cpu, Precision::F64);
    let want = MarginalizedGraphKernel::new(cpu).unwrap().gram(graphs).map_err(|e| format!("{label}: cpu: {e}"))?;
    let mut gpu = cfg.clone();
    (gpu.backend, gpu.precision, gpu.solver.resident) = (Backend::Cuda, precision, true);
    let got = MarginalizedGraphKernel::new(gpu).unwrap().gram(graphs).map_err(|e| format!("{label}: gpu: {e}"))?;
    let n = graphs.len();
    let mut errors = Vec::new();
    for i in 0..n {
        for j in 0..n {
            if let Err(e) = check_rel(&format!("{label} K[{i},{j}] (n={}, m={})", graphs[i].n_nodes(), graphs[j].n_nodes()), got.get(i, j), want.get(i, j), tol)
            {
                errors.push(e);
            }
            let info = &got.info[i * n + j];
            if !(info.converged && info.iterations > 0 || graphs[i].n_edges() == 0 && graphs[j].n_edges() == 0) {
                errors.push(format!("{label} pair ({i},{j}): converged {} after {} iterations", info.converged, info.iterations));
            }
        }
    }
    if errors.is_empty() { Ok(got.details.to_string()) } else { Err(errors.join("\n")) }
}

#[test]
fn resident_solver_matches_cpu_on_warp_block_and_oversized_pairs() {
    if !gpu_or_skip("resident_solver_matches_cpu_on_warp_block_and_oversized_pairs") {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(20_261_123);
    let mut errors = Vec::new();
    // sizes from 1 node (warp teams) through 40–96 nodes (block teams) to 140 (too large for
    // shared memory: global memory, or with the grid entries off the tile solver)
    let sizes = [1usize, 2, 5, 9, 17, 30, 40, 64, 96, 140];
    for round in 0..3 {
        let graphs: Vec<Graph> = sizes
            .iter()
            .map(|&n| {
                let s = random_shape(&mut rng, n);
                random_graph(&mut rng, s)
            })
            .collect();
        let mut cfg = random_config(&mut rng);
        cfg.q = [0.01, 0.05, 0.5][round];
        for prec in PRECISIONS {
            for grid in [true, false] {
                if !grid && round > 0 {
                    continue;
                }
                cfg.gpu.resident.grid = grid;
                let last = if grid { "blocks in global memory" } else { "tile solver for" };
                match check_set(&format!("round {round} (general κe, grid {grid})"), &graphs, &cfg, prec) {
                    Ok(d) => {
                        for want in ["resident solver (", "warp", "-thread block", last] {
                            if !d.contains(want) {
                                errors.push(format!("round {round} {:?} grid {grid}: details lack {want:?}: {d}", prec.0));
                            }
                        }
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
    }
    // q = 0.0005 makes M ill-conditioned: f32's residual floor (RESIDENT_MIN_RTOL) bounds the value
    // only to ~cond·1e-7, so a user who needs more asks for a smaller rtol, and the pairs go to the
    // tile solver's f64 refinement (in f64 the resident solver meets that rtol itself)
    let graphs: Vec<Graph> = sizes[..9]
        .iter()
        .map(|&n| {
            let s = random_shape(&mut rng, n);
            random_graph(&mut rng, s)
        })
        .collect();
    let mut cfg = random_config(&mut rng);
    (cfg.q, cfg.solver.rtol) = (0.0005, Some(1e-9));
    match check_set("q = 0.0005, rtol 1e-9", &graphs, &cfg, PRECISIONS[0]) {
        Ok(d) if !d.contains("resident solver") => {}
        Ok(d) => errors.push(format!("rtol 1e-9 ran the f32 resident solver: {d}")),
        Err(e) => errors.push(e),
    }
    match check_set("q = 0.0005, rtol 1e-9", &graphs, &cfg, (Precision::F64, 1e-6)) {
        Ok(d) if d.contains("resident solver") => {}
        Ok(d) => errors.push(format!("rtol 1e-9 in f64 did not run the resident solver: {d}")),
        Err(e) => errors.push(e),
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn resident_specialized_edge_kernels_match_cpu() {
    if !gpu_or_skip("resident_specialized_edge_kernels_match_cpu") {
        return;
    }
    let mut errors = Vec::new();
    // square exponential on length (the NWS / BA benchmark kernel): 96-node graphs in f32, block
    // teams; in f64 64-node ones (a pair of 96-node graphs needs 369 KB of f64 vectors, past shared
    // memory: those run in global memory, checked after)
    let mut sized = ChaCha8Rng::seed_from_u64(64);
    let small: Vec<Graph> = (0..7)
        .map(|k| {
            let e = if k < 4 { newman_watts_strogatz(64, 3, 0.1, &mut sized) } else { barabasi_albert(64, 6, &mut sized) };
            labeled(64, &e, &mut sized)
        })
        .collect();
    let mut large = nws_set(4, 11);
    large.extend(ba_set(3, 12));
    for prec in PRECISIONS {
        let graphs = if prec.0 == Precision::F32 { &large } else { &small };
        match check_set("nws+ba (square-exponential κe)", graphs, &synthetic_kernel(0.05), prec) {
            // BA's hubs make its rows long: those pairs walk them in pieces
            Ok(d) if d.contains("square-exponential κe entry") && d.contains("with split rows") && !d.contains("tile solver") => {}
            Ok(d) => errors.push(format!("nws+ba {:?}: unexpected entries: {d}", prec.0)),
            Err(e) => errors.push(e),
        }
    }
    // the 96-node graphs in f64: past shared memory, in global memory
    match check_set("nws+ba 96 nodes (square-exponential κe)", &large, &synthetic_kernel(0.05), PRECISIONS[1]) {
        Ok(d) if d.contains("square-exponential κe entry") && d.contains("blocks in global memory") && !d.contains("tile solver") => {}
        Ok(d) => errors.push(format!("nws+ba 96 nodes f64: unexpected entries: {d}")),
        Err(e) => errors.push(e),
    }
    // Kronecker delta on a categorical edge feature, weighted graphs with self-loops
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let graphs: Vec<Graph> = (0..12)
        .map(|k| {
            let n = rng.gen_range(1..=36usize);
            let density = rng.gen_range(0.0..0.4);
            random_graph(&mut rng, Shape { n, density, self_loops: if k % 3 == 0 { 0.5 } else { 0.0 }, disconnected: k % 4 == 1, weighted: k % 2 == 0 })
        })
        .collect();
    let mut cfg = synthetic_kernel(0.05);
    cfg.edge = vec![FeatureKernel { feature: "order".into(), kernel: BaseKernelConfig::KroneckerDelta { h: 0.4 }, weight: 1.0 }];
    for prec in PRECISIONS {
        match check_set("random (Kronecker-delta κe)", &graphs, &cfg, prec) {
            // unweighted pairs take the product form, weighted ones the on-the-fly entries
            Ok(d) if d.contains("Kronecker-delta κe entry") && d.contains("in product form") && d.contains("-thread block") => {}
            Ok(d) => errors.push(format!("kdelta {:?}: unexpected entries: {d}", prec.0)),
            Err(e) => errors.push(e),
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// Blocks per team of every grid team the details name ("team of N blocks in global memory").
fn grid_team_sizes(details: &str) -> Vec<u32> {
    details.split("team of ").skip(1).filter_map(|t| t.split(' ').next()?.parse().ok()).collect()
}

#[test]
fn resident_grid_teams_match_cpu_past_shared_memory() {
    if !gpu_or_skip("resident_grid_teams_match_cpu_past_shared_memory") {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(20_261_129);
    let mut errors = Vec::new();
    // few pairs of 150–260-node graphs (products of 2·10⁴–7·10⁴ unknowns, past shared memory):
    // teams of several blocks each; sparse like contact graphs, one without edges, one with
    // self-loops in two components, one weighted, beside a 1-node and a 12-node graph
    let shapes = [
        Shape { n: 260, density: 0.04, self_loops: 0.0, disconnected: false, weighted: false },
        Shape { n: 150, density: 0.0, self_loops: 0.0, disconnected: false, weighted: false },
        Shape { n: 200, density: 0.05, self_loops: 0.3, disconnected: true, weighted: false },
        Shape { n: 180, density: 0.08, self_loops: 0.0, disconnected: false, weighted: true },
        Shape { n: 1, density: 0.0, self_loops: 1.0, disconnected: false, weighted: false },
        Shape { n: 12, density: 0.3, self_loops: 0.0, disconnected: false, weighted: false },
    ];
    let graphs: Vec<Graph> = shapes.iter().map(|&s| random_graph(&mut rng, s)).collect();
    let mut sqexp = synthetic_kernel(0.05);
    sqexp.node = vec![FeatureKernel { feature: "label".into(), kernel: BaseKernelConfig::KroneckerDelta { h: 0.5 }, weight: 1.0 }];
    for (label, cfg) in [("square-exponential κe", sqexp), ("general κe", random_config(&mut rng))] {
        for prec in PRECISIONS {
            match check_set(&format!("grid ({label})"), &graphs, &cfg, prec) {
                Ok(d) if grid_team_sizes(&d).iter().any(|&b| b >= 2) && !d.contains("tile solver") => {}
                Ok(d) => errors.push(format!("grid {label} {:?}: expected teams of several blocks and no tile solver: {d}", prec.0)),
                Err(e) => errors.push(e),
            }
        }
    }
    // many pairs of 110–130-node graphs: a block per team
    let graphs: Vec<Graph> = (0..8)
        .map(|k| {
            let s = random_shape(&mut rng, 110 + 3 * k);
            random_graph(&mut rng, Shape { density: s.density.min(0.2), ..s })
        })
        .collect();
    let cfg = random_config(&mut rng);
    for prec in PRECISIONS {
        match check_set("grid (many pairs)", &graphs, &cfg, prec) {
            Ok(d) if !grid_team_sizes(&d).is_empty() && !d.contains("tile solver") => {}
            Ok(d) => errors.push(format!("grid many pairs {:?}: expected grid teams and no tile solver: {d}", prec.0)),
            Err(e) => errors.push(e),
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn resident_gradients_walk_hub_rows_in_pieces_and_match_cpu() {
    if !gpu_or_skip("resident_gradients_walk_hub_rows_in_pieces_and_match_cpu") {
        return;
    }
    // BA graphs of 40–56 nodes (hubs: rows longer than PIECE_NONZEROS) and an NWS one: block
    // teams, the fused solve's XMV by (row of G, piece of G′) with split rows on, whole rows off
    let mut rng = ChaCha8Rng::seed_from_u64(20_261_130);
    let mut graphs: Vec<Graph> = (0..4)
        .map(|k| {
            let n = 40 + 5 * k;
            let e = barabasi_albert(n, 3, &mut rng);
            labeled(n, &e, &mut rng)
        })
        .collect();
    let e = newman_watts_strogatz(48, 3, 0.1, &mut rng);
    graphs.push(labeled(48, &e, &mut rng));
    let mut cfg = synthetic_kernel(0.05);
    let mut cpu = cfg.clone();
    (cpu.backend, cpu.precision, cpu.solver.rtol) = (Backend::Cpu, Precision::F64, Some(1e-13));
    let want = MarginalizedGraphKernel::new(cpu).unwrap().gram_gradient(&graphs, None, false).unwrap();
    let gw = want.gradient.as_ref().unwrap();
    let np = gw.names.len();
    let mut errors = Vec::new();
    for split in [true, false] {
        (cfg.backend, cfg.precision, cfg.gpu.resident.split) = (Backend::Cuda, Precision::F32, split);
        let got = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram_gradient(&graphs, None, false).unwrap();
        let d = got.details.to_string();
        if d.contains("with split rows") != split || !d.contains("resident solver") {
            errors.push(format!("split {split}: unexpected entries: {d}"));
        }
        let gg = got.gradient.as_ref().unwrap();
        for h in 0..np {
            let scale = (0..want.values.len()).fold(0.0f64, |m, e| m.max(gw.values[e * np + h].abs()));
            for e in 0..want.values.len() {
                let (a, b) = (gg.values[e * np + h], gw.values[e * np + h]);
                if (a - b).abs() > 1e-4 * b.abs() + 1e-5 * scale {
                    errors.push(format!("split {split} ∂K[{e}]/∂{} (index {h}): actual {a:e}, expected {b:e}", gw.names[h]));
                }
            }
        }
        for e in 0..want.values.len() {
            if let Err(m) = check_rel(&format!("split {split} K[{e}]"), got.values[e], want.values[e], 1e-5) {
                errors.push(m);
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn pairs_the_resident_solver_cannot_converge_are_reported_not_lost() {
    if !gpu_or_skip("pairs_the_resident_solver_cannot_converge_are_reported_not_lost") {
        return;
    }
    // 3 iterations cannot reach rtol on 96-node NWS pairs: every pair goes on to the tile solver,
    // which cannot either, and the Gram call reports non-convergence with the partial matrix
    let graphs = nws_set(3, 4);
    for (precision, _) in PRECISIONS {
        let mut cfg = synthetic_kernel(0.05);
        (cfg.backend, cfg.precision, cfg.solver.max_iterations) = (Backend::Cuda, precision, 3);
        match MarginalizedGraphKernel::new(cfg).unwrap().gram(&graphs) {
            Err(OctileError::NoConvergence { n_failed, .. }) => assert_eq!(n_failed, 6, "{precision:?}: all 6 pairs fail"),
            other => panic!("{precision:?}: expected NoConvergence, got {other:?}"),
        }
    }
}

//! Kernel properties on every backend: symmetry, invariance under node permutation, unit
//! normalized diagonal, and non-convergence reported per pair.
use octile::GraphKernel;
use octile::generators::{ba_set, nws_set};
use octile::mgk::config::synthetic_kernel;
use octile::reorder::Reordering;
use octile::{MarginalizedGraphKernel, OctileError};
use octile_tests::{check_rel, targets};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

#[test]
fn symmetric_permutation_invariant_and_normalized() {
    let mut graphs = nws_set(3, 11);
    graphs.extend(ba_set(3, 12));
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let permuted: Vec<_> = graphs
        .iter()
        .map(|g| {
            let mut perm: Vec<usize> = (0..g.n_nodes()).collect();
            perm.shuffle(&mut rng);
            g.permuted(&perm)
        })
        .collect();
    let mut errors = Vec::new();
    for t in targets("symmetric_permutation_invariant_and_normalized") {
        for reorder in [Reordering::Natural, Reordering::Rcm, Reordering::Pbr] {
            let mut cfg = synthetic_kernel(0.05);
            t.apply(&mut cfg);
            cfg.reorder = reorder;
            let k = MarginalizedGraphKernel::new(cfg).unwrap();
            let a = k.gram_between(&graphs, &graphs).unwrap();
            let b = k.gram_between(&permuted, &graphs).unwrap();
            let nk = k.gram_normalized(&graphs).unwrap();
            let n = graphs.len();
            for i in 0..n {
                for j in 0..n {
                    let tag = format!("{} reorder={reorder:?}", t.name);
                    errors.extend(check_rel(&format!("{tag} symmetry K[{i},{j}] vs K[{j},{i}]"), a.get(i, j), a.get(j, i), t.rtol).err());
                    errors.extend(check_rel(&format!("{tag} permutation K[π{i},{j}]"), b.get(i, j), a.get(i, j), t.rtol).err());
                }
                errors.extend(check_rel(&format!("{} normalized diag {i}", t.name), nk.get(i, i), 1.0, 1e-12).err());
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn non_convergence_is_reported_per_pair_with_partial_results() {
    for t in targets("non_convergence_is_reported_per_pair_with_partial_results") {
        let graphs = nws_set(3, 1);
        let mut cfg = synthetic_kernel(0.0005);
        t.apply(&mut cfg);
        cfg.solver.max_iterations = 2;
        let err = MarginalizedGraphKernel::new(cfg).unwrap().gram(&graphs).unwrap_err();
        match err {
            OctileError::NoConvergence { pair, iterations, residual, n_failed, partial, .. } => {
                assert_eq!(pair, (0, 0), "{}: first failing pair", t.name);
                assert_eq!(iterations, 2, "{}", t.name);
                assert!(residual > 0.0 && residual.is_finite(), "{}: residual {residual}", t.name);
                assert_eq!(n_failed, 6, "{}: all 6 upper-triangle pairs fail", t.name);
                assert_eq!(partial.failures().len(), 9, "{}: failures flagged in the full matrix", t.name);
                assert!(partial.values.iter().all(|v| v.is_finite() && *v > 0.0), "{}: partial values kept", t.name);
            }
            other => panic!("{}: expected NoConvergence, got {other}", t.name),
        }
    }
}

#[test]
fn values_beyond_f32_range_are_an_error_in_f32_only() {
    let mut g = octile::Graph::new(2, &["label"], &["length"]);
    g.set_node_features(0, &[1.0]).unwrap();
    g.set_node_features(1, &[1.0]).unwrap();
    g.add_edge(0, 1, 1.0, &[1e300]).unwrap();
    let mut cfg = octile::mgk::config::synthetic_kernel(0.05);
    cfg.backend = octile::Backend::Cpu;
    cfg.precision = octile::Precision::F32;
    let e = octile::MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(std::slice::from_ref(&g)).unwrap_err();
    assert!(matches!(e, octile::OctileError::InvalidGraph { graph: Some(0), .. }) && e.to_string().contains("f32 range"), "{e}");
    cfg.precision = octile::Precision::F64;
    let k = octile::MarginalizedGraphKernel::new(cfg).unwrap().gram(&[g]).unwrap();
    assert!(k.get(0, 0).is_finite() && k.get(0, 0) > 0.0);
}

#[test]
fn listed_pairs_equal_the_gram_entries() {
    let graphs = nws_set(4, 9);
    for t in targets("listed_pairs_equal_the_gram_entries") {
        let mut cfg = synthetic_kernel(0.05);
        t.apply(&mut cfg);
        let k = MarginalizedGraphKernel::new(cfg).unwrap();
        let full = k.gram(&graphs).unwrap();
        let list = [(0, 1), (3, 3), (2, 0), (1, 3)];
        let some = k.pairs(&graphs, &list).unwrap();
        assert_eq!((some.rows, some.cols, some.pairs_solved), (4, 1, 4), "{}", t.name);
        for (r, &(i, j)) in list.iter().enumerate() {
            check_rel(&format!("{} pair {r} ({i},{j})", t.name), some.get(r, 0), full.get(i, j), t.rtol).unwrap();
        }
        let e = k.pairs(&graphs, &[(0, 0), (1, 4)]).unwrap_err().to_string();
        assert!(e.contains("pair 1 = (1, 4)") && e.contains("4 graphs"), "{}: {e}", t.name);
    }
}

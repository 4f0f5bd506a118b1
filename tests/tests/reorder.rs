//! Reorderings are permutations, PBR never makes more octiles than the natural or RCM order, and
//! packing in any order gives the same kernel values (see also properties.rs).
use octile::GraphKernel;
use octile::generators::{ba_set, nws_set};
use octile::reorder::{Reordering, count_octiles};
use octile_tests::{random_graph, random_shape};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn reorderings_are_permutations_and_pbr_is_best() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut graphs = nws_set(5, 1);
    graphs.extend(ba_set(5, 2));
    for _ in 0..40 {
        let n = rng.gen_range(1..120);
        let s = random_shape(&mut rng, n);
        graphs.push(random_graph(&mut rng, s));
    }
    for (k, g) in graphs.iter().enumerate() {
        let mut counts = Vec::new();
        for r in [Reordering::Natural, Reordering::Rcm, Reordering::Pbr, Reordering::Metis] {
            let p = r.order(g);
            let mut seen = p.clone();
            seen.sort_unstable();
            assert!(seen.iter().enumerate().all(|(i, &v)| i == v), "graph {k} {r:?}: not a permutation");
            counts.push(count_octiles(g, &p));
        }
        assert!(counts[2] <= counts[0] && counts[2] <= counts[1], "graph {k}: octiles natural {}, RCM {}, PBR {}", counts[0], counts[1], counts[2]);
        assert!(counts[3] > 0 || g.n_edges() == 0, "graph {k}: METIS order lost the edges");
    }
}

#[test]
fn cached_orders_equal_fresh_ones_and_are_computed_once() {
    let graphs = nws_set(3, 21);
    for r in [Reordering::Rcm, Reordering::Pbr] {
        for g in &graphs {
            let a = r.order_cached(g);
            let b = r.order_cached(g);
            assert_eq!(*a, r.order(g), "{r:?}: cached order differs from a fresh one");
            assert!(std::sync::Arc::ptr_eq(&a, &b), "{r:?}: second call recomputed");
        }
        // same topology, other features: same order; other topology: its own
        let relabeled = graphs[0].permuted(&(0..graphs[0].n_nodes()).collect::<Vec<_>>());
        assert!(std::sync::Arc::ptr_eq(&r.order_cached(&graphs[0]), &r.order_cached(&relabeled)));
        assert_ne!(*r.order_cached(&graphs[0]), *r.order_cached(&graphs[1]));
    }
    assert_eq!(*Reordering::Natural.order_cached(&graphs[0]), (0..96).collect::<Vec<_>>());
}

/// The kernel does not depend on the packing order: every order gives the natural order's values
/// (CPU f64, 1e-12), METIS included.
#[test]
fn every_order_gives_the_same_kernel_values() {
    use octile::{Backend, MarginalizedGraphKernel, Precision};
    let mut graphs = nws_set(3, 8);
    graphs.extend(ba_set(2, 8));
    let mut cfg = octile::mgk::config::synthetic_kernel(0.05);
    cfg.backend = Backend::Cpu;
    cfg.precision = Precision::F64;
    cfg.reorder = Reordering::Natural;
    let want = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(&graphs).unwrap();
    for r in [Reordering::Rcm, Reordering::Pbr, Reordering::Metis] {
        cfg.reorder = r;
        let got = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(&graphs).unwrap();
        for (k, (a, e)) in got.values.iter().zip(&want.values).enumerate() {
            assert!((a - e).abs() <= 1e-12 * e.abs(), "{r:?} entry {k}: actual {a:.15e}, expected {e:.15e}");
        }
    }
}

//! The marginalized kernel does not depend on the scale of a graph's edge weights: graphs whose
//! weights are multiplied by 1e±100 (or 2^±1000, or a factor per graph) give the same K as the
//! originals on every backend — before per-graph weight scaling they gave K = 0, `inf`, or an f32
//! range error.
use octile::{Graph, GraphKernel, MarginalizedGraphKernel};
use octile_tests::{check_rel, random_config, random_graph, random_shape, targets};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `g` with every edge weight multiplied by `factor`.
fn rescaled(g: &Graph, factor: f64) -> Graph {
    let mut out = Graph::with_names(g.n_nodes(), g.node_feature_names().to_vec(), g.edge_feature_names().to_vec());
    for i in 0..g.n_nodes() {
        out.set_node_features(i, g.node_features(i)).unwrap();
    }
    for (e, edge) in g.edges().iter().enumerate() {
        out.add_edge(edge.i as usize, edge.j as usize, edge.weight * factor, g.edge_features(e)).unwrap();
    }
    out
}

#[test]
fn weights_far_from_one_give_the_same_kernel_on_every_backend() {
    let mut rng = ChaCha8Rng::seed_from_u64(18);
    let graphs: Vec<Graph> = (0..8)
        .map(|k| {
            let n = [1, 2, 5, 9, 13, 17, 24, 30][k];
            let mut s = random_shape(&mut rng, n);
            s.weighted = true;
            s.density = s.density.max(0.2);
            random_graph(&mut rng, s)
        })
        .collect();
    let factors = [1e100, 1e-100, 2f64.powi(1000), 2f64.powi(-1000), 3.7e250, 1e-250];
    let scaled: Vec<Graph> = graphs.iter().enumerate().map(|(k, g)| rescaled(g, factors[k % factors.len()])).collect();
    let mut cfg_base = random_config(&mut rng);
    cfg_base.q = 0.05;
    let mut errors = Vec::new();
    for t in targets("weights_far_from_one_give_the_same_kernel_on_every_backend") {
        let mut cfg = cfg_base.clone();
        t.apply(&mut cfg);
        let k = MarginalizedGraphKernel::new(cfg).unwrap();
        let want = k.gram(&graphs).unwrap();
        let got = match k.gram(&scaled) {
            Ok(g) => g,
            Err(e) => {
                errors.push(format!("{}: scaled weights failed: {e}", t.name));
                continue;
            }
        };
        // and mixed: scaled X against original Y
        let mixed = k.gram_between(&scaled, &graphs).unwrap();
        let n = graphs.len();
        for i in 0..n {
            for j in 0..n {
                errors.extend(
                    check_rel(
                        &format!("{} K[{i},{j}] with weights × {:e}, × {:e}", t.name, factors[i % 6], factors[j % 6]),
                        got.get(i, j),
                        want.get(i, j),
                        t.rtol,
                    )
                    .err(),
                );
                errors.extend(check_rel(&format!("{} K(scaled, original)[{i},{j}]", t.name), mixed.get(i, j), want.get(i, j), t.rtol).err());
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // the weights themselves were far from 1 (not silently clamped by the generator)
    assert!(scaled.iter().any(|g| g.edges().iter().any(|e| e.weight > 1e90)) && scaled.iter().any(|g| g.edges().iter().any(|e| e.weight < 1e-90)));
    let _ = rng.r#gen::<u8>();
}

#[test]
fn weight_scale_is_a_power_of_two_bringing_the_largest_weight_into_one_to_two() {
    for max in [1.0, 1.5, 1.999_999, 2.0, 0.75, 0.5, 3.0, 1e100, 1e-100, 1e300, 1e-300, f64::MAX, 1e-310] {
        let mut g = Graph::new(3, &[], &[]);
        g.add_edge(0, 1, max, &[]).unwrap();
        g.add_edge(1, 2, max / 3.0, &[]).unwrap();
        let s = g.weight_scale();
        assert!(s.is_finite() && s > 0.0 && s.log2().fract() == 0.0, "max {max:e}: scale {s:e} is not a power of two");
        let m = max * s;
        if max >= f64::MIN_POSITIVE {
            assert!((1.0..2.0).contains(&m), "max {max:e}: scaled max {m}, expected in [1, 2)");
        }
    }
    assert_eq!(Graph::new(2, &[], &[]).weight_scale(), 1.0, "no edges");
}

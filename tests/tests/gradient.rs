//! Hyperparameter gradients ∂K/∂θ (adjoint method) against central finite differences of the
//! dense f64 reference (explicit Kronecker system, Cholesky), on random labeled pairs of every shape
//! (1 node, no edges, self-loops, disconnected, very different sizes) and every base kernel,
//! product and additive, q from 0.0005 to 0.9; then K(X), K(X, Y), normalized or not, against
//! finite differences of the CPU Gram matrix; then every backend against the CPU f64 gradient.
use octile::mgk::config::{BaseKernelConfig, FeatureKernel};
use octile::mgk::reference::mgk_dense;
use octile::{Graph, GraphKernel, MarginalizedGraphKernel, MgkConfig, Precision};
use octile_tests::{Shape, graph_with_features, many_featured_graph, many_term_configs, random_config, random_graph, random_shape, targets};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The config with hyperparameter `h` moved by `d`.
fn moved(cfg: &MgkConfig, h: usize, d: f64) -> MgkConfig {
    let mut v = cfg.hyperparameter_values();
    v[h] += d;
    let mut c = cfg.clone();
    c.set_hyperparameters(&v).unwrap_or_else(|e| panic!("θ_{h} = {} is invalid: {e}", v[h]));
    c
}

/// A central-difference step for hyperparameter `h` that stays inside its valid range (0 when
/// there is none, e.g. h = 0 exactly).
fn step(cfg: &MgkConfig, h: usize) -> f64 {
    let names = cfg.hyperparameters();
    let v = cfg.hyperparameter_values()[h];
    let mut s = 1e-4 * v.abs().max(1e-2);
    // probabilities and Kronecker/constant values live in (0, 1]
    let capped = names[h] == "q" || names[h].ends_with(".h") || names[h].ends_with(".c");
    if capped {
        s = s.min((1.0 - v) / 2.0);
    }
    s.min(v / 2.0).max(0.0)
}

/// |actual − expected| ≤ rtol·|expected| + atol, or a message with the index, both values.
fn check(what: &str, actual: f64, expected: f64, rtol: f64, atol: f64) -> Result<(), String> {
    let err = (actual - expected).abs();
    if err.is_finite() && err <= rtol * expected.abs() + atol {
        Ok(())
    } else {
        Err(format!("{what}: actual {actual:.12e}, expected {expected:.12e}, |diff| {err:.3e} > {rtol:.0e}·|expected| + {atol:.1e}"))
    }
}

/// One random case: two graphs (1–30 nodes, n·m ≤ 240) and a configuration (every shape and kernel
/// of the shared generators).
fn case(seed: u64) -> (Graph, Graph, MgkConfig) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n1 = rng.gen_range(1..=30usize);
    let n2 = rng.gen_range(1..=(240 / n1).min(30));
    let (s1, s2) = (random_shape(&mut rng, n1), random_shape(&mut rng, n2));
    let g1 = random_graph(&mut rng, s1);
    let g2 = random_graph(&mut rng, s2);
    let mut cfg = random_config(&mut rng);
    cfg.p = rng.gen_range(0.5..2.0);
    if cfg.edge.len() == 2 && rng.gen_bool(0.5) {
        // an additive κe (the shared generator only makes κv additive)
        cfg.edge_combine = octile_types::Combine::Additive;
        for t in cfg.edge.iter_mut() {
            t.weight = rng.gen_range(0.5..2.0);
        }
    }
    (g1, g2, cfg)
}

/// The CPU f64 gradient of one pair against central differences of the dense reference.
fn check_pair_fd(label: &str, g1: &Graph, g2: &Graph, cfg: &MgkConfig) -> Result<(), String> {
    let mut c = cfg.clone();
    c.backend = octile::Backend::Cpu;
    c.precision = Precision::F64;
    c.solver.rtol = Some(1e-13);
    let k = MarginalizedGraphKernel::new(c.clone()).map_err(|e| format!("{label}: {e}"))?;
    let got = k.gram_gradient(std::slice::from_ref(g1), Some(std::slice::from_ref(g2)), false).map_err(|e| format!("{label}: {e}"))?;
    let grad = got.gradient.as_ref().ok_or(format!("{label}: no gradient"))?;
    let names = cfg.hyperparameters();
    if grad.names != names || grad.values.len() != names.len() {
        return Err(format!("{label}: gradient names {:?} / {} values, want {names:?}", grad.names, grad.values.len()));
    }
    let k0 = mgk_dense(g1, g2, cfg).map_err(|e| format!("{label}: reference: {e}"))?;
    check(&format!("{label} K"), got.get(0, 0), k0, 1e-10, 1e-300)?;
    let theta = cfg.hyperparameter_values();
    for (h, name) in names.iter().enumerate() {
        let s = step(cfg, h);
        if s == 0.0 {
            continue;
        }
        let d = |s: f64| -> Result<f64, String> {
            let kp = mgk_dense(g1, g2, &moved(cfg, h, s)).map_err(|e| format!("{label}: {e}"))?;
            let km = mgk_dense(g1, g2, &moved(cfg, h, -s)).map_err(|e| format!("{label}: {e}"))?;
            Ok((kp - km) / (2.0 * s))
        };
        // Richardson: the O(s²) terms of two central differences cancel (ill-conditioned systems,
        // q → 0 with κe → 1, have large third derivatives)
        let fd = (4.0 * d(s / 2.0)? - d(s)?) / 3.0;
        // FD error: truncation ~(s/θ)²·K/θ, rounding ~1e-15·K/s
        let atol = 1e-7 * k0.abs() / theta[h].abs().max(1e-2);
        check(
            &format!("{label} ∂K/∂{name} (index {h}, θ = {:.4e}, n={}, m={}, q={:.4})", theta[h], g1.n_nodes(), g2.n_nodes(), cfg.q),
            grad.values[h],
            fd,
            2e-5,
            atol,
        )?;
    }
    Ok(())
}

#[test]
fn random_pairs_match_finite_differences() {
    let mut seeds = ChaCha8Rng::seed_from_u64(20261125);
    let n = 400;
    let mut f = Vec::new();
    for _ in 0..n {
        let seed: u64 = seeds.r#gen();
        let (g1, g2, cfg) = case(seed);
        if let Err(e) = check_pair_fd(&format!("seed {seed}"), &g1, &g2, &cfg) {
            f.push(e);
        }
    }
    assert!(f.is_empty(), "{} of {n} pairs failed:\n{}", f.len(), f.join("\n"));
}

#[test]
fn edge_cases_match_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let shape = |n, density| Shape { n, density, self_loops: 0.0, disconnected: false, weighted: false };
    let cases = vec![
        ("1 node vs 1 node", random_graph(&mut rng, shape(1, 0.0)), random_graph(&mut rng, shape(1, 0.0))),
        ("1 node with self-loop", random_graph(&mut rng, Shape { self_loops: 1.0, ..shape(1, 0.0) }), random_graph(&mut rng, shape(6, 0.5))),
        ("no edges", random_graph(&mut rng, shape(7, 0.0)), random_graph(&mut rng, shape(9, 0.0))),
        ("isolated nodes", random_graph(&mut rng, shape(12, 0.08)), random_graph(&mut rng, shape(5, 0.3))),
        (
            "self-loops everywhere",
            random_graph(&mut rng, Shape { self_loops: 1.0, ..shape(8, 0.3) }),
            random_graph(&mut rng, Shape { self_loops: 1.0, ..shape(6, 0.5) }),
        ),
        ("disconnected", random_graph(&mut rng, Shape { disconnected: true, ..shape(14, 0.6) }), random_graph(&mut rng, shape(8, 0.5))),
        ("very different sizes", random_graph(&mut rng, shape(2, 1.0)), random_graph(&mut rng, Shape { weighted: true, ..shape(40, 0.2) })),
        (
            "complete, weighted",
            random_graph(&mut rng, Shape { weighted: true, ..shape(9, 1.0) }),
            random_graph(&mut rng, Shape { weighted: true, ..shape(10, 1.0) }),
        ),
    ];
    let mut f = Vec::new();
    for (name, g1, g2) in &cases {
        for (k, q) in [0.0005, 0.05, 0.8].into_iter().enumerate() {
            let mut cfg = random_config(&mut ChaCha8Rng::seed_from_u64(100 + k as u64));
            cfg.q = q;
            if let Err(e) = check_pair_fd(&format!("{name}, q = {q}"), g1, g2, &cfg) {
                f.push(e);
            }
        }
    }
    assert!(f.is_empty(), "{} cases failed:\n{}", f.len(), f.join("\n"));
}

/// A small set of graphs (2–14 nodes) from a seed.
fn set(rng: &mut ChaCha8Rng, n: usize) -> Vec<Graph> {
    (0..n)
        .map(|_| {
            let nodes = rng.gen_range(2..=14);
            let s = random_shape(rng, nodes);
            random_graph(rng, s)
        })
        .collect()
}

/// The CPU f64 kernel of `cfg` with a tight tolerance.
fn cpu_f64(cfg: &MgkConfig) -> MarginalizedGraphKernel {
    let mut c = cfg.clone();
    c.backend = octile::Backend::Cpu;
    c.precision = Precision::F64;
    c.solver.rtol = Some(1e-13);
    MarginalizedGraphKernel::new(c).unwrap()
}

#[test]
fn gram_matrices_match_finite_differences() {
    let mut f = Vec::new();
    for seed in 0..6u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(500 + seed);
        let (x, y) = (set(&mut rng, 4), set(&mut rng, 3));
        let cfg = random_config(&mut rng);
        for (yy, normalized) in [(None, false), (None, true), (Some(&y[..]), false), (Some(&y[..]), true)] {
            let label = format!("seed {seed}, K(X{}){}", if yy.is_some() { ", Y" } else { "" }, if normalized { " normalized" } else { "" });
            let got = match cpu_f64(&cfg).gram_gradient(&x, yy, normalized) {
                Ok(g) => g,
                Err(e) => {
                    f.push(format!("{label}: {e}"));
                    continue;
                }
            };
            let plain = cpu_f64(&cfg).gram_of(&x, yy, normalized, None).unwrap();
            let grad = got.gradient.as_ref().unwrap();
            let np = grad.names.len();
            for (e, (&a, &b)) in got.values.iter().zip(&plain.values).enumerate() {
                if let Err(m) = check(&format!("{label} K entry {e}"), a, b, 1e-11, 1e-300) {
                    f.push(m);
                }
            }
            let theta = cfg.hyperparameter_values();
            for (h, &th) in theta.iter().enumerate().take(np) {
                let s = step(&cfg, h);
                if s == 0.0 {
                    continue;
                }
                let d = |s: f64| -> Vec<f64> {
                    let kp = cpu_f64(&moved(&cfg, h, s)).gram_of(&x, yy, normalized, None).unwrap();
                    let km = cpu_f64(&moved(&cfg, h, -s)).gram_of(&x, yy, normalized, None).unwrap();
                    kp.values.iter().zip(&km.values).map(|(a, b)| (a - b) / (2.0 * s)).collect()
                };
                let (d1, d2) = (d(s), d(s / 2.0));
                let scale = plain.values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                for e in 0..plain.values.len() {
                    let fd = (4.0 * d2[e] - d1[e]) / 3.0;
                    let atol = 1e-7 * scale / th.abs().max(1e-2);
                    if let Err(m) = check(&format!("{label} ∂K[{e}]/∂{} (index {h})", grad.names[h]), grad.values[e * np + h], fd, 2e-5, atol) {
                        f.push(m);
                    }
                }
            }
        }
    }
    assert!(f.is_empty(), "{} checks failed:\n{}", f.len(), f.join("\n"));
}

/// One comparison of K(X, Y)'s gradient: (label, X, Y, configuration, normalized).
type Case = (String, Vec<Graph>, Vec<Graph>, MgkConfig, bool);

/// Every backend's ∂K/∂θ and K of K(X, Y) for each case against the CPU f64 gradient; asserts that
/// every check passed, listing those that did not.
fn backends_match_the_cpu_f64_gradient(test: &str, cases: &[Case]) {
    let mut f = Vec::new();
    let targets = targets(test);
    let mut seen = Vec::new();
    for t in &targets {
        // the resident solver (GPU f32), the tile solver with one block or a team of blocks per pair
        let key = (t.backend, t.precision, t.resident, t.blocks_per_pair);
        if seen.contains(&key) || (t.backend == octile::Backend::Cpu && t.precision == Precision::F64) {
            continue;
        }
        seen.push(key);
        for (label, x, y, cfg, normalized) in cases {
            let want = cpu_f64(cfg).gram_gradient(x, Some(y), *normalized).unwrap();
            let mut c = cfg.clone();
            t.apply(&mut c);
            let got = match MarginalizedGraphKernel::new(c).and_then(|k| k.gram_gradient(x, Some(y), *normalized)) {
                Ok(g) => g,
                Err(e) => {
                    f.push(format!("{} {label}: {e}", t.name));
                    continue;
                }
            };
            // f64: the same solution to 1e-8; f32 (mixed precision to rtol 1e-6): K's accuracy
            let (rtol, afrac) = if t.precision == Precision::F64 { (1e-8, 1e-10) } else { (1e-4, 1e-5) };
            let (gw, gg) = (want.gradient.as_ref().unwrap(), got.gradient.as_ref().unwrap());
            let np = gw.names.len();
            // a hyperparameter whose ∂K is 0 but for rounding (p of a normalized K: ~1e-16) is
            // checked against K's own magnitude
            let floor = 1e-12 * want.values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for h in 0..np {
                let scale = (0..want.values.len()).fold(0.0f64, |m, e| m.max(gw.values[e * np + h].abs()));
                for e in 0..want.values.len() {
                    if let Err(m) = check(
                        &format!("{} {label} ∂K[{e}]/∂{} (index {h})", t.name, gw.names[h]),
                        gg.values[e * np + h],
                        gw.values[e * np + h],
                        rtol,
                        afrac * scale + floor + 1e-300,
                    ) {
                        f.push(m);
                    }
                }
            }
            for e in 0..want.values.len() {
                if let Err(m) = check(&format!("{} {label} K[{e}]", t.name), got.values[e], want.values[e], rtol, 1e-300) {
                    f.push(m);
                }
            }
        }
    }
    assert!(f.is_empty(), "{} checks failed:\n{}", f.len(), f.join("\n"));
}

#[test]
fn every_backend_matches_the_cpu_f64_gradient() {
    let cases: Vec<_> = (0..8u64)
        .map(|seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(900 + seed);
            let (x, y) = (set(&mut rng, 5), set(&mut rng, 3));
            let cfg = random_config(&mut rng);
            (format!("seed {seed}"), x, y, cfg, seed % 2 == 0)
        })
        .collect();
    backends_match_the_cpu_f64_gradient("every_backend_matches_the_cpu_f64_gradient", &cases);
}

/// Pairs of 96-node graphs and a 40-node star, whose fused gradient solve on the GPU takes each room
/// of the resident gradient entries (block teams): K(X, Y) of BA graphs (hubs: the second graph's
/// long rows walked in pieces, split launches; the fused vectors beside the slice, x and ap in
/// global scratch), of a ring lattice against them (split, beside) and they against it (no pieces,
/// beside), of the star (split, every vector in the slice) — for κe one square exponential, one
/// Kronecker delta and their sum (the any-κe entries): every backend against the CPU f64 gradient.
#[test]
fn large_pairs_in_every_resident_room_match_the_cpu_f64_gradient() {
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let ba = |rng: &mut ChaCha8Rng| {
        let mut e = octile::generators::barabasi_albert(96, 6, rng);
        e.push((5, 5)); // a self-loop on an early (hub) node
        graph_with_features(rng, 96, &e)
    };
    let ring: Vec<(usize, usize)> = (0..96).flat_map(|i| [(i, (i + 1) % 96), (i, (i + 2) % 96)]).collect();
    let star: Vec<(usize, usize)> = (1..40).map(|i| (0, i)).chain((1..39).map(|i| (i, i + 1))).collect();
    let x = vec![ba(&mut rng), graph_with_features(&mut rng, 96, &ring), graph_with_features(&mut rng, 40, &star)];
    let y = vec![ba(&mut rng), graph_with_features(&mut rng, 96, &ring)];
    let fk = |f: &str, k: BaseKernelConfig| FeatureKernel { feature: f.into(), kernel: k, weight: 1.0 };
    let node = vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.5 })];
    let sqexp = fk("length", BaseKernelConfig::SquareExponential { length_scale: 1.0 });
    let kdelta = fk("order", BaseKernelConfig::KroneckerDelta { h: 0.3 });
    let cases: Vec<_> = [("square exponential", vec![sqexp.clone()]), ("Kronecker delta", vec![kdelta.clone()]), ("sum", vec![kdelta, sqexp])]
        .into_iter()
        .enumerate()
        .map(|(k, (what, edge))| {
            let cfg = MgkConfig { q: 0.05, node: node.clone(), edge, edge_combine: octile_types::Combine::Additive, ..MgkConfig::default() };
            (format!("κe {what}"), x.clone(), y.clone(), cfg, k == 1)
        })
        .collect();
    backends_match_the_cpu_f64_gradient("large_pairs_in_every_resident_room_match_the_cpu_f64_gradient", &cases);
}

/// The product form (κe one Kronecker delta, unit weights: on the GPU the resident solver's 2-byte
/// entry lists, warp and block teams) with κe as a product and as an additive kernel of one term,
/// whose term's weight is a hyperparameter of its own (∂κe = 0): each κe hyperparameter's ∂K
/// against the CPU f64 gradient. (The product-form entries once gave the weight the ∂K of h.)
#[test]
fn product_form_gradients_give_each_edge_hyperparameter_its_own_derivative() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let unit = |rng: &mut ChaCha8Rng, n: usize| {
        let s = Shape { n, density: 0.3, self_loops: 0.1, disconnected: n > 20, weighted: false };
        random_graph(rng, s)
    };
    // small pairs (warp teams) and a few larger ones (block teams)
    let x: Vec<Graph> = [3, 9, 14, 30, 48].iter().map(|&n| unit(&mut rng, n)).collect();
    let y: Vec<Graph> = [1, 6, 12, 40].iter().map(|&n| unit(&mut rng, n)).collect();
    let fk = |f: &str, k: BaseKernelConfig| FeatureKernel { feature: f.into(), kernel: k, weight: 1.0 };
    let node = vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.5 })];
    let cases: Vec<_> = [octile_types::Combine::Additive, octile_types::Combine::Product]
        .into_iter()
        .map(|combine| {
            let edge = vec![fk("order", BaseKernelConfig::KroneckerDelta { h: 0.3 })];
            let cfg = MgkConfig { q: 0.05, node: node.clone(), edge, edge_combine: combine, ..MgkConfig::default() };
            (format!("κe one Kronecker delta, {combine:?}"), x.clone(), y.clone(), cfg, combine == octile_types::Combine::Product)
        })
        .collect();
    backends_match_the_cpu_f64_gradient("product_form_gradients_give_each_edge_hyperparameter_its_own_derivative", &cases);
}

/// Every form of κv and κe a gradient entry specializes or interprets — κe one square exponential,
/// one Kronecker delta (the product form where weights are 1), both, a constant; each as a
/// product, as a sum of weight 1 and as a sum of other weights (its terms' weights then
/// hyperparameters too); κv one Kronecker delta as a product or a sum of one term, or two terms
/// summed — over unit-weighted and weighted graphs of 1–48 nodes (warp and block teams): every
/// backend's ∂K/∂θ against the CPU f64 gradient.
#[test]
fn every_kernel_form_matches_the_cpu_f64_gradient() {
    use octile_types::Combine::{Additive, Product};
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let graphs = |rng: &mut ChaCha8Rng, sizes: &[usize], weighted: bool| -> Vec<Graph> {
        sizes.iter().map(|&n| random_graph(rng, Shape { n, density: (3.0 / n as f64).min(0.6), self_loops: 0.05, disconnected: n > 30, weighted })).collect()
    };
    let fk = |f: &str, k: BaseKernelConfig, w: f64| FeatureKernel { feature: f.into(), kernel: k, weight: w };
    let sqexp = |w: f64| fk("length", BaseKernelConfig::SquareExponential { length_scale: 0.8 }, w);
    let kdelta = |w: f64| fk("order", BaseKernelConfig::KroneckerDelta { h: 0.4 }, w);
    let constant = |w: f64| fk("order", BaseKernelConfig::Constant { c: 0.6 }, w);
    let mut cases = Vec::new();
    for (ei, edge) in [vec![sqexp(1.0)], vec![kdelta(1.0)], vec![kdelta(1.0), sqexp(1.0)], vec![constant(1.0)]].into_iter().enumerate() {
        for (ci, combine) in [Product, Additive, Additive].into_iter().enumerate() {
            let mut edge = edge.clone();
            if ci == 2 {
                for t in edge.iter_mut() {
                    t.weight = rng.gen_range(0.5..2.0);
                }
            }
            let (node, node_combine) = match (ei + ci) % 3 {
                0 => (vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.5 }, 1.0)], Product),
                1 => (vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.5 }, 1.0)], Additive),
                _ => (
                    vec![
                        fk("label", BaseKernelConfig::KroneckerDelta { h: 0.5 }, 1.3),
                        fk("charge", BaseKernelConfig::SquareExponential { length_scale: 1.5 }, 0.7),
                    ],
                    Additive,
                ),
            };
            let weighted = (ei + ci) % 2 == 1;
            let x = graphs(&mut rng, &[1, 5, 13, 26, 48], weighted);
            let y = graphs(&mut rng, &[2, 9, 33], weighted);
            let cfg = MgkConfig { q: 0.08, p: 1.2, node, node_combine, edge, edge_combine: combine, ..MgkConfig::default() };
            let label = format!("κe form {ei} combine {ci}{}", if weighted { " weighted" } else { "" });
            cases.push((label, x, y, cfg, (ei + ci) % 2 == 0));
        }
    }
    backends_match_the_cpu_f64_gradient("every_kernel_form_matches_the_cpu_f64_gradient", &cases);
}

/// Kernels of many terms ([`many_term_configs`]: the node table's nine slots, five terms
/// interpreted, κe's one-term sums with a weight, three terms summed or multiplied) over trees with
/// extra edges and hubs of 1–70 nodes ([`many_featured_graph`]: block teams, split rows),
/// unit-weighted and weighted: every backend against the CPU f64 gradient.
#[test]
fn kernels_of_many_terms_match_the_cpu_f64_gradient() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut cases = Vec::new();
    for weighted in [false, true] {
        let x: Vec<Graph> = [1, 5, 13, 30, if weighted { 70 } else { 64 }].iter().map(|&n| many_featured_graph(&mut rng, n, weighted)).collect();
        let y: Vec<Graph> = [2, 9, 26, 60].iter().map(|&n| many_featured_graph(&mut rng, n, weighted)).collect();
        for (k, (label, cfg)) in many_term_configs().into_iter().enumerate() {
            cases.push((format!("{label}{}", if weighted { " weighted" } else { "" }), x.clone(), y.clone(), cfg, k % 2 == 0));
        }
    }
    backends_match_the_cpu_f64_gradient("kernels_of_many_terms_match_the_cpu_f64_gradient", &cases);
}

#[test]
fn hyperparameters_round_trip_and_are_named() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for _ in 0..20 {
        let cfg = random_config(&mut rng);
        let (names, values) = (cfg.hyperparameters(), cfg.hyperparameter_values());
        assert_eq!(names.len(), values.len(), "{names:?} vs {values:?}");
        assert_eq!(&names[..2], &["p".to_string(), "q".to_string()]);
        assert_eq!(names.len(), cfg.gradient_params().n_hyper as usize);
        let mut c = cfg.clone();
        c.set_hyperparameters(&values).unwrap();
        assert_eq!(c, cfg);
        let mut bad = values.clone();
        bad[1] = 1.5;
        let err = c.set_hyperparameters(&bad).unwrap_err().to_string();
        assert!(err.contains('q'), "{err}");
        assert_eq!(c, cfg, "a failed set leaves the config unchanged");
        assert!(c.set_hyperparameters(&values[1..]).unwrap_err().to_string().contains("hyperparameter values"));
    }
}

#[test]
fn chosen_columns_equal_the_whole_gradients_columns_scaled() {
    // gram_gradient_columns against gram_gradient's columns picked and scaled afterwards: K(X)
    // and K(X, Y), normalized or not, every column, some in another order, none; bit for bit
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let mut f = Vec::new();
    for seed in 0..6u64 {
        let (x, y) = (set(&mut rng, 4), set(&mut rng, 3));
        let cfg = random_config(&mut rng);
        let k = cpu_f64(&cfg);
        let np = cfg.hyperparameters().len();
        let every: Vec<(usize, f64)> = (0..np).map(|h| (h, 1.0 + h as f64)).collect();
        let some: Vec<(usize, f64)> = (0..np).rev().step_by(2).map(|h| (h, 0.5 * (h + 1) as f64)).collect();
        for (yy, normalized) in [(None, true), (Some(&y[..]), false), (Some(&y[..]), true), (None, false)] {
            let whole = k.gram_gradient(&x, yy, normalized).unwrap();
            let gw = whole.gradient.as_ref().unwrap();
            for cols in [&every[..], &some[..], &[][..]] {
                let got = k.gram_gradient_columns(&x, yy, normalized, Some(cols)).unwrap();
                let gg = got.gradient.as_ref().unwrap();
                let names: Vec<String> = cols.iter().map(|&(h, _)| gw.names[h].clone()).collect();
                assert_eq!(gg.names, names, "seed {seed}: the chosen columns' names");
                assert_eq!(gg.values.len(), whole.values.len() * cols.len(), "seed {seed}: {} columns", cols.len());
                assert_eq!(got.values, whole.values, "seed {seed}: K");
                for e in 0..whole.values.len() {
                    for (c, &(h, fac)) in cols.iter().enumerate() {
                        let (a, w) = (gg.values[e * cols.len() + c], gw.values[e * np + h] * fac);
                        if a.to_bits() != w.to_bits() {
                            f.push(format!("seed {seed} normalized {normalized} entry {e} column {c} (θ_{h}): actual {a:e}, expected {w:e}"));
                        }
                    }
                }
            }
        }
        let bad = k.gram_gradient_columns(&x, None, false, Some(&[(np, 1.0)]));
        assert!(matches!(bad, Err(octile::OctileError::InvalidRequest(_))), "seed {seed}: column {np} of {np}: {bad:?}");
    }
    assert!(f.is_empty(), "{} checks failed:\n{}", f.len(), f.join("\n"));
}

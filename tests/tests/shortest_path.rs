//! The shortest-path kernel (`octile::sp`) on every backend: GraKeL 0.1.11's `ShortestPath` values on
//! MUTAG, exactly (fixture `tests/fixtures/grakel_sp_mutag.json`, made by the script beside it), and
//! every form (histogram, all pairs of paths) against a brute-force reference — Floyd–Warshall and
//! the definition's quadruple sum, written here without octile's code — on random graphs with
//! isolated nodes, self-loops, two components, weights, 1 node and no edges.
use octile::mgk::config::{BaseKernelConfig, FeatureKernel};
use octile::sp::config::{LengthKernelConfig, SpConfig};
use octile::{Backend, Graph, GraphKernel, ShortestPathKernel};
use octile_tests::{Shape, check_rel, gpu_or_skip, random_graph, random_shape};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};

/// CPU, and the GPU where one is usable (an explicit SKIP line otherwise).
fn backends(test: &str) -> Vec<Backend> {
    let mut b = vec![Backend::Cpu];
    if gpu_or_skip(test) {
        b.push(Backend::Cuda);
    }
    b
}

/// All-pairs shortest path lengths by Floyd–Warshall (self-loops ignored, weights as lengths).
fn floyd_warshall(g: &Graph) -> Vec<Vec<f64>> {
    let n = g.n_nodes();
    let mut d = vec![vec![f64::INFINITY; n]; n];
    for (i, row) in d.iter_mut().enumerate() {
        row[i] = 0.0;
    }
    for e in g.edges() {
        let (i, j) = (e.i as usize, e.j as usize);
        if i != j && e.weight < d[i][j] {
            d[i][j] = e.weight;
            d[j][i] = e.weight;
        }
    }
    for k in 0..n {
        for i in 0..n {
            for j in 0..n {
                if d[i][k] + d[k][j] < d[i][j] {
                    d[i][j] = d[i][k] + d[k][j];
                }
            }
        }
    }
    d
}

/// κv as a product of the configured terms, evaluated from the graphs' named features.
fn node_kernel(cfg: &SpConfig, g: &Graph, i: usize, h: &Graph, j: usize) -> f64 {
    cfg.node
        .iter()
        .map(|t| {
            let (a, b) = (g.node_features(i)[g.node_feature_index(&t.feature).unwrap()], h.node_features(j)[h.node_feature_index(&t.feature).unwrap()]);
            match t.kernel {
                BaseKernelConfig::Constant { c } => c,
                BaseKernelConfig::KroneckerDelta { h } => {
                    if a == b {
                        1.0
                    } else {
                        h
                    }
                }
                BaseKernelConfig::SquareExponential { length_scale } => (-(a - b) * (a - b) / (2.0 * length_scale * length_scale)).exp(),
            }
        })
        .product()
}

fn length_kernel(k: LengthKernelConfig, a: f64, b: f64) -> f64 {
    match k {
        LengthKernelConfig::KroneckerDelta { h } => {
            if a == b {
                1.0
            } else {
                h
            }
        }
        LengthKernelConfig::SquareExponential { length_scale } => (-(a - b) * (a - b) / (2.0 * length_scale * length_scale)).exp(),
        LengthKernelConfig::BrownianBridge { c } => (c - (a - b).abs()).max(0.0),
    }
}

/// The definition, term by term.
fn brute(cfg: &SpConfig, g: &Graph, h: &Graph) -> f64 {
    let (dg, dh) = (floyd_warshall(g), floyd_warshall(h));
    let mut k = 0.0;
    for (u, row) in dg.iter().enumerate() {
        for (v, &d) in row.iter().enumerate() {
            if u == v || d.is_infinite() {
                continue;
            }
            for (u2, row2) in dh.iter().enumerate() {
                for (v2, &d2) in row2.iter().enumerate() {
                    if u2 != v2 && d2.is_finite() {
                        k += node_kernel(cfg, g, u, h, u2) * length_kernel(cfg.path_length, d, d2) * node_kernel(cfg, g, v, h, v2);
                    }
                }
            }
        }
    }
    k
}

fn fk(f: &str, kernel: BaseKernelConfig) -> FeatureKernel {
    FeatureKernel { feature: f.into(), kernel, weight: 1.0 }
}

/// K(X) of `graphs` on `backend` against the brute force, entry by entry (two-sided, relative).
fn check_against_brute(label: &str, graphs: &[Graph], cfg: &SpConfig, backend: Backend, rtol: f64) -> Vec<String> {
    let mut c = cfg.clone();
    c.backend = backend;
    let got = match ShortestPathKernel::new(c).and_then(|k| k.gram(graphs)) {
        Ok(g) => g,
        Err(e) => return vec![format!("{label} {backend:?}: {e}")],
    };
    let mut errors = Vec::new();
    for i in 0..graphs.len() {
        for j in 0..graphs.len() {
            let want = brute(cfg, &graphs[i], &graphs[j]);
            if let Err(e) =
                check_rel(&format!("{label} {backend:?} K[{i},{j}] (n={}, m={})", graphs[i].n_nodes(), graphs[j].n_nodes()), got.get(i, j), want, rtol)
            {
                errors.push(e);
            }
        }
    }
    errors
}

#[test]
fn every_form_and_backend_matches_the_brute_force_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let mut errors = Vec::new();
    let configs = [
        // the histogram form: deltas of h = 0 (with and without labels)
        (SpConfig { node: vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.0 })], ..SpConfig::default() }, false),
        (SpConfig::default(), false),
        // the general form: soft deltas, continuous node and length kernels (also on weighted graphs)
        (
            SpConfig {
                node: vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.3 })],
                path_length: LengthKernelConfig::KroneckerDelta { h: 0.2 },
                ..SpConfig::default()
            },
            false,
        ),
        (
            SpConfig {
                node: vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.5 }), fk("charge", BaseKernelConfig::SquareExponential { length_scale: 0.7 })],
                path_length: LengthKernelConfig::BrownianBridge { c: 2.5 },
                ..SpConfig::default()
            },
            true,
        ),
        (
            SpConfig {
                node: vec![fk("charge", BaseKernelConfig::SquareExponential { length_scale: 1.3 })],
                path_length: LengthKernelConfig::SquareExponential { length_scale: 0.8 },
                ..SpConfig::default()
            },
            true,
        ),
    ];
    for backend in backends("every_form_and_backend_matches_the_brute_force_reference") {
        for (c, (cfg, weighted)) in configs.iter().enumerate() {
            // sizes 1..=24 plus the edge cases: 1 node, no edges, self-loops only, two components
            let mut graphs: Vec<Graph> = (0..7)
                .map(|_| {
                    let n = rng.gen_range(1..=24);
                    let mut s = random_shape(&mut rng, n);
                    // equal-length tests need exact lengths: hop counts (unit weights)
                    s.weighted &= *weighted;
                    random_graph(&mut rng, s)
                })
                .collect();
            graphs.push(random_graph(&mut rng, Shape { n: 1, density: 0.0, self_loops: 0.0, disconnected: false, weighted: false }));
            graphs.push(random_graph(&mut rng, Shape { n: 6, density: 0.0, self_loops: 1.0, disconnected: false, weighted: *weighted }));
            graphs.push(random_graph(&mut rng, Shape { n: 12, density: 0.5, self_loops: 0.2, disconnected: true, weighted: *weighted }));
            errors.extend(check_against_brute(&format!("config {c}"), &graphs, cfg, backend, 1e-12));
        }
    }
    assert!(errors.is_empty(), "{} mismatches:\n{}", errors.len(), errors.join("\n"));
}

#[test]
fn gpu_equals_cpu_bit_for_bit_on_the_histogram_form_and_to_1e_12_on_the_general_form() {
    if !gpu_or_skip("gpu_equals_cpu_bit_for_bit_on_the_histogram_form_and_to_1e_12_on_the_general_form") {
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let graphs: Vec<Graph> = (0..60)
        .map(|_| {
            let n = rng.gen_range(1..=70);
            let s = random_shape(&mut rng, n);
            random_graph(&mut rng, s)
        })
        .collect();
    let mut errors = Vec::new();
    // a matrix of over 2^20 values: the GPU's result comes back through the pinned staging buffers
    let many: Vec<Graph> = (0..1100)
        .map(|_| {
            let n = rng.gen_range(1..=12);
            let s = random_shape(&mut rng, n);
            random_graph(&mut rng, Shape { weighted: false, ..s })
        })
        .collect();
    // the general form with graphs past SP_APSP_MAX_NODES (96): their paths from the host, the
    // others' from the GPU's Floyd–Warshall, weighted and not
    let mixed = vec![
        random_graph(&mut rng, Shape { n: 104, density: 0.06, self_loops: 0.1, disconnected: true, weighted: true }),
        random_graph(&mut rng, Shape { n: 30, density: 0.2, self_loops: 0.0, disconnected: false, weighted: true }),
        random_graph(&mut rng, Shape { n: 96, density: 0.05, self_loops: 0.0, disconnected: true, weighted: false }),
        random_graph(&mut rng, Shape { n: 1, density: 0.0, self_loops: 1.0, disconnected: false, weighted: false }),
    ];
    let general = SpConfig {
        node: vec![fk("charge", BaseKernelConfig::SquareExponential { length_scale: 0.9 })],
        path_length: LengthKernelConfig::SquareExponential { length_scale: 1.1 },
        ..SpConfig::default()
    };
    let run = |b: Backend| ShortestPathKernel::new(SpConfig { backend: b, ..general.clone() }).and_then(|k| k.gram(&mixed)).unwrap();
    let (cpu, gpu) = (run(Backend::Cpu), run(Backend::Cuda));
    assert!(gpu.details.to_string().contains("2 of 4 graphs' on the GPU"), "{}", gpu.details);
    for k in 0..cpu.values.len() {
        if let Err(e) = check_rel(&format!("mixed host/GPU paths: entry {k}"), gpu.values[k], cpu.values[k], 1e-12) {
            errors.push(e);
        }
    }
    let hist = SpConfig { node: vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.0 })], ..SpConfig::default() };
    let run = |b: Backend| ShortestPathKernel::new(SpConfig { backend: b, ..hist.clone() }).and_then(|k| k.gram(&many)).unwrap();
    let (cpu, gpu) = (run(Backend::Cpu), run(Backend::Cuda));
    assert_eq!(gpu.values.len(), 1100 * 1100);
    let wrong: Vec<usize> = (0..cpu.values.len()).filter(|&k| gpu.values[k] != cpu.values[k]).collect();
    for &k in wrong.iter().take(20) {
        errors.push(format!(
            "1,100 graphs ({} entries differ): entry ({}, {}): actual {}, expected {} (CPU)",
            wrong.len(),
            k / 1100,
            k % 1100,
            gpu.values[k],
            cpu.values[k]
        ));
    }
    for (cfg, rtol) in [
        (SpConfig { node: vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.0 })], ..SpConfig::default() }, 0.0),
        (
            SpConfig {
                node: vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.4 })],
                path_length: LengthKernelConfig::BrownianBridge { c: 2.0 },
                ..SpConfig::default()
            },
            1e-12,
        ),
    ] {
        let run = |b: Backend| ShortestPathKernel::new(SpConfig { backend: b, ..cfg.clone() }).and_then(|k| k.gram(&graphs)).unwrap();
        let (cpu, gpu) = (run(Backend::Cpu), run(Backend::Cuda));
        for k in 0..cpu.values.len() {
            if let Err(e) = check_rel(&format!("rtol {rtol}: entry {k}"), gpu.values[k], cpu.values[k], rtol) {
                errors.push(e);
            }
        }
    }
    assert!(errors.is_empty(), "{} mismatches:\n{}", errors.len(), errors.join("\n"));
}

#[test]
fn mutag_equals_grakel_exactly_with_and_without_labels() {
    // the checkout (OCTILE_REPO: where a GPU bundle keeps data/MUTAG and tests/fixtures)
    let root = std::env::var_os("OCTILE_REPO").map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".."), PathBuf::from);
    let dir = root.join("data/MUTAG");
    assert!(dir.is_dir(), "{} is missing: run scripts/setup (it fetches MUTAG from the grakel==0.1.11 wheel)", dir.display());
    let fixture: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(root.join("tests/fixtures/grakel_sp_mutag.json")).unwrap()).unwrap();
    let graphs = octile::io::read(&dir, None, false).unwrap().graphs;
    assert_eq!(graphs.len(), fixture["graphs"].as_u64().unwrap() as usize, "MUTAG graph count");
    let mut errors = Vec::new();
    for backend in backends("mutag_equals_grakel_exactly_with_and_without_labels") {
        for (key, cfg) in [
            ("labels", SpConfig { node: vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.0 })], ..SpConfig::default() }),
            ("no_labels", SpConfig::default()),
        ] {
            let got = ShortestPathKernel::new(SpConfig { backend, ..cfg }).and_then(|k| k.gram(&graphs)).unwrap();
            let want: Vec<f64> = fixture[key].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as f64).collect();
            let n = graphs.len();
            let mut k = 0;
            for i in 0..n {
                for j in i..n {
                    if got.get(i, j) != want[k] || got.get(j, i) != want[k] {
                        errors.push(format!("{key} {backend:?} K[{i},{j}]: actual {}, expected {} (GraKeL)", got.get(i, j), want[k]));
                    }
                    k += 1;
                }
            }
        }
    }
    assert!(errors.is_empty(), "{} mismatches (first 20):\n{}", errors.len(), errors.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
}

/// The histogram form's definition, independently: Floyd–Warshall lengths, counts of (features of
/// u, features of v, length) per graph, and the dot product of two count maps.
fn brute_histogram_dot(features: &[&str], g: &Graph, h: &Graph) -> f64 {
    use std::collections::HashMap;
    let counts = |g: &Graph| {
        let d = floyd_warshall(g);
        let row = |i: usize| features.iter().map(|f| g.node_features(i)[g.node_feature_index(f).unwrap()].to_bits()).collect::<Vec<u64>>();
        let mut m: HashMap<(Vec<u64>, Vec<u64>, u64), u64> = HashMap::new();
        for (u, r) in d.iter().enumerate() {
            for (v, &l) in r.iter().enumerate() {
                if u != v && l.is_finite() {
                    *m.entry((row(u), row(v), l.to_bits())).or_default() += 1;
                }
            }
        }
        m
    };
    let (a, b) = (counts(g), counts(h));
    a.iter().map(|(k, c)| c * b.get(k).copied().unwrap_or(0)).sum::<u64>() as f64
}

/// A graph of `n` nodes with node features `label` (`labels` distinct values) and `charge`, edges
/// with probability `density`, weights drawn from `weights`.
fn labeled(rng: &mut ChaCha8Rng, n: usize, labels: usize, density: f64, weights: &[f64]) -> Graph {
    let mut g = Graph::new(n, &["label", "charge"], &[]);
    for i in 0..n {
        g.set_node_features(i, &[rng.gen_range(0..labels) as f64, rng.gen_range(0..3) as f64 * 0.5]).unwrap();
    }
    for i in 0..n {
        for j in i + 1..n {
            if rng.r#gen::<f64>() < density {
                g.add_edge(i, j, weights[rng.gen_range(0..weights.len())], &[]).unwrap();
            }
        }
    }
    g
}

/// Every way to reach the histogram form — the whole matrix K(X) (on the GPU: histograms built on
/// the device for small unit-weight graphs, on the host for graphs past 256 nodes or with many
/// labels, and for weighted sets), K(X, Y), listed pairs and the diagonal (pair lists) — against
/// the definition, exactly, on every backend.
#[test]
fn histogram_form_every_path_equals_the_definition_exactly() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let mut unit: Vec<Graph> = (0..14).map(|k| labeled(&mut rng, [1, 2, 5, 17, 30, 64][k % 6], 4, [0.0, 0.5, 0.15][k % 3], &[1.0])).collect();
    unit.push(labeled(&mut rng, 30, 30, 0.1, &[1.0])); // ℓ²n = 27,000 cells: built on the host
    unit.push(labeled(&mut rng, 270, 5, 0.012, &[1.0])); // past 256 nodes: built on the host
    unit.push(random_graph(&mut rng, Shape { n: 12, density: 0.4, self_loops: 0.5, disconnected: true, weighted: false }));
    let mut weighted = unit[..8].to_vec();
    weighted.extend((0..6).map(|k| labeled(&mut rng, 3 + 5 * k, 3, 0.3, &[1.0, 2.0, 3.0])));
    let mut errors = Vec::new();
    for backend in backends("histogram_form_every_path_equals_the_definition_exactly") {
        for (name, graphs) in [("unit weights", &unit), ("integer weights", &weighted)] {
            for features in [vec!["label"], vec![], vec!["label", "charge"]] {
                let cfg =
                    SpConfig { node: features.iter().map(|f| fk(f, BaseKernelConfig::KroneckerDelta { h: 0.0 })).collect(), backend, ..SpConfig::default() };
                assert!(cfg.is_histogram());
                let k = ShortestPathKernel::new(cfg).unwrap();
                let want = |i: usize, j: usize| brute_histogram_dot(&features, &graphs[i], &graphs[j]);
                let mut same = |what: String, got: f64, want: f64| {
                    if got != want {
                        errors.push(format!("{name} {features:?} {backend:?} {what}: actual {got}, expected {want}"));
                    }
                };
                let n = graphs.len();
                let full = k.gram(graphs).unwrap();
                assert!(full.details.to_string().contains("histogram Gram matrix"), "{}", full.details);
                let (x, y) = graphs.split_at(5);
                let between = k.gram_between(x, y).unwrap();
                let listed = k.pairs(graphs, &[(n - 1, 0), (3, n - 2), (n - 2, n - 2)]).unwrap();
                let diag = k.diag(graphs).unwrap();
                for (i, &d) in diag.iter().enumerate() {
                    for j in 0..n {
                        same(format!("K[{i},{j}]"), full.get(i, j), want(i, j));
                    }
                    same(format!("diag[{i}]"), d, want(i, i));
                }
                for i in 0..x.len() {
                    for j in 0..y.len() {
                        same(format!("K(X, Y)[{i},{j}]"), between.get(i, j), want(i, 5 + j));
                    }
                }
                for (r, (i, j)) in [(n - 1, 0), (3, n - 2), (n - 2, n - 2)].into_iter().enumerate() {
                    same(format!("pair {r} ({i}, {j})"), listed.get(r, 0), want(i, j));
                }
            }
        }
    }
    assert!(errors.is_empty(), "{} mismatches (first 20):\n{}", errors.len(), errors.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
}

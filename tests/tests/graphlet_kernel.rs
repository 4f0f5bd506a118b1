//! The graphlet kernel (issue 14): its Gram matrices against an independent reference — each graph
//! transformed ALONE on the CPU backend, its φ summed or binned here, the linear / RBF kernel
//! written out in f64 — on random graphs with every edge case (no nodes, one node, no edges,
//! isolated nodes, self-loops, disconnected, very different sizes); K(X) symmetric and positive
//! semi-definite, normalized diagonals 1, K(X, Y) = the block of K(X ∪ Y), diag and listed pairs
//! equal to the matrix, progress and cancellation, TOML errors, and the CUDA backend (an error
//! without a GPU, an explicit SKIP where there are no GPU values to compare).
use octile::graphlets::kernel::GraphletKernel;
use octile::graphlets::kernel_config::{Counts, FeatureForm, GraphletConfig, Scale, VectorKernel};
use octile::graphlets::{Adjacency, N_ORBITS, TransformParams, transform};
use octile::{Backend, Graph, GraphKernel, OctileError, RunControl};
use octile_tests::{Shape, check_rel, gpu_or_skip, random_graph, random_shape, skip_line};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Relative tolerance of every value against the reference (both sum the same terms in the same
/// order; only the union-vs-alone transform differs, and its counts are exact integers).
const RTOL: f64 = 1e-12;

/// A graph of `n` nodes and the given edges (self-loops allowed).
fn graph(n: usize, edges: &[(usize, usize)]) -> Graph {
    let mut g = Graph::new(n, &[], &[]);
    for &(i, j) in edges {
        g.add_edge(i, j, 1.0, &[]).unwrap();
    }
    g
}

/// Random graphs of very different sizes and shapes plus the edge cases, in a shuffled order.
fn graph_set(seed: u64, count: usize) -> Vec<Graph> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut gs = vec![
        Graph::new(0, &[], &[]),
        Graph::new(1, &[], &[]),
        graph(1, &[(0, 0)]),
        Graph::new(7, &[], &[]),
        graph(5, &[(0, 1), (1, 2), (2, 2), (3, 3)]),
        graph(6, &[(0, 1), (0, 2), (0, 3), (0, 4), (0, 5)]),
        graph(5, &(0..5).flat_map(|i| (i + 1..5).map(move |j| (i, j))).collect::<Vec<_>>()),
        graph(8, &[(0, 1), (1, 2), (2, 0), (4, 5), (5, 6), (6, 7), (7, 4)]),
    ];
    while gs.len() < count {
        let n = match rng.gen_range(0..5) {
            0 => rng.gen_range(1..4),
            1 => rng.gen_range(60..160),
            _ => rng.gen_range(4..30),
        };
        let mut shape = random_shape(&mut rng, n);
        if n > 60 {
            shape = Shape { density: rng.gen_range(0.01..0.15), ..shape };
        }
        gs.push(random_graph(&mut rng, shape));
    }
    for i in (1..gs.len()).rev() {
        gs.swap(i, rng.gen_range(0..=i));
    }
    gs
}

/// The bin of count c among `bins`, the documented way: 0 for 0, else the smallest b with c < 2^b,
/// at most bins − 1.
fn reference_bin(c: i64, bins: usize) -> usize {
    let mut b = 0;
    while b < 63 && c >= (1i64 << b) {
        b += 1;
    }
    b.min(bins - 1)
}

/// φ of one graph from its own transform on the CPU.
fn reference_features(g: &Graph, c: &GraphletConfig) -> Vec<f64> {
    let a = Adjacency::from_graph(g).unwrap();
    let (f, _) = transform(&a, &TransformParams { backend: Backend::Cpu, ..Default::default() }).unwrap();
    let counts = |v: usize, o: usize| if c.counts == Counts::Net { f.net_row(v)[o] } else { f.raw_row(v)[o] };
    let mut phi = Vec::new();
    for &o in &c.orbits {
        match c.features {
            FeatureForm::Summed => phi.push((0..g.n_nodes()).map(|v| counts(v, o) as i128).sum::<i128>() as f64),
            FeatureForm::Histogram => {
                let mut h = vec![0.0; c.bins];
                for v in 0..g.n_nodes() {
                    h[reference_bin(counts(v, o), c.bins)] += 1.0;
                }
                phi.extend(h);
            }
        }
    }
    if c.scale == Scale::Log1p {
        phi.iter_mut().for_each(|x| *x = (1.0 + *x).ln());
    }
    phi
}

fn reference_k(c: &GraphletConfig, a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    match c.kernel {
        VectorKernel::Linear => {
            let mut s = 0.0;
            for k in 0..a.len() {
                s += a[k] * b[k];
            }
            s
        }
        VectorKernel::Rbf { gamma } => {
            let mut d = 0.0;
            for k in 0..a.len() {
                d += (a[k] - b[k]) * (a[k] - b[k]);
            }
            (-gamma * d).exp()
        }
    }
}

/// Two-sided check with a small absolute floor for values near 0 (RBF of distant graphs).
fn check(what: &str, actual: f64, expected: f64) {
    if (actual - expected).abs() <= 1e-300 {
        return;
    }
    check_rel(what, actual, expected, RTOL).unwrap_or_else(|m| panic!("{m}"));
}

/// The configurations every value test runs: each key of the TOML takes each of its values once.
fn configs() -> Vec<(&'static str, GraphletConfig)> {
    let cpu = GraphletConfig { backend: Backend::Cpu, ..GraphletConfig::default() };
    vec![
        ("summed net linear", cpu.clone()),
        ("summed raw linear log1p", GraphletConfig { counts: Counts::Raw, scale: Scale::Log1p, ..cpu.clone() }),
        ("summed net rbf log1p 0-4", GraphletConfig { orbits: (0..5).collect(), scale: Scale::Log1p, kernel: VectorKernel::Rbf { gamma: 0.3 }, ..cpu.clone() }),
        ("histogram net linear", GraphletConfig { features: FeatureForm::Histogram, ..cpu.clone() }),
        (
            "histogram raw rbf 5 bins",
            GraphletConfig {
                features: FeatureForm::Histogram,
                counts: Counts::Raw,
                orbits: vec![1, 4, 9, 15],
                bins: 5,
                kernel: VectorKernel::Rbf { gamma: 0.01 },
                ..cpu.clone()
            },
        ),
        ("histogram net log1p 64 bins", GraphletConfig { features: FeatureForm::Histogram, bins: 64, scale: Scale::Log1p, ..cpu }),
    ]
}

/// Eigenvalues of a symmetric matrix (cyclic Jacobi rotations).
fn eigenvalues(mut a: Vec<f64>, n: usize) -> Vec<f64> {
    for _sweep in 0..100 {
        let off: f64 = (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j))).map(|(i, j)| a[i * n + j] * a[i * n + j]).sum();
        let scale: f64 = a.iter().map(|x| x * x).sum();
        if off <= 1e-30 * scale.max(1e-300) {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq == 0.0 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let (c, s) = (1.0 / (t * t + 1.0).sqrt(), t / (t * t + 1.0).sqrt());
                for k in 0..n {
                    let (akp, akq) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
            }
        }
    }
    (0..n).map(|i| a[i * n + i]).collect()
}

#[test]
fn gram_equals_per_graph_reference_symmetric_psd_normalized() {
    for (seed, (name, c)) in configs().into_iter().enumerate() {
        let gs = graph_set(100 + seed as u64, 48);
        let phi: Vec<Vec<f64>> = gs.iter().map(|g| reference_features(g, &c)).collect();
        let k = GraphletKernel::new(c.clone()).unwrap();
        let g = k.gram(&gs).unwrap();
        let n = gs.len();
        assert_eq!((g.rows, g.cols, g.pairs_solved, g.backend.as_str()), (n, n, n * (n + 1) / 2, "cpu"), "{name}");
        assert!(g.details.to_string().contains("graphlet kernel") && g.details.to_string().contains("self-loops dropped"), "{name}: {}", g.details);
        for i in 0..n {
            for j in 0..n {
                check(&format!("{name}: K[{i}][{j}]"), g.get(i, j), reference_k(&c, &phi[i], &phi[j]));
                assert_eq!(g.get(i, j).to_bits(), g.get(j, i).to_bits(), "{name}: K[{i}][{j}] = {} but K[{j}][{i}] = {}", g.get(i, j), g.get(j, i));
            }
        }
        let trace: f64 = (0..n).map(|i| g.get(i, i)).sum();
        // PSD: on the normalized matrix too (the scale of raw counts spans many decades)
        let nm = k.gram_normalized(&gs).unwrap();
        for (what, m, tr) in [("K", &g.values, trace), ("normalized K", &nm.values, n as f64)] {
            let lo = eigenvalues(m.clone(), n).into_iter().fold(f64::INFINITY, f64::min);
            assert!(lo >= -1e-9 * tr, "{name}: {what} has eigenvalue {lo:e} < −1e−9 · trace {tr:e}");
        }
        for i in 0..n {
            // 1 for every graph: φ ≠ 0 has K_ii > 0, and the driver makes a zero diagonal 1
            check(&format!("{name}: normalized K[{i}][{i}]"), nm.get(i, i), 1.0);
            for j in 0..n {
                let (kii, kjj) = (reference_k(&c, &phi[i], &phi[i]), reference_k(&c, &phi[j], &phi[j]));
                let want =
                    if kii == 0.0 || kjj == 0.0 { if i == j { 1.0 } else { 0.0 } } else { reference_k(&c, &phi[i], &phi[j]) / (kii.sqrt() * kjj.sqrt()) };
                assert!(nm.get(i, j).is_finite(), "{name}: normalized K[{i}][{j}] = {}", nm.get(i, j));
                check(&format!("{name}: normalized K[{i}][{j}]"), nm.get(i, j), want);
            }
        }
        // the graph without nodes: φ = 0
        let empty = gs.iter().position(|g| g.n_nodes() == 0).unwrap();
        assert!(phi[empty].iter().all(|&x| x == 0.0), "{name}: φ of the empty graph {:?}", phi[empty]);
        if c.kernel == VectorKernel::Linear {
            assert!((0..n).all(|j| g.get(empty, j) == 0.0), "{name}: linear K of the empty graph is not 0");
        }
    }
}

#[test]
fn between_is_the_block_of_the_union_and_diag_pairs_agree() {
    for (seed, (name, c)) in configs().into_iter().enumerate() {
        let all = graph_set(200 + seed as u64, 30);
        let (x, y) = all.split_at(11);
        let k = GraphletKernel::new(c.clone()).unwrap();
        let whole = k.gram(&all).unwrap();
        let b = k.gram_between(x, y).unwrap();
        assert_eq!((b.rows, b.cols), (x.len(), y.len()));
        for i in 0..x.len() {
            for j in 0..y.len() {
                check(&format!("{name}: K(X, Y)[{i}][{j}] vs K(X ∪ Y)[{i}][{}]", x.len() + j), b.get(i, j), whole.get(i, x.len() + j));
            }
        }
        let d = k.diag(&all).unwrap();
        for (i, v) in d.iter().enumerate() {
            check(&format!("{name}: diag[{i}]"), *v, whole.get(i, i));
        }
        let list = [(3usize, 17usize), (0, 0), (29, 1), (12, 12)];
        let p = k.pairs(&all, &list).unwrap();
        for (r, &(i, j)) in list.iter().enumerate() {
            check(&format!("{name}: pair {r} = ({i}, {j})"), p.get(r, 0), whole.get(i, j));
        }
        let bn = k.gram_between_normalized(x, y).unwrap();
        let wn = k.gram_normalized(&all).unwrap();
        for i in 0..x.len() {
            for j in 0..y.len() {
                check(&format!("{name}: normalized K(X, Y)[{i}][{j}]"), bn.get(i, j), wn.get(i, x.len() + j));
            }
        }
    }
}

#[test]
fn one_transform_of_the_union_has_every_graphs_own_counts() {
    let gs = graph_set(7, 40);
    let c = GraphletConfig { features: FeatureForm::Histogram, bins: 64, backend: Backend::Cpu, ..GraphletConfig::default() };
    let k = GraphletKernel::new(c.clone()).unwrap();
    let f = k.features(&[&gs[..20], &gs[20..]]).unwrap();
    assert_eq!((f.n_graphs(), f.dim, f.nodes), (40, 16 * 64, gs.iter().map(Graph::n_nodes).sum::<usize>()));
    let mut loops = 0;
    for (i, g) in gs.iter().enumerate() {
        let want = reference_features(g, &c);
        if let Some(e) = (0..f.dim).find(|&e| f.row(i)[e] != want[e]) {
            panic!("graph {i}: φ[{e}] (orbit {}, bin {}): actual {}, expected {}", e / 64, e % 64, f.row(i)[e], want[e]);
        }
        loops += Adjacency::from_graph(g).unwrap().self_loops_dropped;
    }
    assert_eq!(f.self_loops_dropped, loops);
    assert!(loops > 0, "the set has self-loops");
}

#[test]
fn progress_counts_every_pair_and_cancel_stops() {
    let gs = graph_set(9, 25);
    let done = Arc::new(AtomicUsize::new(0));
    let d = done.clone();
    let ctl = RunControl {
        progress: Some(Arc::new(move |n| {
            d.fetch_add(n, Ordering::Relaxed);
        })),
        cancel: Some(Arc::new(AtomicBool::new(false))),
        max_memory_bytes: None,
    };
    let k = GraphletKernel::new(GraphletConfig { backend: Backend::Cpu, ..GraphletConfig::default() }).unwrap().with_control(ctl.clone());
    k.gram(&gs).unwrap();
    assert_eq!(done.load(Ordering::Relaxed), 25 * 26 / 2);
    k.gram_between(&gs[..5], &gs[5..]).unwrap();
    assert_eq!(done.load(Ordering::Relaxed), 25 * 26 / 2 + 5 * 20);
    // no graphs: an empty matrix, nothing reported
    let none = k.gram(&[]).unwrap();
    assert_eq!((none.rows, none.cols, none.values.len(), done.load(Ordering::Relaxed)), (0, 0, 0, 25 * 26 / 2 + 5 * 20));
    ctl.cancel.as_ref().unwrap().store(true, Ordering::Relaxed);
    assert!(matches!(k.gram(&gs), Err(OctileError::Cancelled)));
    assert!(matches!(k.diag(&gs), Err(OctileError::Cancelled)));
}

#[test]
fn toml_keys_and_errors() {
    let c = GraphletConfig::from_toml(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/graphlets.toml")).unwrap()).unwrap();
    assert_eq!(c.features, FeatureForm::Summed);
    assert!(GraphletKernel::new(c).is_ok());
    for (text, want) in [
        ("method = \"graphlets\"\nq = 0.1\n", "unknown key 'q'"),
        ("features = \"sum\"\n", "features = \"sum\" is not known"),
        ("counts = 3\n", "counts must be a string"),
        ("orbits = \"0-16\"\n", "16 is not an orbit"),
        ("orbits = \"4-2\"\n", "range 4-2 is empty"),
        ("orbits = [1, 1]\n", "1 is given twice"),
        ("orbits = []\n", "at least one orbit"),
        ("orbits = \"a\"\n", "'a' is not an orbit number"),
        ("orbits = [-1]\n", "-1 is not an orbit"),
        ("scale = \"log\"\n", "scale = \"log\" is not known"),
        ("kernel = \"rbf\"\n", "needs gamma"),
        ("kernel = \"rbf\"\ngamma = 0\n", "gamma must be finite and > 0"),
        ("kernel = \"rbf\"\ngamma = -1.5\n", "gamma must be finite and > 0"),
        ("kernel = \"rbf\"\ngamma = inf\n", "gamma must be finite and > 0"),
        ("kernel = \"rbf\"\ngamma = \"big\"\n", "gamma must be a number"),
        ("gamma = 0.1\n", "gamma applies to kernel = \"rbf\" only"),
        ("bins = 8\n", "bins applies to features = \"histogram\" only"),
        ("features = \"histogram\"\nbins = 1\n", "bins must be in 2..=64"),
        ("features = \"histogram\"\nbins = 65\n", "bins must be in 2..=64"),
        ("features = \"histogram\"\nbins = -3\n", "bins must be in 2..=64"),
        ("backend = \"gpu\"\n", "backend = \"gpu\" is not known"),
        ("method = \"shortest_path\"\n", "method must be \"graphlets\""),
        ("kernel = \n", "kernel configuration"),
    ] {
        match GraphletConfig::from_toml(text) {
            Err(e @ OctileError::InvalidConfig(_)) => assert!(e.to_string().contains(want), "{text:?}: error {e:?} lacks {want:?}"),
            other => panic!("{text:?}: expected InvalidConfig containing {want:?}, got {other:?}"),
        }
    }
    // a configuration built in code is validated too
    let bad = GraphletConfig { orbits: vec![3, 2], ..GraphletConfig::default() };
    assert!(matches!(GraphletKernel::new(bad), Err(OctileError::InvalidConfig(m)) if m.contains("ascending")));
}

#[test]
fn cuda_backend_errors_without_a_gpu_or_matches_the_cpu() {
    let gs = graph_set(11, 20);
    let cuda = GraphletConfig { backend: Backend::Cuda, ..GraphletConfig::default() };
    let made = GraphletKernel::new(cuda);
    if octile::gpu::device().is_err() {
        match &made {
            Err(OctileError::NoGpu(why)) => assert!(!why.is_empty(), "NoGpu without a reason"),
            Err(e) => panic!("Backend::Cuda without a GPU: expected NoGpu, got {e:?}"),
            Ok(_) => panic!("Backend::Cuda without a GPU was accepted"),
        }
    }
    if !gpu_or_skip("graphlet_kernel::cuda_backend") {
        return;
    }
    let k = made.unwrap();
    let want = GraphletKernel::new(GraphletConfig { backend: Backend::Cpu, ..GraphletConfig::default() }).unwrap().gram(&gs).unwrap();
    match k.gram(&gs) {
        Ok(g) => {
            assert_eq!(g.backend, "cuda");
            for (e, (a, b)) in g.values.iter().zip(&want.values).enumerate() {
                assert_eq!(a.to_bits(), b.to_bits(), "entry {e}: cuda {a}, cpu {b}");
            }
        }
        Err(OctileError::NoGpu(why)) if why.contains("CPU only") => skip_line(&format!("SKIP graphlet_kernel::cuda_backend values: {why}")),
        Err(e) => panic!("cuda graphlet kernel: {e}"),
    }
}

#[test]
fn orbit_subsets_are_the_matching_entries_of_the_full_vector() {
    let gs = graph_set(13, 12);
    let full = GraphletKernel::new(GraphletConfig { backend: Backend::Cpu, ..GraphletConfig::default() }).unwrap().features(&[&gs]).unwrap();
    let sub =
        GraphletKernel::new(GraphletConfig { orbits: vec![0, 4, 15], backend: Backend::Cpu, ..GraphletConfig::default() }).unwrap().features(&[&gs]).unwrap();
    for g in 0..gs.len() {
        assert_eq!(sub.row(g), [full.row(g)[0], full.row(g)[4], full.row(g)[15]], "graph {g}");
        assert_eq!(full.row(g).len(), N_ORBITS);
    }
}

//! Shared helpers of the integration tests: random labeled graphs with every edge case, the list
//! of backends one test body runs on, and two-sided tolerance checks that name what failed.
use octile::mgk::config::{BaseKernelConfig, FeatureKernel};
use octile::reorder::Reordering;
use octile::{Backend, Graph, MgkConfig, Precision};
use octile_types::kernel_spec::Combine;
use rand::Rng;

/// A backend a test body runs on, with the relative tolerance it must meet against f64.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// Name for messages.
    pub name: &'static str,
    /// Backend.
    pub backend: Backend,
    /// Precision.
    pub precision: Precision,
    /// Relative tolerance vs the dense f64 reference.
    pub rtol: f64,
    /// GPU blocks per pair (`TileOptions::blocks_per_pair`: 0 automatic, N ≥ 2 teams of N blocks).
    pub blocks_per_pair: u32,
    /// `solver = "auto"` (`SolverParams::resident`): on the GPU in f32 the resident solver where a
    /// pair fits, on the CPU in f64 the product form where it fits; `false`: the tile path for
    /// every pair.
    pub resident: bool,
}

impl Target {
    /// Set this target's backend, precision and blocks per pair on `cfg`.
    pub fn apply(&self, cfg: &mut MgkConfig) {
        cfg.backend = self.backend;
        cfg.precision = self.precision;
        cfg.tiles.blocks_per_pair = self.blocks_per_pair;
        cfg.solver.resident = self.resident;
    }
}

/// Every backend: CPU f64 (the product form where a pair fits: `cpu-f64`; the tile path:
/// `cpu-f64-tiles`), CPU f32, and — when a GPU is usable — CUDA f32 (the resident solver
/// where the pair fits: `cuda-f32`; the tile solver: `cuda-f32-tiles`) and f64, each also with
/// every pair solved by a team of blocks of the tile solver (`cuda-*-team`: 3 blocks per pair in
/// f32, 2 in f64, so the cross-block barriers and reductions run on every test case). Without a GPU,
/// prints an explicit SKIP line (with the reason) for the CUDA targets; with
/// `OCTILE_REQUIRE_GPU=1` a missing GPU is a failure instead.
pub fn targets(test: &str) -> Vec<Target> {
    let mut t = vec![
        Target { name: "cpu-f64", backend: Backend::Cpu, precision: Precision::F64, rtol: 1e-9, blocks_per_pair: 0, resident: true },
        Target { name: "cpu-f64-tiles", backend: Backend::Cpu, precision: Precision::F64, rtol: 1e-9, blocks_per_pair: 0, resident: false },
        Target { name: "cpu-f32", backend: Backend::Cpu, precision: Precision::F32, rtol: 1e-5, blocks_per_pair: 0, resident: false },
    ];
    match octile::gpu::device() {
        Ok(d) => {
            eprintln!("{test}: GPU {}", d.describe());
            t.push(Target { name: "cuda-f32", backend: Backend::Cuda, precision: Precision::F32, rtol: 1e-5, blocks_per_pair: 0, resident: true });
            t.push(Target { name: "cuda-f32-tiles", backend: Backend::Cuda, precision: Precision::F32, rtol: 1e-5, blocks_per_pair: 0, resident: false });
            t.push(Target { name: "cuda-f64", backend: Backend::Cuda, precision: Precision::F64, rtol: 1e-9, blocks_per_pair: 0, resident: false });
            t.push(Target { name: "cuda-f32-team", backend: Backend::Cuda, precision: Precision::F32, rtol: 1e-5, blocks_per_pair: 3, resident: false });
            t.push(Target { name: "cuda-f64-team", backend: Backend::Cuda, precision: Precision::F64, rtol: 1e-9, blocks_per_pair: 2, resident: false });
        }
        Err(why) => {
            if std::env::var("OCTILE_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("{test}: OCTILE_REQUIRE_GPU=1 but no GPU: {why}");
            }
            skip_line(&format!("SKIP {test} [cuda-f32, cuda-f32-tiles, cuda-f64, cuda-f32-team, cuda-f64-team]: {why}"));
        }
    }
    t
}

/// Write a SKIP line straight to the process's stderr: the test harness captures `println!` and
/// `eprintln!`, but not writes to the raw handle, so a skipped GPU test is always visible.
pub fn skip_line(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Whether a GPU is usable (prints SKIP with the reason when not).
pub fn gpu_or_skip(test: &str) -> bool {
    match octile::gpu::device() {
        Ok(_) => true,
        Err(why) => {
            if std::env::var("OCTILE_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("{test}: OCTILE_REQUIRE_GPU=1 but no GPU: {why}");
            }
            skip_line(&format!("SKIP {test}: {why}"));
            false
        }
    }
}

/// |actual − expected| ≤ rtol·|expected| (plus a tiny absolute floor), or a message naming it.
pub fn check_rel(what: &str, actual: f64, expected: f64, rtol: f64) -> Result<(), String> {
    let err = (actual - expected).abs();
    if err.is_finite() && err <= rtol * expected.abs() + 1e-300 {
        Ok(())
    } else {
        Err(format!("{what}: actual {actual:.15e}, expected {expected:.15e}, |diff| {err:.3e} > rtol {rtol:.1e} · |expected|"))
    }
}

/// Graph shapes the random generator covers.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Nodes.
    pub n: usize,
    /// Edge probability (0 = no edges, 1 = complete).
    pub density: f64,
    /// Probability of a self-loop per node.
    pub self_loops: f64,
    /// Split into two components with no edges between them.
    pub disconnected: bool,
    /// Random weights in [0.5, 2) instead of 1.
    pub weighted: bool,
}

/// `n` nodes with random features `label` (0..4) and `charge` (real), and no edges yet: their
/// features `order` (1..4) and `length` (real) come from [`edge_features`].
fn featured_nodes(rng: &mut impl Rng, n: usize) -> Graph {
    let mut g = Graph::new(n, &["label", "charge"], &["order", "length"]);
    for i in 0..n {
        g.set_node_features(i, &[rng.gen_range(0..4) as f64, rng.gen_range(-1.0..1.0)]).unwrap();
    }
    g
}

/// Random features of one edge of [`random_graph`]'s: `order` (1..4) and `length` (real).
fn edge_features(rng: &mut impl Rng) -> [f64; 2] {
    [rng.gen_range(1..4) as f64, rng.gen_range(0.5..2.0)]
}

/// A graph of `n` nodes and the given `edges` (weight 1) with [`random_graph`]'s random features.
pub fn graph_with_features(rng: &mut impl Rng, n: usize, edges: &[(usize, usize)]) -> Graph {
    let mut g = featured_nodes(rng, n);
    for &(u, v) in edges {
        g.add_edge(u, v, 1.0, &edge_features(rng)).unwrap();
    }
    g
}

/// A graph of `n` nodes for [`many_term_configs`]: node features `label` (0..3), `flag`, `a` (0..2),
/// `b` (0..4), `charge` (real); a random tree plus n/3 random edges (self-loops among them), and a
/// hub of 39 edges where n > 50 (long rows); edge features `order` (0..3), `z` (0..2), `length`
/// (real); weights random in [0.5, 2) if `weighted`, else 1.
pub fn many_featured_graph(rng: &mut impl Rng, n: usize, weighted: bool) -> Graph {
    let mut g = Graph::new(n, &["label", "flag", "a", "b", "charge"], &["order", "z", "length"]);
    for i in 0..n {
        let f = [rng.gen_range(0..3) as f64, rng.gen_range(0..2) as f64, rng.gen_range(0..2) as f64, rng.gen_range(0..4) as f64, rng.gen_range(-1.0..1.0)];
        g.set_node_features(i, &f).unwrap();
    }
    let mut edges: Vec<(usize, usize)> = (1..n).map(|i| (rng.gen_range(0..i), i)).collect();
    edges.extend((0..n / 3).map(|_| (rng.gen_range(0..n), rng.gen_range(0..n))));
    if n > 50 {
        edges.extend((1..40).map(|i| (0, i)));
    }
    let mut edges: Vec<(usize, usize)> = edges.into_iter().map(|(u, v)| (u.min(v), u.max(v))).collect();
    edges.sort_unstable();
    edges.dedup();
    for (u, v) in edges {
        let w = if weighted { rng.gen_range(0.5..2.0) } else { 1.0 };
        let f = [rng.gen_range(0..3) as f64, rng.gen_range(0..2) as f64, rng.gen_range(0.5..2.0)];
        g.add_edge(u, v, w, &f).unwrap();
    }
    g
}

/// One node or edge kernel: its terms and how they combine.
type KernelForm = (Vec<FeatureKernel>, Combine);

/// κv and κe of many terms on [`many_featured_graph`]'s features. κv: four Kronecker deltas summed
/// (the gradient's node table at nine slots, more node-side hyperparameters than one pass takes),
/// five terms summed (interpreted), a product of three, a sum with a constant. κe: one term summed
/// with a weight (a square exponential, a Kronecker delta, a constant: the weight a hyperparameter
/// of its own), three terms summed or multiplied, one Kronecker delta, one square exponential.
fn many_term_kernels() -> (Vec<KernelForm>, Vec<KernelForm>) {
    let fk = |f: &str, k: BaseKernelConfig, w: f64| FeatureKernel { feature: f.into(), kernel: k, weight: w };
    let kd = |f: &str, h: f64, w: f64| fk(f, BaseKernelConfig::KroneckerDelta { h }, w);
    let se = |f: &str, l: f64, w: f64| fk(f, BaseKernelConfig::SquareExponential { length_scale: l }, w);
    let co = |f: &str, c: f64, w: f64| fk(f, BaseKernelConfig::Constant { c }, w);
    let nodes = vec![
        (vec![kd("label", 0.5, 1.3), kd("flag", 0.4, 0.6), kd("a", 0.3, 2.0), kd("b", 0.2, 0.9)], Combine::Additive),
        (vec![kd("label", 0.5, 1.3), kd("flag", 0.4, 0.6), se("charge", 1.5, 2.0), kd("a", 0.3, 0.9), co("b", 0.8, 0.5)], Combine::Additive),
        (vec![kd("label", 0.5, 1.0), kd("flag", 0.4, 1.0), co("b", 0.7, 1.0)], Combine::Product),
        (vec![kd("label", 0.5, 1.0), co("b", 0.7, 3.0)], Combine::Additive),
    ];
    let edges = vec![
        (vec![se("length", 0.8, 2.5)], Combine::Additive),
        (vec![kd("order", 0.3, 3.0)], Combine::Additive),
        (vec![co("z", 0.6, 0.7)], Combine::Additive),
        (vec![kd("order", 0.3, 1.5), se("length", 0.8, 0.5), co("z", 0.6, 1.0)], Combine::Additive),
        (vec![kd("order", 0.3, 1.0), se("length", 0.8, 1.0), co("z", 0.6, 1.0)], Combine::Product),
        (vec![kd("order", 0.4, 1.0)], Combine::Product),
        (vec![se("length", 1.1, 1.0)], Combine::Product),
    ];
    (nodes, edges)
}

/// Every pair of [`many_term_kernels`]' κv and κe as one configuration (q 0.07, p 1.3), labeled
/// `κv i κe j`.
pub fn many_term_configs() -> Vec<(String, MgkConfig)> {
    let (nodes, edges) = many_term_kernels();
    let mut out = Vec::new();
    for (vi, (node, node_combine)) in nodes.iter().enumerate() {
        for (ei, (edge, edge_combine)) in edges.iter().enumerate() {
            let cfg = MgkConfig {
                q: 0.07,
                p: 1.3,
                node: node.clone(),
                node_combine: *node_combine,
                edge: edge.clone(),
                edge_combine: *edge_combine,
                ..MgkConfig::default()
            };
            out.push((format!("κv {vi} κe {ei}"), cfg));
        }
    }
    out
}

/// A random labeled graph: node features `label` (0..4) and `charge` (real), edge features
/// `order` (1..4) and `length` (real).
pub fn random_graph(rng: &mut impl Rng, s: Shape) -> Graph {
    let mut g = featured_nodes(rng, s.n);
    let half = s.n / 2;
    for i in 0..s.n {
        for j in i..s.n {
            let p = if i == j { s.self_loops } else { s.density };
            if s.disconnected && (i < half) != (j < half) {
                continue;
            }
            if p > 0.0 && rng.r#gen::<f64>() < p {
                let w = if s.weighted { rng.gen_range(0.5..2.0) } else { 1.0 };
                g.add_edge(i, j, w, &edge_features(rng)).unwrap();
            }
        }
    }
    g
}

/// A random shape with n nodes.
pub fn random_shape(rng: &mut impl Rng, n: usize) -> Shape {
    let density = match rng.gen_range(0..6) {
        0 => 0.0,
        1 => 1.0,
        2 => rng.gen_range(0.0..0.1),
        _ => rng.gen_range(0.0..1.0),
    };
    Shape {
        n,
        density,
        self_loops: if rng.gen_bool(0.3) { rng.gen_range(0.0..0.5) } else { 0.0 },
        disconnected: rng.gen_bool(0.2),
        weighted: rng.gen_bool(0.5),
    }
}

/// A random kernel configuration over the features of [`random_graph`], q log-uniform in
/// [0.0005, 0.9].
pub fn random_config(rng: &mut impl Rng) -> MgkConfig {
    let q = (rng.gen_range((0.0005f64).ln()..(0.9f64).ln())).exp();
    let fk = |f: &str, k: BaseKernelConfig, w: f64| FeatureKernel { feature: f.into(), kernel: k, weight: w };
    let node = match rng.gen_range(0..4) {
        0 => vec![],
        1 => vec![fk("label", BaseKernelConfig::KroneckerDelta { h: rng.gen_range(0.1..1.0) }, 1.0)],
        2 => vec![
            fk("label", BaseKernelConfig::KroneckerDelta { h: rng.gen_range(0.1..1.0) }, 1.0),
            fk("charge", BaseKernelConfig::SquareExponential { length_scale: rng.gen_range(0.3..3.0) }, 1.0),
        ],
        _ => vec![
            fk("label", BaseKernelConfig::KroneckerDelta { h: rng.gen_range(0.1..1.0) }, rng.gen_range(0.5..2.0)),
            fk("charge", BaseKernelConfig::Constant { c: rng.gen_range(0.2..1.0) }, rng.gen_range(0.5..2.0)),
        ],
    };
    let node_combine = if node.len() == 2 && rng.gen_bool(0.5) { Combine::Additive } else { Combine::Product };
    let edge = match rng.gen_range(0..5) {
        0 => vec![],
        1 => vec![fk("length", BaseKernelConfig::SquareExponential { length_scale: rng.gen_range(0.3..3.0) }, 1.0)],
        2 => vec![fk("order", BaseKernelConfig::KroneckerDelta { h: rng.gen_range(0.0..1.0) }, 1.0)],
        3 => vec![
            fk("order", BaseKernelConfig::KroneckerDelta { h: rng.gen_range(0.0..1.0) }, 1.0),
            fk("length", BaseKernelConfig::SquareExponential { length_scale: rng.gen_range(0.3..3.0) }, 1.0),
        ],
        _ => vec![fk("length", BaseKernelConfig::Constant { c: rng.gen_range(0.0..1.0) }, 1.0)],
    };
    MgkConfig { q, node, node_combine, edge, reorder: [Reordering::Natural, Reordering::Rcm, Reordering::Pbr][rng.gen_range(0..3)], ..MgkConfig::default() }
}

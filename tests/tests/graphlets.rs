//! The fast graphlet transform (issue 14) against two independent references: pyfglt 0.3.0 (the
//! FGlT authors' C++; raw and net frequencies, exactly) on 220 random graphs of many shapes, and a
//! brute-force enumeration of every connected induced subgraph of up to 4 nodes (net frequencies)
//! on the small ones. The GPU kernels are not written yet: `Backend::Cuda` must say so.
use octile::graphlets::{Adjacency, N_ORBITS, TransformParams, transform};
use octile::{Backend, OctileError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

/// (nodes, edges) of one random graph of family `seed % 8`.
fn random_graph(seed: u64) -> (usize, Vec<(u32, u32)>) {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let n = r.gen_range(1..=48usize);
    let mut e = Vec::new();
    match seed % 8 {
        // Erdős–Rényi of random density
        0 | 1 => {
            let p: f64 = r.gen_range(0.0..0.6);
            for i in 0..n {
                for j in i + 1..n {
                    if r.gen_bool(p) {
                        e.push((i as u32, j as u32));
                    }
                }
            }
        }
        // preferential attachment (hubs)
        2 => {
            let m = r.gen_range(1..=4usize);
            let mut targets: Vec<u32> = Vec::new();
            for i in 1..n {
                for _ in 0..m.min(i) {
                    let t = if targets.is_empty() { 0 } else { targets[r.gen_range(0..targets.len())] };
                    e.push((i as u32, t));
                    targets.extend([i as u32, t]);
                }
            }
        }
        // random geometric in the unit square
        3 => {
            let pts: Vec<(f64, f64)> = (0..n).map(|_| (r.gen_range(0.0..1.0), r.gen_range(0.0..1.0))).collect();
            let rad: f64 = r.gen_range(0.1..0.5);
            for i in 0..n {
                for j in i + 1..n {
                    if (pts[i].0 - pts[j].0).powi(2) + (pts[i].1 - pts[j].1).powi(2) < rad * rad {
                        e.push((i as u32, j as u32));
                    }
                }
            }
        }
        // a star, plus isolated nodes
        4 => {
            let leaves = r.gen_range(0..n);
            e.extend((1..=leaves).map(|l| (0, l as u32)));
        }
        // a clique of up to 9 nodes, plus a path hanging off it, plus isolated nodes
        5 => {
            let k = r.gen_range(1..=n.min(9));
            for i in 0..k {
                for j in i + 1..k {
                    e.push((i as u32, j as u32));
                }
            }
            let tail = r.gen_range(0..=n - k);
            e.extend((k..k + tail).map(|v| ((v - 1) as u32, v as u32)));
        }
        // no edges at all
        6 => {}
        // several dense pieces (disconnected), repeated edges, self-loops (both dropped)
        _ => {
            for _ in 0..r.gen_range(0..4 * n) {
                let i = r.gen_range(0..n);
                let j = (i / 8) * 8 + r.gen_range(0..8usize);
                if j < n {
                    e.push((i as u32, j as u32));
                }
            }
        }
    }
    (n, e)
}

/// The simple graph's edges, each once (i < j), as the references get them.
fn simple_edges(a: &Adjacency) -> Vec<(u32, u32)> {
    (0..a.n_nodes()).flat_map(|i| a.row(i).iter().filter(move |&&j| j as usize > i).map(move |&j| (i as u32, j))).collect()
}

/// Net frequencies by brute force: every connected induced subgraph of 1–4 nodes, each node's
/// orbit from the subgraph's edge count and the node's degree in it.
fn brute_force_net(a: &Adjacency) -> Vec<[i64; N_ORBITS]> {
    let n = a.n_nodes();
    let adj = |x: usize, y: usize| a.row(x).binary_search(&(y as u32)).is_ok();
    let mut f = vec![[0i64; N_ORBITS]; n];
    let mut visit = |nodes: &[usize]| {
        let k = nodes.len();
        let deg: Vec<usize> = (0..k).map(|p| (0..k).filter(|&q| q != p && adj(nodes[p], nodes[q])).count()).collect();
        let m: usize = deg.iter().sum::<usize>() / 2;
        // connected: k − 1 edges at least and, for k = 4 with 3 edges, no isolated node (a
        // triangle plus a lone node has 3 edges too)
        if m + 1 < k || deg.contains(&0) && k > 1 {
            return;
        }
        for p in 0..k {
            let orbit = match (k, m, deg[p]) {
                (1, _, _) => 0,
                (2, _, _) => 1,
                (3, 2, 1) => 2,
                (3, 2, _) => 3,
                (3, 3, _) => 4,
                (4, 3, _) if deg.contains(&3) => if deg[p] == 3 { 8 } else { 7 },
                (4, 3, 1) => 5,
                (4, 3, _) => 6,
                (4, 4, _) if deg.contains(&3) => [0, 9, 10, 11][deg[p]],
                (4, 4, _) => 12,
                (4, 5, 2) => 13,
                (4, 5, _) => 14,
                (4, 6, _) => 15,
                other => panic!("no orbit for {other:?}"),
            };
            f[nodes[p]][orbit] += 1;
        }
    };
    for i in 0..n {
        visit(&[i]);
        for j in i + 1..n {
            visit(&[i, j]);
            for k in j + 1..n {
                visit(&[i, j, k]);
                for l in k + 1..n {
                    visit(&[i, j, k, l]);
                }
            }
        }
    }
    f
}

fn assert_rows(what: &str, graph: u64, actual: &[i64], expected: &[i64]) {
    assert_eq!(actual.len(), expected.len(), "{what}, graph {graph}: {} values, expected {}", actual.len(), expected.len());
    if let Some(k) = (0..actual.len()).find(|&k| actual[k] != expected[k]) {
        panic!("{what}, graph {graph}: node {} orbit {}: actual {}, expected {}", k / N_ORBITS, k % N_ORBITS, actual[k], expected[k]);
    }
}

const GRAPHS: u64 = 220;

#[test]
fn equals_pyfglt_on_random_graphs_raw_and_net() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = root.join(".venv/bin/python");
    let probe = std::process::Command::new(&python).args(["-c", "import pyfglt"]).output();
    assert!(probe.as_ref().is_ok_and(|o| o.status.success()), "pyfglt is not importable from {}: run scripts/setup (it installs pyfglt==0.3.0 into .venv)", python.display());
    let cpu = TransformParams { backend: Backend::Cpu };
    let mut graphs = Vec::new();
    let mut ours = Vec::new();
    for seed in 0..GRAPHS {
        let (n, e) = random_graph(seed);
        let a = Adjacency::from_edges(n, &e).unwrap();
        let edges: Vec<[u32; 2]> = simple_edges(&a).into_iter().map(|(i, j)| [i, j]).collect();
        graphs.push(serde_json::json!({"n": n, "edges": edges}));
        ours.push(transform(&a, &cpu).unwrap().0);
    }
    let dir = std::env::temp_dir().join(format!("octile-graphlets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (input, output) = (dir.join("graphs.json"), dir.join("pyfglt.json"));
    std::fs::write(&input, serde_json::to_string(&graphs).unwrap()).unwrap();
    let run = std::process::Command::new(&python).arg(root.join("tests/peers/pyfglt_ref.py")).arg(&input).arg(&output).output().unwrap();
    assert!(run.status.success(), "pyfglt_ref.py failed: {}", String::from_utf8_lossy(&run.stderr));
    let theirs: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    assert_eq!(theirs.len(), ours.len());
    let flat = |v: &serde_json::Value| -> Vec<i64> { v.as_array().unwrap().iter().flat_map(|row| row.as_array().unwrap().iter().map(|x| x.as_i64().unwrap())).collect() };
    for (g, (mine, peer)) in ours.iter().zip(&theirs).enumerate() {
        assert_rows("raw vs pyfglt", g as u64, &mine.raw, &flat(&peer["raw"]));
        assert_rows("net vs pyfglt", g as u64, &mine.net, &flat(&peer["net"]));
    }
    std::fs::remove_dir_all(&dir).ok();
    println!("graphlets: {GRAPHS} random graphs equal pyfglt 0.3.0 (raw and net, all 16 orbits)");
}

#[test]
fn net_equals_brute_force_enumeration() {
    let cpu = TransformParams { backend: Backend::Cpu };
    let mut checked = 0;
    for seed in 0..GRAPHS {
        let (n, e) = random_graph(seed);
        if n > 24 {
            continue;
        }
        let a = Adjacency::from_edges(n, &e).unwrap();
        let (f, _) = transform(&a, &cpu).unwrap();
        let expected: Vec<i64> = brute_force_net(&a).into_iter().flatten().collect();
        assert_rows("net vs brute force", seed, &f.net, &expected);
        checked += 1;
    }
    assert!(checked >= 80, "only {checked} small graphs checked");
}

#[test]
fn edge_cases_one_node_no_edges_self_loops_repeats() {
    let cpu = TransformParams { backend: Backend::Cpu };
    // one node: σ0 only
    let (f, _) = transform(&Adjacency::from_edges(1, &[]).unwrap(), &cpu).unwrap();
    let mut one = [0i64; N_ORBITS];
    one[0] = 1;
    assert_rows("1 node", 0, &f.net, &one);
    // no nodes: an empty result
    let (f, _) = transform(&Adjacency::from_edges(0, &[]).unwrap(), &cpu).unwrap();
    assert_eq!(f.n_nodes(), 0);
    // self-loops and repeated edges are dropped and counted: a triangle
    let a = Adjacency::from_edges(3, &[(0, 1), (1, 0), (1, 2), (2, 0), (2, 2), (0, 0)]).unwrap();
    assert_eq!((a.self_loops_dropped, a.repeats_dropped, a.n_edges()), (2, 1, 3));
    let (f, _) = transform(&a, &cpu).unwrap();
    for i in 0..3 {
        assert_rows("triangle", i as u64, f.net_row(i), &[1, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }
    // bad input: a node past the graph is a typed error, not a panic
    assert!(matches!(Adjacency::from_edges(2, &[(0, 5)]), Err(OctileError::InvalidGraph { .. })));
    // a CSR given as is must be symmetric
    assert!(Adjacency::from_csr(vec![0, 1, 1], vec![1]).is_err());
    assert!(Adjacency::from_csr(vec![0, 1, 2], vec![1, 0]).is_ok());
    // the GPU backend says it has no kernels yet instead of computing something else
    let e = transform(&Adjacency::from_edges(2, &[(0, 1)]).unwrap(), &TransformParams { backend: Backend::Cuda }).unwrap_err();
    assert!(e.to_string().contains("CPU only"), "{e}");
}

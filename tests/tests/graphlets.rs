//! The fast graphlet transform (issue 14) against two independent references: pyfglt 0.3.0 (the
//! FGlT authors' C++; raw and net frequencies, exactly) on 220 random graphs of many shapes, and a
//! brute-force enumeration of every connected induced subgraph of up to 4 nodes (net frequencies)
//! on the small ones. Every test body runs on every backend: the CPU, and the GPU when one is
//! usable (else an explicit SKIP line); the GPU must also equal the CPU bit for bit on larger
//! graphs with hubs (its heavy-node path), cliques and many components.
use octile::graphlets::{Adjacency, Frequencies, Keep, N_ORBITS, TransformParams, transform};
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
                (4, 3, _) if deg.contains(&3) => {
                    if deg[p] == 3 {
                        8
                    } else {
                        7
                    }
                }
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

/// The backends every test body runs on: the CPU, and the GPU when one is usable (else a SKIP).
fn backends(test: &str) -> Vec<TransformParams> {
    let mut b = vec![TransformParams { backend: Backend::Cpu, ..Default::default() }];
    if octile_tests::gpu_or_skip(test) {
        b.push(TransformParams { backend: Backend::Cuda, ..Default::default() });
    }
    b
}

/// The transform of `a` on `params`, its backend named in the failure.
fn run(a: &Adjacency, params: &TransformParams) -> Frequencies {
    let (f, info) = transform(a, params).unwrap_or_else(|e| panic!("{:?}: {e}", params.backend));
    assert_eq!(info.backend, if params.backend == Backend::Cuda { "cuda" } else { "cpu" });
    f
}

/// pyfglt 0.3.0's (raw, net) rows of each graph, n × 16 flat, run live through
/// `tests/peers/pyfglt_ref.py` (installed by scripts/setup; a missing pyfglt fails, never skips).
fn pyfglt(adjs: &[Adjacency], tag: &str) -> Vec<(Vec<i64>, Vec<i64>)> {
    // the checkout and its .venv; a GPU bundle names its copies (OCTILE_REPO, OCTILE_PYTHON)
    let root = std::env::var_os("OCTILE_REPO").map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."), PathBuf::from);
    let python = std::env::var_os("OCTILE_PYTHON").map_or_else(|| root.join(".venv/bin/python"), PathBuf::from);
    let probe = std::process::Command::new(&python).args(["-c", "import pyfglt"]).output();
    assert!(
        probe.as_ref().is_ok_and(|o| o.status.success()),
        "pyfglt is not importable from {}: run scripts/setup (it installs pyfglt==0.3.0 into .venv)",
        python.display()
    );
    let graphs: Vec<serde_json::Value> = adjs
        .iter()
        .map(|a| {
            let edges: Vec<[u32; 2]> = simple_edges(a).into_iter().map(|(i, j)| [i, j]).collect();
            serde_json::json!({"n": a.n_nodes(), "edges": edges})
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("octile-graphlets-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (input, output) = (dir.join("graphs.json"), dir.join("pyfglt.json"));
    std::fs::write(&input, serde_json::to_string(&graphs).unwrap()).unwrap();
    let run = std::process::Command::new(&python).arg(root.join("tests/peers/pyfglt_ref.py")).arg(&input).arg(&output).output().unwrap();
    assert!(run.status.success(), "pyfglt_ref.py failed: {}", String::from_utf8_lossy(&run.stderr));
    let theirs: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(theirs.len(), adjs.len());
    let flat = |v: &serde_json::Value| -> Vec<i64> {
        v.as_array().unwrap().iter().flat_map(|row| row.as_array().unwrap().iter().map(|x| x.as_i64().unwrap())).collect()
    };
    theirs.iter().map(|t| (flat(&t["raw"]), flat(&t["net"]))).collect()
}

/// Every backend's raw and net rows of every graph equal pyfglt's.
fn check_against_pyfglt(test: &str, adjs: &[Adjacency], names: &[String]) {
    let peer = pyfglt(adjs, test);
    for params in backends(&format!("{test} [cuda]")) {
        let b = format!("{:?}", params.backend);
        for (g, (a, (raw, net))) in adjs.iter().zip(&peer).enumerate() {
            let mine = run(a, &params);
            assert_rows(&format!("{b}: {}: raw vs pyfglt", names[g]), g as u64, &mine.raw, raw);
            assert_rows(&format!("{b}: {}: net vs pyfglt", names[g]), g as u64, &mine.net, net);
        }
        println!("graphlets [{b}]: {} graphs equal pyfglt 0.3.0 (raw and net, all 16 orbits)", adjs.len());
    }
}

#[test]
fn equals_pyfglt_on_random_graphs_raw_and_net() {
    let adjs: Vec<Adjacency> = (0..GRAPHS)
        .map(|seed| {
            let (n, e) = random_graph(seed);
            Adjacency::from_edges(n, &e).unwrap()
        })
        .collect();
    let names: Vec<String> = (0..GRAPHS).map(|g| format!("random graph {g}")).collect();
    check_against_pyfglt("equals_pyfglt_on_random_graphs_raw_and_net", &adjs, &names);
}

#[test]
fn equals_pyfglt_on_example_inputs() {
    // every graph of the repository's example input and of MUTAG (scripts/setup fetches it)
    let root = std::env::var_os("OCTILE_REPO").map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."), PathBuf::from);
    let mutag = root.join("data/MUTAG");
    assert!(mutag.is_dir(), "{} is missing: run scripts/setup (it fetches MUTAG from the grakel==0.1.11 wheel)", mutag.display());
    let (mut names, mut adjs) = (Vec::new(), Vec::new());
    for input in [root.join("examples/tiny.jsonl"), mutag] {
        let loaded = octile::io::read(&input, None, false).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
        for (g, graph) in loaded.graphs.iter().enumerate() {
            names.push(format!("{} graph {g}", input.display()));
            adjs.push(Adjacency::from_graph(graph).unwrap());
        }
    }
    assert!(adjs.len() > 188, "only {} example graphs", adjs.len());
    check_against_pyfglt("equals_pyfglt_on_example_inputs", &adjs, &names);
}

#[test]
fn equals_pyfglt_on_large_graphs_with_hubs_and_cliques() {
    let (names, adjs): (Vec<String>, Vec<Adjacency>) = large_graphs().into_iter().map(|(name, n, e)| (name, Adjacency::from_edges(n, &e).unwrap())).unzip();
    check_against_pyfglt("equals_pyfglt_on_large_graphs_with_hubs_and_cliques", &adjs, &names);
}

#[test]
fn net_equals_brute_force_enumeration() {
    for params in backends("net_equals_brute_force_enumeration [cuda]") {
        let mut checked = 0;
        for seed in 0..GRAPHS {
            let (n, e) = random_graph(seed);
            if n > 24 {
                continue;
            }
            let a = Adjacency::from_edges(n, &e).unwrap();
            let f = run(&a, &params);
            let expected: Vec<i64> = brute_force_net(&a).into_iter().flatten().collect();
            assert_rows(&format!("{:?}: net vs brute force", params.backend), seed, &f.net, &expected);
            checked += 1;
        }
        assert!(checked >= 80, "only {checked} small graphs checked");
    }
}

#[test]
fn edge_cases_one_node_no_edges_self_loops_repeats() {
    for params in backends("edge_cases_one_node_no_edges_self_loops_repeats [cuda]") {
        // one node: σ0 only
        let f = run(&Adjacency::from_edges(1, &[]).unwrap(), &params);
        let mut one = [0i64; N_ORBITS];
        one[0] = 1;
        assert_rows("1 node", 0, &f.net, &one);
        // no nodes: an empty result; nodes without edges: σ0 each
        assert_eq!(run(&Adjacency::from_edges(0, &[]).unwrap(), &params).n_nodes(), 0);
        let f = run(&Adjacency::from_edges(5, &[]).unwrap(), &params);
        assert_rows("5 isolated nodes", 0, &f.net, &one.repeat(5));
        // self-loops and repeated edges are dropped and counted: a triangle
        let a = Adjacency::from_edges(3, &[(0, 1), (1, 0), (1, 2), (2, 0), (2, 2), (0, 0)]).unwrap();
        assert_eq!((a.self_loops_dropped, a.repeats_dropped, a.n_edges()), (2, 1, 3));
        let f = run(&a, &params);
        for i in 0..3 {
            assert_rows("triangle", i as u64, f.net_row(i), &[1, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        }
        // keeping one kind: the other comes back empty, the kept one unchanged
        let both = run(&a, &params);
        let net = run(&a, &TransformParams { keep: Keep::Net, ..params });
        let raw = run(&a, &TransformParams { keep: Keep::Raw, ..params });
        assert!(net.raw.is_empty() && raw.net.is_empty() && net.n_nodes() == 3 && raw.n_nodes() == 3);
        assert_rows("keep net", 0, &net.net, &both.net);
        assert_rows("keep raw", 0, &raw.raw, &both.raw);
        // K5: every node is in C(4, 3) = 4 four-cliques, and in nothing else of 4 nodes
        let k5: Vec<(u32, u32)> = (0..5).flat_map(|i| (i + 1..5).map(move |j| (i, j))).collect();
        let f = run(&Adjacency::from_edges(5, &k5).unwrap(), &params);
        for i in 0..5 {
            assert_rows("K5", i as u64, f.net_row(i), &[1, 4, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4]);
        }
    }
    // bad input: a node past the graph is a typed error, not a panic
    assert!(matches!(Adjacency::from_edges(2, &[(0, 5)]), Err(OctileError::InvalidGraph { .. })));
    // a CSR given as is must be symmetric
    assert!(Adjacency::from_csr(vec![0, 1, 1], vec![1]).is_err());
    assert!(Adjacency::from_csr(vec![0, 1, 2], vec![1, 0]).is_ok());
    // without a GPU, asking for it is a clear error, never a silent CPU run
    if octile::gpu::device().is_err() {
        let e = transform(&Adjacency::from_edges(2, &[(0, 1)]).unwrap(), &TransformParams { backend: Backend::Cuda, ..Default::default() }).unwrap_err();
        assert!(matches!(e, OctileError::NoGpu(_)), "{e}");
    }
}

/// A graph with its name: (name, nodes, edges).
type NamedGraph = (String, usize, Vec<(u32, u32)>);

/// Larger graphs for the GPU's other paths: hubs whose 2-walks pass a warp's table (the heavy
/// kernel), nodes right at the table's limit, cliques (4-cliques by the thousand), and a union of
/// many components of different sizes.
fn large_graphs() -> Vec<NamedGraph> {
    let mut out = Vec::new();
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    // a star of 2,000 leaves, the leaves on a path (triangles at the hub) and a few chords
    let mut e: Vec<(u32, u32)> = (1..2001).map(|l| (0, l)).collect();
    e.extend((1..2000).map(|l| (l, l + 1)));
    e.extend((0..300).map(|_| (rng.gen_range(1..2001), rng.gen_range(1..2001))));
    out.push(("star 2000 + path + chords".to_string(), 2001, e));
    // cliques K8 … K40 (2-walks per node up to 39² = 1521) joined in a chain
    let (mut e, mut base) = (Vec::new(), 0u32);
    for size in (8..=40).step_by(4) {
        e.extend((0..size).flat_map(|i| (i + 1..size).map(move |j| (base + i, base + j))));
        if base > 0 {
            e.push((base - 1, base));
        }
        base += size;
    }
    out.push(("chained cliques K8..K40".to_string(), base as usize, e));
    // degree 22 or 23 regular-ish ring lattices: 2-walks per node 484–529, around the 512 limit
    for k in [11u32, 12] {
        let n = 3000u32;
        let e: Vec<(u32, u32)> = (0..n).flat_map(|i| (1..=k).map(move |d| (i, (i + d) % n))).collect();
        out.push((format!("ring lattice n 3000 k {k}"), n as usize, e));
    }
    // preferential attachment, 20,000 nodes, 6 edges each (hubs of degree in the hundreds)
    let (n, m) = (20_000u32, 6);
    let mut ends: Vec<u32> = (0..m).collect();
    let mut e = Vec::new();
    for v in m..n {
        for _ in 0..m {
            let u = ends[rng.gen_range(0..ends.len())];
            e.push((v, u));
            ends.push(u);
        }
        ends.extend(std::iter::repeat_n(v, m as usize));
    }
    out.push(("preferential attachment 20000 x 6".to_string(), n as usize, e));
    // random geometric graph, 30,000 nodes (many triangles and 4-cliques), isolated nodes included
    let n = 30_000usize;
    let pts: Vec<(f64, f64)> = (0..n).map(|_| (rng.r#gen(), rng.r#gen())).collect();
    let r = 0.012;
    let cells = (1.0 / r) as usize;
    let mut grid = vec![Vec::new(); cells * cells];
    for (i, &(x, y)) in pts.iter().enumerate() {
        grid[((x * cells as f64) as usize).min(cells - 1) * cells + ((y * cells as f64) as usize).min(cells - 1)].push(i as u32);
    }
    let mut e = Vec::new();
    for (i, &(x, y)) in pts.iter().enumerate() {
        let (cx, cy) = (((x * cells as f64) as usize).min(cells - 1), ((y * cells as f64) as usize).min(cells - 1));
        for gx in cx.saturating_sub(1)..=(cx + 1).min(cells - 1) {
            for gy in cy.saturating_sub(1)..=(cy + 1).min(cells - 1) {
                for &j in &grid[gx * cells + gy] {
                    let (dx, dy) = (pts[j as usize].0 - x, pts[j as usize].1 - y);
                    if (j as usize) > i && dx * dx + dy * dy < r * r {
                        e.push((i as u32, j));
                    }
                }
            }
        }
    }
    out.push(("random geometric 30000 r 0.012".to_string(), n, e));
    out
}

#[test]
fn gpu_equals_cpu_bit_for_bit_on_large_graphs() {
    if !octile_tests::gpu_or_skip("gpu_equals_cpu_bit_for_bit_on_large_graphs") {
        return;
    }
    // and one past a pinned piece (4 Mi counts) with a tail: the staged, narrowed download
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    let n = 300_001u32;
    let mut chords: Vec<(u32, u32)> = (0..n).flat_map(|i| (1..=3).map(move |d| (i, (i + d) % n))).collect();
    chords.extend((0..50_000).map(|_| (rng.gen_range(0..n), rng.gen_range(0..n))));
    let mut graphs = large_graphs();
    graphs.push(("ring lattice n 300001 k 3 + 50000 chords".to_string(), n as usize, chords));
    for (name, n, e) in graphs {
        let a = Adjacency::from_edges(n, &e).unwrap();
        let cpu = run(&a, &TransformParams { backend: Backend::Cpu, ..Default::default() });
        let gpu = run(&a, &TransformParams { backend: Backend::Cuda, ..Default::default() });
        assert_rows(&format!("{name}: raw, GPU vs CPU"), 0, &gpu.raw, &cpu.raw);
        assert_rows(&format!("{name}: net, GPU vs CPU"), 0, &gpu.net, &cpu.net);
        // each kind alone (what `octile graphlets` asks for)
        let net = run(&a, &TransformParams { backend: Backend::Cuda, keep: Keep::Net });
        let raw = run(&a, &TransformParams { backend: Backend::Cuda, keep: Keep::Raw });
        assert!(net.raw.is_empty() && raw.net.is_empty());
        assert_rows(&format!("{name}: net only, GPU vs CPU"), 0, &net.net, &cpu.net);
        assert_rows(&format!("{name}: raw only, GPU vs CPU"), 0, &raw.raw, &cpu.raw);
        println!("graphlets: {name}: {} nodes, {} edges, max degree {}: GPU = CPU", a.n_nodes(), a.n_edges(), a.max_degree());
    }
}

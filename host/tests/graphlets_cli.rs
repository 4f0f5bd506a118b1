//! `octile graphlets` and `octile generate` end to end: the written `.npy` (int64) and `.csv`
//! equal the library's transform of the same graph (all orbits or `--orbits`, net or `--raw`), the
//! JSON summary is complete, a set of graphs is their disjoint union, and bad input exits with
//! code 1 and a message naming file and line.
mod common;

use common::root;
use octile::graphlets::{Adjacency, Frequencies, N_ORBITS, ORBIT_NAMES, TransformParams, transform};
use octile::io::mtx;
use octile::{Backend, graphlets};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::process::Output;

fn octile(args: &[&str]) -> Output {
    common::exe().args(args).output().unwrap()
}

/// A temporary folder for one test, removed after it (`common::scratch_dir`).
fn scratch_dir(tag: &str) -> common::Scratch {
    common::scratch_dir(&format!("gcli-{tag}"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn ok(args: &[&str]) {
    let o = octile(args);
    assert!(o.status.success(), "octile {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
}

/// An int64 `.npy` as (shape, values).
fn load_npy_i64(p: &Path) -> (Vec<usize>, Vec<i64>) {
    let b = std::fs::read(p).unwrap();
    assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
    let hl = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + hl]).unwrap();
    assert!(header.contains("'descr': '<i8'"), "{header}");
    assert_eq!((10 + hl) % 64, 0, "the data must start 64-byte aligned");
    let shape = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let dims = shape.split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().unwrap()).collect();
    (dims, b[10 + hl..].chunks(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())).collect())
}

/// Checks the n × k `got` against columns `orbits` of the n × 16 `want`, naming the first difference.
fn assert_columns(got: &[i64], want: &[i64], orbits: &[usize], what: &str) {
    let k = orbits.len();
    assert_eq!(got.len(), want.len() / N_ORBITS * k, "{what}: {} values, expected {}", got.len(), want.len() / N_ORBITS * k);
    for (idx, &v) in got.iter().enumerate() {
        let (node, c) = (idx / k, idx % k);
        let w = want[node * N_ORBITS + orbits[c]];
        assert_eq!(v, w, "{what}: node {node}, orbit {}: actual {v}, expected {w}", orbits[c]);
    }
}

fn random_edges(seed: u64, n: u32, m: usize) -> Vec<(u32, u32)> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..m).map(|_| (r.gen_range(0..n), r.gen_range(0..n))).collect()
}

fn library(n: usize, edges: &[(u32, u32)]) -> (Adjacency, Frequencies) {
    let a = Adjacency::from_edges(n, edges).unwrap();
    let (f, _) = transform(&a, &TransformParams { backend: Backend::Cpu, ..Default::default() }).unwrap();
    (a, f)
}

fn summary(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn npy_and_csv_equal_the_library_with_orbits_and_raw() {
    let dir = scratch_dir("eq");
    let (n, edges) = (60, random_edges(1, 60, 400));
    let g = dir.join("g.mtx");
    mtx::write_pattern(&g, n, &edges).unwrap();
    let (a, f) = library(n, &edges);
    // all orbits, net, .npy + default summary beside it
    let out = dir.join("F.npy");
    ok(&["graphlets", s(&g), "--out", s(&out), "--backend", "cpu", "--quiet"]);
    let (dims, vals) = load_npy_i64(&out);
    assert_eq!(dims, [n, N_ORBITS]);
    let all: Vec<usize> = (0..N_ORBITS).collect();
    assert_columns(&vals, &f.net, &all, "npy net");
    let j = summary(&dir.join("F.json"));
    assert_eq!((j["n_nodes"].as_u64(), j["n_edges"].as_u64(), j["max_degree"].as_u64()), (Some(n as u64), Some(a.n_edges()), Some(a.max_degree())));
    assert_eq!((j["kind"].as_str(), j["format"].as_str(), j["backend"].as_str()), (Some("net"), Some("mtx"), Some("cpu")));
    for (o, sum) in j["column_sums"].as_array().unwrap().iter().enumerate() {
        let want: i64 = (0..n).map(|i| f.net_row(i)[o]).sum();
        assert_eq!(sum.as_i64(), Some(want), "column {o} sum: actual {sum}, expected {want}");
    }
    for key in [
        "seconds",
        "kernel_seconds",
        "read_seconds",
        "write_seconds",
        "self_loops_dropped",
        "repeats_dropped",
        "device",
        "orbit_names",
        "seconds_all",
        "output",
        "input",
    ] {
        assert!(!j[key].is_null(), "summary lacks {key}: {j}");
    }
    // raw, some orbits, .csv with a header naming them, summary elsewhere, 3 repeats
    let (csv, sj) = (dir.join("R.csv"), dir.join("elsewhere.json"));
    ok(&["graphlets", s(&g), "--out", s(&csv), "--raw", "--orbits", "0,3,5-7,15", "--repeat", "3", "--summary", s(&sj), "--quiet"]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let orbits = [0, 3, 5, 6, 7, 15];
    let quoted: Vec<String> =
        orbits.iter().map(|&o| if ORBIT_NAMES[o].contains(',') { format!("\"{}\"", ORBIT_NAMES[o]) } else { ORBIT_NAMES[o].to_string() }).collect();
    assert_eq!(lines.next().unwrap(), format!("node,{}", quoted.join(",")));
    let mut got = Vec::new();
    for (i, line) in lines.enumerate() {
        let cells: Vec<i64> = line.split(',').map(|c| c.parse().unwrap()).collect();
        assert_eq!(cells[0], i as i64, "csv row {i}: node column");
        got.extend(&cells[1..]);
    }
    assert_columns(&got, &f.raw, &orbits, "csv raw");
    let j = summary(&sj);
    assert_eq!((j["kind"].as_str(), j["repeat"].as_u64(), j["seconds_all"].as_array().map(Vec::len)), (Some("raw"), Some(3), Some(3)));
    assert_eq!(j["orbits"], serde_json::json!(orbits));
    assert!(!dir.join("R.json").exists(), "--summary: nothing beside the output");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn edge_lists_graph_sets_and_generators() {
    let dir = scratch_dir("inputs");
    // an edge list with self-loops, repeats, a weight column and isolated nodes (--nodes)
    let el = dir.join("g.tsv");
    std::fs::write(&el, "# u v w\n0\t1\t0.5\n1\t2\t1\n2\t0\t1\n2\t2\t1\n1\t0\t1\n2\t3\t1\n").unwrap();
    let out = dir.join("E.npy");
    ok(&["graphlets", s(&el), "--out", s(&out), "--nodes", "6", "--quiet"]);
    let (_, f) = library(6, &[(0, 1), (1, 2), (2, 0), (2, 3)]);
    let (dims, vals) = load_npy_i64(&out);
    assert_eq!(dims, [6, N_ORBITS]);
    assert_columns(&vals, &f.net, &(0..N_ORBITS).collect::<Vec<_>>(), "edge list");
    let j = summary(&dir.join("E.json"));
    assert_eq!((j["self_loops_dropped"].as_u64(), j["repeats_dropped"].as_u64(), j["format"].as_str()), (Some(1), Some(1), Some("edges")));
    // a set of graphs: the disjoint union, offsets in the summary
    let tiny = root().join("examples/tiny.jsonl");
    let out = dir.join("U.npy");
    ok(&["graphlets", s(&tiny), "--out", s(&out), "--orbits", "0-4", "--quiet"]);
    let graphs = octile::io::read(&tiny, None, false).unwrap().graphs;
    let j = summary(&dir.join("U.json"));
    let offsets: Vec<usize> = j["graph_node_offsets"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
    assert_eq!(offsets.len(), graphs.len() + 1);
    let (_, vals) = load_npy_i64(&out);
    for (gi, g) in graphs.iter().enumerate() {
        let a = graphlets::Adjacency::from_graph(g).unwrap();
        let (fg, _) = transform(&a, &TransformParams::default()).unwrap();
        assert_eq!(offsets[gi + 1] - offsets[gi], g.n_nodes(), "graph {gi}: node count from the offsets");
        assert_columns(&vals[offsets[gi] * 5..offsets[gi + 1] * 5], &fg.net, &[0, 1, 2, 3, 4], &format!("union, graph {gi}"));
    }
    // a generator spec equals its written file
    let (gm, a1, a2) = (dir.join("ba.mtx"), dir.join("A1.npy"), dir.join("A2.npy"));
    ok(&["generate", "gen:ba:300:3:5", "--out", s(&gm)]);
    ok(&["graphlets", "gen:ba:300:3:5", "--out", s(&a1), "--quiet"]);
    ok(&["graphlets", s(&gm), "--out", s(&a2), "--quiet"]);
    assert_eq!(std::fs::read(&a1).unwrap(), std::fs::read(&a2).unwrap(), "gen:ba:300:3:5 and its .mtx give different frequencies");
    let (n, edges) = octile::generators::large::ba_edges(300, 3, 5).unwrap();
    let (_, f) = library(n, &edges);
    assert_columns(&load_npy_i64(&a1).1, &f.net, &(0..N_ORBITS).collect::<Vec<_>>(), "gen:ba");
    // `gram`'s generated sets are inputs too: nws:3 is the disjoint union of its three graphs
    let out = dir.join("N.npy");
    ok(&["graphlets", "nws:3:7", "--out", s(&out), "--quiet"]);
    let set = octile::generators::nws_set(3, 7);
    let refs: Vec<&octile::Graph> = set.iter().collect();
    let u = Adjacency::union_edges(&refs).unwrap();
    let (_, f) = library(u.n_nodes, &u.edges);
    assert_columns(&load_npy_i64(&out).1, &f.net, &(0..N_ORBITS).collect::<Vec<_>>(), "nws:3:7");
    assert_eq!(summary(&dir.join("N.json"))["graphs"].as_u64(), Some(3));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_exits_1_naming_file_and_line() {
    let dir = scratch_dir("bad");
    let bad = dir.join("bad.mtx");
    std::fs::write(&bad, "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n4 1\n").unwrap();
    let good = dir.join("good.mtx");
    std::fs::write(&good, "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n2 1\n").unwrap();
    let out = dir.join("F.npy");
    let (txt, none, road) = (dir.join("F.txt"), dir.join("none.mtx"), dir.join("r.mtx"));
    // an empty edge list, an empty matrix: errors, not a header-only output
    let (empty, zero) = (dir.join("e.edges"), dir.join("z.mtx"));
    std::fs::write(&empty, "# nothing\n").unwrap();
    std::fs::write(&zero, "%%MatrixMarket matrix coordinate pattern symmetric\n0 0 0\n").unwrap();
    let cases: [(Vec<&str>, &str); 11] = [
        (vec!["graphlets", s(&empty), "--out", s(&out)], "e.edges: the graph has no nodes"),
        (vec!["graphlets", s(&zero), "--out", s(&out)], "z.mtx: the graph has no nodes"),
        (vec!["graphlets", s(&bad), "--out", s(&out)], "bad.mtx:4: row index 4 is out of range 1..=3"),
        (vec!["graphlets", s(&good), "--out", s(&out), "--orbits", "3-1"], "runs backwards"),
        (vec!["graphlets", s(&good), "--out", s(&out), "--orbits", "0,16"], "orbit 16 does not exist"),
        (vec!["graphlets", s(&good), "--out", s(&out), "--orbits", "2,0-3"], "orbit 2 is asked for twice"),
        (vec!["graphlets", s(&good), "--out", s(&txt)], "written as .npy or .csv"),
        (vec!["graphlets", s(&good), "--out", s(&out), "--nodes", "5"], "edge lists only"),
        (vec!["graphlets", s(&none), "--out", s(&out)], "none.mtx"),
        (vec!["graphlets", "gen:nope:3", "--out", s(&out)], "unknown generator 'nope'"),
        (vec!["generate", "gen:road:10", "--out", s(&road)], "road: n = 10"),
    ];
    for (args, says) in &cases {
        let o = octile(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "octile {args:?}: exit code {:?}, expected 1; stderr: {err}", o.status.code());
        assert!(err.contains(says), "octile {args:?}: expected '{says}' in stderr: {err}");
    }
    assert!(!out.exists(), "a failed run wrote {}", out.display());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--max-memory` bounds what reading and the transform may allocate (refused before, rc 1, no
/// output); `--summary` may name neither the input nor the output (by any path), refused before any
/// work with the input untouched.
#[test]
fn max_memory_and_a_summary_naming_the_input_or_output_are_refused() {
    let dir = scratch_dir("limits");
    let out = dir.join("F.npy");
    let o = octile(&["graphlets", "gen:delaunay:2000", "--out", s(&out), "--max-memory", "1k", "--quiet"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--max-memory limit"), "{err}");
    assert!(!out.exists() && !dir.join("F.json").exists(), "written past the limit");
    assert_eq!(octile(&["graphlets", "gen:delaunay:10", "--out", s(&out), "--max-memory", "lots"]).status.code(), Some(2));
    ok(&["graphlets", "gen:delaunay:200", "--out", s(&out), "--max-memory", "1G", "--quiet"]);
    let g = dir.join("g.edges");
    std::fs::write(&g, "0 1\n1 2\n2 0\n").unwrap();
    // the output not there yet: still the same file
    let _ = std::fs::remove_file(&out);
    let same_out = format!("{}/./F.npy", dir.display());
    for (summary, says) in [(s(&g), "which is the input"), (same_out.as_str(), "would overwrite the output")] {
        let o = octile(&["graphlets", s(&g), "--out", s(&out), "--summary", summary, "--quiet"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{summary}: {err}");
        assert!(err.contains(says), "{summary}: {err}");
        assert_eq!(std::fs::read_to_string(&g).unwrap(), "0 1\n1 2\n2 0\n", "the input was changed");
    }
    // the summary records the input and the command
    ok(&["graphlets", s(&g), "--out", s(&out), "--quiet"]);
    let j = summary(&dir.join("F.json"));
    assert_eq!(j["input_file"]["bytes"], 12);
    assert!(j["provenance"]["command"].as_array().unwrap().iter().any(|a| a == "graphlets"), "{j}");
    std::fs::remove_dir_all(&dir).unwrap();
}

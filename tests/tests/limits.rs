//! Sizes beyond memory are typed errors before any allocation, on every backend: one pair of huge
//! graphs (the CPU solver's per-thread workspace, the GPU solver's scratch), and the user's memory
//! limit. Before these checks a pair of 100,000-node graphs aborted the process ("memory allocation
//! of … bytes failed") on the CPU.
use octile::mgk::config::synthetic_kernel;
use octile::{Graph, GraphKernel, MarginalizedGraphKernel, OctileError, RunControl};
use octile_tests::targets;

/// A ring of `n` nodes with the synthetic kernel's features.
fn ring(n: usize) -> Graph {
    let mut g = Graph::new(n, &["label"], &["length"]);
    for i in 0..n {
        g.set_node_features(i, &[(i % 3) as f64]).unwrap();
        g.add_edge(i, (i + 1) % n, 1.0, &[1.0]).unwrap();
    }
    g
}

#[test]
fn a_pair_of_huge_graphs_is_refused_before_allocating_on_every_backend() {
    let huge = [ring(100_000)];
    let mut errors = Vec::new();
    for t in targets("a_pair_of_huge_graphs_is_refused_before_allocating_on_every_backend") {
        let mut cfg = synthetic_kernel(0.05);
        t.apply(&mut cfg);
        let k = MarginalizedGraphKernel::new(cfg).unwrap();
        match k.gram(&huge) {
            Err(OctileError::TooLarge { what, need_bytes, .. }) if what.contains("100000 and 100000 nodes") && need_bytes > 100 << 30 => {}
            Err(e) => errors.push(format!("{}: expected TooLarge naming the pair of 100000-node graphs and > 100 GiB, got: {e}", t.name)),
            Ok(g) => errors.push(format!("{}: expected TooLarge, got a value {}", t.name, g.values[0])),
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_memory_limit_bounds_the_cpu_workspace() {
    let mut cfg = synthetic_kernel(0.05);
    cfg.backend = octile::Backend::Cpu;
    let limited =
        |bytes: u64| MarginalizedGraphKernel::new(cfg.clone()).unwrap().with_control(RunControl { max_memory_bytes: Some(bytes), ..RunControl::default() });
    // 3,000 nodes: 141 M padded product entries, ~11 GiB of workspace per thread
    match limited(256 << 20).gram(&[ring(3000)]) {
        Err(OctileError::TooLarge { what, of, .. }) => assert!(what.contains("CPU solver's workspace") && of == "--max-memory limit", "{what} / {of}"),
        other => panic!("expected TooLarge, got {:?}", other.map(|g| g.values)),
    }
    // a small pair fits the same limit
    let g = limited(256 << 20).gram(&[ring(40), ring(17)]).unwrap();
    assert!(g.values.iter().all(|v| v.is_finite() && *v > 0.0), "{:?}", g.values);
}

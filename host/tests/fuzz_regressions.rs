//! Inputs the fuzz targets (fuzz/, docs/fuzzing.md) found to crash octile or to break what its API
//! promises, each with the behaviour it has now. The reproducers are also in the fuzz corpus
//! (fuzz/corpus/<target>/regress-*), replayed by `scripts/fuzz replay`.
mod common;

use octile::io::{Format, read};

/// A temporary folder for one test, removed after it (`common::scratch_dir`).
fn scratch(name: &str) -> common::Scratch {
    common::scratch_dir(&format!("fuzz-regress-{name}"))
}

/// fuzz target `tu`, input `regress-graph-id-gap.tu`: the graph indicator 1, 1, 3 names no node of
/// graph 2; the reader returned a graph without nodes (which fails `Graph::validate`).
#[test]
fn tu_graph_id_without_nodes_is_an_error() {
    let dir = scratch("tu-gap");
    std::fs::write(dir.join("DS_A.txt"), "").unwrap();
    std::fs::write(dir.join("DS_graph_indicator.txt"), "1\n1\n3").unwrap();
    let e = read(&dir, Some(Format::Tu), false).unwrap_err().to_string();
    assert!(e.contains("no node belongs to graph 2"), "{e}");
    // ids that run without a gap still read
    std::fs::write(dir.join("DS_graph_indicator.txt"), "1\n1\n2").unwrap();
    let l = read(&dir, Some(Format::Tu), false).unwrap();
    assert_eq!(l.graphs.iter().map(|g| g.n_nodes()).collect::<Vec<_>>(), [2, 1]);
    for g in &l.graphs {
        g.validate().unwrap();
    }
}

/// fuzz target `sp_toml` (and `gram_sp`), input `regress-tiny-length-scale.toml`: a square
/// exponential with ℓ = 1e-200 passed validation, but −1/(2ℓ²) overflows to −∞, so κ(d, d) =
/// −∞·0 = NaN and every Gram entry was NaN (reported as a pair that "did not converge").
#[test]
fn sp_square_exponential_whose_coefficient_overflows_is_refused() {
    for text in [
        "method = \"shortest_path\"\n[path_length]\nkernel = \"square_exponential\"\nlength_scale = 1e-200\n",
        "method = \"shortest_path\"\n[node.label]\nkernel = \"square_exponential\"\nlength_scale = 1e-160\n",
    ] {
        let e = octile::SpConfig::from_toml(text).unwrap_err().to_string();
        assert!(e.contains("out of range") && e.contains("1/(2ℓ²) finite"), "{text:?}: {e}");
    }
    // small but representable scales stay valid, and their kernel is finite
    let c = octile::SpConfig::from_toml("method = \"shortest_path\"\n[path_length]\nkernel = \"square_exponential\"\nlength_scale = 1e-150\n").unwrap();
    let k = c.path_length.kernel();
    assert_eq!(k.eval(2.0f64, 2.0), 1.0);
    assert_eq!(k.eval(2.0f64, 3.0), 0.0);
}

/// fuzz target `pdb`, input `regress-tiny-cutoff.pdb`: `--pdb-cutoff 1e-300` made the contact
/// grid's cell index (coordinate / cutoff) saturate at i64::MAX, and looking at the neighbouring
/// cell overflowed (a panic where overflow checks are on, wrong cells elsewhere).
#[test]
fn pdb_tiny_cutoff_does_not_overflow_the_cell_grid() {
    let dir = scratch("pdb-cutoff");
    let atom = |serial: usize, x: f64| format!("ATOM  {serial:>5} N    ALA A   1    {x:>8.3}{:>8.3}{:>8.3}  1.00  0.00           N\n", 0.0, 0.0);
    let p = dir.join("x.pdb");
    std::fs::write(&p, [atom(1, 1.0), atom(2, 2.0), atom(3, -999.0)].concat()).unwrap();
    for (cutoff, edges) in [(1e-300, 0), (f64::MIN_POSITIVE, 0), (1.5, 1), (1e300, 3)] {
        let l = octile::io::read_with(&p, &octile::io::ReadOptions { pdb_cutoff: cutoff, ..Default::default() }).unwrap();
        assert_eq!((l.graphs[0].n_nodes(), l.graphs[0].n_edges()), (3, edges), "cutoff {cutoff:e}");
    }
}

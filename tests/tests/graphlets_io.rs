//! The graph readers and writers of the graphlet transform (issue 14): Matrix Market (`.mtx`:
//! pattern / real / integer, general / symmetric / skew-symmetric / hermitian) and edge lists, their
//! typed errors (file, 1-based line, what), and the round trips writer → reader. The `octile
//! graphlets` command end to end is in host/tests/graphlets_cli.rs (it needs the binary).
use octile::OctileError;
use octile::graphlets::Adjacency;
use octile::io::edgelist::{self, EdgeListOptions};
use octile::io::mtx::{self, MtxField, MtxSymmetry};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};

fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("octile-gio-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn mtx_ok(text: &str) -> mtx::MtxGraph {
    mtx::parse(Path::new("t.mtx"), text.as_bytes()).unwrap_or_else(|e| panic!("expected to parse, got: {e}\n{text}"))
}

/// The (line, what) of the parse error of `result`; panics naming `expect` otherwise.
fn parse_error<T: std::fmt::Debug>(result: octile::Result<T>, expect: &str) -> (usize, String) {
    match result {
        Err(OctileError::Parse { path, line, what }) => {
            assert!(what.contains(expect), "expected an error containing '{expect}', got line {line}: {what}");
            assert!(!path.as_os_str().is_empty());
            (line, what)
        }
        other => panic!("expected a parse error containing '{expect}', got {other:?}"),
    }
}

fn mtx_err(text: &str, expect: &str, line: usize) {
    let (got, what) = parse_error(mtx::parse(Path::new("t.mtx"), text.as_bytes()), expect);
    assert_eq!(got, line, "error line: actual {got}, expected {line} ({what})\n{text}");
}

fn sorted(mut e: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    e.sort_unstable();
    e
}

#[test]
fn mtx_pattern_symmetric_with_comments_blank_lines_and_crlf() {
    let g =
        mtx_ok("%%MatrixMarket matrix coordinate pattern symmetric\r\n% a comment\r\n\r\n   \n% another\n4 4 3\n2 1\n\n% between entries\n3 2\r\n  4   1  \n");
    assert_eq!(g.n_nodes, 4);
    assert_eq!(g.edges, [(1, 0), (2, 1), (3, 0)]);
    assert_eq!((g.header.field, g.header.symmetry, g.header.rows, g.header.cols, g.header.entries), (MtxField::Pattern, MtxSymmetry::Symmetric, 4, 4, 3));
    // the banner's words are case-insensitive; the last line may lack its newline
    let g = mtx_ok("%%MatrixMarket MATRIX Coordinate Pattern SYMMETRIC\n3 3 1\n3 1");
    assert_eq!(g.edges, [(2, 0)]);
}

#[test]
fn mtx_values_are_ignored_and_an_explicit_zero_is_an_edge() {
    let g = mtx_ok("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n2 1 0.0\n3 1 -1.5e-3\n3 2 0\n");
    assert_eq!(g.edges, [(1, 0), (2, 0), (2, 1)]);
    let g = mtx_ok("%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 -7\n3 2 +4\n");
    assert_eq!((g.header.field, g.header.symmetry), (MtxField::Integer, MtxSymmetry::SkewSymmetric));
    assert_eq!(g.edges, [(1, 0), (2, 1)]);
    let g = mtx_ok("%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n2 1 3.5\n");
    assert_eq!((g.header.symmetry, g.edges.clone()), (MtxSymmetry::Hermitian, vec![(1, 0)]));
}

#[test]
fn mtx_general_is_the_pattern_of_a_plus_a_transposed_and_counts_one_sided_pairs() {
    // {0,1} both ways, {1,2} one way, {0,3} one way (stored as (4, 1)), a self-loop, an exact repeat
    let g = mtx_ok("%%MatrixMarket matrix coordinate real general\n4 4 7\n1 2 1\n2 1 1\n2 3 1\n4 1 2\n3 3 1\n1 2 5\n2 1 5\n");
    assert_eq!((g.mirrored_pairs, g.one_sided_pairs), (1, 2));
    // (0,1) stored twice each way: two edges (one repeat for the adjacency to count)
    assert_eq!(sorted(g.edges.clone()), [(0, 1), (0, 1), (0, 3), (1, 2), (2, 2)]);
    let a = Adjacency::from_edges(g.n_nodes, &g.edges).unwrap();
    assert_eq!((a.n_edges(), a.self_loops_dropped, a.repeats_dropped), (3, 1, 1));
    // a symmetric file has no such counts
    let g = mtx_ok("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n2 1\n");
    assert_eq!((g.mirrored_pairs, g.one_sided_pairs), (0, 0));
}

#[test]
fn mtx_self_loops_and_repeats_reach_the_adjacency_which_drops_and_counts_them() {
    let g = mtx_ok("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 5\n1 1\n2 1\n2 1\n1 2\n3 3\n");
    let a = Adjacency::from_edges(g.n_nodes, &g.edges).unwrap();
    assert_eq!((a.n_nodes(), a.n_edges(), a.self_loops_dropped, a.repeats_dropped), (3, 1, 2, 2));
}

#[test]
fn mtx_entry_counts_must_match_the_size_line() {
    let head = "%%MatrixMarket matrix coordinate pattern symmetric\n% c\n3 3 2\n";
    mtx_err(&format!("{head}2 1\n"), "announces 2 entries but the file has 1", 3);
    mtx_err(&format!("{head}2 1\n3 1\n% c\n\n3 2\n"), "entry 3 past the 2", 8);
    mtx_err(head, "announces 2 entries but the file has 0", 3);
    // an absurd count is refused by the count, not by allocating it
    mtx_err(
        "%%MatrixMarket matrix coordinate pattern general\n4000000000 4000000000 1000000000000000000\n1 2\n",
        "announces 1000000000000000000 entries but the file has 1",
        2,
    );
    mtx_err("%%MatrixMarket matrix coordinate pattern general\n3 3 10\n1 2\n", "10 entries cannot fit a 3 × 3 matrix", 2);
}

#[test]
fn mtx_indices_must_lie_in_one_to_n() {
    let head = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n";
    mtx_err(&format!("{head}0 1\n"), "row index 0 is out of range 1..=3 (indices are 1-based)", 3);
    mtx_err(&format!("{head}1 4\n"), "column index 4 is out of range 1..=3", 3);
    mtx_err(&format!("{head}1 -2\n"), "column index '-2' is not a positive integer", 3);
    mtx_err(&format!("{head}1 99999999999999999999999\n"), "is not a positive integer", 3);
    mtx_err(&format!("{head}1\n"), "an entry is 'row col'", 3);
}

#[test]
fn mtx_entries_must_have_the_fields_words() {
    mtx_err("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n2 1 1.0\n", "a pattern entry is 'row col' (no value)", 3);
    mtx_err("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n2 1\n", "the value is missing", 3);
    mtx_err("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n2 1 1 2\n", "a real entry is 'row col value', not 4 words", 3);
    mtx_err("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n2 1 x\n", "value 'x' is not a real number", 3);
    mtx_err("%%MatrixMarket matrix coordinate integer symmetric\n2 2 1\n2 1 1.5\n", "value '1.5' is not an integer", 3);
}

#[test]
fn mtx_matrix_must_be_square_and_fit_32_bit_ids() {
    mtx_err("%%MatrixMarket matrix coordinate pattern general\n% c\n3 4 1\n1 2\n", "the matrix is 3 × 4: a graph's adjacency matrix must be square", 3);
    mtx_err("%%MatrixMarket matrix coordinate pattern general\n4294967296 4294967296 0\n", "node ids must fit 32 bits", 2);
    mtx_err("%%MatrixMarket matrix coordinate pattern general\n3 3\n", "is not a size line", 2);
    mtx_err("%%MatrixMarket matrix coordinate pattern general\n3 3 1 1\n", "is not a size line", 2);
    mtx_err("%%MatrixMarket matrix coordinate pattern general\n% only comments\n\n", "no size line", 3);
}

#[test]
fn mtx_bad_banners_say_what_is_wrong() {
    mtx_err("", "is not a Matrix Market banner", 1);
    mtx_err("3 3 1\n1 2\n", "is not a Matrix Market banner", 1);
    mtx_err("%%MatrixMarket matrix coordinate pattern\n3 3 0\n", "the banner has 4 words; expected 5", 1);
    mtx_err("%%MatrixMarket vector coordinate pattern general\n3 3 0\n", "only 'matrix' files are graphs", 1);
    mtx_err("%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n1\n", "dense array format not supported", 1);
    mtx_err("%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n2 1 1 0\n", "complex values are not supported", 1);
    mtx_err("%%MatrixMarket matrix coordinate pattern upper\n2 2 0\n", "symmetry 'upper'", 1);
    mtx_err("%%MatrixMarket matrix coordinate boolean general\n2 2 0\n", "field 'boolean'", 1);
}

#[test]
fn mtx_files_name_the_file_and_a_folder_or_missing_file_is_a_typed_error() {
    let dir = scratch_dir("mtx-file");
    let p = dir.join("bad.mtx");
    std::fs::write(&p, "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n3 1\n").unwrap();
    let e = mtx::read(&p).unwrap_err().to_string();
    assert!(e.contains("bad.mtx:3:") && e.contains("row index 3 is out of range"), "{e}");
    assert!(matches!(mtx::read(&dir.join("missing.mtx")), Err(OctileError::Io { .. })));
    parse_error(mtx::read(&dir), "a folder");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mtx_errors_deep_in_a_large_file_name_the_right_line() {
    // > 1 MiB: the entries are parsed in several chunks, the line numbers must still be exact
    let n = 200_000;
    let mut text = format!("%%MatrixMarket matrix coordinate pattern general\n% big\n{n} {n} {n}\n");
    for i in 0..n {
        if i == 150_000 {
            text.push_str("% a comment in the middle\n\n");
        }
        text.push_str(&format!("{} {}\n", i + 1, (i + 1) % n + 1));
    }
    let g = mtx_ok(&text);
    assert_eq!((g.edges.len(), g.one_sided_pairs, g.mirrored_pairs), (n, n as u64, 0));
    let bad = text.replacen("170001 170002\n", "170001 x\n", 1);
    mtx_err(&bad, "column index 'x'", 3 + 170_000 + 2 + 1);
    let extra = format!("{text}1 5\n");
    mtx_err(&extra, &format!("entry {} past the {n}", n + 1), 3 + n + 2 + 1);
}

#[test]
fn mtx_write_pattern_reads_back_as_the_same_simple_graph() {
    let dir = scratch_dir("mtx-rt");
    let mut r = ChaCha8Rng::seed_from_u64(14);
    for (case, &(n, m)) in [(1usize, 0usize), (2, 1), (50, 300), (3000, 20_000), (100_000, 400_000)].iter().enumerate() {
        let edges: Vec<(u32, u32)> = (0..m).map(|_| (r.gen_range(0..n as u32), r.gen_range(0..n as u32))).collect();
        let p = dir.join(format!("g{case}.mtx"));
        let written = mtx::write_pattern(&p, n, &edges).unwrap();
        let g = mtx::read(&p).unwrap();
        let want = Adjacency::from_edges(n, &edges).unwrap();
        let got = Adjacency::from_edges(g.n_nodes, &g.edges).unwrap();
        assert_eq!(written, want.n_edges(), "case {case}: entries written: actual {written}, expected {}", want.n_edges());
        assert_eq!((got.n_nodes(), got.n_edges()), (n, want.n_edges()), "case {case}: (nodes, edges) read back");
        assert_eq!((got.row_start(), got.col()), (want.row_start(), want.col()), "case {case}: CSR read back");
        assert_eq!((got.self_loops_dropped, got.repeats_dropped), (0, 0), "case {case}: the written file is simple");
        assert!(g.edges.iter().all(|&(i, j)| i > j), "case {case}: entries are the strict lower triangle");
        assert_eq!(g.header.symmetry, MtxSymmetry::Symmetric);
    }
    let e = mtx::write_pattern(&dir.join("x.mtx"), 3, &[(0, 3)]).unwrap_err().to_string();
    assert!(e.contains("node out of range"), "{e}");
    assert!(!dir.join("x.mtx").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

fn el_ok(text: &str, opt: EdgeListOptions) -> edgelist::EdgeList {
    edgelist::parse(Path::new("t.edges"), text.as_bytes(), &opt).unwrap_or_else(|e| panic!("expected to parse, got: {e}\n{text}"))
}

fn el_err(text: &str, opt: EdgeListOptions, expect: &str, line: usize) {
    let (got, what) = parse_error(edgelist::parse(Path::new("t.edges"), text.as_bytes(), &opt), expect);
    assert_eq!(got, line, "error line: actual {got}, expected {line} ({what})\n{text}");
}

#[test]
fn edge_lists_with_comments_commas_weights_and_blank_lines() {
    let text = "# a header comment\n% another\n0 1\n\n1,2\n2\t3\t0.5\n 3 , 0 , 7, x\r\n4 4\n";
    let e = el_ok(text, EdgeListOptions::default());
    assert_eq!(e.n_nodes, 5);
    assert_eq!(e.edges, [(0, 1), (1, 2), (2, 3), (3, 0), (4, 4)]);
    let a = Adjacency::from_edges(e.n_nodes, &e.edges).unwrap();
    assert_eq!((a.n_edges(), a.self_loops_dropped), (4, 1));
    // --nodes: isolated nodes past the largest id
    assert_eq!(el_ok(text, EdgeListOptions { n_nodes: Some(9), one_based: false }).n_nodes, 9);
    // 1-based
    let e = el_ok("1 2\n2 3\n", EdgeListOptions { n_nodes: None, one_based: true });
    assert_eq!((e.n_nodes, e.edges), (3, vec![(0, 1), (1, 2)]));
    // empty: no nodes unless told
    assert_eq!(el_ok("# nothing\n", EdgeListOptions::default()).n_nodes, 0);
    assert_eq!(el_ok("", EdgeListOptions { n_nodes: Some(4), one_based: false }).n_nodes, 4);
}

#[test]
fn edge_list_errors_name_the_line() {
    let d = EdgeListOptions::default();
    el_err("source,target\n0,1\n", d, "'source' is not a node id", 1);
    el_err("0 1\n\n# c\n2\n", d, "an edge is two node ids", 4);
    el_err("0 1\n1 -2\n", d, "'-2' is not a node id", 2);
    el_err("0 1\n1 2.0\n", d, "'2.0' is not a node id", 2);
    el_err("0 4294967295\n", d, "does not fit 32 bits", 1);
    el_err("0 1\n1 5\n", EdgeListOptions { n_nodes: Some(5), one_based: false }, "node id 5 is out of range: the graph has 5 nodes", 2);
    el_err("1 2\n0 1\n", EdgeListOptions { n_nodes: None, one_based: true }, "node id 0 in a 1-based edge list", 2);
    el_err("1 2\n3 4\n", EdgeListOptions { n_nodes: Some(3), one_based: true }, "node id 4 is out of range", 2);
    // deep in a multi-chunk file
    let mut text: String = (0..300_000).map(|i| format!("{i} {}\n", i + 1)).collect();
    text.push_str("7 seven\n");
    el_err(&text, d, "'seven' is not a node id", 300_001);
}

#[test]
fn edge_list_write_reads_back_and_files_are_named_in_errors() {
    let dir = scratch_dir("el");
    let mut r = ChaCha8Rng::seed_from_u64(7);
    let n = 5000;
    let edges: Vec<(u32, u32)> = (0..40_000).map(|_| (r.gen_range(0..n as u32), r.gen_range(0..n as u32))).collect();
    let p = dir.join("g.edges");
    let written = edgelist::write(&p, n, &edges).unwrap();
    let back = edgelist::read(&p, &EdgeListOptions { n_nodes: Some(n), one_based: false }).unwrap();
    let (want, got) = (Adjacency::from_edges(n, &edges).unwrap(), Adjacency::from_edges(back.n_nodes, &back.edges).unwrap());
    assert_eq!(written, want.n_edges());
    assert_eq!((got.row_start(), got.col()), (want.row_start(), want.col()), "edge list round trip: CSR differs");
    std::fs::write(dir.join("bad.txt"), "0 1\nzero 1\n").unwrap();
    let e = edgelist::read(&dir.join("bad.txt"), &EdgeListOptions::default()).unwrap_err().to_string();
    assert!(e.contains("bad.txt:2:") && e.contains("'zero' is not a node id"), "{e}");
    for ext in ["edges", "el", "edgelist", "tsv", "txt", "TXT"] {
        assert!(edgelist::is_edge_list_path(Path::new(&format!("g.{ext}"))), "{ext}");
    }
    assert!(!edgelist::is_edge_list_path(Path::new("g.csv")));
    std::fs::remove_dir_all(&dir).unwrap();
}

//! The graph readers of `octile graphlets`: Matrix Market (`mtx::parse`) and edge lists
//! (`edgelist::parse`). The first byte picks the reader and its options (bit 0: edge list; bit 1:
//! 1-based ids; bit 2: a node count, the second byte, given), the rest is the file. A graph that
//! reads must name only nodes below its node count, keep the size line's entry count, build an
//! `Adjacency`, and read back as the same simple graph after each writer (`mtx::write_pattern`,
//! `edgelist::write`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use octile::graphlets::Adjacency;
use octile::io::edgelist::{self, EdgeListOptions};
use octile::io::mtx::{self, MtxSymmetry};
use std::path::Path;

fuzz_target!(init: octile_fuzz::init_config(), |data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let (n_given, text) = match rest.split_first() {
        Some((&n, t)) if mode & 4 != 0 => (Some(n as usize), t),
        _ => (None, rest),
    };
    let read = if mode & 1 == 0 {
        mtx::parse(Path::new("input.mtx"), text).map(|g| {
            assert_eq!(g.header.rows as usize, g.n_nodes, "rows = nodes");
            let entries = g.header.entries as usize;
            if g.header.symmetry == MtxSymmetry::General {
                assert!(g.edges.len() <= entries && (g.mirrored_pairs + g.one_sided_pairs) as usize <= entries, "{} edges, {} mirrored, {} one-sided of {entries} entries", g.edges.len(), g.mirrored_pairs, g.one_sided_pairs);
            } else {
                assert_eq!(g.edges.len(), entries, "one edge per entry");
            }
            (g.n_nodes, g.edges)
        })
    } else {
        edgelist::parse(Path::new("input.edges"), text, &EdgeListOptions { n_nodes: n_given, one_based: mode & 2 != 0 }).map(|e| (e.n_nodes, e.edges))
    };
    let (n, edges) = match read {
        Ok(g) => g,
        Err(e) => {
            let msg = e.to_string();
            if octile_fuzz::verbose() {
                eprintln!("refused: {msg}");
            }
            return;
        }
    };
    assert!(edges.iter().all(|&(u, v)| (u as usize) < n && (v as usize) < n), "an edge past the {n} nodes");
    if n > 1 << 16 {
        return; // a valid header of a huge empty graph: the adjacency would allocate n
    }
    let a = Adjacency::from_edges(n, &edges).expect("the edges of a graph that reads build an adjacency");
    let m = octile_fuzz::write("out.mtx", b"");
    mtx::write_pattern(&m, n, &edges).expect("write .mtx");
    let back = mtx::read(&m).expect("the writer's own .mtx reads");
    let b = Adjacency::from_edges(back.n_nodes, &back.edges).expect("adjacency of the written .mtx");
    assert_eq!((b.row_start(), b.col()), (a.row_start(), a.col()), ".mtx round trip changes the graph");
    let el = octile_fuzz::write("out.edges", b"");
    edgelist::write(&el, n, &edges).expect("write edge list");
    let back = edgelist::read(&el, &EdgeListOptions { n_nodes: Some(n), one_based: false }).expect("the writer's own edge list reads");
    let b = Adjacency::from_edges(back.n_nodes, &back.edges).expect("adjacency of the written edge list");
    assert_eq!((b.row_start(), b.col()), (a.row_start(), a.col()), "edge list round trip changes the graph");
});

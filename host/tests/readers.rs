//! Readers on small inline cases and malformed inputs: each bad input gives a typed error naming
//! file and line; real datasets in data/ are read when present (SKIP otherwise).
use octile::GraphKernel;
use octile::io::{Format, read};
use octile::{MarginalizedGraphKernel, MgkConfig, OctileError};
use std::path::{Path, PathBuf};

fn tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("octile-readers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn parse_error(r: octile::Result<octile::io::Loaded>) -> (usize, String) {
    match r {
        Err(OctileError::Parse { line, what, .. }) => (line, what),
        Err(e) => panic!("expected a Parse error, got {e}"),
        Ok(l) => panic!("expected a Parse error, got {} graphs", l.graphs.len()),
    }
}

#[test]
fn networkx_json_lines_links_and_edges_any_ids() {
    let l = read(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tiny.jsonl")), None, false).unwrap();
    assert_eq!(l.graphs.len(), 3);
    assert_eq!(l.graphs[0].n_nodes(), 3);
    assert_eq!(l.graphs[0].n_edges(), 2);
    assert_eq!(l.graphs[0].edges()[1].weight, 2.0);
    assert_eq!(l.graphs[1].n_edges(), 1, "'edges' key (newer networkx)");
    assert_eq!(l.graphs[2].n_edges(), 5, "self-loop kept");
    assert_eq!(l.graphs[0].node_feature_names(), ["label"]);
    assert_eq!(l.graphs[0].edge_feature_names(), ["length"]);
}

#[test]
fn json_array_form() {
    let p = tmp("arr.json", r#"[{"nodes":[{"id":1,"x":0.5}],"links":[]},{"nodes":[{"id":"u","x":1},{"id":"v","x":2}],"links":[{"source":"u","target":"v"}]}]"#);
    let l = read(&p, None, false).unwrap();
    assert_eq!(l.graphs.len(), 2);
    assert_eq!(l.graphs[1].n_edges(), 1);
}

#[test]
fn malformed_json_is_an_error_with_its_line() {
    let p = tmp("bad.jsonl", "{\"nodes\":[{\"id\":0}],\"links\":[]}\n{\"nodes\":[{\"id\":0}],\"links\":[{\"source\":0,\"tar\n");
    let (line, what) = parse_error(read(&p, None, false));
    assert_eq!(line, 2, "{what}");
    let p = tmp("range.jsonl", "{\"nodes\":[{\"id\":0}],\"links\":[{\"source\":0,\"target\":7}]}\n");
    let (line, what) = parse_error(read(&p, None, false));
    assert_eq!(line, 1);
    assert!(what.contains("target 7 is not a node id"), "{what}");
    let p = tmp("nan.jsonl", "{\"nodes\":[{\"id\":0,\"x\":NaN}],\"links\":[]}\n");
    let (line, _) = parse_error(read(&p, None, false));
    assert_eq!(line, 1);
    let p = tmp("w.jsonl", "{\"nodes\":[{\"id\":0},{\"id\":1}],\"links\":[{\"source\":0,\"target\":1,\"weight\":-1}]}\n");
    let (_, what) = parse_error(read(&p, None, false));
    assert!(what.contains("weight must be finite and > 0"), "{what}");
}

#[test]
fn empty_file_is_an_error() {
    let p = tmp("empty.smi", "");
    let (_, what) = parse_error(read(&p, None, false));
    assert!(what.contains("no graphs"), "{what}");
}

#[test]
fn smiles_atoms_bonds_and_errors() {
    let p = tmp("m.smi", "CCO ethanol\nc1ccccc1 benzene\n[NH4+] ammonium\n");
    let l = read(&p, None, false).unwrap();
    assert_eq!(l.graphs.len(), 3);
    let benzene = &l.graphs[1];
    assert_eq!(benzene.n_nodes(), 6);
    assert_eq!(benzene.n_edges(), 6);
    assert!(benzene.edge_features(0)[0] == 4.0, "aromatic bond order code 4");
    assert_eq!(benzene.node_features(0)[..2], [6.0, 1.0], "carbon, aromatic");
    let nh4 = &l.graphs[2];
    assert_eq!(nh4.node_features(0), [7.0, 0.0, 1.0, 4.0], "N, charge +1, 4 H");
    assert_eq!(l.graphs[0].node_features(2), [8.0, 0.0, 0.0, 1.0], "O with one implicit H");

    let p = tmp("bad.smi", "CCO\nC1CC(\n");
    let (line, what) = parse_error(read(&p, None, false));
    assert_eq!(line, 2, "{what}");
    let p = tmp("elem.smi", "[Xx]C\n");
    let (line, what) = parse_error(read(&p, None, false));
    assert_eq!(line, 1, "{what}");
    let l = read(&tmp("skip.smi", "CC\nC1CC(\nCN\n"), None, true).unwrap();
    assert_eq!((l.graphs.len(), l.skipped), (2, 1));
    // where each graph and each skipped record was (issue 32): rows match back to records
    use octile::io::Place;
    assert_eq!(l.places, [Place { record: 0, line: 1 }, Place { record: 2, line: 3 }]);
    assert_eq!(l.skipped_records.len(), 1);
    assert_eq!(l.skipped_records[0].place, Place { record: 1, line: 2 });
    assert!(l.skipped_records[0].reason.contains("C1CC("), "{:?}", l.skipped_records);
    let l = read(&tmp("skip.json", r#"[{"nodes": [{"id": 0}], "links": []}, {"nodes": 5}, {"nodes": [{"id": 0}], "links": []}]"#), None, true).unwrap();
    assert_eq!(l.places, [Place { record: 0, line: 0 }, Place { record: 2, line: 0 }]);
    assert_eq!(l.skipped_records[0].place, Place { record: 1, line: 0 });
    // a SMILES far longer than any molecule: a typed error, its line, and a shortened echo (no
    // stack overflow, no 100 kB message)
    let p = tmp("long.smi", &format!("CC\n{}(\n", "C".repeat(100_000)));
    let (line, what) = parse_error(read(&p, None, false));
    assert_eq!(line, 2, "{}", &what[..what.len().min(300)]);
    assert!(what.contains("longer than the reader's limit") && what.len() < 300, "{}", &what[..what.len().min(300)]);
    // a ring closure to the same atom is an error (RDKit's rule), not a silently lost bond
    let p = tmp("self.smi", "CC\nC11\n");
    let (line, what) = parse_error(read(&p, None, false));
    assert_eq!(line, 2, "{what}");
    assert!(what.contains("to itself"), "{what}");
    // a ring closure between atoms already bonded: an error, not a graph with a doubled edge
    for smi in ["C1C1", "c1c1n"] {
        let (line, what) = parse_error(read(&tmp("dup.smi", &format!("CC\n{smi}\n")), None, false));
        assert_eq!(line, 2, "{smi}: {what}");
        assert!(what.contains("bonded twice"), "{smi}: {what}");
    }
    // non-tetrahedral chirality classes: the parser panicked on them (found by fuzzing); an error now
    for smi in ["N[C@OH2H]", "C[C@SP1H]", "F[C@TB1](Cl)(Br)(I)C"] {
        let p = tmp("chiral.smi", &format!("CC\n{smi}\n"));
        let (line, what) = parse_error(read(&p, None, false));
        assert_eq!(line, 2, "{smi}: {what}");
        assert!(what.contains("chirality class"), "{smi}: {what}");
    }
}

#[test]
fn smiles_csv_column() {
    let p = tmp("m.csv", "name,smiles,x\n\"a, b\",CCN,1\nwater,O,2\n");
    let l = read(&p, None, false).unwrap();
    assert_eq!(l.graphs.len(), 2);
    let (line, what) = parse_error(read(&tmp("n.csv", "name,mol\na,CC\n"), None, false));
    assert_eq!(line, 1);
    assert!(what.contains("no 'smiles' column"), "{what}");
}

#[test]
fn tu_folder_and_bad_ids() {
    let dir = std::env::temp_dir().join(format!("octile-tu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("DS_A.txt"), "1, 2\n2, 1\n2, 3\n3, 2\n4, 5\n5, 4\n").unwrap();
    std::fs::write(dir.join("DS_graph_indicator.txt"), "1\n1\n1\n2\n2\n").unwrap();
    std::fs::write(dir.join("DS_node_labels.txt"), "0\n1\n0\n2\n2\n").unwrap();
    std::fs::write(dir.join("DS_edge_labels.txt"), "1\n1\n2\n2\n1\n1\n").unwrap();
    let l = read(&dir, Some(Format::Tu), false).unwrap();
    assert_eq!(l.graphs.len(), 2);
    assert_eq!((l.graphs[0].n_nodes(), l.graphs[0].n_edges()), (3, 2));
    assert_eq!(l.graphs[0].edge_features(1), [2.0]);
    // the two listings of edge (2, 3) disagree: an error naming the edge-label lines, not a silent pick
    std::fs::write(dir.join("DS_edge_labels.txt"), "1\n1\n2\n3\n1\n1\n").unwrap();
    let (line, what) = parse_error(read(&dir, None, false));
    assert_eq!(line, 4, "{what}");
    assert!(what.contains("edge (3, 2) has label 3, but line 3 gives it label 2"), "{what}");
    // an A file of one column beside edge labels: its own error at its line, not hidden behind
    // the label count (2 edges, 6 labels) that it makes wrong
    std::fs::write(dir.join("DS_edge_labels.txt"), "1\n1\n2\n2\n1\n1\n").unwrap();
    std::fs::write(dir.join("DS_A.txt"), "1\n2\n").unwrap();
    let (line, what) = parse_error(read(&dir, None, false));
    assert_eq!(line, 1, "{what}");
    assert!(what.contains("expected 'i, j'"), "{what}");
    // well-formed edges and too few or too many labels: the count
    for labels in ["1\n", "1\n1\n1\n"] {
        std::fs::write(dir.join("DS_A.txt"), "1, 2\n2, 1\n").unwrap();
        std::fs::write(dir.join("DS_edge_labels.txt"), labels).unwrap();
        let (_, what) = parse_error(read(&dir, None, false));
        assert!(what.contains(&format!("{} edge labels for 2 edges", labels.lines().count())), "{what}");
    }
    std::fs::remove_file(dir.join("DS_edge_labels.txt")).unwrap();
    std::fs::write(dir.join("DS_A.txt"), "1, 2\n2, 9\n").unwrap();
    let (line, what) = parse_error(read(&dir, None, false));
    assert_eq!(line, 2, "{what}");
    assert!(what.contains("out of range"), "{what}");
}

/// Blank lines in a TU file are skipped, and a record's error names its own line; a dataset without
/// label files has no `label` feature, so a kernel comparing labels is refused rather than fed zeros.
#[test]
fn tu_blank_lines_keep_line_numbers_and_missing_labels_are_no_feature() {
    let dir = std::env::temp_dir().join(format!("octile-tu-blank-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("X_graph_indicator.txt"), "1\n\n1\n2\n\n2\n").unwrap();
    std::fs::write(dir.join("X_A.txt"), "1, 2\n\n\n2, 1\n3, 9\n").unwrap();
    let (line, what) = parse_error(read(&dir, None, false));
    assert_eq!(line, 5, "{what}");
    assert!(what.contains("node id out of range 1..=4: (3, 9)"), "{what}");
    std::fs::write(dir.join("X_graph_indicator.txt"), "1\n\n1\n2\n\n0\n").unwrap();
    let (line, what) = parse_error(read(&dir, None, false));
    assert_eq!(line, 6, "{what}");
    assert!(what.contains("graph ids are 1-based"), "{what}");
    // edge labels whose listings disagree: both lines as written, blank lines counted
    std::fs::write(dir.join("X_graph_indicator.txt"), "1\n1\n2\n2\n").unwrap();
    std::fs::write(dir.join("X_A.txt"), "1, 2\n2, 1\n3, 4\n4, 3\n").unwrap();
    std::fs::write(dir.join("X_edge_labels.txt"), "\n1\n2\n\n5\n5\n").unwrap();
    let (line, what) = parse_error(read(&dir, None, false));
    assert_eq!(line, 3, "{what}");
    assert!(what.contains("edge (2, 1) has label 2, but line 2 gives it label 1"), "{what}");
    // no label files: no label feature on either side
    std::fs::remove_file(dir.join("X_edge_labels.txt")).unwrap();
    let l = read(&dir, None, false).unwrap();
    assert_eq!(l.graphs.len(), 2);
    assert!(l.graphs.iter().all(|g| g.node_feature_names().is_empty() && g.edge_feature_names().is_empty()));
    let k = MarginalizedGraphKernel::new(MgkConfig::from_toml("[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n").unwrap()).unwrap();
    match k.gram(&l.graphs) {
        Err(OctileError::MissingFeature { feature, .. }) => assert_eq!(feature, "label"),
        other => panic!("expected MissingFeature label, got {other:?}"),
    }
    // a node label file alone: node labels, no edge feature
    std::fs::write(dir.join("X_node_labels.txt"), "3\n3\n\n4\n4\n").unwrap();
    let l = read(&dir, None, false).unwrap();
    assert_eq!(l.graphs[1].node_features(0), [4.0]);
    assert!(l.graphs[0].edge_feature_names().is_empty());
}

/// A node-link object pretty-printed over several lines (`json.dump(g, f, indent=1)`), one or
/// several in a file, reads as the same graph as its one-line form; each graph's line is the one its
/// object starts on.
#[test]
fn pretty_printed_node_link_objects_read_as_their_one_line_form() {
    let one = r#"{"directed": false, "multigraph": false, "graph": {}, "nodes": [{"id": 0, "label": 1}, {"id": 1, "label": 2}, {"id": 2, "label": 1}], "links": [{"source": 0, "target": 1}, {"source": 1, "target": 2}]}"#;
    let pretty = "{\n \"directed\": false,\n \"multigraph\": false,\n \"graph\": {},\n \"nodes\": [{\"id\": 0, \"label\": 1}, {\"id\": 1, \"label\": 2}, {\"id\": 2, \"label\": 1}],\n \"links\": [{\"source\": 0, \"target\": 1}, {\"source\": 1, \"target\": 2}]\n}\n";
    let a = read(&tmp("one.jsonl", &format!("{one}\n{one}\n")), None, false).unwrap();
    let b = read(&tmp("pretty.json", &format!("\n{pretty}{pretty}")), None, false).unwrap();
    assert_eq!(b.graphs.len(), 2);
    assert_eq!(b.places.iter().map(|p| p.line).collect::<Vec<_>>(), [2, 9]);
    let k = MarginalizedGraphKernel::new(MgkConfig::from_toml("[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n").unwrap()).unwrap();
    let (ka, kb) = (k.gram(&a.graphs).unwrap(), k.gram(&b.graphs).unwrap());
    assert_eq!(ka.values, kb.values);
    // a bad graph among them names the line its object starts on
    let bad = pretty.replace("\"target\": 2", "\"target\": 7");
    let (line, what) = parse_error(read(&tmp("pretty-bad.json", &format!("{pretty}{bad}")), None, false));
    assert_eq!(line, 8, "{what}");
    assert!(what.contains("target 7 is not a node id"), "{what}");
    // a one-line record that is merely malformed keeps its own message and line
    let (line, what) = parse_error(read(&tmp("bad.jsonl", &format!("{one}\n{{\"nodes\": [}}\n")), None, false));
    assert_eq!(line, 2, "{what}");
}

#[test]
fn a_byte_that_is_not_utf8_names_its_line_and_column() {
    let p = std::env::temp_dir().join(format!("octile-utf8-{}.smi", std::process::id()));
    std::fs::write(&p, b"CC\nCCO\nC\xffC\n").unwrap();
    let (line, what) = parse_error(read(&p, None, false));
    assert_eq!(line, 3, "{what}");
    assert!(what.contains("byte 255 at column 2 is not UTF-8"), "{what}");
}

#[test]
fn a_tu_graph_id_in_the_trillions_is_refused_before_allocating() {
    let dir = std::env::temp_dir().join(format!("octile-tu-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("DS_A.txt"),
        "1, 2
2, 1
",
    )
    .unwrap();
    std::fs::write(
        dir.join("DS_graph_indicator.txt"),
        "1
4000000000000
",
    )
    .unwrap();
    let (line, what) = parse_error(read(&dir, None, false));
    assert_eq!(line, 2, "{what}");
    assert!(what.contains("graph id 4000000000000 exceeds the 2 nodes"), "{what}");
}

#[test]
fn a_csv_with_two_smiles_columns_is_refused() {
    let (line, what) = parse_error(read(&tmp("two.csv", "smiles,SMILES\nCCO,CC\n"), None, false));
    assert_eq!(line, 1, "{what}");
    assert!(what.contains("columns 1 and 2 are both named 'smiles'"), "{what}");
}

#[test]
fn config_errors_list_what_exists() {
    let e = MgkConfig::from_toml("q = 0.05\nqq = 1\n").unwrap_err().to_string();
    assert!(e.contains("unknown key 'qq'") && e.contains("known keys"), "{e}");
    let e = MgkConfig::from_toml("q = 1.5\n").unwrap_err().to_string();
    assert!(e.contains("q = 1.5"), "{e}");
    // below octile::mgk::config::MIN_Q f64 rounding passes the values' tolerance (K 10 % off at
    // q = 1e-15, exit 0): refused, saying why; MIN_Q itself is a kernel
    for q in ["1e-12", "1e-16", "0.0"] {
        let e = MgkConfig::from_toml(&format!("q = {q}\n")).unwrap_err().to_string();
        assert!(e.contains("must be in [1e-9, 1)") && e.contains("condition"), "q = {q}: {e}");
    }
    assert_eq!(MgkConfig::from_toml("q = 1e-9\n").unwrap().q, octile::mgk::config::MIN_Q);
    // an additive kernel of no terms is κ ≡ 0 (K all 0, or exit 0 with values that looked like
    // results): refused, naming the key; the product of no terms (κ ≡ 1) stays a kernel
    for kind in ["node", "edge"] {
        let e = MgkConfig::from_toml(&format!("q = 0.1\nfeatures = \"none\"\n{kind}_combine = \"additive\"\n")).unwrap_err().to_string();
        assert!(e.contains(&format!("{kind}_combine = \"additive\" with no {kind} kernel")) && e.contains("sum of no terms is 0"), "{kind}: {e}");
        assert!(MgkConfig::from_toml(&format!("q = 0.1\nfeatures = \"none\"\n{kind}_combine = \"product\"\n")).is_ok());
    }
    // a length scale whose 1/(2ℓ²) overflows is out of range, and the message says why
    let e = MgkConfig::from_toml("[edge.len]\nkernel = \"square_exponential\"\nlength_scale = 1e-300\n").unwrap_err().to_string();
    assert!(e.contains("1/(2ℓ²) finite"), "{e}");
    let e = MgkConfig::from_toml("[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\nhh = 2\n").unwrap_err().to_string();
    assert!(e.contains("unknown key 'hh'"), "{e}");
    let e = MgkConfig::from_toml("[edge.len]\nkernel = \"square_exponential\"\nlength_scale = -1\n").unwrap_err().to_string();
    assert!(e.contains("out of range"), "{e}");
    let cfg = MgkConfig::from_toml("[node.colour]\nkernel = \"kronecker_delta\"\nh = 0.5\n").unwrap();
    let graphs = read(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tiny.jsonl")), None, false).unwrap().graphs;
    let e = MarginalizedGraphKernel::new(MgkConfig { backend: octile::Backend::Cpu, ..cfg }).unwrap().gram(&graphs).unwrap_err().to_string();
    assert!(e.contains("'colour'") && e.contains("[label]"), "{e}");
}

#[test]
fn blocks_per_pair_key() {
    assert_eq!(MgkConfig::from_toml("blocks_per_pair = \"auto\"\n").unwrap().tiles.blocks_per_pair, 0);
    assert_eq!(MgkConfig::from_toml("blocks_per_pair = 12\n").unwrap().tiles.blocks_per_pair, 12);
    assert_eq!(MgkConfig::from_toml("q = 0.1\n").unwrap().tiles.blocks_per_pair, 0);
    for bad in ["0", "-3", "\"many\"", "1.5"] {
        let e = MgkConfig::from_toml(&format!("blocks_per_pair = {bad}\n")).unwrap_err().to_string();
        assert!(e.contains("blocks_per_pair must be"), "{bad}: {e}");
    }
}

#[test]
fn real_datasets_when_fetched() {
    let data = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../data"));
    let mut found = 0;
    for (p, min) in [("chembl_drugs.csv", 1935), ("first_5K.smi", 4999), ("MUTAG", 188), ("proteins/1A0J_A.pdb.gz", 1)] {
        let path = data.join(p);
        if !path.exists() {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIP real dataset {}: not fetched", path.display());
            continue;
        }
        let l = read(&path, None, true).unwrap();
        assert!(l.graphs.len() >= min, "{p}: {} graphs, {} skipped", l.graphs.len(), l.skipped);
        found += 1;
    }
    let _ = found;
}

const ETHANOL_SDF: &str = "ethanol\n  test\n\n  4  3  0  0  0  0  0  0  0  0999 V2000\n    0.0000    0.0000    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0\n    1.5000    0.0000    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0\n    2.0000    1.4000    0.0000 O   0  5  0  0  0  0  0  0  0  0  0  0\n    2.9000    1.4000    0.0000 H   0  0  0  0  0  0  0  0  0  0  0  0\n  1  2  1  0\n  2  3  2  0\n  3  4  1  0\nM  END\n$$$$\n";

#[test]
fn sdf_records_hydrogens_charges_and_errors() {
    let p = tmp("m.sdf", &format!("{ETHANOL_SDF}{ETHANOL_SDF}"));
    let l = read(&p, None, false).unwrap();
    assert_eq!(l.graphs.len(), 2);
    let g = &l.graphs[0];
    assert_eq!((g.n_nodes(), g.n_edges()), (3, 2), "explicit H folded into hcount");
    assert_eq!(g.node_features(2), [8.0, 0.0, -1.0, 1.0], "O, charge code 5 = -1, one H");
    assert_eq!(g.edge_features(1), [2.0]);
    let truncated = ETHANOL_SDF.lines().take(6).collect::<Vec<_>>().join("\n");
    let (line, what) = parse_error(read(&tmp("t.sdf", &truncated), None, false));
    assert!(what.contains("truncated"), "{what} (line {line})");
    let bad = ETHANOL_SDF.replace("  3  4  1  0", "  3  9  1  0");
    let (line, what) = parse_error(read(&tmp("b.sdf", &bad), None, false));
    assert_eq!(line, 11, "{what}");
    let unknown = ETHANOL_SDF.replace(" O   0  5", " Qq  0  5");
    let (line, what) = parse_error(read(&tmp("u.sdf", &unknown), None, false));
    assert_eq!(line, 7, "{what}");
    assert!(what.contains("unknown element"), "{what}");
    // bond types outside the molecule's 1–4 are errors with their line, not single bonds
    for (t, want) in [("5", "query bond"), ("9", "outside the V2000 types")] {
        let odd = ETHANOL_SDF.replace("  2  3  2  0", &format!("  2  3  {t}  0"));
        let (line, what) = parse_error(read(&tmp("q.sdf", &odd), None, false));
        assert_eq!(line, 10, "{what}");
        assert!(what.contains(want), "{what}");
    }
    // a bond from an atom to itself (read as a self-loop, changing K), a bond given twice (an
    // error at the header's line before), a charge code past 7, M  CHG's count against its pairs and
    // a charge past ±15: errors at their lines
    for (from, to, line_want, want) in [
        ("  2  3  2  0", "  3  3  2  0", 10, "joins atom 3 to itself"),
        ("  3  4  1  0", "  2  1  1  0", 11, "atoms 2 and 1 are bonded twice (also on line 9)"),
        (" O   0  5", " O   0  9", 7, "atom charge code 9 is outside the V2000 codes 0–7"),
        ("M  END", "M  CHG  5   3  -1\nM  END", 12, "M  CHG declares 5 atom(s) but gives 2 value(s)"),
        ("M  END", "M  CHG  1   3 999\nM  END", 12, "M  CHG charge 999 of atom 3 is outside -15..=15"),
    ] {
        let odd = ETHANOL_SDF.replace(from, to);
        let (line, what) = parse_error(read(&tmp("c.sdf", &odd), None, false));
        assert_eq!(line, line_want, "{to}: {what}");
        assert!(what.contains(want), "{to}: {what}");
    }
    // an M  CHG line as RDKit writes it still reads
    let charged = ETHANOL_SDF.replace(" O   0  5", " O   0  0").replace("M  END", "M  CHG  1   3  -1\nM  END");
    assert_eq!(read(&tmp("ok.sdf", &charged), None, false).unwrap().graphs[0].node_features(2), [8.0, 0.0, -1.0, 1.0]);
}

#[test]
fn pdb_coordinate_beyond_any_structure_is_an_error_with_its_line() {
    let line = |x: &str| format!("ATOM      1 N    ALA A   1    {x:>8}{:>8.3}{:>8.3}  1.00  0.00           N\n", 0.0, 0.0);
    let p = tmp("far.pdb", &[line("1.000"), line("1e300")].concat());
    let (ln, what) = parse_error(read(&p, None, false));
    assert_eq!(ln, 2, "{what}");
    assert!(what.contains("coordinate 1e300"), "{what}");
}

#[test]
fn pdb_contact_graph_with_cutoff_and_smooth_weights() {
    let atom = |serial: usize, name: &str, x: f64, el: &str| {
        format!("ATOM  {serial:>5} {name:<4} ALA A   1    {x:>8.3}{:>8.3}{:>8.3}  1.00  0.00          {el:>2}\n", 0.0, 0.0)
    };
    let text = [
        atom(1, "N", 0.0, "N"),
        atom(2, "CA", 1.5, "C"),
        atom(3, "H", 2.0, "H"),
        atom(4, "C", 4.5, "C"),
        atom(5, "O", 12.0, "O"),
        "ENDMDL\n".into(),
        atom(6, "C", 1.0, "C"),
    ]
    .concat();
    let p = tmp("x.pdb", &text);
    let l = read(&p, None, false).unwrap();
    let g = &l.graphs[0];
    assert_eq!(g.n_nodes(), 4, "H dropped, second model ignored");
    assert_eq!(g.node_features(0), [7.0]);
    // N–CA 1.5 Å, CA–C 3.0 Å, N–C 4.5 Å; O is 7.5 Å from C: no edge
    assert_eq!(g.n_edges(), 3);
    for (k, e) in g.edges().iter().enumerate() {
        let r = g.edge_features(k)[0];
        let want = (1.0 - (r / 5.0) * (r / 5.0)).powi(2);
        assert!((e.weight - want).abs() <= 1e-12 && e.weight > 0.0, "edge {k}: weight {}, expected {want}", e.weight);
    }
    let short = octile::io::read_with(&p, &octile::io::ReadOptions { pdb_cutoff: 2.0, ..Default::default() }).unwrap();
    assert_eq!(short.graphs[0].n_edges(), 1, "2 Å cutoff keeps only N–CA");
    let e = octile::io::read_with(&p, &octile::io::ReadOptions { pdb_cutoff: -1.0, ..Default::default() }).unwrap_err().to_string();
    assert!(e.contains("cutoff"), "{e}");
    let bad = text.replace("   1.500", "   x.xxx");
    let (line, what) = parse_error(read(&tmp("bad.pdb", &bad), None, false));
    assert_eq!(line, 2, "{what}");
}

#[test]
fn pdb_alternate_locations_keep_the_first_only() {
    // atom 2 in two places (altLoc A and B), atom 1 and 3 without: 3 atoms, not 4, at A's position
    let atom = |serial: usize, alt: char, x: f64| format!("ATOM  {serial:>5}  CA {alt}ALA A   1    {x:>8.3}{:>8.3}{:>8.3}  0.50  0.00           C\n", 0.0, 0.0);
    let text = [atom(1, ' ', 0.0), atom(2, 'A', 1.5), atom(3, 'B', 40.0), atom(4, ' ', 3.0)].concat();
    let g = &read(&tmp("alt.pdb", &text), None, false).unwrap().graphs[0];
    assert_eq!(g.n_nodes(), 3, "alternate location B must not become an atom");
    assert_eq!(g.n_edges(), 3, "the three kept atoms lie within 5 Å of each other");
}

#[test]
fn pdb_pre_v2_format_takes_elements_from_atom_names() {
    // ASTRAL/SCOP domain files: columns 73-80 hold "1CRJ 161" instead of an element symbol
    let text = "ATOM      1  N   THR    -5       4.672  12.789  -8.872  1.00 54.19      1CRJ 161\n\
                ATOM      2  CA  THR    -5       4.740  11.740  -7.813  1.00 51.90      1CRJ 162\n\
                ATOM      3  OG1 THR    -5       5.528  13.652  -6.444  1.00 49.50      1CRJ 166\n\
                ATOM      4 1HG2 THR    -5       6.993  11.607  -6.529  1.00 46.61      1CRJ 167\n";
    let l = read(&tmp("old.pdb", text), None, false).unwrap();
    let g = &l.graphs[0];
    assert_eq!(g.n_nodes(), 3, "the hydrogen 1HG2 is dropped");
    let z: Vec<f64> = (0..3).map(|i| g.node_features(i)[0]).collect();
    assert_eq!(z, [7.0, 6.0, 8.0]);
}

#[test]
fn a_json_feature_mixing_strings_and_numbers_is_an_error_naming_the_record() {
    let g = |lab: &str| {
        format!(
            "{{\"nodes\": [{{\"id\": 0, \"label\": {lab}}}, {{\"id\": 1, \"label\": 1}}], \"links\": [{{\"source\": 0, \"target\": 1, \"label\": \"single\"}}]}}\n"
        )
    };
    // numbers on nodes, strings on edges: two features, each of one kind
    let ok = tmp("kinds-ok.jsonl", &[g("0"), g("2")].concat());
    assert_eq!(read(&ok, None, false).unwrap().graphs.len(), 2);
    // the string "A" among numbers: its code would equal a number
    let bad = tmp("kinds-bad.jsonl", &[g("0"), g("\"A\"")].concat());
    let (line, what) = parse_error(read(&bad, None, false));
    assert_eq!(line, 2, "{what}");
    assert!(what.contains("node feature 'label' = \"A\" is a string, but earlier values of 'label' are numbers"), "{what}");
}

#[test]
fn a_folder_given_as_a_file_says_so() {
    let dir = std::env::temp_dir().join(format!("octile-folder-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let e = read(&dir, Some(Format::Smiles), false).unwrap_err().to_string();
    assert!(e.contains("a folder where a file was expected"), "{e}");
}

/// A V2000 molfile record of `atoms` (symbol, charge code) and `bonds` (1-based a, b, type), with
/// extra property lines before `M  END`.
fn molfile(atoms: &[(&str, u8)], bonds: &[(usize, usize, u8)], props: &[&str]) -> String {
    let mut s = format!("mol\n  octile\n\n{:>3}{:>3}  0  0  0  0  0  0  0  0999 V2000\n", atoms.len(), bonds.len());
    for (sym, chg) in atoms {
        s.push_str(&format!("{:>10.4}{:>10.4}{:>10.4} {:<3} 0{:>3}  0  0  0  0  0  0  0  0  0  0\n", 0.0, 0.0, 0.0, sym, chg));
    }
    for (a, b, t) in bonds {
        s.push_str(&format!("{a:>3}{b:>3}{t:>3}  0\n"));
    }
    for p in props {
        s.push_str(p);
        s.push('\n');
    }
    s.push_str("M  END\n$$$$\n");
    s
}

#[test]
fn hydrogens_give_the_same_graph_from_smiles_and_sdf() {
    // each molecule: SMILES forms (with and without explicit [H]) and molfiles (with and without H
    // atoms): every form must give the same graph (RDKit: explicit H folded, implicit from valences)
    let h = |n: usize, on: usize, from: usize| (0..n).map(move |k| (on, from + k, 1u8));
    let cases: Vec<(&str, Vec<&str>, Vec<String>)> = vec![
        (
            "methanol",
            vec!["CO", "[H]OC([H])([H])[H]", "[CH3][OH]", "C([H])O"],
            vec![
                molfile(&[("C", 0), ("O", 0)], &[(1, 2, 1)], &[]),
                molfile(&[("C", 0), ("O", 0), ("H", 0), ("H", 0), ("H", 0), ("H", 0)], &[vec![(1, 2, 1)], h(3, 1, 3).collect(), vec![(2, 6, 1)]].concat(), &[]),
            ],
        ),
        (
            "ammonium",
            vec!["[NH4+]", "[H][N+]([H])([H])[H]"],
            vec![
                molfile(&[("N", 3)], &[], &[]),
                molfile(&[("N", 0), ("H", 0), ("H", 0), ("H", 0), ("H", 0)], &h(4, 1, 2).collect::<Vec<_>>(), &["M  CHG  1   1   1"]),
            ],
        ),
        (
            "acetate",
            vec!["CC(=O)[O-]", "[H]C([H])([H])C(=O)[O-]"],
            vec![molfile(&[("C", 0), ("C", 0), ("O", 0), ("O", 5)], &[(1, 2, 1), (2, 3, 2), (2, 4, 1)], &[])],
        ),
        (
            "ethylene",
            vec!["C=C", "[H]C([H])=C([H])[H]"],
            vec![
                molfile(&[("C", 0), ("C", 0)], &[(1, 2, 2)], &[]),
                molfile(
                    &[("C", 0), ("C", 0), ("H", 0), ("H", 0), ("H", 0), ("H", 0)],
                    &[vec![(1, 2, 2)], h(2, 1, 3).collect(), h(2, 2, 5).collect()].concat(),
                    &[],
                ),
            ],
        ),
        // an isotope stays an atom (RDKit keeps [2H]) in both formats
        ("deuteromethane", vec!["[2H]C"], vec![molfile(&[("H", 0), ("C", 0)], &[(1, 2, 1)], &["M  ISO  1   1   2"])]),
        // hydrogen gas and a proton are atoms, not hydrogen counts of nothing
        ("hydrogen", vec!["[H][H]"], vec![molfile(&[("H", 0), ("H", 0)], &[(1, 2, 1)], &[])]),
        (
            "sulfoxide",
            vec!["CS(C)=O", "[H]C([H])([H])S(=O)C"],
            vec![molfile(&[("C", 0), ("S", 0), ("C", 0), ("O", 0)], &[(1, 2, 1), (2, 3, 1), (2, 4, 2)], &[])],
        ),
    ];
    for (name, smiles, mols) in cases {
        let want = read(&tmp(&format!("{name}0.smi"), &format!("{}\n", smiles[0])), None, false).unwrap().graphs.remove(0);
        let graphs = smiles
            .iter()
            .map(|s| (s.to_string(), read(&tmp(&format!("{name}.smi"), &format!("{s}\n")), None, false)))
            .chain(mols.iter().enumerate().map(|(k, m)| (format!("molfile {k}"), read(&tmp(&format!("{name}.sdf"), m), None, false))));
        for (form, got) in graphs {
            let got = got.unwrap_or_else(|e| panic!("{name} from {form}: {e}")).graphs.remove(0);
            // the forms number atoms differently: compare node features and bonds (with their
            // end atoms' features) as sorted lists
            let node = |g: &octile::Graph, i: u32| g.node_features(i as usize).iter().map(|&v| v as i64).collect::<Vec<_>>();
            let feats = |g: &octile::Graph| {
                let mut v: Vec<_> = (0..g.n_nodes() as u32).map(|i| node(g, i)).collect();
                v.sort();
                v
            };
            assert_eq!(feats(&got), feats(&want), "{name}: node features (element, aromatic, charge, hcount) from {form}, expected as from {}", smiles[0]);
            let edges = |g: &octile::Graph| {
                let mut v: Vec<_> = g
                    .edges()
                    .iter()
                    .enumerate()
                    .map(|(e, x)| (node(g, x.i).min(node(g, x.j)), node(g, x.i).max(node(g, x.j)), g.edge_features(e)[0] as u8))
                    .collect();
                v.sort();
                v
            };
            assert_eq!(edges(&got), edges(&want), "{name}: bonds from {form}");
        }
    }
}

/// Meaningless node-link input is refused, not read as something else: a directed graph (octile's are
/// undirected), a multigraph, both 'links' and 'edges'; a UTF-8 byte-order mark is not part of the
/// text; a file whose every record is bad is an error even with --skip-invalid (not a 0 × 0 matrix).
#[test]
fn directed_multigraph_and_double_edge_lists_are_refused_and_a_bom_is_skipped() {
    for (name, text, want) in [
        ("dir.jsonl", r#"{"directed": true, "nodes": [{"id": 0}, {"id": 1}], "links": [{"source": 0, "target": 1}]}"#, "undirected"),
        ("multi.jsonl", r#"{"multigraph": true, "nodes": [{"id": 0}, {"id": 1}], "links": [{"source": 0, "target": 1}]}"#, "one edge per pair"),
        ("both.jsonl", r#"{"nodes": [{"id": 0}, {"id": 1}], "links": [{"source": 0, "target": 1}], "edges": []}"#, "both 'links' and 'edges'"),
        // flags that are not booleans, ids that are neither strings nor numbers, integer ids JSON
        // rounds (two 30-digit ids became one "duplicate"), and 1 and 1.0 (one node, as in Python)
        ("yes.jsonl", r#"{"directed": "yes", "nodes": [{"id": 0}], "links": []}"#, "\"directed\": \"yes\" — must be true or false"),
        ("arr.jsonl", r#"{"nodes": [{"id": [1]}], "links": []}"#, "an id must be a string or a number"),
        ("null.jsonl", r#"{"nodes": [{"id": null}], "links": []}"#, "an id must be a string or a number"),
        ("big.jsonl", r#"{"nodes": [{"id": 123456789012345678901234567890}, {"id": 123456789012345678901234567891}], "links": []}"#, "past 2^53"),
        ("float.jsonl", r#"{"nodes": [{"id": 1}, {"id": 1.0}], "links": []}"#, "duplicate node id 1.0"),
    ] {
        let (line, what) = parse_error(read(&tmp(name, text), None, false));
        assert_eq!(line, 1, "{name}: {what}");
        assert!(what.contains(want), "{name}: {what}");
    }
    // a link may name node 1 as 1.0, and the string "1" is another node
    let ids = r#"{"nodes": [{"id": 1}, {"id": "1"}, {"id": 2}], "links": [{"source": 1.0, "target": 2}, {"source": "1", "target": 2}]}"#;
    let g = &read(&tmp("ids.jsonl", ids), None, false).unwrap().graphs[0];
    assert_eq!((g.n_nodes(), g.n_edges()), (3, 2));
    // directed: false and multigraph: false (what networkx writes) are fine
    let ok = r#"{"directed": false, "multigraph": false, "graph": {}, "nodes": [{"id": 0}, {"id": 1}], "links": [{"source": 0, "target": 1}]}"#;
    assert_eq!(read(&tmp("undirected.jsonl", ok), None, false).unwrap().graphs.len(), 1);
    let bom = format!("\u{feff}{ok}\n");
    assert_eq!(read(&tmp("bom.jsonl", &bom), None, false).unwrap().graphs.len(), 1, "a BOM before JSON Lines");
    assert_eq!(read(&tmp("bom.smi", "\u{feff}CCO\nc1ccccc1\n"), None, false).unwrap().graphs.len(), 2, "a BOM before SMILES");
    let (_, what) = parse_error(read(&tmp("allbad.smi", "C1CC\nXx\n"), None, true));
    assert!(what.contains("every record was invalid (2 skipped)"), "{what}");
}

/// SMILES errors say at which column (1-based character) what was expected, in words a chemist
/// reads, never the parser's internals (`Character(4)`, `EndOfLine`, `Rnum(0)`) (issue 32).
#[test]
fn smiles_errors_name_the_column_and_what_was_expected() {
    use octile::io::smiles::parse;
    for (smiles, want) in [
        ("C1CC(", "ends after '(' at column 5: expected an atom"),
        ("CC=", "ends after '=' at column 3: expected an atom"),
        ("CC(C", "the branch '(' at column 3 is not closed: expected ')'"),
        ("CC)C", "column 3: ')' closes no branch"),
        ("[NH4+", "the bracket atom '[' at column 1 is not closed: expected ']'"),
        ("C1CC", "ring bond 1 at column 2 is never closed: expected a second 1"),
        ("CC%(12)C", "ring bond %(12) at column 3 is never closed"),
        ("C%1C", "column 2: expected two digits after '%'"),
        ("C%(x)C", "column 2: expected two digits after '%' (ring bonds %10 to %99) or a number in parentheses"),
        ("CQC", "column 2: unexpected 'Q'; expected an atom: 'Q' starts no element of the organic subset"),
        ("Xx", "column 1: unexpected 'X'; expected an atom"),
        ("[Xx]C", "column 3: unexpected 'x'; expected an element symbol ('Xx' is none)"),
        ("[13]C", "column 4: unexpected ']'; expected an element symbol in the bracket atom"),
        ("C==C", "column 3: unexpected '='; expected an atom or a ring bond number after the bond '='"),
        ("C=1CCC#1", "ring bond 1 opened at column 3: its two ends give different bonds ('=' and '#')"),
        ("C(=)C", "column 4: unexpected ')'; expected an atom or a ring bond number after the bond '='"),
    ] {
        let what = parse(smiles).unwrap_err();
        assert!(what.contains(want), "{smiles}: {what}");
        for internal in ["Character(", "EndOfLine", "Rnum", "Join("] {
            assert!(!what.contains(internal), "{smiles}: {what}");
        }
    }
    // the reader's error keeps the line
    let (line, what) = parse_error(read(&tmp("col.smi", "CCO\nCC(C\n"), None, false));
    assert_eq!(line, 2, "{what}");
    assert!(what.contains("column 3"), "{what}");
}

/// OpenSMILES ring bond numbers in parentheses (`%(n)`, any number of digits) are read, alone or
/// mixed with 1–9 and %nn, as the same molecule written with small numbers (issue 32).
#[test]
fn smiles_ring_bonds_in_parentheses_are_read() {
    use octile::io::smiles::parse;
    for (long, short) in [
        ("C%(123)CC%(123)", "C1CC1"),
        ("C%(1000)CCC%(1000)", "C1CCC1"),
        ("c%(100)ccccc%(100)", "c1ccccc1"),
        ("C%(5)CC5", "C1CC1"),
        ("C%(123)CC1CC1%(123)", "C2CC1CC12"),
        ("C=%(200)CCC%(200)", "C=1CCC1"),
        ("C%(7)C%(8)CC%(7)C%(8)", "C1C2CC1C2"),
        ("[13CH3]%(300)CC%(300)", "[13CH3]1CC1"),
    ] {
        assert_eq!(parse(long).unwrap(), parse(short).unwrap(), "{long} as {short}");
    }
    // 99 ring bonds open at once are read; the parser holds no more (it reads 0–99, and %73 as 74:
    // octile never hands it 73, so %73 is read right too)
    let rings = |m: usize, first: usize| -> String { (0..m).map(|n| format!("C%({})", first + n)).collect() };
    let many = rings(99, 1000) + &rings(99, 1000);
    assert_eq!(parse(&many).unwrap().n_edges(), 99 + 197);
    assert!(parse(&(rings(100, 1000) + &rings(100, 1000))).unwrap_err().contains("column 794: more than 99 ring bonds are open at once"));
    assert_eq!(parse("C%73CC%74CC%73C%74").unwrap(), parse("C1CC2CC1C2").unwrap(), "%73 and %74 are two rings");
}

/// A folder holding files of two TU datasets is refused naming both, not read as a mix of them by
/// directory order (graphs of one, labels of the other) (issue 32).
#[test]
fn tu_folder_with_two_datasets_is_refused_naming_both() {
    let dir = std::env::temp_dir().join(format!("octile-tu-two-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("AA_A.txt"), "1, 2\n2, 1\n").unwrap();
    std::fs::write(dir.join("AA_graph_indicator.txt"), "1\n1\n").unwrap();
    std::fs::write(dir.join("README.txt"), "not a dataset file\n").unwrap();
    assert_eq!(read(&dir, None, false).unwrap().graphs.len(), 1, "one dataset (and other files) is read");
    std::fs::write(dir.join("BB_node_labels.txt"), "3\n4\n").unwrap();
    let (_, what) = parse_error(read(&dir, None, false));
    assert!(what.contains("files of 2 TU datasets: 'AA' (AA_A.txt, AA_graph_indicator.txt) and 'BB' (BB_node_labels.txt)"), "{what}");
    assert!(what.contains("a folder of its own"), "{what}");
}

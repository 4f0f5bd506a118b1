//! Readers on small inline cases and malformed inputs: each bad input gives a typed error naming
//! file and line; real datasets in data/ are read when present (SKIP otherwise).
use octile::io::{Format, read};
use octile::{KernelConfig, MarginalizedGraphKernel, OctileError};
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
    std::fs::remove_file(dir.join("DS_edge_labels.txt")).unwrap();
    std::fs::write(dir.join("DS_A.txt"), "1, 2\n2, 9\n").unwrap();
    let (line, what) = parse_error(read(&dir, None, false));
    assert_eq!(line, 2, "{what}");
    assert!(what.contains("out of range"), "{what}");
}

#[test]
fn config_errors_list_what_exists() {
    let e = KernelConfig::from_toml("q = 0.05\nqq = 1\n").unwrap_err().to_string();
    assert!(e.contains("unknown key 'qq'") && e.contains("known keys"), "{e}");
    let e = KernelConfig::from_toml("q = 1.5\n").unwrap_err().to_string();
    assert!(e.contains("q = 1.5"), "{e}");
    let e = KernelConfig::from_toml("[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\nhh = 2\n").unwrap_err().to_string();
    assert!(e.contains("unknown key 'hh'"), "{e}");
    let e = KernelConfig::from_toml("[edge.len]\nkernel = \"square_exponential\"\nlength_scale = -1\n").unwrap_err().to_string();
    assert!(e.contains("out of range"), "{e}");
    let cfg = KernelConfig::from_toml("[node.colour]\nkernel = \"kronecker_delta\"\nh = 0.5\n").unwrap();
    let graphs = read(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tiny.jsonl")), None, false).unwrap().graphs;
    let e = MarginalizedGraphKernel::new(KernelConfig { backend: octile::Backend::Cpu, ..cfg }).unwrap().gram(&graphs).unwrap_err().to_string();
    assert!(e.contains("'colour'") && e.contains("[label]"), "{e}");
}

#[test]
fn real_datasets_when_fetched() {
    let data = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../data"));
    let mut found = 0;
    for (p, min) in [("chembl_drugs.csv", 1900), ("first_5K.smi", 4900), ("MUTAG", 188)] {
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

//! `octile gram --kernel examples/graphlets.toml` end to end (issue 14's graphlet kernel): the
//! binary's K(X), normalized K(X) and K(X, Y) equal the library's bit for bit on MUTAG (when
//! `scripts/fetch-datasets` put it in data/) or generated sets and the example inputs; the summary
//! names the method; a bad key in the kernel file fails naming the key and the file.
use octile::generators::{ba_set, nws_set};
use octile::io::read;
use octile::{Backend, Graph, GraphKernel, GraphletConfig, GraphletKernel};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The library's own reader: shape and values.
fn load_npy(p: &Path) -> (Vec<usize>, Vec<f64>) {
    let m = octile::io::npy::read_matrix(p).unwrap_or_else(|e| panic!("{e}"));
    (vec![m.rows, m.cols], m.values)
}

/// Run `octile gram ARGS --quiet`; panics with its stderr when it fails.
fn gram(args: &[&str]) {
    let o = Command::new(env!("CARGO_BIN_EXE_octile")).arg("gram").args(args).arg("--quiet").output().unwrap();
    assert!(o.status.success(), "octile gram {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
}

fn assert_same(what: &str, cli: &[f64], lib: &[f64]) {
    assert_eq!(cli.len(), lib.len(), "{what}: {} values, library {}", cli.len(), lib.len());
    if let Some(k) = (0..cli.len()).find(|&k| cli[k].to_bits() != lib[k].to_bits()) {
        panic!("{what}: entry {k}: cli {}, library {}", cli[k], lib[k]);
    }
}

#[test]
fn cli_gram_with_the_example_kernel_equals_the_library() {
    let dir = std::env::temp_dir().join(format!("octile-graphlet-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml = root().join("examples/graphlets.toml");
    let tiny = root().join("examples/tiny.jsonl");
    let mutag = root().join("data/MUTAG");
    // X: MUTAG when present (else 12 generated NWS graphs), then the example file; Y: BA graphs
    let (mut x_args, mut x): (Vec<String>, Vec<Graph>) = if mutag.join("MUTAG_A.txt").exists() {
        (vec![mutag.display().to_string()], read(&mutag, None, false).unwrap().graphs)
    } else {
        eprintln!("graphlet_kernel_cli: data/MUTAG absent (scripts/fetch-datasets); using nws:12:5");
        (vec!["nws:12:5".into()], nws_set(12, 5))
    };
    x_args.push(tiny.display().to_string());
    x.extend(read(&tiny, None, false).unwrap().graphs);
    let y = ba_set(6, 7);
    let mut cfg = GraphletConfig::from_toml(&std::fs::read_to_string(&toml).unwrap()).unwrap();
    cfg.backend = Backend::Cpu;
    let lib = GraphletKernel::new(cfg).unwrap();
    let x_refs: Vec<&str> = x_args.iter().map(String::as_str).collect();
    let out = |name: &str| dir.join(name).display().to_string();
    let common = ["--kernel", toml.to_str().unwrap(), "--backend", "cpu"];

    gram(&[&x_refs[..], &common, &["--out", &out("K.npy")]].concat());
    let (dims, vals) = load_npy(&dir.join("K.npy"));
    assert_eq!(dims, [x.len(), x.len()]);
    assert_same("K(X)", &vals, &lib.gram(&x).unwrap().values);
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("K.json")).unwrap()).unwrap();
    assert_eq!(
        (summary["method"].as_str(), summary["backend"].as_str(), summary["counts"].as_str(), summary["kernel"].as_str()),
        (Some("graphlets"), Some("cpu"), Some("net"), Some("linear")),
        "{summary}"
    );
    assert!(summary["gamma"].is_null() && summary["bins"].is_null(), "{summary}");
    assert!(summary["details"].as_str().unwrap().contains("graphlet kernel: linear on summed net counts"), "{summary}");

    gram(&[&x_refs[..], &common, &["--out", &out("N.npy"), "--normalize"]].concat());
    let (_, vals) = load_npy(&dir.join("N.npy"));
    assert_same("normalized K(X)", &vals, &lib.gram_normalized(&x).unwrap().values);

    gram(&[&x_refs[..], &["--against", "ba:6:7"], &common, &["--out", &out("B.npy"), "--normalize"]].concat());
    let (dims, vals) = load_npy(&dir.join("B.npy"));
    assert_eq!(dims, [x.len(), y.len()]);
    assert_same("normalized K(X, Y)", &vals, &lib.gram_between_normalized(&x, &y).unwrap().values);

    // a bad key fails before any work, naming the key and the file
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "method = \"graphlets\"\nkernel = \"rbf\"\ngama = 0.1\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_octile"))
        .args(["gram", "nws:2", "--kernel", bad.to_str().unwrap(), "--out", &out("X.npy"), "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("unknown key 'gama'") && err.contains("bad.toml"), "{err}");
    assert!(!dir.join("X.npy").exists());
    std::fs::remove_dir_all(&dir).ok();
}

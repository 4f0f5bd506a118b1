//! `octile gram --gradient`: K.grad.npy beside K (float64, rows × cols × P, C order), the summary's
//! hyperparameters, agreement with central finite differences of K from two more CLI runs, the
//! refusal of other methods, non-convergence (values and gradient written, exit 3) and Ctrl-C
//! (exit 130, the tiles finished kept, --resume finishing them).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{exe, load_npy, random_jsonl, root, scratch_dir};

/// The kernel TOML of these tests with stopping probability `q`.
fn kernel_toml(q: f64) -> String {
    format!("q = {q:?}\np = 1.0\n[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n[edge.length]\nkernel = \"square_exponential\"\nlength_scale = 1.0\n")
}

/// `octile gram` on the CPU in f64 with `kernel` (written to `dir/NAME.toml`), output `dir/NAME.npy`.
fn gram(dir: &Path, name: &str, kernel: &str, inputs: &[&str], extra: &[&str]) -> (PathBuf, Output) {
    let toml = dir.join(format!("{name}.toml"));
    std::fs::write(&toml, kernel).unwrap();
    let out = dir.join(format!("{name}.npy"));
    let mut args: Vec<String> = vec!["gram".into()];
    args.extend(inputs.iter().map(|s| s.to_string()));
    args.extend(["--kernel", toml.to_str().unwrap(), "--backend", "cpu", "--precision", "f64", "--out", out.to_str().unwrap(), "--quiet"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    let o = exe().args(&args).output().unwrap();
    (out, o)
}

fn ok(o: &Output, what: &str) {
    assert!(o.status.success(), "{what}: exit {:?}\n{}", o.status.code(), String::from_utf8_lossy(&o.stderr));
}

/// |actual − expected| ≤ rtol·max(|actual|, |expected|) + atol, else a message with the index.
fn check(what: &str, actual: f64, expected: f64, rtol: f64, atol: f64) {
    assert!(
        (actual - expected).abs() <= rtol * actual.abs().max(expected.abs()) + atol,
        "{what}: actual {actual:e}, expected {expected:e} (rtol {rtol:e}, atol {atol:e})"
    );
}

/// ∂K/∂q of K(X) and of the normalized K(X, Y) equals (K(q + δ) − K(q − δ)) / 2δ from two more
/// runs; the gradient file has the summary's shape and hyperparameters; K is the plain run's.
#[test]
fn gradient_file_matches_finite_differences_of_two_more_runs() {
    let dir = scratch_dir("fd");
    let tiny = root().join("examples/tiny.jsonl");
    let tiny = tiny.to_str().unwrap();
    let (q, dq) = (0.05, 1e-4);
    for (tag, inputs, extra) in [("kx", vec![tiny], vec![]), ("kxy", vec![tiny, "--against", "nws:2:3"], vec!["--normalize"])] {
        let mut with_grad = extra.clone();
        with_grad.push("--gradient");
        let (out, o) = gram(&dir, tag, &kernel_toml(q), &inputs, &with_grad);
        ok(&o, tag);
        let grad_path = dir.join(format!("{tag}.grad.npy"));
        let (kdims, k) = load_npy(&out);
        let (gdims, g) = load_npy(&grad_path);
        let (rows, cols) = (kdims[0], kdims[1]);
        assert_eq!(gdims, [rows, cols, 4], "{tag}: gradient shape");
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.with_extension("json")).unwrap()).unwrap();
        assert_eq!(summary["hyperparameters"], serde_json::json!(["p", "q", "node.label.h", "edge.length.length_scale"]), "{summary}");
        assert_eq!(summary["hyperparameter_values"], serde_json::json!([1.0, q, 0.5, 1.0]), "{summary}");
        assert_eq!(summary["gradient"].as_str(), Some(grad_path.to_str().unwrap()), "{summary}");
        assert_eq!(summary["gradient_shape"], serde_json::json!([rows, cols, 4]), "{summary}");
        numpy_sees(&grad_path, &gdims, &g);
        // K itself is the run without --gradient's
        let (plain, o) = gram(&dir, &format!("{tag}-plain"), &kernel_toml(q), &inputs, &extra);
        ok(&o, "plain run");
        let (_, kp) = load_npy(&plain);
        for (e, (a, b)) in k.iter().zip(&kp).enumerate() {
            check(&format!("{tag}: K[{}, {}] with --gradient vs without", e / cols, e % cols), *a, *b, 1e-10, 0.0);
        }
        // central differences in q
        let (hi, o) = gram(&dir, &format!("{tag}-hi"), &kernel_toml(q + dq), &inputs, &extra);
        ok(&o, "q + δ");
        let (lo, o) = gram(&dir, &format!("{tag}-lo"), &kernel_toml(q - dq), &inputs, &extra);
        ok(&o, "q − δ");
        let ((_, kh), (_, kl)) = (load_npy(&hi), load_npy(&lo));
        let scale = g.iter().skip(1).step_by(4).fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(scale > 0.0, "{tag}: ∂K/∂q is all zeros");
        for e in 0..rows * cols {
            let fd = (kh[e] - kl[e]) / (2.0 * dq);
            check(&format!("{tag}: ∂K[{}, {}]/∂q (index {})", e / cols, e % cols, e * 4 + 1), g[e * 4 + 1], fd, 1e-4, 1e-9 * scale);
        }
        // normalized K(X, Y): the gradient is that of the normalized values (∂/∂p = 0: K ∝ p²)
        if tag == "kxy" {
            for e in 0..rows * cols {
                check(&format!("{tag}: ∂K̃[{}, {}]/∂p", e / cols, e % cols), g[e * 4], 0.0, 0.0, 1e-9 * scale);
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// numpy (when there is a python with it: scripts/setup's .venv) loads `path` with `shape` and `values`.
fn numpy_sees(path: &Path, shape: &[usize], values: &[f64]) {
    let py = [root().join(".venv/bin/python"), "python3".into()]
        .into_iter()
        .find(|p| Command::new(p).args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success()));
    let Some(py) = py else {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIP numpy load check of {}: no python with numpy (run scripts/setup)", path.display());
        return;
    };
    let code = format!(
        "import numpy as np; G = np.load({:?}); assert G.dtype == np.float64 and G.flags.c_contiguous, G.dtype; print(list(G.shape)); print(repr(G.ravel().tolist()))",
        path.to_str().unwrap()
    );
    let o = Command::new(py).args(["-c", &code]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = String::from_utf8(o.stdout).unwrap();
    let mut lines = s.lines();
    let dims: Vec<usize> = lines.next().unwrap().trim_matches(['[', ']']).split(',').map(|v| v.trim().parse().unwrap()).collect();
    assert_eq!(dims, shape, "numpy's shape of {}", path.display());
    let got: Vec<f64> = lines.next().unwrap().trim_matches(['[', ']']).split(',').map(|v| v.trim().parse().unwrap()).collect();
    assert_eq!(got, values, "numpy sees other values in {}", path.display());
}

/// --gradient is the marginalized kernel's.
#[test]
fn gradient_is_refused_for_other_methods() {
    let dir = scratch_dir("refuse");
    let (out, o) = gram(&dir, "sp", "method = \"shortest_path\"\n", &["nws:3:1"], &["--gradient"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--gradient") && err.contains("marginalized graph kernel only") && err.contains("shortest_path"), "{err}");
    assert!(!out.exists(), "nothing written");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Pairs that do not converge: K and its gradient are written, the failures listed, exit 3.
#[test]
fn non_convergence_writes_values_and_gradient_and_exits_3() {
    let dir = scratch_dir("nc");
    let kernel = "q = 0.001\nmax_iterations = 1\n[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n";
    let (out, o) = gram(&dir, "K", kernel, &["nws:2:1"], &["--gradient"]);
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("did not converge"));
    let (dims, vals) = load_npy(&out);
    assert_eq!(dims, [2, 2]);
    assert!(vals.iter().all(|v| v.is_finite()), "{vals:?}");
    let (gdims, _) = load_npy(&dir.join("K.grad.npy"));
    assert_eq!(gdims, [2, 2, 3]);
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("K.json")).unwrap()).unwrap();
    assert_eq!(summary["non_converged"].as_array().unwrap().len(), 4, "{summary}");
    assert_eq!(summary["hyperparameters"], serde_json::json!(["p", "q", "node.label.h"]));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Ctrl-C during a gradient run: exit 130, the tiles finished kept (K and ∂K/∂θ), and `--resume`
/// gives the uninterrupted run's files bit for bit.
#[test]
fn ctrl_c_keeps_the_gradient_tiles_and_resume_finishes_them() {
    let dir = scratch_dir("int");
    let toml = dir.join("k.toml");
    std::fs::write(&toml, kernel_toml(0.05)).unwrap();
    let mut count = 60;
    let args = |input: &Path, out: &Path| -> Vec<String> {
        [
            "gram",
            input.to_str().unwrap(),
            "--kernel",
            toml.to_str().unwrap(),
            "--backend",
            "cpu",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--gradient",
            "--tile-size",
            "6",
        ]
        .map(String::from)
        .to_vec()
    };
    let (input, out) = loop {
        let input = dir.join(format!("set{count}.jsonl"));
        std::fs::write(&input, random_jsonl(count, 11)).unwrap();
        let out = dir.join(format!("K{count}.npy"));
        let child = exe().args(args(&input, &out)).stderr(std::process::Stdio::piped()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(800));
        assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success(), "could not send SIGINT");
        let res = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&res.stderr).to_string();
        if res.status.success() {
            assert!(count < 5000, "the run never outlasted the signal");
            count *= 2;
            continue;
        }
        assert_eq!(res.status.code(), Some(130), "exit code after Ctrl-C; stderr: {err}");
        assert!(err.contains("--resume") && err.contains("interrupted"), "{err}");
        for p in [out.clone(), out.with_extension("json"), dir.join(format!("K{count}.grad.npy"))] {
            assert!(!p.exists(), "{} written after Ctrl-C", p.display());
        }
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("K{count}.partial.json"))).unwrap()).unwrap();
        if summary["tiles_done"].as_array().unwrap().is_empty() {
            // interrupted before the first tile finished: a larger set runs longer
            count *= 2;
            assert!(count < 5000, "no tile done");
            continue;
        }
        assert!(dir.join(format!("K{count}.partial.grad.npy")).exists());
        break (input, out);
    };
    let partial = dir.join(format!("K{count}.partial.npy"));
    let mut resume = args(&input, &out);
    resume.extend(["--resume".to_string(), partial.display().to_string()]);
    let o = exe().args(&resume).output().unwrap();
    ok(&o, "resume");
    let whole = dir.join("whole.npy");
    ok(&exe().args(args(&input, &whole)).output().unwrap(), "uninterrupted");
    for (a, b) in [(out.clone(), whole.clone()), (dir.join(format!("K{count}.grad.npy")), dir.join("whole.grad.npy"))] {
        let ((da, va), (db, vb)) = (load_npy(&a), load_npy(&b));
        assert_eq!(da, db);
        if let Some(k) = (0..va.len()).find(|&k| va[k].to_bits() != vb[k].to_bits()) {
            panic!("{}: element {k} resumed {} uninterrupted {}", a.display(), va[k], vb[k]);
        }
    }
    assert!(!partial.exists() && !dir.join(format!("K{count}.partial.grad.npy")).exists(), "partial files removed");
    std::fs::remove_dir_all(&dir).unwrap();
}

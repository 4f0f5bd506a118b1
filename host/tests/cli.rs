//! The `octile` binary: its Gram matrix equals the library's, the .npy loads in numpy with the
//! right shape and values, the JSON summary is complete, and bad input fails with a message.
use octile::GraphKernel;
use octile::io::read;
use octile::{Backend, MarginalizedGraphKernel, MgkConfig, Precision};
use std::path::Path;
use std::process::Command;

mod common;
use common::{exe, load_npy, random_jsonl, root, scratch_dir};

#[test]
fn cli_gram_equals_library_and_loads_in_numpy() {
    let dir = scratch_dir("cli");
    let out = dir.join("K.npy");
    let tiny = root().join("examples/tiny.jsonl");
    let toml = root().join("examples/synthetic.toml");
    let st = exe()
        .args([
            "gram",
            tiny.to_str().unwrap(),
            "--kernel",
            toml.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
            "--precision",
            "f64",
            "--quiet",
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let (dims, vals) = load_npy(&out);
    assert_eq!(dims, [3, 3]);
    let mut cfg = MgkConfig::from_toml(&std::fs::read_to_string(&toml).unwrap()).unwrap();
    cfg.backend = Backend::Cpu;
    cfg.precision = Precision::F64;
    let graphs = read(&tiny, None, false).unwrap().graphs;
    let lib = MarginalizedGraphKernel::new(cfg).unwrap().gram(&graphs).unwrap();
    for (k, (a, b)) in vals.iter().zip(&lib.values).enumerate() {
        assert!((a - b).abs() <= 1e-12 * b.abs(), "entry {k}: cli {a}, library {b}");
    }
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("K.json")).unwrap()).unwrap();
    assert_eq!(summary["pairs"], 6);
    assert_eq!(summary["backend"], "cpu");
    // the run report: a line (details, primitives) and its typed form (report), the device likewise
    let line = summary["details"].as_str().unwrap();
    assert_eq!(summary["primitives"].as_str(), Some(line));
    assert_eq!(line, lib.details.to_string());
    let report = &summary["report"];
    assert_eq!(report, &lib.details.to_json(), "{summary}");
    assert!(report.get("resident").is_none() && report["tiles"]["pairs"] == 6, "{report}");
    assert!(report["tiles"]["primitives"]["source"].is_string() && report["tiles"]["dense_walks"]["walk"] == "shared_tiling", "{report}");
    assert!(report["tiles"]["gpu_entries"].is_null(), "{report}");
    let typed = lib.details.get::<octile::mgk::report::MgkReport>().expect("the MGK's report");
    assert_eq!(typed.tiles.as_ref().map(|t| t.pairs), Some(6));
    assert_eq!(summary["device_info"]["backend"], "cpu");
    assert_eq!(summary["device"].as_str().unwrap(), format!("CPU ({} threads)", summary["device_info"]["threads"]));
    assert!(summary["iterations"]["max"].as_u64().unwrap() > 0);
    assert_eq!(summary["non_converged"].as_array().unwrap().len(), 0);

    // numpy, when present (scripts/setup installs it into .venv)
    let py = [root().join(".venv/bin/python"), "python3".into()]
        .into_iter()
        .find(|p| Command::new(p).args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success()));
    match py {
        Some(py) => {
            let code = format!(
                "import numpy as np; K = np.load({:?}); assert K.shape == (3, 3) and K.dtype == np.float64, K; print(repr(K.ravel().tolist()))",
                out.to_str().unwrap()
            );
            let o = Command::new(py).args(["-c", &code]).output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let s = String::from_utf8(o.stdout).unwrap();
            let got: Vec<f64> = s.trim().trim_matches(['[', ']']).split(',').map(|v| v.trim().parse().unwrap()).collect();
            assert_eq!(got, vals, "numpy sees other values");
        }
        None => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIP numpy load check: no python with numpy (run scripts/setup)");
        }
    }
}

#[test]
fn cli_csv_normalized_and_against() {
    let dir = scratch_dir("cli2");
    let out = dir.join("K.csv");
    let st =
        exe().args(["gram", "nws:3:1", "--against", "ba:2:1", "--normalize", "--backend", "cpu", "--out", out.to_str().unwrap(), "--quiet"]).status().unwrap();
    assert!(st.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<Vec<f64>> = text.lines().map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
    assert_eq!((rows.len(), rows[0].len()), (3, 2));
    assert!(rows.iter().flatten().all(|&v| v > 0.0 && v <= 1.0 + 1e-12), "{rows:?}");
}

#[test]
fn cli_bad_input_fails_with_file_and_line() {
    let dir = scratch_dir("cli3");
    let bad = dir.join("bad.smi");
    std::fs::write(&bad, "CC\nC(C\n").unwrap();
    let out = dir.join("K.npy");
    let o = exe().args(["gram", bad.to_str().unwrap(), "--out", out.to_str().unwrap(), "--backend", "cpu", "--quiet"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.smi:2:"), "{err}");
    assert!(!out.exists(), "no output on failure");
}

/// `--devices`: a spelling that is no GPU list is a usage error (exit 2) naming it; GPUs named by
/// ordinal that are not there fail (exit 1), with `--backend auto` too, instead of computing on the
/// CPU; `all` takes whatever there is (the CPU on a machine without a GPU). Runs on any machine.
#[test]
fn devices_that_cannot_be_had_are_errors_not_a_silent_cpu_run() {
    let dir = scratch_dir("cli-devices");
    let out = dir.join("K.npy");
    let gram = |devices: &str| {
        exe()
            .args([
                "--devices",
                devices,
                "gram",
                "molecules:6:1",
                "--kernel",
                &root().join("examples/molecules.toml").to_string_lossy(),
                "--out",
                out.to_str().unwrap(),
                "--quiet",
            ])
            .output()
            .unwrap()
    };
    for bad in ["0,x", "1,1", ""] {
        let o = gram(bad);
        assert_eq!(o.status.code(), Some(2), "--devices {bad:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stderr).contains("--devices"), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = gram("63");
    assert_eq!(o.status.code(), Some(1), "GPU 63: {}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("GPU 63 does not exist") || err.contains("CUDA"), "{err}");
    let o = gram("all");
    assert_eq!(o.status.code(), Some(0), "all: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(load_npy(&out).0, vec![6, 6]);
}

/// The library's warnings and timings reach stderr through the CLI's log sink: a skipped record
/// always (with its file and line), the phase timings only with `-v` (or `OCTILE_TRACE`).
#[test]
fn skipped_records_are_warned_and_timings_need_verbose() {
    let dir = scratch_dir("cli-log");
    let bad = dir.join("some-bad.smi");
    std::fs::write(&bad, "CC\nC(C\nCCO\n").unwrap();
    let out = dir.join("K.npy");
    let sp = dir.join("sp.toml");
    std::fs::write(&sp, "method = \"shortest_path\"\n[node.element]\nkernel = \"kronecker_delta\"\nh = 0.3\n").unwrap();
    let run = |extra: &[&str], trace: bool| {
        let mut c = exe();
        c.args(extra).args(["gram", bad.to_str().unwrap(), "--skip-invalid", "--out", out.to_str().unwrap(), "--backend", "cpu", "--quiet"]);
        c.args(["--kernel", sp.to_str().unwrap()]).env_remove("OCTILE_TRACE");
        if trace {
            c.env("OCTILE_TRACE", "1");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let quiet = run(&[], false);
    assert!(quiet.contains("warning: skipped: ") && quiet.contains("some-bad.smi:2:"), "{quiet}");
    assert!(quiet.contains("warning: 1 invalid record(s) skipped"), "{quiet}");
    assert!(!quiet.contains("sp: "), "timings without -v: {quiet}");
    for (extra, trace) in [(&["-v"][..], false), (&[][..], true)] {
        let verbose = run(extra, trace);
        assert!(verbose.contains("warning: skipped: ") && verbose.contains("sp: paths at "), "{extra:?} {trace}: {verbose}");
    }
}

#[test]
fn ctrl_c_saves_the_pairs_done_and_resume_gives_the_uninterrupted_matrix() {
    interrupted_run_keeps_its_tiles_and_resume_finishes_them("INT");
}

/// A batch scheduler's time limit (SIGTERM) and a closed terminal (SIGHUP) keep the work as Ctrl-C does.
#[test]
fn sigterm_and_sighup_keep_the_tiles_done_as_ctrl_c_does() {
    interrupted_run_keeps_its_tiles_and_resume_finishes_them("TERM");
    interrupted_run_keeps_its_tiles_and_resume_finishes_them("HUP");
}

/// Send `signal` to a running `octile gram`: exit 130, the tiles done kept and listed, and
/// `--resume` gives the uninterrupted matrix bit for bit (a partial of other inputs is refused).
fn interrupted_run_keeps_its_tiles_and_resume_finishes_them(signal: &str) {
    let dir = scratch_dir(&format!("cli4-{signal}"));
    let toml = root().join("examples/synthetic.toml");
    // a set big enough that the run is still going when the signal comes (grown if not)
    let (mut count, mut wait_ms) = (120, 800);
    let (input, out, partial) = loop {
        let input = dir.join(format!("set{count}.jsonl"));
        std::fs::write(&input, random_jsonl(count, 7)).unwrap();
        let out = dir.join(format!("K{count}.npy"));
        let args = [
            "gram",
            input.to_str().unwrap(),
            "--kernel",
            toml.to_str().unwrap(),
            "--backend",
            "cpu",
            "--precision",
            "f64",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--tile-size",
            "8",
        ];
        let child = exe().args(args).stderr(std::process::Stdio::piped()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(wait_ms));
        let st = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
        assert!(st.success(), "could not send SIG{signal}");
        let res = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&res.stderr).to_string();
        if res.status.success() {
            // finished before the signal: try a larger set
            assert!(count < 5000, "the run never outlasted the signal");
            count *= 2;
            continue;
        }
        assert_eq!(res.status.code(), Some(130), "exit code after SIG{signal}; stderr: {err}");
        let partial = dir.join(format!("K{count}.partial.npy"));
        assert!(err.contains("--resume") && err.contains(partial.to_str().unwrap()), "the message says how to resume: {err}");
        assert!(!out.exists() && !dir.join(format!("K{count}.json")).exists(), "no complete-looking output after Ctrl-C");
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("K{count}.partial.json"))).unwrap()).unwrap();
        let (done, total) = (summary["pairs_done"].as_u64().unwrap(), summary["pairs_total"].as_u64().unwrap());
        assert_eq!(total as usize, count * (count + 1) / 2);
        assert!(done < total, "interrupted but {done} of {total} done");
        if done == 0 {
            // interrupted before the first block finished: wait longer
            wait_ms *= 2;
            assert!(wait_ms < 60_000, "no pair done after {wait_ms} ms");
            continue;
        }
        break (input, out, partial);
    };
    let (dims, part) = load_npy(&partial);
    assert_eq!(dims, [count, count]);
    // the tiles listed as done hold the kernel's (positive) values, and their transposes
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("K{count}.partial.json"))).unwrap()).unwrap();
    let tiles = summary["tiles_done"].as_array().unwrap();
    assert!(!tiles.is_empty(), "{summary}");
    for t in tiles {
        let t: Vec<usize> = t.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
        for i in t[0]..t[1] {
            for j in t[2]..t[3] {
                assert!(part[i * count + j] > 0.0 && part[j * count + i] == part[i * count + j], "tile {t:?} entry ({i}, {j})");
            }
        }
    }
    // a resume against other inputs is refused
    let other = dir.join("other.jsonl");
    std::fs::write(&other, random_jsonl(count, 8)).unwrap();
    let st = exe()
        .args([
            "gram",
            other.to_str().unwrap(),
            "--kernel",
            toml.to_str().unwrap(),
            "--backend",
            "cpu",
            "--precision",
            "f64",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--resume",
            partial.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&st.stderr).contains("other inputs"), "{}", String::from_utf8_lossy(&st.stderr));
    // resume, then the same run uninterrupted: equal bit for bit
    let args = |out: &Path| {
        vec![
            "gram".to_string(),
            input.display().to_string(),
            "--kernel".into(),
            toml.display().to_string(),
            "--backend".into(),
            "cpu".into(),
            "--precision".into(),
            "f64".into(),
            "--out".into(),
            out.display().to_string(),
            "--quiet".into(),
            "--tile-size".into(),
            "8".into(),
        ]
    };
    let mut resume = args(&out);
    resume.extend(["--resume".to_string(), partial.display().to_string()]);
    edited_partials_are_refused_naming_file_and_tile(&resume, &partial, count);
    let st = exe().args(&resume).output().unwrap();
    assert!(st.status.success(), "resume failed: {}", String::from_utf8_lossy(&st.stderr));
    assert!(!partial.exists() && !dir.join(format!("K{count}.partial.json")).exists(), "partial files removed once finished");
    let whole = dir.join("whole.npy");
    assert!(exe().args(args(&whole)).status().unwrap().success());
    let ((d1, resumed), (_, uninterrupted)) = (load_npy(&out), load_npy(&whole));
    assert_eq!(d1, [count, count]);
    for (k, (a, b)) in resumed.iter().zip(&uninterrupted).enumerate() {
        assert_eq!(a.to_bits(), b.to_bits(), "entry ({}, {}): resumed {a}, uninterrupted {b}", k / count, k % count);
    }
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.with_extension("json")).unwrap()).unwrap();
    assert!(summary["pairs_resumed"].as_u64().unwrap() > 0);
    assert_eq!(summary["pairs"].as_u64().unwrap() + summary["pairs_resumed"].as_u64().unwrap(), (count * (count + 1) / 2) as u64);
    // the pairs of the result: the uninterrupted run's
    let uninterrupted: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(whole.with_extension("json")).unwrap()).unwrap();
    assert_eq!(summary["pairs_in_result"], uninterrupted["pairs"], "resumed {summary}\nuninterrupted {uninterrupted}");
    assert_eq!(uninterrupted["pairs_in_result"], uninterrupted["pairs"], "{uninterrupted}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--resume` with the partial of an interrupted `count` × `count` run (`resume`: its command):
/// a value of a finished tile changed in the partial matrix, or the list of checksums removed
/// from its JSON, is an error (rc 1) naming the file and the tile; nothing is written. The files
/// are restored afterwards.
fn edited_partials_are_refused_naming_file_and_tile(resume: &[String], partial: &Path, count: usize) {
    let list = partial.with_file_name(partial.file_name().unwrap().to_str().unwrap().replace(".partial.npy", ".partial.json"));
    let (bytes, text) = (std::fs::read(partial).unwrap(), std::fs::read_to_string(&list).unwrap());
    let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
    let t: Vec<usize> = summary["tiles_done"][0].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
    let run = || {
        let o = exe().args(resume).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // one value of the first finished tile, changed by a little (finite: it would pass a range check)
    let at = bytes.len() - count * count * 8 + (t[0] * count + t[2]) * 8;
    let mut edited = bytes.clone();
    let v = f64::from_le_bytes(edited[at..at + 8].try_into().unwrap());
    edited[at..at + 8].copy_from_slice(&(v * 1.001).to_le_bytes());
    std::fs::write(partial, &edited).unwrap();
    let err = run();
    let tile = format!("rows {}:{}, columns {}:{}", t[0], t[1], t[2], t[3]);
    assert!(err.contains("checksum") && err.contains(partial.to_str().unwrap()) && err.contains(&tile), "{err}");
    std::fs::write(partial, &bytes).unwrap();
    // the checksums taken out of the list
    let mut stripped = summary.clone();
    stripped.as_object_mut().unwrap().remove("tile_checksums");
    std::fs::write(&list, stripped.to_string()).unwrap();
    let err = run();
    assert!(err.contains("no checksum") && err.contains(list.to_str().unwrap()) && err.contains(&tile), "{err}");
    // a checksum as an older octile wrote it (FNV-1a over the bytes, no "v2:" mark)
    let mut older = summary.clone();
    for c in older["tile_checksums"].as_array_mut().unwrap() {
        let s = c.as_str().unwrap().to_string();
        assert!(s.starts_with("v2:"), "this octile marks its checksums: {s}");
        *c = serde_json::json!(s.trim_start_matches("v2:"));
    }
    std::fs::write(&list, older.to_string()).unwrap();
    let err = run();
    assert!(err.contains("older octile") && err.contains(list.to_str().unwrap()) && err.contains(&tile), "{err}");
    // a tile this run's plan does not have (an edit, or a block across the diagonal cut by an
    // older octile): its first row's band one row shorter
    let mut other = summary.clone();
    other["tiles_done"][0][1] = serde_json::json!(t[1] - 1);
    std::fs::write(&list, other.to_string()).unwrap();
    let err = run();
    let shorter = format!("rows {}:{}, columns {}:{}", t[0], t[1] - 1, t[2], t[3]);
    assert!(err.contains("not a tile of this run") && err.contains("older octile") && err.contains(&shorter), "{err}");
    std::fs::write(&list, &text).unwrap();
}

#[test]
fn non_convergence_writes_values_lists_pairs_and_exits_3() {
    let dir = scratch_dir("cli5");
    let toml = dir.join("k.toml");
    std::fs::write(&toml, "q = 0.001\nmax_iterations = 1\n[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n").unwrap();
    let out = dir.join("K.npy");
    let o = exe()
        .args(["gram", "nws:2:1", "--kernel", toml.to_str().unwrap(), "--backend", "cpu", "--precision", "f64", "--out", out.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("did not converge"));
    let (dims, vals) = load_npy(&out);
    assert_eq!(dims, [2, 2]);
    assert!(vals.iter().all(|v| v.is_finite() && *v > 0.0), "{vals:?}");
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("K.json")).unwrap()).unwrap();
    assert_eq!(summary["non_converged"].as_array().unwrap().len(), 4, "every entry of the 2x2 matrix is listed");
    assert_eq!(summary["non_converged"][0]["iterations"], 1);
}

/// `octile tune` writes a profile (and the winner-map SVG); `octile gram --profile` then uses that
/// profile's map, as the summary says; a hand-edited profile is used verbatim by the library.
#[test]
fn tune_writes_a_profile_the_solver_uses() {
    let dir = scratch_dir("tune");
    let prof = dir.join("profiles.json");
    let svg = dir.join("winners.svg");
    let o = exe()
        .args(["tune", "--backend", "cpu", "--precision", "f64", "--quick", "--out", prof.to_str().unwrap(), "--svg", svg.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "tune failed: {}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("nnz A\\B") && stdout.contains("labeled"), "no winner table in:\n{stdout}");
    let svg_text = std::fs::read_to_string(dir.join("winners-f64.svg")).unwrap();
    assert!(svg_text.starts_with("<svg") && svg_text.matches("<rect").count() >= 2 * 289, "bad svg");
    let file = octile::mgk::profile::ProfileFile::read(&prof).unwrap();
    assert_eq!(file.profiles.len(), 1);
    let p = &file.profiles[0];
    assert_eq!((p.backend.as_str(), p.precision.as_str()), ("cpu", "f64"));
    assert_eq!(p.timings_ns.as_ref().unwrap()["labeled"]["S"].len(), 289);

    // the CLI run names the profile it used
    let out = dir.join("K.npy");
    let st = exe()
        .args(["gram", "nws:3", "--backend", "cpu", "--precision", "f64", "--profile", prof.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"])
        .status()
        .unwrap();
    assert!(st.success());
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("K.json")).unwrap()).unwrap();
    let used = summary["primitives"].as_str().unwrap();
    assert!(used.starts_with("adaptive: ") && used.contains("profiles.json") && used.contains("labeled"), "{used}");

    // a hand-edited profile (every cell R) is the map the library uses
    let mut edited = file.clone();
    edited.profiles[0].labeled = vec!["R".repeat(17); 17];
    let edited_path = dir.join("edited.json");
    std::fs::write(&edited_path, serde_json::to_string(&edited).unwrap()).unwrap();
    let mut cfg = octile::mgk::config::synthetic_kernel(0.05);
    cfg.backend = Backend::Cpu;
    cfg.tiles.profile = Some(edited_path);
    let map = MarginalizedGraphKernel::new(cfg).unwrap().primitive_map().unwrap();
    assert_eq!(map.map, octile_types::PrimitiveMap::uniform(octile_types::Primitive::SparseDense));

    // tuning the blocked walks adds a second profile to the same file; runs with that walk use it
    let o = exe()
        .args([
            "tune",
            "--backend",
            "cpu",
            "--precision",
            "f64",
            "--quick",
            "--dense-walk",
            "blocked",
            "--out",
            prof.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "tune --dense-walk blocked failed: {}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("blocked dense walks"), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(dir.join("winners-f64-blocked.svg").is_file());
    let file = octile::mgk::profile::ProfileFile::read(&prof).unwrap();
    assert_eq!(file.profiles.iter().map(|p| p.walk()).collect::<Vec<_>>(), ["shared", "blocked"]);
    let st = exe()
        .args([
            "gram",
            "nws:3",
            "--backend",
            "cpu",
            "--precision",
            "f64",
            "--profile",
            prof.to_str().unwrap(),
            "--dense-walk",
            "blocked",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("K.json")).unwrap()).unwrap();
    let used = summary["primitives"].as_str().unwrap();
    assert!(used.contains("f64 blocked-walk labeled") && used.contains("dense walks (D, R): tiling-blocking"), "{used}");

    // a broken profile is a typed error naming the file, not a panic
    std::fs::write(dir.join("bad.json"), "{\"version\": 1, \"profiles\": [{\"backend\": 3}]}").unwrap();
    let o = exe()
        .args(["gram", "nws:2", "--backend", "cpu", "--profile", dir.join("bad.json").to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.json"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn cli_nodal_writes_node_matrix_in_input_order_summing_to_k() {
    let dir = scratch_dir("nodal");
    let out = dir.join("R.npy");
    let st = exe().args(["nodal", "nws:3:5", "--pair", "2,0", "--backend", "cpu", "--precision", "f64", "--out"]).arg(&out).status().unwrap();
    assert!(st.success());
    let (dims, r) = load_npy(&out);
    assert_eq!(dims, vec![96, 96]);
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.with_extension("json")).unwrap()).unwrap();
    assert_eq!(summary["node_order"], "input");
    assert_eq!(summary["pair"], serde_json::json!([2, 0]));
    // ΣR = K(G2, G0) from the library, and R does not depend on the packing order
    let graphs = octile::generators::nws_set(3, 5);
    let mut cfg = octile::mgk::config::synthetic_kernel(0.05);
    cfg.backend = Backend::Cpu;
    cfg.precision = Precision::F64;
    let k = MarginalizedGraphKernel::new(cfg.clone()).unwrap().gram(&graphs).unwrap().get(2, 0);
    let sum: f64 = r.iter().sum();
    assert!((sum - k).abs() <= 1e-9 * k, "ΣR {sum} vs K {k}");
    assert!((summary["kernel_value"].as_f64().unwrap() - k).abs() <= 1e-9 * k);
    cfg.reorder = octile::Reordering::Natural;
    let natural = MarginalizedGraphKernel::new(cfg).unwrap().nodal(&graphs[2], &graphs[0]).unwrap();
    let scale = natural.values.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for (idx, (a, e)) in r.iter().zip(&natural.values).enumerate() {
        assert!((a - e).abs() <= 1e-9 * scale, "R[{}][{}]: PBR-packed {a}, natural {e}", idx / 96, idx % 96);
    }
    let bad = exe().args(["nodal", "nws:2", "--pair", "0,5", "--backend", "cpu", "--out"]).arg(dir.join("x.npy")).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("--pair 0,5: graph 5 is past the 2 graph(s) of the inputs"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

#[test]
fn cli_dense_walk_flag_and_key_select_the_walk_and_keep_the_values() {
    let dir = scratch_dir("walk");
    let tiny = root().join("examples/tiny.jsonl");
    let base = std::fs::read_to_string(root().join("examples/synthetic.toml")).unwrap();
    let run = |tag: &str, kernel: &Path, extra: &[&str]| {
        let out = dir.join(format!("{tag}.npy"));
        let mut args = vec![
            "gram",
            tiny.to_str().unwrap(),
            "--kernel",
            kernel.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
            "--precision",
            "f64",
            "--primitive",
            "dense-dense",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        let o = exe().args(&args).output().unwrap();
        assert!(o.status.success(), "{tag}: {}", String::from_utf8_lossy(&o.stderr));
        let summary = std::fs::read_to_string(out.with_extension("json")).unwrap();
        (load_npy(&out).1, summary)
    };
    let plain = dir.join("plain.toml");
    std::fs::write(&plain, &base).unwrap();
    let (shared, s_shared) = run("shared", &plain, &[]);
    assert!(s_shared.contains("dense walks (D, R): shared tiling"), "{s_shared}");
    let (flag, s_flag) = run("flag", &plain, &["--dense-walk", "blocked"]);
    assert!(s_flag.contains("dense walks (D, R): tiling-blocking"), "{s_flag}");
    // the TOML key, placed before the first table
    let keyed = dir.join("keyed.toml");
    let i = base.find('[').unwrap();
    std::fs::write(&keyed, format!("{}dense_walk = \"blocked\"\n{}", &base[..i], &base[i..])).unwrap();
    let (key, s_key) = run("key", &keyed, &[]);
    assert!(s_key.contains("dense walks (D, R): tiling-blocking"), "{s_key}");
    // the flag overrides the key
    let (_, s_over) = run("over", &keyed, &["--dense-walk", "shared"]);
    assert!(s_over.contains("dense walks (D, R): shared tiling"), "{s_over}");
    for (k, ((a, b), c)) in shared.iter().zip(&flag).zip(&key).enumerate() {
        assert!((a - b).abs() <= 1e-12 * a.abs() && (a - c).abs() <= 1e-12 * a.abs(), "entry {k}: shared {a}, flag {b}, key {c}");
    }
    // a bad value is a clear error
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, format!("{}dense_walk = \"registers\"\n{}", &base[..i], &base[i..])).unwrap();
    let o = exe()
        .args([
            "gram",
            tiny.to_str().unwrap(),
            "--kernel",
            bad.to_str().unwrap(),
            "--out",
            dir.join("bad.npy").to_str().unwrap(),
            "--backend",
            "cpu",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("dense_walk must be \"shared\" or \"blocked\"") && err.contains("bad.toml"), "{err}");
}

#[test]
fn shortest_path_method_runs_from_the_kernel_toml_and_equals_the_library() {
    let dir = scratch_dir("cli-sp");
    let out = dir.join("K.npy");
    let tiny = root().join("examples/tiny.jsonl");
    let toml = root().join("examples/sp-continuous.toml");
    let st = exe()
        .args(["gram", tiny.to_str().unwrap(), "--kernel", toml.to_str().unwrap(), "--out", out.to_str().unwrap(), "--backend", "cpu", "--quiet"])
        .status()
        .unwrap();
    assert!(st.success());
    let (dims, vals) = load_npy(&out);
    assert_eq!(dims, [3, 3]);
    let mut cfg = octile::SpConfig::from_toml(&std::fs::read_to_string(&toml).unwrap()).unwrap();
    cfg.backend = Backend::Cpu;
    let graphs = read(&tiny, None, false).unwrap().graphs;
    let lib = octile::ShortestPathKernel::new(cfg).unwrap().gram(&graphs).unwrap();
    assert_eq!(vals, lib.values, "cli and library, same backend: bit for bit");
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("K.json")).unwrap()).unwrap();
    assert_eq!(summary["method"], "shortest_path");
    assert!(summary["details"].as_str().unwrap().contains("all pairs of paths"), "{summary}");
}

#[test]
fn bad_output_names_fail_before_any_work_and_write_nothing() {
    let dir = scratch_dir("cli-out");
    for (name, want) in [("missing/K.npy", "does not exist"), ("K.json", "written as .npy"), ("K.txt", "written as .npy"), ("K", "written as .npy")] {
        let out = dir.join(name);
        let o = exe().args(["gram", "nws:2", "--out", out.to_str().unwrap(), "--backend", "cpu", "--quiet"]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{name}: {err}");
        assert!(!out.exists() && !out.with_extension("json").exists(), "{name}: something was written");
    }
}

#[test]
fn an_overflowing_value_is_a_reported_failure_not_a_result() {
    // K ∝ p²: p = 1e200 overflows every entry; each is reported as failed (exit 3, listed in the
    // summary) rather than written as a silent inf with exit 0
    let dir = scratch_dir("cli-inf");
    let (toml, out) = (dir.join("k.toml"), dir.join("K.npy"));
    std::fs::write(&toml, "q = 0.1\np = 1e200\n[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n").unwrap();
    let o = exe().args(["gram", "nws:2", "--kernel", toml.to_str().unwrap(), "--out", out.to_str().unwrap(), "--backend", "cpu", "--quiet"]).output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("K.json")).unwrap()).unwrap();
    // every entry of the 2 × 2 matrix (3 pairs, one mirrored)
    assert_eq!(summary["non_converged"].as_array().unwrap().len(), 4, "{summary}");
    // and the message says why: the value, not the solve (it said "did not converge … residual 6e-13")
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("3 pair(s) could not be solved") && err.contains("its value is not finite: K grows as p² (p = 1e200)"), "{err}");
}

/// K ∝ p²: a p so small that K underflows (to 0, or to f64's subnormals where digits are lost) is
/// a reported failure (exit 3, listed), not an all-zero K whose normalized form is an identity; a
/// small p that K holds gives K·p² exactly scaled.
#[test]
fn an_underflowing_value_is_a_reported_failure_not_a_result() {
    let dir = scratch_dir("cli-tiny-p");
    let tiny = root().join("examples/tiny.jsonl");
    let kernel = |p: &str| format!("q = 0.05\np = {p}\n[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n");
    for p in ["1e-170", "1e-160"] {
        let (code, err) = gram_with(&dir, &kernel(p), &[tiny.to_str().unwrap()], &["--normalize"]);
        assert_eq!(code, Some(3), "p = {p}: {err}");
        assert!(err.contains(&format!("its value underflowed: K shrinks as p² (p = {p})")), "p = {p}: {err}");
    }
    // p = 1e-100 (K ~ 1e-200): a result, p² times p = 1's
    let (code, err) = gram_with(&dir, &kernel("1e-100"), &[tiny.to_str().unwrap()], &[]);
    assert_eq!(code, Some(0), "{err}");
    let (_, small) = load_npy(&dir.join("K.npy"));
    let (code, err) = gram_with(&dir, &kernel("1"), &[tiny.to_str().unwrap()], &[]);
    assert_eq!(code, Some(0), "{err}");
    let (_, one) = load_npy(&dir.join("K.npy"));
    for (k, (s, o)) in small.iter().zip(&one).enumerate() {
        let want = o * 1e-200;
        assert!((s - want).abs() <= 1e-12 * want.abs(), "entry {k}: {s:e}, expected {want:e}");
    }
}

/// More worker threads than any machine has, by flag or by RAYON_NUM_THREADS, or a count that is not
/// a number: a message and exit 2 at once, not a panic in the first parallel loop or a minute of
/// spawning threads.
#[test]
fn thread_counts_past_the_limit_are_refused_at_once() {
    let tiny = root().join("examples/tiny.jsonl");
    let out = std::env::temp_dir().join(format!("octile-threads-{}.npy", std::process::id()));
    let args = ["gram", tiny.to_str().unwrap(), "--out", out.to_str().unwrap(), "--backend", "cpu", "--quiet"];
    for (flag, env, says) in [
        (Some("65535"), None, "--threads 65535: at most 1024 worker threads"),
        (None, Some("4000"), "RAYON_NUM_THREADS=4000: at most 1024 worker threads"),
        (None, Some("abc"), "RAYON_NUM_THREADS=abc: not a number of threads"),
    ] {
        let mut c = exe();
        c.args(args).env_remove("RAYON_NUM_THREADS");
        if let Some(n) = flag {
            c.args(["--threads", n]);
        }
        if let Some(v) = env {
            c.env("RAYON_NUM_THREADS", v);
        }
        let o = c.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flag:?} {env:?}: {err}");
        assert!(err.contains(says) && !err.contains("panicked"), "{flag:?} {env:?}: {err}");
        assert!(!out.exists());
    }
    // RAYON_NUM_THREADS within the limit still sets the pool
    let o = exe().args(args).env("RAYON_NUM_THREADS", "3").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_file(&out).unwrap();
}

/// `nodal` writes its matrix and summary whatever happens to the pair, and a pair that did not
/// converge, or whose K over- or underflowed, exits 3 saying which (the summary's "converged" false).
#[test]
fn nodal_writes_a_failed_pair_and_exits_3() {
    let dir = scratch_dir("cli-nodal-fail");
    let tiny = root().join("examples/tiny.jsonl");
    let (toml, out) = (dir.join("k.toml"), dir.join("R.csv"));
    for (kernel, says) in [
        ("q = 0.05\np = 1e300\n[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n", "K = inf: its solve met its tolerance"),
        ("q = 0.05\np = 1e-170\n[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n", "its value underflowed: K shrinks as p² (p = 1e-170)"),
        ("q = 0.05\nmax_iterations = 1\n[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n", "did not converge in 1 iterations"),
    ] {
        std::fs::write(&toml, kernel).unwrap();
        let o = exe()
            .args(["nodal", tiny.to_str().unwrap(), "--kernel", toml.to_str().unwrap(), "--out", out.to_str().unwrap(), "--backend", "cpu"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{kernel}: {err}");
        assert!(err.contains(says), "{kernel}: {err}");
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("R.json")).unwrap()).unwrap();
        assert_eq!(summary["converged"], false, "{summary}");
        assert!(std::fs::read_to_string(&out).unwrap().lines().count() > 0);
        std::fs::remove_file(&out).unwrap();
    }
}

/// The shortest-path kernel's input errors name the input and line (a node feature its κv compares
/// that a graph lacks), and a path whose length passes f64's range says so (it read as no path).
#[test]
fn shortest_path_input_errors_say_where_and_what() {
    let dir = scratch_dir("cli-sp-errors");
    let tiny = root().join("examples/tiny.jsonl");
    let sp = "method = \"shortest_path\"\n[node.color]\nkernel = \"kronecker_delta\"\nh = 0\n[path_length]\nkernel = \"kronecker_delta\"\nh = 0\n";
    let (code, err) = gram_with(&dir, sp, &[tiny.to_str().unwrap()], &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("tiny.jsonl:1: graph 0 of this input: node feature 'color' is not in it; it has: [label]"), "{err}");
    let g = dir.join("w.jsonl");
    let h = r#""directed":false,"multigraph":false,"graph":{}"#;
    std::fs::write(&g, format!("{{{h},\"nodes\":[{{\"id\":0,\"label\":1}},{{\"id\":1,\"label\":1}},{{\"id\":2,\"label\":1}}],\"links\":[{{\"source\":0,\"target\":1,\"weight\":1e308}},{{\"source\":1,\"target\":2,\"weight\":1e308}}]}}\n")).unwrap();
    let labels = std::fs::read_to_string(root().join("examples/sp-labels.toml")).unwrap();
    let (code, err) = gram_with(&dir, &labels, &[g.to_str().unwrap()], &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("2 shortest path(s) between connected nodes are longer than f64 holds"), "{err}");
}

#[test]
fn a_missing_input_is_reported_once_with_its_path() {
    let o = exe()
        .args(["gram", "/nonexistent-octile/x.smi", "--out", std::env::temp_dir().join("octile-missing.npy").to_str().unwrap(), "--backend", "cpu", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("/nonexistent-octile/x.smi"), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "the cause printed once: {err}");
}

#[test]
fn a_graph_without_edges_gets_a_value_on_the_default_kernel() {
    // no edges, so no edge features to name: K = Σ p·p′·κv(i, i′) (M is diagonal, x = V×·1)
    let mut g0 = octile::Graph::new(2, &["label"], &[]);
    g0.set_node_features(0, &[1.0]).unwrap();
    g0.set_node_features(1, &[2.0]).unwrap();
    let mut g1 = octile::Graph::new(2, &["label"], &["length"]);
    g1.set_node_features(0, &[1.0]).unwrap();
    g1.set_node_features(1, &[1.0]).unwrap();
    g1.add_edge(0, 1, 1.0, &[1.0]).unwrap();
    let cfg = MgkConfig { backend: Backend::Cpu, precision: Precision::F64, ..octile::mgk::config::synthetic_kernel(0.05) };
    let k = MarginalizedGraphKernel::new(cfg).unwrap().gram(&[g0, g1]).unwrap();
    let want = 1.0 + 0.5 + 0.5 + 1.0; // κv = Kronecker delta on the label, h = 0.5
    assert!((k.get(0, 0) - want).abs() <= 1e-12 * want, "K(G0, G0): actual {}, expected {want}", k.get(0, 0));
    assert!(k.get(0, 1).is_finite() && k.get(0, 1) > 0.0, "K(G0, G1) = {}", k.get(0, 1));
}

#[test]
fn requests_past_memory_are_refused_before_any_work() {
    let dir = scratch_dir("cli-mem");
    let out = dir.join("K.npy");
    // a generator asked for 10^12 graphs: refused at once, nothing written
    let o = exe().args(["gram", "nws:1000000000000", "--out", out.to_str().unwrap(), "--backend", "cpu", "--quiet"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("generating 1000000000000 graphs needs") && err.contains("available memory"), "{err}");
    // a Gram matrix past --max-memory
    // (the matrix goes to disk tile by tile: the largest tile is what memory holds)
    let o = exe()
        .args(["gram", "nws:2000", "--out", out.to_str().unwrap(), "--backend", "cpu", "--quiet", "--max-memory", "10M", "--tile-size", "2000"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("a 2000 × 2000 tile of the 2000 × 2000 matrix needs") && err.contains("--max-memory limit of 10.0 MiB") && err.contains("--tile-size"),
        "{err}"
    );
    assert!(!out.exists() && !dir.join("K.json").exists() && !dir.join("K.partial.npy").exists(), "nothing written");
    // an address-space limit (ulimit -v, as batch schedulers set) is honoured the same way: a typed
    // error naming it, not an abort when an allocation fails
    let script =
        format!("ulimit -v 600000; exec {} gram nws:3000 --out {} --backend cpu --quiet --tile-size 3000", env!("CARGO_BIN_EXE_octile"), out.to_str().unwrap());
    let o = Command::new("bash").args(["-c", &script]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("3000 × 3000 tile") && err.contains("ulimit -v"), "{err}");
    let script = format!("ulimit -v 600000; exec {} gram nws:3 --out {} --backend cpu --quiet", env!("CARGO_BIN_EXE_octile"), out.to_str().unwrap());
    let o = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert!(o.status.success(), "a small run under the same limit: {}", String::from_utf8_lossy(&o.stderr));
    // within the limit it runs
    let o = exe().args(["gram", "nws:3", "--out", out.to_str().unwrap(), "--backend", "cpu", "--quiet", "--max-memory", "10M"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_feature_holding_strings_in_x_and_numbers_in_y_is_an_error_naming_both() {
    let dir = scratch_dir("kinds");
    let x = dir.join("x.jsonl");
    std::fs::write(
        &x,
        "{\"nodes\": [{\"id\": 0, \"label\": \"A\"}, {\"id\": 1, \"label\": \"B\"}], \"links\": [{\"source\": 0, \"target\": 1, \"length\": 1.0}]}\n",
    )
    .unwrap();
    let y = root().join("examples/tiny.jsonl");
    let out = dir.join("K.npy");
    let st = exe()
        .args(["gram", x.to_str().unwrap(), "--against", y.to_str().unwrap(), "--backend", "cpu", "--out", out.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&st.stderr);
    assert_eq!(st.status.code(), Some(1), "{err}");
    assert!(err.contains("node label holds numbers") && err.contains("tiny.jsonl") && err.contains("x.jsonl"), "{err}");
    assert!(!out.exists());
    // the same kinds on both sides are fine
    let st = exe()
        .args(["gram", y.to_str().unwrap(), "--against", y.to_str().unwrap(), "--backend", "cpu", "--out", out.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `octile gram` streams tiles to disk: any --tile-size gives the in-memory matrix bit for bit
/// (K(X) and K(X, Y), raw and normalized, CSV too), and --rows/--cols blocks are its slices.
#[test]
fn streamed_tiles_and_row_col_blocks_equal_the_in_memory_matrix() {
    let dir = scratch_dir("tiles");
    let (x_in, y_in) = (dir.join("x.jsonl"), dir.join("y.jsonl"));
    std::fs::write(&x_in, random_jsonl(23, 31)).unwrap();
    std::fs::write(&y_in, random_jsonl(5, 32)).unwrap();
    let toml = root().join("examples/synthetic.toml");
    let mut cfg = MgkConfig::from_toml(&std::fs::read_to_string(&toml).unwrap()).unwrap();
    cfg.backend = Backend::Cpu;
    cfg.precision = Precision::F64;
    let k = MarginalizedGraphKernel::new(cfg).unwrap();
    let (x, y) = (read(&x_in, None, false).unwrap().graphs, read(&y_in, None, false).unwrap().graphs);
    let run = |name: &str, against: bool, extra: &[&str]| -> (Vec<usize>, Vec<f64>, serde_json::Value) {
        let out = dir.join(name);
        let mut args = vec!["gram", x_in.to_str().unwrap()];
        if against {
            args.extend(["--against", y_in.to_str().unwrap()]);
        }
        args.extend(["--kernel", toml.to_str().unwrap(), "--backend", "cpu", "--precision", "f64", "--quiet", "--out", out.to_str().unwrap()]);
        args.extend(extra);
        let o = exe().args(&args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.with_extension("json")).unwrap()).unwrap();
        let (dims, vals) = if name.ends_with(".csv") {
            let text = std::fs::read_to_string(&out).unwrap();
            let rows: Vec<Vec<f64>> = text.lines().map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
            (vec![rows.len(), rows.first().map_or(0, Vec::len)], rows.concat())
        } else {
            load_npy(&out)
        };
        (dims, vals, summary)
    };
    let same = |what: &str, got: &[f64], want: &[f64]| {
        assert_eq!(got.len(), want.len(), "{what}: sizes");
        if let Some(e) = (0..got.len()).find(|&e| got[e].to_bits() != want[e].to_bits()) {
            panic!("{what}: element {e}: streamed {:.17e}, in memory {:.17e}", got[e], want[e]);
        }
    };
    let whole = k.gram(&x).unwrap();
    let norm = k.gram_normalized(&x).unwrap();
    let between = k.gram_between(&x, &y).unwrap();
    let between_norm = k.gram_between_normalized(&x, &y).unwrap();
    for size in ["1", "4", "7", "100"] {
        let (dims, v, s) = run("K.npy", false, &["--tile-size", size]);
        assert_eq!(dims, [23, 23]);
        same(&format!("K(X) tile size {size}"), &v, &whole.values);
        assert_eq!(s["pairs"], 23 * 24 / 2, "{s}");
        assert_eq!(s["tile_size"].as_u64(), Some(size.parse().unwrap()));
        let (_, v, _) = run("N.npy", false, &["--tile-size", size, "--normalize"]);
        same(&format!("K(X) normalized tile size {size}"), &v, &norm.values);
        let (dims, v, _) = run("B.npy", true, &["--tile-size", size]);
        assert_eq!(dims, [23, 5]);
        same(&format!("K(X, Y) tile size {size}"), &v, &between.values);
        let (_, v, _) = run("BN.npy", true, &["--tile-size", size, "--normalize"]);
        same(&format!("K(X, Y) normalized tile size {size}"), &v, &between_norm.values);
    }
    // several tiles at once (threads taking the next tile as each finishes): the same matrix
    for flight in ["1", "3"] {
        let (_, v, s) = run("F.npy", false, &["--tile-size", "4", "--tiles-in-flight", flight, "--normalize"]);
        same(&format!("K(X) normalized, {flight} tiles in flight"), &v, &norm.values);
        assert_eq!(s["tiles_in_flight"].as_u64(), Some(flight.parse().unwrap()), "{s}");
        let (_, v, _) = run("FB.npy", true, &["--tile-size", "3", "--tiles-in-flight", flight]);
        same(&format!("K(X, Y), {flight} tiles in flight"), &v, &between.values);
    }
    // the tile threads on pools of their own (OCTILE_SLOT_THREADS; by default on a GPU only): the
    // same matrix, and each tile's phase marks in the timeline
    let out = dir.join("P.npy");
    let args = ["gram", x_in.to_str().unwrap(), "--kernel", toml.to_str().unwrap(), "--backend", "cpu", "--precision", "f64", "--quiet"];
    let o = exe()
        .args(args)
        .args(["--tile-size", "4", "--tiles-in-flight", "3", "--normalize", "--out", out.to_str().unwrap()])
        .env("OCTILE_SLOT_THREADS", "2")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    same("K(X) normalized, 3 tiles in flight on pools of 2 threads", &load_npy(&out).1, &norm.values);
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.with_extension("json")).unwrap()).unwrap();
    let tl = &s["timeline"];
    assert_eq!(tl["columns"].as_array().map(Vec::len), Some(10), "{tl}");
    let tiles = tl["tiles"].as_array().unwrap();
    assert!(tiles.len() > 1 && Some(tiles.len() as u64) == s["tiles"].as_u64(), "every tile listed: {s}");
    for t in tiles {
        let names: Vec<&str> = t[9].as_array().unwrap().iter().map(|m| m[0].as_str().unwrap()).collect();
        assert_eq!(names, ["checked", "paired", "evaluated", "gathered"], "{t}");
        let (start, computed) = (t[5].as_f64().unwrap(), t[6].as_f64().unwrap());
        assert!(t[9].as_array().unwrap().iter().all(|m| (start..=computed).contains(&m[1].as_f64().unwrap())), "marks between start and computed: {t}");
    }
    // a bad value is refused before any file is made
    let bad = dir.join("bad.npy");
    let o = exe().args(args).args(["--tiles-in-flight", "2", "--out", bad.to_str().unwrap()]).env("OCTILE_SLOT_THREADS", "two").output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("OCTILE_SLOT_THREADS=two"), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_dir(&dir).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().starts_with("bad")), "a file of the refused run was left");
    let (_, v, s) = run("K.csv", false, &["--tile-size", "5"]);
    same("K(X) as CSV", &v, &whole.values);
    assert_eq!(s["tiles_in_flight"].as_u64(), Some(1), "the CPU's default: {s}");
    // blocks: slices of the whole matrix (normalized with the whole diagonal)
    let slice = |m: &octile::Gram, r: std::ops::Range<usize>, c: std::ops::Range<usize>| -> Vec<f64> {
        r.flat_map(|i| c.clone().map(move |j| (i, j))).map(|(i, j)| m.get(i, j)).collect()
    };
    for (r, c) in [((0, 23), (0, 23)), ((3, 11), (0, 23)), ((10, 23), (2, 9)), ((5, 6), (5, 6)), ((7, 7), (0, 23))] {
        let (rs, cs) = (format!("{}:{}", r.0, r.1), format!("{}:{}", c.0, c.1));
        let (dims, v, s) = run("R.npy", false, &["--rows", &rs, "--cols", &cs, "--tile-size", "4"]);
        assert_eq!(dims, [r.1 - r.0, c.1 - c.0]);
        assert_eq!(s["rows"], serde_json::json!([r.0, r.1]), "{s}");
        same(&format!("K(X) block {rs} × {cs}"), &v, &slice(&whole, r.0..r.1, c.0..c.1));
        let (_, v, _) = run("RN.npy", false, &["--rows", &rs, "--cols", &cs, "--normalize"]);
        same(&format!("K(X) normalized block {rs} × {cs}"), &v, &slice(&norm, r.0..r.1, c.0..c.1));
    }
    // a block across the diagonal: each unordered pair computed once, so the summary's pairs are
    // the same at every tile size (with tiles of 4 the mirrored pairs of 3:11 were computed twice)
    for (r, c) in [((3usize, 11usize), (0usize, 23usize)), ((10, 23), (2, 9)), ((0, 15), (6, 23))] {
        let (rs, cs) = (format!("{}:{}", r.0, r.1), format!("{}:{}", c.0, c.1));
        let shared = r.1.min(c.1).saturating_sub(r.0.max(c.0));
        let want = (r.1 - r.0) * (c.1 - c.0) - shared * shared.saturating_sub(1) / 2;
        for size in ["1", "4", "100"] {
            let (_, v, s) = run("RS.npy", false, &["--rows", &rs, "--cols", &cs, "--tile-size", size]);
            same(&format!("K(X) block {rs} × {cs}, tile size {size}"), &v, &slice(&whole, r.0..r.1, c.0..c.1));
            assert_eq!(s["pairs"].as_u64(), Some(want as u64), "block {rs} × {cs}, tile size {size}: pairs {}, expected {want}", s["pairs"]);
        }
    }
    let (_, v, _) = run("RB.npy", true, &["--rows", "4:19", "--cols", "1:4", "--normalize", "--tile-size", "3"]);
    same("K(X, Y) normalized block", &v, &slice(&between_norm, 4..19, 1..4));
    // one graph, and ranges outside the matrix
    let one = dir.join("one.jsonl");
    std::fs::write(&one, random_jsonl(1, 33)).unwrap();
    let o = exe()
        .args(["gram", one.to_str().unwrap(), "--backend", "cpu", "--quiet", "--normalize", "--out", dir.join("O.npy").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(load_npy(&dir.join("O.npy")), (vec![1, 1], vec![1.0]));
    for bad in [["--rows", "5:30"], ["--cols", "9:3"], ["--rows", "a:b"]] {
        let o = exe()
            .args(["gram", x_in.to_str().unwrap(), "--backend", "cpu", "--quiet", "--out", dir.join("X.npy").to_str().unwrap()])
            .args(bad)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{bad:?}: {err}");
        assert!(err.contains(bad[0]) && err.contains("0:23"), "{bad:?}: {err}");
        assert!(!dir.join("X.npy").exists() && !dir.join("X.partial.npy").exists(), "{bad:?}: nothing written");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// No file of a run may replace one of its inputs: `--out graphs.npy` would write its summary over
/// `graphs.json`. Refused before any work, the input untouched.
#[test]
fn an_output_that_would_replace_an_input_is_refused_before_any_work() {
    let dir = scratch_dir("clobber");
    let graphs = dir.join("graphs.json");
    let text = random_jsonl(3, 5);
    std::fs::write(&graphs, &text).unwrap();
    let kernel = dir.join("K.json");
    std::fs::write(&kernel, "q = 0.05\n[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n").unwrap();
    for (out, extra, input) in [
        ("graphs.npy", vec![], &graphs),
        ("graphs.csv", vec![], &graphs),
        ("K.npy", vec!["--against", graphs.to_str().unwrap(), "--kernel", kernel.to_str().unwrap()], &kernel),
    ] {
        let other = dir.join("other.jsonl");
        std::fs::write(&other, &text).unwrap();
        let first = if input == &graphs { graphs.clone() } else { other.clone() };
        let o = exe()
            .args(["gram", first.to_str().unwrap(), "--backend", "cpu", "--quiet", "--out", dir.join(out).to_str().unwrap()])
            .args(&extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "--out {out}: {err}");
        assert!(err.contains("which is the input") && err.contains(input.to_str().unwrap()), "--out {out}: {err}");
        assert_eq!(std::fs::read_to_string(&graphs).unwrap(), text, "--out {out}: the input graphs were changed");
        assert!(!dir.join(out).exists(), "--out {out}: written");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `octile gram` with the kernel file `toml` (text) on `inputs`; (exit code, stderr).
fn gram_with(dir: &Path, toml: &str, inputs: &[&str], extra: &[&str]) -> (Option<i32>, String) {
    let (k, out) = (dir.join("k.toml"), dir.join("K.npy"));
    std::fs::write(&k, toml).unwrap();
    let o = exe()
        .arg("gram")
        .args(inputs)
        .args(["--kernel", k.to_str().unwrap(), "--out", out.to_str().unwrap(), "--backend", "cpu", "--quiet"])
        .args(extra)
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Kernels without meaning on the graphs are refused before any work (issue 32): a continuous base
/// kernel on string labels (Python's wording, the TOML's names), and a kernel file comparing no
/// feature of graphs that have some, unless it says `features = "none"`; errors that are not the
/// kernel file's carry no "kernel configuration:" prefix.
#[test]
fn meaningless_kernels_are_refused_and_structure_only_is_an_opt_in() {
    let dir = scratch_dir("meaningless");
    let x = dir.join("x.jsonl");
    std::fs::write(&x, "{\"nodes\": [{\"id\": 0, \"label\": \"A\"}, {\"id\": 1, \"label\": \"B\"}], \"links\": [{\"source\": 0, \"target\": 1}]}\n").unwrap();
    let se = "[node.label]\nkernel = \"square_exponential\"\nlength_scale = 1.0\n";
    let (code, err) = gram_with(&dir, se, &[x.to_str().unwrap()], &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("node label holds strings (labels, e.g. in ") && err.contains("x.jsonl"), "{err}");
    assert!(err.contains("square_exponential would compare their arbitrary codes as numbers: use kronecker_delta for labels"), "{err}");
    assert!(!err.contains("kernel configuration"), "{err}");
    assert!(!dir.join("K.npy").exists());
    // the same kernel on numbers runs
    let (code, err) = gram_with(&dir, se, &["nws:2"], &[]);
    assert_eq!(code, Some(0), "{err}");

    // no [node.*] / [edge.*] table on graphs with features: refused, naming the features
    let (code, err) = gram_with(&dir, "q = 0.1\n", &["nws:2"], &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("the kernel compares no node or edge feature, but the graphs have edge length, node label"), "{err}");
    assert!(err.contains("features = \"none\""), "{err}");
    // ... unless asked for
    let (code, err) = gram_with(&dir, "q = 0.1\nfeatures = \"none\"\n", &["nws:2"], &[]);
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = gram_with(&dir, &format!("features = \"none\"\n{se}"), &["nws:2"], &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("features = \"none\" (compare no feature) but the file has [node.*] or [edge.*] tables"), "{err}");
    // the shortest-path kernel without node tables is the unlabeled one (GraKeL's with_labels=False)
    let (code, err) = gram_with(&dir, "method = \"shortest_path\"\n", &["nws:2"], &[]);
    assert_eq!(code, Some(0), "{err}");

    // an error that is not the kernel file's: no "kernel configuration:" prefix
    let (code, err) = gram_with(&dir, "features = \"none\"\n", &[x.to_str().unwrap()], &["--pdb-cutoff=-1"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("PDB cutoff -1 must be a positive number") && !err.contains("kernel configuration"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A node kernel that underflows to zero between two nodes (a square exponential with ℓ = 0.001 on
/// values 1 and 2000) leaves the pair without a finite solution: the message names the nodes and
/// values, not "did not converge … after 0 iterations" (issue 32).
#[test]
fn a_node_kernel_underflowing_to_zero_is_named() {
    let dir = scratch_dir("underflow");
    let x = dir.join("x.jsonl");
    let graph = |v: f64| format!("{{\"nodes\": [{{\"id\": 0, \"x\": {v}}}, {{\"id\": 1, \"x\": {v}}}], \"links\": [{{\"source\": 0, \"target\": 1}}]}}\n");
    std::fs::write(&x, graph(1.0) + &graph(2000.0)).unwrap();
    let toml = "[node.x]\nkernel = \"square_exponential\"\nlength_scale = 0.001\n";
    for precision in ["f64", "f32"] {
        let (code, err) = gram_with(&dir, toml, &[x.to_str().unwrap()], &["--precision", precision]);
        assert_eq!(code, Some(3), "{precision}: {err}");
        assert!(
            err.contains("first (0, 1): the node kernel underflowed to zero between node 0 of graph 0 and node 0 of graph 1 (x 1 and 2000)"),
            "{precision}: {err}"
        );
        assert!(!err.contains("after 0 iterations"), "{precision}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--skip-invalid` lists every record kept (row by row) and skipped (file, line, reason) in the
/// summary, and the summary records where the result came from: each input's path, size and
/// checksum, a generator's seed, the command line, octile's version and commit.
#[test]
fn the_summary_matches_rows_to_records_and_records_inputs_and_command() {
    let dir = scratch_dir("cli-records");
    let bad = dir.join("some-bad.smi");
    std::fs::write(&bad, "CC\nC(C\n\nCCO\n").unwrap();
    let sp = dir.join("sp.toml");
    std::fs::write(&sp, "method = \"shortest_path\"\n[node.element]\nkernel = \"kronecker_delta\"\nh = 0.3\n").unwrap();
    let out = dir.join("K.npy");
    let o = exe()
        .args([
            "gram",
            bad.to_str().unwrap(),
            "--skip-invalid",
            "--kernel",
            sp.to_str().unwrap(),
            "--backend",
            "cpu",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("K.json")).unwrap()).unwrap();
    let input = bad.to_str().unwrap();
    let kept = summary["records"]["kept"].as_array().unwrap();
    assert_eq!(kept.len(), 2, "{summary}");
    assert_eq!((kept[0]["input"].as_str(), kept[0]["record"].as_u64(), kept[0]["line"].as_u64()), (Some(input), Some(0), Some(1)));
    assert_eq!((kept[1]["input"].as_str(), kept[1]["record"].as_u64(), kept[1]["line"].as_u64()), (Some(input), Some(2), Some(4)));
    let skipped = summary["records"]["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{summary}");
    assert_eq!((skipped[0]["input"].as_str(), skipped[0]["record"].as_u64(), skipped[0]["line"].as_u64()), (Some(input), Some(1), Some(2)));
    assert!(!skipped[0]["reason"].as_str().unwrap().is_empty());
    assert_eq!(summary["skipped_records"], 1);
    // the input: path, size, checksum
    let i = &summary["inputs"][0];
    assert_eq!(i["input"].as_str(), Some(input));
    assert_eq!(i["bytes"].as_u64(), Some(std::fs::metadata(&bad).unwrap().len()));
    assert!(i["fnv1a64"].as_str().is_some_and(|h| h.len() == 16 && h.chars().all(|c| c.is_ascii_hexdigit())), "{i}");
    assert!(Path::new(i["path"].as_str().unwrap()).is_absolute(), "{i}");
    // the command, version and commit
    let p = &summary["provenance"];
    let command: Vec<&str> = p["command"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert!(command.contains(&"--skip-invalid") && command.contains(&input), "{p}");
    assert_eq!(p["octile_version"].as_str(), Some(env!("CARGO_PKG_VERSION")));
    assert!(p["git_commit"].as_str().is_some_and(|c| !c.is_empty()), "{p}");
    // a generator: its count and seed (the default seed too); no records listed without --skip-invalid
    let o = exe().args(["gram", "nws:3:5", "ba:2", "--backend", "cpu", "--quiet", "--out", out.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("K.json")).unwrap()).unwrap();
    assert_eq!(summary["inputs"][0], serde_json::json!({"input": "nws:3:5", "generator": "nws", "count": 3, "seed": 5}));
    assert_eq!(summary["inputs"][1]["seed"], 2020);
    assert!(summary.get("records").is_none(), "{summary}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A folder where no file can be created (permissions; /sys where root ignores them), a missing
/// folder, or a folder where the summary or gradient goes: an error at once naming the path given,
/// nothing written.
#[test]
fn an_output_that_cannot_be_written_is_refused_before_any_work() {
    let dir = scratch_dir("cli-unwritable");
    let locked = dir.join("locked");
    std::fs::create_dir_all(&locked).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    // root writes into a read-only folder: then /sys, which refuses even root
    let unwritable = if std::fs::File::create(locked.join("probe")).is_ok() { Path::new("/sys").to_path_buf() } else { locked.clone() };
    std::fs::create_dir_all(dir.join("K.json")).unwrap();
    std::fs::create_dir_all(dir.join("G.grad.npy")).unwrap();
    for (out, extra, says) in [
        (unwritable.join("K.npy"), &[][..], "cannot be written"),
        (dir.join("missing/K.npy"), &[][..], "does not exist"),
        (dir.join("K.npy"), &[][..], "is a folder"),
        (dir.join("G.npy"), &["--gradient"][..], "is a folder"),
    ] {
        let o = exe().args(["gram", "nws:2", "--backend", "cpu", "--quiet", "--out", out.to_str().unwrap()]).args(extra).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{out:?}: {err}");
        assert!(err.contains(says) && err.contains(out.parent().unwrap().to_str().unwrap()), "{out:?}: {err}");
        assert!(!err.contains(".partial"), "the temporary named: {err}");
        assert!(!out.exists(), "{out:?} written");
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Off a terminal (stderr piped, as in a log file or a batch job) a progress line comes every
/// OCTILE_PROGRESS_SECONDS; `--quiet` or 0 silences them.
#[test]
fn progress_lines_are_printed_when_stderr_is_not_a_terminal() {
    let dir = scratch_dir("cli-progress");
    let out = dir.join("K.npy");
    let run = |seconds: &str, quiet: bool| {
        let mut c = exe();
        c.args(["gram", "nws:4:1", "--backend", "cpu", "--tile-size", "1", "--out", out.to_str().unwrap()]).env("OCTILE_PROGRESS_SECONDS", seconds);
        if quiet {
            c.arg("--quiet");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let err = run("0.000001", false);
    assert!(err.contains("progress: ") && err.contains(" pairs") && err.contains("ETA"), "{err}");
    assert!(!run("0.000001", true).contains("progress: "));
    assert!(!run("0", false).contains("progress: "));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--help` states the exit codes and the input formats the readers take.
#[test]
fn help_lists_exit_codes_and_formats() {
    for args in [&["--help"][..], &["gram", "--help"][..], &["graphlets", "--help"][..]] {
        let o = exe().args(args).output().unwrap();
        assert!(o.status.success());
        let text = String::from_utf8_lossy(&o.stdout);
        for code in ["Exit codes", "0 success", "1 error", "2 the command line", "3 some pairs", "130 interrupted"] {
            assert!(text.contains(code), "{args:?}: no '{code}' in {text}");
        }
    }
    let o = exe().args(["gram", "--help"]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    for f in [".sdf", ".pdb", "tu, sdf, pdb", "checksums"] {
        assert!(text.contains(f), "gram --help lacks '{f}': {text}");
    }
    // an unknown flag: exit code 2, as documented
    assert_eq!(exe().args(["gram", "--no-such-flag"]).output().unwrap().status.code(), Some(2));
}

/// What a bad-input sweep of the CLI found (session 35), each refused before any work with a
/// message naming the flag, and nothing written: `nodal`'s summary replacing its input (it wrote
/// arr.json over the input arr.json), `generate`'s summary replacing its output, `demo`'s output
/// unchecked (a .txt, a missing folder found after the work) and its graph count (0, or 10⁹ graphs
/// aborting in an allocation), generator inputs with COUNT 0 or extra fields, and `nodal --pair`
/// with a bad value (a command-line error, exit 2) or a graph past the inputs.
#[test]
fn outputs_counts_and_pairs_are_checked_before_any_work() {
    let dir = scratch_dir("cli-sweep");
    let here: &Path = &dir;
    let run = |args: &[&str]| {
        let o = exe().args(args).current_dir(here).output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let tiny = root().join("examples/tiny.jsonl");
    let graphs = dir.join("arr.json");
    let text = std::fs::read_to_string(&tiny).unwrap().lines().next().unwrap().to_string();
    std::fs::write(&graphs, &text).unwrap();
    // nodal: arr.npy's summary is arr.json, the input
    let (code, err) = run(&["nodal", "arr.json", "--pair", "0,0", "--out", "arr.npy", "--backend", "cpu"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--out arr.npy") && err.contains("which is the input arr.json"), "{err}");
    assert_eq!(std::fs::read_to_string(&graphs).unwrap(), text, "the input was changed");
    assert!(!dir.join("arr.npy").exists());
    for (pair, code_want, want) in
        [("a,b", 2, "'a,b' is not two graph indices"), ("1", 2, "'1' is not two graph indices"), ("0,7", 1, "--pair 0,7: graph 7 is past the 3 graph(s)")]
    {
        let (code, err) = run(&["nodal", tiny.to_str().unwrap(), "--pair", pair, "--out", "n.npy", "--backend", "cpu"]);
        assert_eq!(code, Some(code_want), "--pair {pair}: {err}");
        assert!(err.contains(want), "--pair {pair}: {err}");
        assert!(!dir.join("n.npy").exists(), "--pair {pair}: written");
    }
    // generate: the summary would replace the graph
    let (code, err) = run(&["generate", "gen:delaunay:10", "--out", "g.mtx", "--summary", "g.mtx"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--summary g.mtx would overwrite the output g.mtx"), "{err}");
    assert!(!dir.join("g.mtx").exists());
    // demo: its count and its output, before any work
    for (args, want) in [
        (vec!["--graphs", "0"], "--graphs: COUNT is 0"),
        (vec!["--graphs", "1000000000"], "--graphs: generating 1000000000 graphs needs"),
        (vec!["--graphs", "2", "--out", "D.txt"], "D.txt: the output is written as .npy or .csv"),
        (vec!["--graphs", "2", "--out", "missing/D.npy"], "folder missing does not exist"),
    ] {
        let (code, err) = run(&[&["demo", "--backend", "cpu"][..], &args].concat());
        assert_eq!(code, Some(1), "demo {args:?}: {err}");
        assert!(err.contains(want), "demo {args:?}: {err}");
    }
    assert!(!dir.join("D.txt").exists());
    // generator inputs
    for (input, want) in [("nws:0", "nws:0: COUNT is 0"), ("ba:5:1:2", "ba:5:1:2: too many fields; use ba:COUNT[:SEED]"), ("nws:x", "nws:x: COUNT 'x' must be")]
    {
        let (code, err) = run(&["gram", input, "--out", "K.npy", "--backend", "cpu", "--quiet"]);
        assert_eq!(code, Some(1), "{input}: {err}");
        assert!(err.contains(want), "{input}: {err}");
    }
    // a feature the kernel compares, missing from a graph of --against: the file and line, not
    // the graph's index among X and Y together
    std::fs::write(dir.join("m.smi"), "CCO\nCC\n").unwrap();
    std::fs::write(dir.join("k.toml"), "q = 0.05\n[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n").unwrap();
    let (code, err) = run(&["gram", tiny.to_str().unwrap(), "--against", "m.smi", "--kernel", "k.toml", "--out", "K.npy", "--backend", "cpu", "--quiet"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("m.smi:1: graph 0 of this input: node feature 'label' is not in it; it has: [element"), "{err}");
    // a label a Kronecker delta cannot read: the file, line and node (the library's check named
    // graph 0 of the pairs it was given); a kernel file comparing nothing: its name
    std::fs::write(dir.join("lab.jsonl"), r#"{"nodes": [{"id": 0, "label": 1.5}, {"id": 1, "label": 1}], "links": [{"source": 0, "target": 1}]}"#).unwrap();
    let (code, err) = run(&["gram", "lab.jsonl", "--kernel", "k.toml", "--out", "K.npy", "--backend", "cpu", "--quiet"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("lab.jsonl:1: graph 0 of this input, node 0: feature 'label' = 1.5 is read by a Kronecker delta"), "{err}");
    std::fs::write(dir.join("empty.toml"), "").unwrap();
    let (code, err) = run(&["gram", tiny.to_str().unwrap(), "--kernel", "empty.toml", "--out", "K.npy", "--backend", "cpu", "--quiet"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--kernel empty.toml: the kernel compares no node or edge feature"), "{err}");
    // nodal with another method's kernel file says so
    std::fs::write(dir.join("sp.toml"), "method = \"shortest_path\"\n").unwrap();
    let (code, err) = run(&["nodal", tiny.to_str().unwrap(), "--kernel", "sp.toml", "--out", "n.npy", "--backend", "cpu"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("a shortest_path kernel") && err.contains("marginalized graph kernel only"), "{err}");
    // --resume of another run's output names the --out it belongs to
    std::fs::write(dir.join("P.partial.npy"), b"").unwrap();
    let (code, err) = run(&["gram", "nws:3", "--out", "Q.npy", "--resume", "P.partial.npy", "--backend", "cpu", "--quiet"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--resume P.partial.npy belongs to --out P.npy (or .csv), not --out Q.npy"), "{err}");
    // a profile named by the environment: the error says where the name came from
    let o = exe()
        .args(["gram", "nws:2", "--out", "K.npy", "--backend", "cpu", "--quiet"])
        .env("OCTILE_PROFILE", "/nonexistent-octile/p.json")
        .current_dir(here)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("OCTILE_PROFILE=/nonexistent-octile/p.json"), "{err}");
    // a whole-file error names the file alone (no ":0", which read as line 0 of a file "zzz:5")
    let (code, err) = run(&["gram", "zzz:5", "--out", "K.npy", "--backend", "cpu", "--quiet"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("zzz:5: cannot infer the format") && !err.contains("zzz:5:0"), "{err}");
    assert!(!dir.join("K.npy").exists());
}

/// Under an address-space limit (`ulimit -v`, as batch schedulers set) `generate` and `graphlets`
/// either finish or stop with the typed error naming the limit — never an allocation abort (exit
/// 134), which both gave between 150 and 300 MB before the checks counted the thread pool's
/// allocator arenas, the edge writer's buffers and the adjacency's collect (session 35's sweep).
#[test]
fn generate_and_graphlets_under_an_address_space_limit_finish_or_say_so() {
    let dir = scratch_dir("cli-ulimit");
    let (big, small) = (dir.join("big.edges"), dir.join("rmat17.edges"));
    let bin = env!("CARGO_BIN_EXE_octile");
    // the transform's graph (131 k nodes, 1.9 M edges) written without a limit: under these two
    // limits its reading, then its adjacency, are past what is left (on the 2-core CI machine; a
    // machine where they fit runs the transform, which takes longer but must not abort either)
    let o = exe().args(["generate", "gen:rmat:17:16", "--out", small.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let generate = [150_000, 200_000, 250_000, 300_000].map(|l| (l, format!("{bin} generate gen:rmat:18:16 --out {}", big.display())));
    let graphlets = [200_000, 250_000].map(|l| (l, format!("{bin} graphlets {} --backend cpu --quiet --out {}", small.display(), dir.join("G.npy").display())));
    for (limit, cmd) in generate.into_iter().chain(graphlets) {
        let o = Command::new("bash").args(["-c", &format!("ulimit -v {limit}; {cmd}")]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        match o.status.code() {
            Some(0) => {}
            Some(1) => assert!(err.contains("ulimit -v"), "limit {limit}, {cmd}: {err}"),
            other => panic!("limit {limit}, {cmd}: exit {other:?}: {err}"),
        }
    }
}

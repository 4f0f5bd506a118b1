//! Helpers shared by the CLI's integration tests (`cli.rs`, `gradient_cli.rs`, `graphlets_cli.rs`,
//! `fuzz_regressions.rs`): the binary, the
//! repository root, scratch folders, our `.npy` read back, and random graph sets as JSON Lines.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_octile"))
}

pub fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// A fresh per-process temporary folder for one test, removed when it goes out of scope (kept
/// when the test fails, for a look at what it left).
pub fn scratch_dir(tag: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("octile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// A test's temporary folder ([`scratch_dir`]): a `Path`, removed on drop unless the thread is
/// panicking.
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Parse our own .npy (float64, C order) back: its shape and values.
pub fn load_npy(p: &Path) -> (Vec<usize>, Vec<f64>) {
    let b = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
    let hl = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + hl]).unwrap();
    assert!(header.contains("'descr': '<f8'") && header.contains("'fortran_order': False"), "{header}");
    assert_eq!((10 + hl) % 64, 0, "header padded to 64 bytes: {header:?}");
    let shape = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let dims: Vec<usize> = shape.split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().unwrap()).collect();
    let vals: Vec<f64> = b[10 + hl..].chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(vals.len(), dims.iter().product::<usize>(), "{} values for shape {dims:?}", vals.len());
    (dims, vals)
}

/// `count` random connected labeled graphs of 12–27 nodes (a ring plus chords) in the JSON
/// reader's node-link format.
pub fn random_jsonl(count: usize, seed: u64) -> String {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = |m: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % m
    };
    let mut out = String::new();
    for _ in 0..count {
        let n = 12 + next(16) as usize;
        let nodes: Vec<String> = (0..n).map(|i| format!("{{\"id\": {i}, \"label\": {}}}", next(3))).collect();
        let mut links: Vec<String> =
            (0..n).map(|i| format!("{{\"source\": {i}, \"target\": {}, \"length\": {:.2}}}", (i + 1) % n, 0.5 + next(100) as f64 / 100.0)).collect();
        let mut chords = std::collections::BTreeSet::new();
        for _ in 0..n / 3 {
            let (a, b) = (next(n as u64), next(n as u64));
            if a != b && (a + 1) % n as u64 != b && (b + 1) % n as u64 != a && chords.insert((a.min(b), a.max(b))) {
                links.push(format!("{{\"source\": {a}, \"target\": {b}, \"length\": 1.0}}"));
            }
        }
        out.push_str(&format!(
            "{{\"directed\": false, \"multigraph\": false, \"graph\": {{}}, \"nodes\": [{}], \"links\": [{}]}}\n",
            nodes.join(", "),
            links.join(", ")
        ));
    }
    out
}

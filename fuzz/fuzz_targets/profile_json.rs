//! Tuning profile files (`ProfileFile::parse` / `read`, what `--profile`, `profile = …`,
//! `$OCTILE_PROFILE` and the user store are read with). A file that parses must give a map for
//! every (backend, device, arch, precision) it lists, every edge-kernel class and both dense walks
//! when `profile::resolve` is pointed at it, survive `upsert`, and round-trip through serde.
#![no_main]
use libfuzzer_sys::fuzz_target;
use octile::mgk::config::{DenseWalk, TileOptions};
use octile::mgk::profile::{EdgeCost, ProfileFile, map_from_rows, map_to_rows, resolve};
use std::path::Path;

fuzz_target!(init: octile_fuzz::init_config(), |data: &[u8]| {
    let path = octile_fuzz::write("profile.json", data);
    let f = match ProfileFile::read(&path) {
        Ok(f) => f,
        Err(e) => {
            let msg = e.to_string();
            if octile_fuzz::verbose() {
                eprintln!("refused: {msg}");
            }
            return;
        }
    };
    if octile_fuzz::verbose() {
        eprintln!("parsed: {} profiles", f.profiles.len());
    }
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(ProfileFile::parse(text, Path::new("x.json")).ok().as_ref(), Some(&f), "read and parse disagree");
    }
    for p in &f.profiles {
        for rows in [&p.unlabeled, &p.labeled].into_iter().chain(p.labeled_cheap.as_ref()) {
            let m = map_from_rows(rows).expect("parse validated the maps");
            assert_eq!(map_from_rows(&map_to_rows(&m)).unwrap(), m);
        }
        for walk in [DenseWalk::SharedTiling, DenseWalk::TilingBlocking] {
            let tiles = TileOptions { profile: Some(path.clone()), dense_walk: walk, ..TileOptions::default() };
            for cost in [EdgeCost::Unlabeled, EdgeCost::Cheap, EdgeCost::Costly] {
                let m = resolve(&tiles, &p.backend, &p.device, &p.arch, &p.precision, cost).expect("a profile file that parsed");
                let _ = m.origin.to_string().len();
            }
        }
    }
    let mut g = f.clone();
    for p in &f.profiles {
        g.upsert(p.clone());
    }
    // written back (as `octile tune` does) and read again: the same file, but for the last digit
    // of a timing (serde_json's default float parsing is not exact to the bit)
    let mut back = serde_json_round_trip(&f).expect("a profile file that parsed is written and read back");
    let mut orig = f.clone();
    for (a, b) in orig.profiles.iter_mut().zip(back.profiles.iter_mut()) {
        let (ta, tb) = (a.timings_ns.take(), b.timings_ns.take());
        let flat = |t: &Option<std::collections::BTreeMap<String, octile::mgk::profile::Timings>>| -> Vec<(String, String, Vec<f64>)> {
            t.iter().flatten().flat_map(|(k, m)| m.iter().map(move |(l, v)| (k.clone(), l.clone(), v.clone()))).collect()
        };
        let (fa, fb) = (flat(&ta), flat(&tb));
        assert_eq!(fa.len(), fb.len(), "timing tables");
        for ((ka, la, va), (kb, lb, vb)) in fa.iter().zip(&fb) {
            assert_eq!((ka, la, va.len()), (kb, lb, vb.len()));
            assert!(va.iter().zip(vb).all(|(x, y)| (x - y).abs() <= 1e-14 * x.abs().max(y.abs())), "timings {ka}/{la} change through write and read");
        }
    }
    assert_eq!(back, orig, "serde round trip");
});

fn serde_json_round_trip(f: &ProfileFile) -> Option<ProfileFile> {
    // what `octile tune` writes back; non-finite timings are written as null and refused on read
    let text = octile_fuzz::to_json(f)?;
    ProfileFile::parse(&text, Path::new("round-trip.json")).ok()
}

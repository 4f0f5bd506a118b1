//! The PDB reader through `octile::io::read_with`: the input as a plain `.pdb` and gzip'd as
//! `.pdb.gz` (or, when it starts with gzip's magic bytes, as a `.pdb.gz` file as it is). An optional
//! first line `CUTOFF <number>` is taken off and given as `--pdb-cutoff` (default 5 Å).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::io::Write;

fuzz_target!(init: octile_fuzz::init_config(), |data: &[u8]| {
    let (cutoff, text) = match data.strip_prefix(b"CUTOFF ") {
        Some(rest) => {
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            let Some(c) = std::str::from_utf8(&rest[..end]).ok().and_then(|s| s.trim().parse::<f64>().ok()) else { return };
            (c, &rest[(end + 1).min(rest.len())..])
        }
        None => (octile::io::pdb::DEFAULT_CUTOFF, data),
    };
    if text.starts_with(&[0x1f, 0x8b]) {
        let gz = octile_fuzz::write("raw.pdb.gz", text);
        octile_fuzz::read_checked(&gz, None, cutoff);
        return;
    }
    let plain = octile_fuzz::write("input.pdb", text);
    let a = octile_fuzz::read_checked(&plain, None, cutoff);
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(text).unwrap();
    let gz = octile_fuzz::write("input.pdb.gz", &z.finish().unwrap());
    let b = octile_fuzz::read_checked(&gz, None, cutoff);
    // the same text read plain or decompressed is the same graph (paths differ in errors only)
    assert_eq!(a.map(|l| l.graphs), b.map(|l| l.graphs), "plain and gzip'd PDB differ");
});

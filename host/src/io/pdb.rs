//! PDB structures (plain or `.gz`), fixed-column: heavy atoms (not H/D) of the first model become
//! nodes with feature `element` (atomic number); atoms closer than the cutoff (default 5 Å) are
//! joined by an edge with feature `length` (the distance, Å) and weight w = (1 − (r/rc)²)², which
//! falls smoothly to 0 at the cutoff. Neighbours are found with a cell grid (cells of the cutoff's
//! size: each atom looks at 27 cells), so building a graph is linear in the atoms. Alternate
//! locations (column 17) are one atom placed twice: only the first identifier listed (usually 'A')
//! is kept, with the atoms that have none.
use super::record::{Loaded, parse_err};
use super::smiles::atomic_number;
use crate::error::{OctileError, Result};
use crate::graph::Graph;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// Default contact cutoff in Å.
pub const DEFAULT_CUTOFF: f64 = 5.0;

fn field(line: &str, a: usize, b: usize) -> &str {
    line.get(a..b.min(line.len())).unwrap_or("").trim()
}

/// Largest |coordinate| accepted (Å): far past what the PDB columns hold, far below where cell
/// indices overflow.
const MAX_COORDINATE: f64 = 1e9;

/// Heavy atoms (atomic number, position) of the first model.
pub fn atoms(path: &Path, text: &str) -> Result<Vec<(u32, [f64; 3])>> {
    let mut out = Vec::new();
    let mut first_alt: Option<char> = None;
    for (ln, line) in text.lines().enumerate() {
        if line.starts_with("ENDMDL") {
            break;
        }
        if !(line.starts_with("ATOM  ") || line.starts_with("HETATM")) {
            continue;
        }
        let alt = line.get(16..17).and_then(|c| c.chars().next()).filter(|c| *c != ' ');
        if let Some(a) = alt
            && *first_alt.get_or_insert(a) != a
        {
            continue;
        }
        let coord = |a, b| {
            field(line, a, b).parse::<f64>().map_err(|_| parse_err(path, ln + 1, format!("bad coordinate in columns {}-{}: '{}'", a + 1, b, field(line, a, b))))
        };
        let xyz = [coord(30, 38)?, coord(38, 46)?, coord(46, 54)?];
        // the fixed columns hold |v| < 10^4 Å; far beyond that (1e300) a cell index would overflow
        if let Some(v) = xyz.iter().find(|v| !v.is_finite() || v.abs() > MAX_COORDINATE) {
            return Err(parse_err(path, ln + 1, format!("coordinate {v:e} is not a finite number within ±{MAX_COORDINATE:e} Å")));
        }
        let mut el = field(line, 76, 78).to_string();
        // pre-2.0 files (e.g. ASTRAL/SCOP domains) have no element columns: 73-80 hold a segment id
        // and line number ("1CRJ 161"); then the element comes from the atom name (columns 13-16):
        // its first letter that follows any digits
        if el.is_empty() || !el.chars().all(|c| c.is_ascii_alphabetic()) || atomic_number(&el.to_ascii_lowercase()).is_none() && field(line, 72, 80).len() > 2 {
            el = field(line, 12, 16).chars().skip_while(|c| c.is_ascii_digit()).take_while(|c| c.is_ascii_alphabetic()).take(1).collect();
        }
        if el.eq_ignore_ascii_case("H") || el.eq_ignore_ascii_case("D") {
            continue;
        }
        let z = atomic_number(&el.to_ascii_lowercase()).ok_or_else(|| parse_err(path, ln + 1, format!("unknown element '{el}'")))?;
        out.push((z, xyz));
    }
    Ok(out)
}

/// Contact graph of `atoms` with cutoff `rc`.
///
/// # Panics
/// Never for any input (an element number is always a finite feature; the `expect` states it).
pub fn contact_graph(atoms: &[(u32, [f64; 3])], rc: f64) -> Graph {
    let mut g = Graph::new(atoms.len(), &["element"], &["length"]);
    for (i, (z, _)) in atoms.iter().enumerate() {
        g.set_node_features(i, &[*z as f64]).expect("finite");
    }
    // cells at least rc wide (atoms closer than rc are in the same or adjacent cells), and wide
    // enough that a cell index of any accepted coordinate stays below 2^52: a tiny cutoff (1e-300)
    // would otherwise saturate the index and overflow at its neighbour
    let side = rc.max(MAX_COORDINATE / (1u64 << 52) as f64);
    let cell = |p: &[f64; 3]| -> [i64; 3] { [(p[0] / side).floor() as i64, (p[1] / side).floor() as i64, (p[2] / side).floor() as i64] };
    let mut grid: HashMap<[i64; 3], Vec<usize>> = HashMap::new();
    for (i, (_, p)) in atoms.iter().enumerate() {
        grid.entry(cell(p)).or_default().push(i);
    }
    for (i, (_, p)) in atoms.iter().enumerate() {
        let c = cell(p);
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    let Some(list) = grid.get(&[c[0] + dx, c[1] + dy, c[2] + dz]) else { continue };
                    for &j in list {
                        if j <= i {
                            continue;
                        }
                        let q = &atoms[j].1;
                        let r = ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt();
                        if r < rc && r > 0.0 {
                            let s = 1.0 - (r / rc).powi(2);
                            g.add_edge(i, j, s * s, &[r]).expect("valid edge");
                        }
                    }
                }
            }
        }
    }
    g
}

/// Largest PDB text read (plain, or after decompression): 1 GiB, ten times the largest structures'
/// files; a larger one (a wrong file, a decompression bomb) is refused before it fills memory.
pub const MAX_PDB_BYTES: u64 = 1 << 30;

/// Read one PDB file (`.gz` is decompressed, streamed up to [`MAX_PDB_BYTES`]) as one graph.
pub fn read(path: &Path, cutoff: f64) -> Result<Loaded> {
    read_capped(path, cutoff, MAX_PDB_BYTES)
}

fn read_capped(path: &Path, cutoff: f64, cap: u64) -> Result<Loaded> {
    let io = |cause| OctileError::Io { path: path.into(), cause };
    let too_big = |what: &str| parse_err(path, 0, format!("{what} more than {cap} bytes of PDB text: not a single structure"));
    if std::fs::metadata(path).map_err(io)?.len() > cap {
        return Err(too_big("the file holds"));
    }
    let bytes = std::fs::read(path).map_err(io)?;
    let text = if path.extension().is_some_and(|e| e == "gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..]).take(cap + 1).read_to_string(&mut s).map_err(|e| parse_err(path, 0, format!("gzip: {e}")))?;
        if s.len() as u64 > cap {
            return Err(too_big("it decompresses to"));
        }
        s
    } else {
        String::from_utf8(bytes).map_err(|_| parse_err(path, 0, "not UTF-8 text"))?
    };
    let a = atoms(path, &text)?;
    if a.is_empty() {
        return Err(parse_err(path, 0, "no heavy ATOM/HETATM records"));
    }
    Ok(Loaded { graphs: vec![contact_graph(&a, cutoff)], ..Loaded::default() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn compressed_text_past_the_cap_is_refused_without_reading_it_all() {
        let atom = "ATOM      1  CA  ALA A   1       0.000   0.000   0.000  1.00  0.00           C\n";
        let path = std::env::temp_dir().join(format!("octile-cap-{}.pdb.gz", std::process::id()));
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(atom.repeat(100).as_bytes()).unwrap();
        std::fs::write(&path, z.finish().unwrap()).unwrap();
        // 8,100 bytes of text: read under a 10,000-byte cap, refused under a 1,000-byte one
        assert_eq!(read_capped(&path, 5.0, 10_000).unwrap().graphs[0].n_nodes(), 100);
        let e = read_capped(&path, 5.0, 1_000).unwrap_err().to_string();
        assert!(e.contains("decompresses to more than 1000 bytes"), "{e}");
        let plain = path.with_extension("");
        std::fs::write(&plain, atom.repeat(100)).unwrap();
        let e = read_capped(&plain, 5.0, 1_000).unwrap_err().to_string();
        assert!(e.contains("the file holds more than 1000 bytes"), "{e}");
    }
}

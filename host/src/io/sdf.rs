//! SDF / MOL files (V2000 connection tables, records ended by `$$$$`): atoms become nodes with the
//! SMILES reader's features (`element`, `aromatic`, `charge`, `hcount` = explicit hydrogens folded
//! in + implicit ones from default valences, as from SMILES: see [`super::hydrogens`]), bonds become
//! edges with `order` (1, 2, 3; 4 = aromatic).
use super::hydrogens::{Atom, foldable, implicit_h};
use super::record::{Loaded, bad_record, parse_err, read_text, shorten};
use super::smiles::atomic_number;
use crate::error::Result;
use crate::graph::Graph;
use std::path::Path;

fn num<T: std::str::FromStr>(line: &str, a: usize, b: usize) -> Option<T> {
    line.get(a..b.min(line.len()))?.trim().parse().ok()
}

/// One molfile record (its lines) to a graph; `first` is the 1-based line number of its header.
fn record(lines: &[&str], first: usize) -> std::result::Result<Graph, (usize, String)> {
    let counts = lines.get(3).ok_or((first, "truncated record: no counts line".to_string()))?;
    if counts.contains("V3000") {
        return Err((first + 3, "V3000 molfiles are not supported".into()));
    }
    let na: usize = num(counts, 0, 3).ok_or((first + 3, format!("bad atom count in '{counts}'")))?;
    let nb: usize = num(counts, 3, 6).ok_or((first + 3, format!("bad bond count in '{counts}'")))?;
    if lines.len() < 4 + na + nb {
        return Err((first + lines.len(), format!("truncated record: {na} atoms and {nb} bonds declared")));
    }
    let mut z = Vec::with_capacity(na);
    let mut charge = vec![0.0; na];
    let mut isotope = vec![false; na];
    for k in 0..na {
        let l = lines[4 + k];
        let sym = l.get(31..34).unwrap_or("").trim();
        let e = atomic_number(&sym.to_ascii_lowercase()).ok_or((first + 4 + k, format!("unknown element '{sym}'")))?;
        z.push(e);
        charge[k] = match num::<i32>(l, 36, 39).unwrap_or(0) {
            1 => 3.0,
            2 => 2.0,
            3 => 1.0,
            5 => -1.0,
            6 => -2.0,
            7 => -3.0,
            // 4: doublet radical, no charge; anything past 7 is outside the format
            0 | 4 => 0.0,
            c => return Err((first + 4 + k, format!("atom charge code {c} is outside the V2000 codes 0–7"))),
        };
    }
    let mut bonds = Vec::with_capacity(nb);
    for k in 0..nb {
        let l = lines[4 + na + k];
        let (a, b, t): (usize, usize, u32) = match (num(l, 0, 3), num(l, 3, 6), num(l, 6, 9)) {
            (Some(a), Some(b), Some(t)) => (a, b, t),
            _ => return Err((first + 4 + na + k, format!("bad bond line '{}'", shorten(l)))),
        };
        // V2000 bond types: 1–3 single/double/triple, 4 aromatic; 5–8 are query bonds (no chemical
        // order), anything else is outside the format: both are errors, never a single bond
        match t {
            1..=4 => {}
            5..=8 => return Err((first + 4 + na + k, format!("bond type {t} is a query bond (5–8), not a bond of a molecule"))),
            _ => return Err((first + 4 + na + k, format!("bond type {t} is outside the V2000 types 1–8"))),
        }
        if a < 1 || b < 1 || a > na || b > na {
            return Err((first + 4 + na + k, format!("bond ({a}, {b}) refers to an atom outside 1..={na}")));
        }
        // a bond from an atom to itself is no chemical bond (it was read as a self-loop, changing
        // K); a second bond between two atoms is reported at its own line
        if a == b {
            return Err((first + 4 + na + k, format!("bond ({a}, {b}) joins atom {a} to itself")));
        }
        if let Some(j) = bonds.iter().position(|&(x, y, _)| (x, y) == (a - 1, b - 1) || (x, y) == (b - 1, a - 1)) {
            return Err((first + 4 + na + k, format!("atoms {a} and {b} are bonded twice (also on line {})", first + 4 + na + j)));
        }
        bonds.push((a - 1, b - 1, t));
    }
    for (k, l) in lines[4 + na + nb..].iter().enumerate() {
        if let Some(rest) = l.strip_prefix("M  ISO") {
            let v: Vec<i64> = rest.split_whitespace().filter_map(|t| t.parse().ok()).collect();
            for pair in v.get(1..).unwrap_or(&[]).chunks(2) {
                if let [a, _] = pair {
                    if *a < 1 || *a as usize > na {
                        return Err((first + 4 + na + nb + k, format!("M  ISO atom {a} out of range")));
                    }
                    isotope[*a as usize - 1] = true;
                }
            }
        }
        if let Some(rest) = l.strip_prefix("M  CHG") {
            let at = first + 4 + na + nb + k;
            let v: Vec<i64> = rest.split_whitespace().filter_map(|t| t.parse().ok()).collect();
            // "M  CHG n a₁ c₁ … aₙ cₙ": n pairs, each charge within the format's ±15
            let declared = v.first().copied().unwrap_or(0);
            if declared < 0 || v.len() != 1 + 2 * declared as usize {
                return Err((at, format!("M  CHG declares {declared} atom(s) but gives {} value(s) after the count", v.len().saturating_sub(1))));
            }
            for pair in v[1..].chunks(2) {
                if let [a, c] = pair {
                    if *a < 1 || *a as usize > na {
                        return Err((at, format!("M  CHG atom {a} out of range")));
                    }
                    if c.abs() > 15 {
                        return Err((at, format!("M  CHG charge {c} of atom {a} is outside -15..=15")));
                    }
                    charge[*a as usize - 1] = *c as f64;
                }
            }
        }
        if l.starts_with("M  END") {
            break;
        }
    }
    // hydrogens as from SMILES (io::hydrogens): plain terminal H folded into their neighbour's
    // hcount, implicit hydrogens from default valences
    let atoms: Vec<Atom> = (0..na).map(|k| Atom { z: z[k], charge: charge[k] as i32, isotope: isotope[k] }).collect();
    let pairs: Vec<(usize, usize)> = bonds.iter().map(|&(a, b, _)| (a, b)).collect();
    let fold = foldable(&atoms, &pairs);
    let mut hcount = vec![0.0; na];
    let mut valence = vec![0.0f64; na];
    let mut aromatic = vec![0.0; na];
    for &(a, b, t) in &bonds {
        let order = if t == 4 { 1.5 } else { t as f64 };
        valence[a] += order;
        valence[b] += order;
        if fold[a] {
            hcount[b] += 1.0;
        }
        if fold[b] {
            hcount[a] += 1.0;
        }
        if t == 4 {
            aromatic[a] = 1.0;
            aromatic[b] = 1.0;
        }
    }
    let kept: Vec<usize> = (0..na).filter(|&k| !fold[k]).collect();
    let mut index = vec![usize::MAX; na];
    for (new, &old) in kept.iter().enumerate() {
        index[old] = new;
    }
    let mut g = Graph::new(kept.len(), &["element", "aromatic", "charge", "hcount"], &["order"]);
    for (new, &old) in kept.iter().enumerate() {
        let h = hcount[old] + implicit_h(z[old], charge[old] as i32, valence[old]) as f64;
        g.set_node_features(new, &[z[old] as f64, aromatic[old], charge[old], h]).map_err(|e| (first, e.to_string()))?;
    }
    for &(a, b, t) in &bonds {
        if fold[a] || fold[b] {
            continue;
        }
        // t in 1..=4 (checked where the line was read)
        g.add_edge(index[a], index[b], 1.0, &[t as f64]).map_err(|e| (first, e.to_string()))?;
    }
    g.validate().map_err(|e| (first, e.to_string()))?;
    Ok(g)
}

/// Read an SDF (or single MOL) file.
pub fn read(path: &Path, skip_invalid: bool) -> Result<Loaded> {
    let text = read_text(path)?;
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Loaded::default();
    let mut start = 0;
    while start < lines.len() {
        let end = (start..lines.len()).find(|&k| lines[k].starts_with("$$$$")).unwrap_or(lines.len());
        let rec = &lines[start..end];
        if rec.iter().any(|l| !l.trim().is_empty()) {
            match record(rec, start + 1) {
                Ok(g) => out.keep(g, start + 1),
                Err((line, what)) => bad_record(parse_err(path, line, what), skip_invalid, &mut out)?,
            }
        }
        start = end + 1;
    }
    Ok(out)
}

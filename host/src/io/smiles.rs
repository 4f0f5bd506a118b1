//! SMILES (`.smi`: first token per line; `.csv`: the `smiles` column) through the purr parser
//! (its syntax errors explained by [`super::smiles_syntax`], which also reads `%(n)` ring bonds).
//! Nodes are atoms with features `element` (atomic number), `aromatic` (0/1), `charge` and
//! `hcount` (implicit + bracket hydrogens + explicit `[H]` atoms folded in as from SDF: see
//! [`super::hydrogens`]); edges are bonds with feature `order`: 1, 2, 3, 4 = aromatic, 5 = quadruple.
use super::hydrogens::{Atom, foldable};
use super::record::{Loaded, bad_record, parse_err, read_text, shorten};
use super::smiles_syntax::{explain, explain_graph, prepare};
use crate::error::Result;
use crate::graph::Graph;
use purr::feature::{AtomKind, BondKind, BracketSymbol};
use purr::graph::Builder;
use std::path::Path;

const ELEMENTS: [&str; 118] = [
    "H", "He", "Li", "Be", "B", "C", "N", "O", "F", "Ne", "Na", "Mg", "Al", "Si", "P", "S", "Cl", "Ar", "K", "Ca", "Sc", "Ti", "V", "Cr", "Mn", "Fe", "Co",
    "Ni", "Cu", "Zn", "Ga", "Ge", "As", "Se", "Br", "Kr", "Rb", "Sr", "Y", "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In", "Sn", "Sb", "Te", "I",
    "Xe", "Cs", "Ba", "La", "Ce", "Pr", "Nd", "Pm", "Sm", "Eu", "Gd", "Tb", "Dy", "Ho", "Er", "Tm", "Yb", "Lu", "Hf", "Ta", "W", "Re", "Os", "Ir", "Pt", "Au",
    "Hg", "Tl", "Pb", "Bi", "Po", "At", "Rn", "Fr", "Ra", "Ac", "Th", "Pa", "U", "Np", "Pu", "Am", "Cm", "Bk", "Cf", "Es", "Fm", "Md", "No", "Lr", "Rf", "Db",
    "Sg", "Bh", "Hs", "Mt", "Ds", "Rg", "Cn", "Nh", "Fl", "Mc", "Lv", "Ts", "Og",
];

/// Atomic number of an element symbol (case-insensitive first letter, for aromatic symbols).
pub fn atomic_number(symbol: &str) -> Option<u32> {
    let mut s = symbol.to_string();
    if let Some(f) = s.get_mut(0..1) {
        f.make_ascii_uppercase();
    }
    ELEMENTS.iter().position(|e| *e == s).map(|p| p as u32 + 1)
}

/// Longest SMILES accepted (bytes); 40,000-atom chains parse, 100,000 overflowed the stack.
pub const MAX_SMILES_BYTES: usize = 20_000;

/// One SMILES string to a molecular graph.
pub fn parse(smiles: &str) -> std::result::Result<Graph, String> {
    let shown = shorten(smiles);
    // the SMILES parser (purr) recurses along the chain: far past any molecule, refuse before it
    // can overflow the stack (100,000 atoms did)
    if smiles.len() > MAX_SMILES_BYTES {
        return Err(format!("SMILES '{shown}' is longer than the reader's limit of {MAX_SMILES_BYTES} bytes"));
    }
    // purr 0.9 panics ("not implemented") on the non-tetrahedral chirality classes with a hydrogen
    // count ('N[C@OH2H]', found by fuzzing): refuse those classes first, and turn any other panic
    // of the parser into an error
    if let Some(k) = ["@TH", "@AL", "@SP", "@TB", "@OH"].iter().find(|c| smiles.contains(*c)) {
        return Err(format!("SMILES '{shown}': chirality class {k} is not supported (only @ and @@)"));
    }
    // brackets, branches and ring bonds checked here (the parser's errors name no reason), and
    // %(n) ring bonds renumbered for it
    let prepared = prepare(smiles).map_err(|e| format!("bad SMILES '{shown}': {e}"))?;
    let parsed = std::panic::catch_unwind(|| {
        let mut builder = Builder::new();
        purr::read::read(&prepared.text, &mut builder, None).map_err(|e| explain(&prepared, &e))?;
        builder.build().map_err(|e| explain_graph(&prepared, &e))
    });
    let atoms = match parsed {
        Ok(r) => r.map_err(|e| format!("bad SMILES '{shown}': {e}"))?,
        Err(_) => return Err(format!("bad SMILES '{shown}': the SMILES parser could not handle it")),
    };
    if atoms.is_empty() {
        return Err(format!("empty SMILES '{shown}'"));
    }
    // per atom: (element, aromatic, charge, hydrogens), and the bonds (i < j, order)
    let mut props = Vec::with_capacity(atoms.len());
    let mut plain = Vec::with_capacity(atoms.len());
    for atom in atoms.iter() {
        let (symbol, charge, bracket_h, isotope) = match &atom.kind {
            AtomKind::Star => return Err(format!("SMILES '{shown}': wildcard atom '*' has no element")),
            AtomKind::Aliphatic(a) => (a.to_string(), 0i8, 0u8, false),
            AtomKind::Aromatic(a) => (a.to_string(), 0, 0, false),
            AtomKind::Bracket { symbol, hcount, charge, isotope, .. } => {
                let s = match symbol {
                    BracketSymbol::Star => return Err(format!("SMILES '{shown}': wildcard atom '*' has no element")),
                    BracketSymbol::Element(e) => e.to_string(),
                    BracketSymbol::Aromatic(a) => a.to_string(),
                };
                (s, charge.as_ref().map_or(0, |c| c.into()), hcount.as_ref().map_or(0, |h| h.into()), isotope.is_some())
            }
        };
        let z = atomic_number(&symbol).ok_or_else(|| format!("SMILES '{shown}': unknown element '{symbol}'"))?;
        let h = bracket_h as f64 + if matches!(atom.kind, AtomKind::Bracket { .. }) { 0.0 } else { atom.suppressed_hydrogens() as f64 };
        props.push([z as f64, atom.is_aromatic() as u8 as f64, charge as f64, h]);
        plain.push(Atom { z, charge: charge as i32, isotope });
    }
    let mut bonds = Vec::new();
    let mut bonded = std::collections::HashSet::new();
    for (i, atom) in atoms.iter().enumerate() {
        for b in &atom.bonds {
            // a ring closure back to its own atom ('C11'): RDKit refuses it, and it is no bond
            if b.tid == i {
                return Err(format!("SMILES '{shown}': a ring closure bonds atom {i} to itself"));
            }
            if b.tid < i {
                continue;
            }
            let order = match b.kind {
                BondKind::Aromatic => 4.0,
                BondKind::Elided if atom.is_aromatic() && atoms[b.tid].is_aromatic() => 4.0,
                BondKind::Double => 2.0,
                BondKind::Triple => 3.0,
                BondKind::Quadruple => 5.0,
                _ => 1.0,
            };
            // a ring closure between atoms already bonded ('C1C1'): RDKit refuses it (duplicated
            // ring closure), and it is no second bond
            if !bonded.insert((i, b.tid)) {
                return Err(format!("SMILES '{shown}': atoms {i} and {} are bonded twice (a ring closure between bonded atoms)", b.tid));
            }
            bonds.push((i, b.tid, order));
        }
    }
    // explicit [H] on a heavy atom: into its hydrogen count, as from SDF (io::hydrogens)
    let pairs: Vec<(usize, usize)> = bonds.iter().map(|&(a, b, _)| (a, b)).collect();
    let fold = foldable(&plain, &pairs);
    for &(a, b) in &pairs {
        if fold[a] {
            props[b][3] += 1.0;
        }
        if fold[b] {
            props[a][3] += 1.0;
        }
    }
    let mut index = vec![usize::MAX; atoms.len()];
    let kept: Vec<usize> = (0..atoms.len()).filter(|&k| !fold[k]).collect();
    for (new, &old) in kept.iter().enumerate() {
        index[old] = new;
    }
    let mut g = Graph::new(kept.len(), &["element", "aromatic", "charge", "hcount"], &["order"]);
    for (new, &old) in kept.iter().enumerate() {
        g.set_node_features(new, &props[old]).map_err(|e| e.to_string())?;
    }
    for &(a, b, order) in &bonds {
        if !fold[a] && !fold[b] {
            g.add_edge(index[a], index[b], 1.0, &[order]).map_err(|e| e.to_string())?;
        }
    }
    g.validate().map_err(|e| format!("SMILES '{shown}': {e}"))?;
    Ok(g)
}

/// `.smi`: one SMILES per line (first token); empty lines and `#` comments are ignored.
pub fn read_smi(path: &Path, skip_invalid: bool) -> Result<Loaded> {
    let text = read_text(path)?;
    let mut out = Loaded::default();
    for (ln, line) in text.lines().enumerate() {
        let tok = line.split_whitespace().next().unwrap_or("");
        if tok.is_empty() || tok.starts_with('#') {
            continue;
        }
        match parse(tok) {
            Ok(g) => out.keep(g, ln + 1),
            Err(e) => bad_record(parse_err(path, ln + 1, e), skip_invalid, &mut out)?,
        }
    }
    Ok(out)
}

/// CSV with a header naming a `smiles` column (case-insensitive); quoted fields are supported.
pub fn read_csv(path: &Path, skip_invalid: bool) -> Result<Loaded> {
    let text = read_text(path)?;
    let mut lines = text.lines().enumerate();
    let (_, header) = lines.next().ok_or_else(|| parse_err(path, 1, "empty file"))?;
    let cols = split_csv(header);
    let col = cols
        .iter()
        .position(|c| c.trim().eq_ignore_ascii_case("smiles"))
        .ok_or_else(|| parse_err(path, 1, format!("no 'smiles' column; columns: {}", cols.join(", "))))?;
    // two columns named smiles: which holds the molecules is not for the reader to guess
    if let Some(other) = cols.iter().skip(col + 1).position(|c| c.trim().eq_ignore_ascii_case("smiles")) {
        return Err(parse_err(path, 1, format!("columns {} and {} are both named 'smiles'; name one of them differently", col + 1, col + 2 + other)));
    }
    let mut out = Loaded::default();
    for (ln, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let fields = split_csv(line);
        let r = fields.get(col).ok_or_else(|| format!("line has {} fields, the smiles column is {}", fields.len(), col + 1)).and_then(|s| parse(s.trim()));
        match r {
            Ok(g) => out.keep(g, ln + 1),
            Err(e) => bad_record(parse_err(path, ln + 1, e), skip_invalid, &mut out)?,
        }
    }
    Ok(out)
}

fn split_csv(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

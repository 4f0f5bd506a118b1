//! SMILES syntax octile checks itself around the parser (purr): the parser's errors are positions
//! without a reason (`Character(4)`, `EndOfLine`, `Rnum(0)`), so brackets, branches and ring bonds
//! are followed here to say what was expected at which column (1-based characters), and the
//! parser's remaining errors are explained from the text around their position. Ring bonds are
//! renumbered for the parser (a ring bond's number only pairs its two ends, so the graph is the
//! same): OpenSMILES numbers in parentheses (`%(123)`), which it does not read, go into the 0–99 it
//! reads, and 73 is never handed to it (purr 0.9 reads `%73` as 74, joining two rings).
use std::collections::HashMap;

/// The parser's ring bond number it reads wrongly (purr 0.9: `%73` is read as `%74`).
const MISREAD: u8 = 73;

/// Bond symbols: after one of them an atom (or a ring bond number) must follow.
const BONDS: &str = "-=#$:/\\";

/// What every SMILES message about an unknown atom letter says.
const ORGANIC: &str = "the organic subset is B C N O P S F Cl Br I (aromatic b c n o p s); write other elements in brackets, e.g. [Na], [Fe+2]";

/// A SMILES as the parser reads it, and where each of its characters came from.
pub(super) struct Prepared {
    /// The text for the parser (ring bonds renumbered).
    pub text: String,
    /// Per character of `text`: its column (1-based) in the SMILES as given.
    columns: Vec<usize>,
    /// Per ring bond: (label as written, column of its first end, bond symbols at its two ends).
    rings: Vec<RingBond>,
}

struct RingBond {
    label: String,
    column: usize,
    bonds: (Option<char>, Option<char>),
    closed: bool,
}

/// An open ring bond while scanning: its index in `Prepared::rings`, and its parser number.
struct Open {
    ring: usize,
    number: u8,
}

/// Checks brackets, branches and ring bonds of `smiles`; the text for the parser or a message
/// naming the column and what was expected there.
pub(super) fn prepare(smiles: &str) -> Result<Prepared, String> {
    let chars: Vec<char> = smiles.chars().collect();
    let mut p = Prepared { text: String::with_capacity(smiles.len()), columns: Vec::with_capacity(chars.len()), rings: Vec::new() };
    let mut open: HashMap<u64, Open> = HashMap::new();
    let mut branches: Vec<usize> = Vec::new();
    let mut bracket: Option<usize> = None;
    let mut k = 0;
    while k < chars.len() {
        let (c, column) = (chars[k], k + 1);
        if bracket.is_some() {
            // a bracket atom's contents are the parser's to check (digits there are no ring bonds)
            if c == ']' {
                bracket = None;
            }
        } else if c == '%' || c.is_ascii_digit() {
            let (number, len) = ring_number(&chars, k)?;
            let label: String = chars[k..k + len].iter().collect();
            let bond = k.checked_sub(1).map(|b| chars[b]).filter(|b| BONDS.contains(*b));
            let number = ring_bond(&mut p, &mut open, number, label, column, bond)?;
            for ch in parser_label(number).chars() {
                p.text.push(ch);
                p.columns.push(column);
            }
            k += len;
            continue;
        } else if c == '[' {
            bracket = Some(column);
        } else if c == '(' {
            branches.push(column);
        } else if c == ')' && branches.pop().is_none() {
            return Err(format!("column {column}: ')' closes no branch (no '(' before it is open)"));
        }
        p.text.push(c);
        p.columns.push(column);
        k += 1;
    }
    unfinished(&chars, bracket, &branches, &p)?;
    Ok(p)
}

/// The number of the ring bond at `chars[k]` (a digit, `%nn` or `%(n…)`) and its length.
fn ring_number(chars: &[char], k: usize) -> Result<(u64, usize), String> {
    let digit = |i: usize| chars.get(i).and_then(|c| c.to_digit(10));
    if let Some(d) = digit(k) {
        return Ok((d as u64, 1));
    }
    if let (Some(a), Some(b)) = (digit(k + 1), digit(k + 2)) {
        return Ok((a as u64 * 10 + b as u64, 3));
    }
    let bad = || format!("column {}: expected two digits after '%' (ring bonds %10 to %99) or a number in parentheses (%(123))", k + 1);
    if chars.get(k + 1) != Some(&'(') {
        return Err(bad());
    }
    let digits: String = chars[k + 2..].iter().take_while(|c| c.is_ascii_digit()).collect();
    let close = k + 2 + digits.len();
    if digits.is_empty() || chars.get(close) != Some(&')') {
        return Err(bad());
    }
    let number = digits.parse::<u64>().map_err(|_| format!("column {}: ring bond number %({digits}) is too large", k + 1))?;
    Ok((number, close + 1 - k))
}

/// Opens or closes ring bond `number`; its number for the parser: the lowest free one (at most 99
/// ring bonds may be open at once: the parser reads 0–99, less [`MISREAD`]).
fn ring_bond(p: &mut Prepared, open: &mut HashMap<u64, Open>, number: u64, label: String, column: usize, bond: Option<char>) -> Result<u8, String> {
    if let Some(o) = open.remove(&number) {
        let r = &mut p.rings[o.ring];
        (r.bonds.1, r.closed) = (bond, true);
        return Ok(o.number);
    }
    let taken: Vec<u8> = open.values().map(|o| o.number).collect();
    let parser = (0..=99u8)
        .find(|n| *n != MISREAD && !taken.contains(n))
        .ok_or_else(|| format!("column {column}: more than 99 ring bonds are open at once (octile reads at most 99)"))?;
    p.rings.push(RingBond { label, column, bonds: (bond, None), closed: false });
    open.insert(number, Open { ring: p.rings.len() - 1, number: parser });
    Ok(parser)
}

/// A ring bond number as the parser reads it.
fn parser_label(n: u8) -> String {
    if n < 10 { n.to_string() } else { format!("%{n:02}") }
}

/// The SMILES ended with something open: a bracket atom, a bond, a branch or a ring bond.
fn unfinished(chars: &[char], bracket: Option<usize>, branches: &[usize], p: &Prepared) -> Result<(), String> {
    if let Some(column) = bracket {
        return Err(format!("the bracket atom '[' at column {column} is not closed: expected ']'"));
    }
    if let Some(&last) = chars.last()
        && (BONDS.contains(last) || last == '(' || last == '.')
    {
        return Err(format!("the SMILES ends after '{last}' at column {}: expected an atom", chars.len()));
    }
    if let Some(column) = branches.last() {
        return Err(format!("the branch '(' at column {column} is not closed: expected ')'"));
    }
    // a ring bond still open (the parser's Rnum): the first one opened
    if let Some(r) = p.rings.iter().find(|r| !r.closed) {
        return Err(format!("ring bond {} at column {} is never closed: expected a second {} at a later atom", r.label, r.column, r.label));
    }
    Ok(())
}

/// The parser's syntax error as a message: the column, the character and what was expected there.
pub(super) fn explain(p: &Prepared, e: &purr::read::Error) -> String {
    let chars: Vec<char> = p.text.chars().collect();
    match *e {
        purr::read::Error::Character(k) if k < chars.len() => {
            let column = p.columns.get(k).copied().unwrap_or(k + 1);
            format!("column {column}: unexpected '{}'; expected {}", chars[k], expectation(&chars, k))
        }
        // prepare() finds what ends early; what is left is a SMILES without an atom
        _ => "the SMILES ends early: expected an atom".to_string(),
    }
}

/// What the parser expected at `chars[k]`, from the text before it.
fn expectation(chars: &[char], k: usize) -> String {
    let before = &chars[..k];
    if let Some(open) = before.iter().rposition(|&c| c == '[')
        && !before[open..].contains(&']')
    {
        // the symbol follows '[' and an optional isotope (digits)
        let symbol: String = before[open + 1..].iter().skip_while(|c| c.is_ascii_digit()).collect();
        let c = chars[k];
        return if symbol.is_empty() {
            "an element symbol in the bracket atom (after an optional isotope), e.g. [Na], [13C], [nH]".into()
        } else if symbol.chars().all(char::is_alphabetic) && c.is_lowercase() {
            format!("an element symbol ('{symbol}{c}' is none), e.g. [Na], [13C], [nH]")
        } else {
            "']' or, in this order, the bracket atom's chirality (@, @@), hydrogens (H, H2), charge (+, -2) and class (:1)".into()
        };
    }
    let c = chars[k];
    if c.is_alphabetic() {
        return format!("an atom: '{c}' starts no element of the organic subset; {ORGANIC}");
    }
    match before.last() {
        None => "an atom first".into(),
        Some(&b) if BONDS.contains(b) => format!("an atom or a ring bond number after the bond '{b}'"),
        Some('(') => "an atom or a bond to start the branch".into(),
        Some('.') => "an atom after '.'".into(),
        _ => "an atom, a bond (- = # $ : / \\), a branch '(' or a ring bond number".into(),
    }
}

/// The parser's error in building the graph as a message (ring bonds; prepare() already refused
/// ring bonds never closed).
pub(super) fn explain_graph(p: &Prepared, e: &purr::graph::Error) -> String {
    match e {
        purr::graph::Error::Join(..) => match p.rings.iter().find(|r| conflicting(r.bonds)) {
            Some(r) => format!(
                "ring bond {} opened at column {}: its two ends give different bonds ('{}' and '{}'); write the bond at one end or the same at both",
                r.label,
                r.column,
                r.bonds.0.unwrap_or('-'),
                r.bonds.1.unwrap_or('-')
            ),
            None => "the two ends of a ring bond give different bonds; write the bond at one end or the same at both".into(),
        },
        purr::graph::Error::Rnum(_) => "a ring bond is never closed: expected its number a second time at a later atom".into(),
    }
}

/// Whether a ring bond's two written bond symbols disagree, as the parser reconciles them: a
/// directional bond is '/' at one end and '\' at the other (the same bond seen from its two atoms).
fn conflicting(bonds: (Option<char>, Option<char>)) -> bool {
    let directional = |c: char| c == '/' || c == '\\';
    match bonds {
        (Some(a), Some(b)) if directional(a) && directional(b) => a == b,
        (Some(a), Some(b)) => a != b,
        _ => false,
    }
}

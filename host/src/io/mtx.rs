//! Matrix Market (`.mtx`) graphs: the reader of a sparse matrix's nonzero pattern as an undirected
//! graph (the format of the SuiteSparse collection and of the graphlet-transform paper), and the
//! writer of a graph as a symmetric pattern matrix.
//!
//! ```text
//! %%MatrixMarket matrix coordinate pattern symmetric      banner: coordinate; pattern | real | integer;
//! % comments                                                general | symmetric | skew-symmetric | hermitian
//! 4 4 3                                                     size line: rows cols entries (rows = cols = n)
//! 2 1                                                       entries: row col [value], 1-based
//! 3 2
//! 4 1
//! ```
//! How the pattern becomes a graph:
//! - **values are ignored**: the graph is the pattern of *stored* entries, so an explicit `0` value is
//!   still an edge; `complex` files are refused (no values are read, but a complex file is rarely a
//!   graph), and so is the dense `array` format;
//! - an entry (i, j) is the undirected edge {i, j} whatever the symmetry. In a **general** matrix
//!   (i, j) and (j, i) are one edge (the pattern of A + Aᵀ): [`MtxGraph::mirrored_pairs`] counts the
//!   pairs stored both ways, [`MtxGraph::one_sided_pairs`] those stored one way only (where A is not
//!   symmetric). Symmetric files store one triangle; an entry of the other triangle is accepted;
//! - diagonal entries (self-loops) and repeated entries are kept in [`MtxGraph::edges`];
//!   [`Adjacency::from_edges`](crate::graphlets::Adjacency::from_edges) drops and counts them;
//! - the size line's entry count must equal the entries present, the matrix must be square with
//!   n ≤ 2³² − 1 nodes, indices must lie in 1..=n; every violation is an [`OctileError::Parse`] naming the
//!   file and the 1-based line. Nothing is reserved from the size line's counts: memory follows the
//!   bytes of the file.
//!
//! The file is read whole and its entries parsed in parallel over line-aligned chunks.
use super::edgelist::{Chunk, concat, format_lines, line_chunks, parse_u64, read_bytes, simple_edges, text_of};
use super::npy::push_u64;
use super::record::parse_err;
use crate::error::Result;
use rayon::prelude::*;
use std::path::Path;

/// The value type of the banner (values are never read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MtxField {
    /// No values: `row col` entries.
    Pattern,
    /// `row col value`, a real value.
    Real,
    /// `row col value`, an integer value.
    Integer,
}

/// The symmetry of the banner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MtxSymmetry {
    /// Every entry stored.
    General,
    /// A = Aᵀ, one triangle stored.
    Symmetric,
    /// A = −Aᵀ, the strict lower triangle stored.
    SkewSymmetric,
    /// A = A*, one triangle stored.
    Hermitian,
}

impl MtxField {
    /// The banner's word.
    pub fn name(self) -> &'static str {
        match self {
            MtxField::Pattern => "pattern",
            MtxField::Real => "real",
            MtxField::Integer => "integer",
        }
    }
}

impl MtxSymmetry {
    /// The banner's word.
    pub fn name(self) -> &'static str {
        match self {
            MtxSymmetry::General => "general",
            MtxSymmetry::Symmetric => "symmetric",
            MtxSymmetry::SkewSymmetric => "skew-symmetric",
            MtxSymmetry::Hermitian => "hermitian",
        }
    }
}

/// The banner and size line of a coordinate Matrix Market file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MtxHeader {
    /// Value type.
    pub field: MtxField,
    /// Symmetry.
    pub symmetry: MtxSymmetry,
    /// Rows (= columns = nodes).
    pub rows: u64,
    /// Columns.
    pub cols: u64,
    /// Stored entries.
    pub entries: u64,
}

/// A Matrix Market file read as a graph (see the module notes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MtxGraph {
    /// Nodes (the matrix's order).
    pub n_nodes: usize,
    /// Edges, 0-based: one per stored entry (one per pair stored both ways in a general matrix),
    /// self-loops and repeats included.
    pub edges: Vec<(u32, u32)>,
    /// Banner and size line.
    pub header: MtxHeader,
    /// General matrices: node pairs stored both as (i, j) and (j, i), each one edge. 0 otherwise.
    pub mirrored_pairs: u64,
    /// General matrices: node pairs stored only as (i, j) or only as (j, i) (the pattern is not
    /// symmetric there; still one edge). 0 otherwise.
    pub one_sided_pairs: u64,
}

/// Read the Matrix Market file `path` as a graph.
pub fn read(path: &Path) -> Result<MtxGraph> {
    parse(path, &read_bytes(path)?)
}

/// Parse the Matrix Market text `text` (read from `path`, named in errors) as a graph.
pub fn parse(path: &Path, text: &[u8]) -> Result<MtxGraph> {
    let text = super::record::without_bom(text);
    let mut lines = text.split(|&b| b == b'\n');
    let banner = lines.next().unwrap_or_default();
    let (field, symmetry) = parse_banner(path, banner)?;
    // the size line: the first line after the banner that is neither a comment nor blank
    let mut at = banner.len() + 1;
    let mut line_no = 1;
    let size = loop {
        line_no += 1;
        let Some(line) = lines.next().filter(|l| !l.is_empty() || at < text.len()) else {
            return Err(parse_err(path, line_no - 1, "no size line 'rows cols entries' after the banner"));
        };
        at += line.len() + 1;
        if !is_skipped(line) {
            break line;
        }
    };
    let (n, entries) = parse_size(path, line_no, size)?;
    let header = MtxHeader { field, symmetry, rows: n, cols: n, entries };
    let body = &text[at.min(text.len())..];
    let tokens = if field == MtxField::Pattern { 2 } else { 3 };
    let chunks = line_chunks(body, line_no + 1);
    let parts: Vec<Result<Vec<(u32, u32)>>> = chunks.par_iter().map(|c| parse_entries(path, c, n, field, tokens)).collect();
    let mut pieces = Vec::with_capacity(parts.len());
    for p in parts {
        pieces.push(p?);
    }
    let found: u64 = pieces.iter().map(|p| p.len() as u64).sum();
    if found != entries {
        return Err(if found > entries {
            let line = line_of_entry(&chunks, &pieces, entries);
            parse_err(path, line, format!("entry {} past the {entries} the size line (line {line_no}) announces", entries + 1))
        } else {
            parse_err(path, line_no, format!("the size line announces {entries} entries but the file has {found}"))
        });
    }
    let directed = concat(pieces);
    let (edges, mirrored_pairs, one_sided_pairs) = if symmetry == MtxSymmetry::General { fold_general(directed) } else { (directed, 0, 0) };
    Ok(MtxGraph { n_nodes: n as usize, edges, header, mirrored_pairs, one_sided_pairs })
}

/// Blank or a `%` comment.
fn is_skipped(line: &[u8]) -> bool {
    match line.iter().find(|b| !b.is_ascii_whitespace()) {
        None => true,
        Some(&b) => b == b'%',
    }
}

fn words(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty())
}

fn parse_banner(path: &Path, line: &[u8]) -> Result<(MtxField, MtxSymmetry)> {
    const FORM: &str = "'%%MatrixMarket matrix coordinate pattern|real|integer general|symmetric|skew-symmetric|hermitian'";
    let w: Vec<String> = words(line).map(|t| String::from_utf8_lossy(t).to_ascii_lowercase()).collect();
    let bad = |what: String| Err(parse_err(path, 1, what));
    if w.first().map(String::as_str) != Some("%%matrixmarket") {
        return bad(format!("'{}' is not a Matrix Market banner; the first line must be {FORM}", text_of(line)));
    }
    let [_, object, format, field, symmetry] = &w[..] else {
        return bad(format!("the banner has {} words; expected 5: {FORM}", w.len()));
    };
    if object != "matrix" {
        return bad(format!("object '{object}': only 'matrix' files are graphs"));
    }
    match format.as_str() {
        "coordinate" => {}
        "array" => return bad("dense array format not supported (a graph is read from a sparse 'coordinate' file)".into()),
        f => return bad(format!("format '{f}': expected 'coordinate'")),
    }
    let field = match field.as_str() {
        "pattern" => MtxField::Pattern,
        "real" | "double" => MtxField::Real,
        "integer" => MtxField::Integer,
        "complex" => return bad("complex values are not supported: convert the file to 'pattern' (the graph is the nonzero pattern)".into()),
        f => return bad(format!("field '{f}': expected pattern, real or integer")),
    };
    let symmetry = match symmetry.as_str() {
        "general" => MtxSymmetry::General,
        "symmetric" => MtxSymmetry::Symmetric,
        "skew-symmetric" => MtxSymmetry::SkewSymmetric,
        "hermitian" => MtxSymmetry::Hermitian,
        s => return bad(format!("symmetry '{s}': expected general, symmetric, skew-symmetric or hermitian")),
    };
    Ok((field, symmetry))
}

/// (n, entries) of the size line `rows cols entries`, checked: square, n < 2³², entries ≤ n².
fn parse_size(path: &Path, line_no: usize, line: &[u8]) -> Result<(u64, u64)> {
    let bad = |what: String| Err(parse_err(path, line_no, what));
    let w: Vec<&[u8]> = words(line).collect();
    let nums: Option<Vec<u64>> = w.iter().map(|t| parse_u64(t)).collect();
    let (Some(&[rows, cols, entries]), 3) = (nums.as_deref(), w.len()) else {
        return bad(format!("'{}' is not a size line 'rows cols entries' (three non-negative integers)", text_of(line)));
    };
    if rows != cols {
        return bad(format!("the matrix is {rows} × {cols}: a graph's adjacency matrix must be square"));
    }
    if rows > u32::MAX as u64 {
        return bad(format!("{rows} nodes: node ids must fit 32 bits (at most {} nodes)", u32::MAX));
    }
    if entries as u128 > rows as u128 * rows as u128 {
        return bad(format!("{entries} entries cannot fit a {rows} × {rows} matrix"));
    }
    Ok((rows, entries))
}

/// The entries of one chunk, 0-based.
fn parse_entries(path: &Path, c: &Chunk<'_>, n: u64, field: MtxField, tokens: usize) -> Result<Vec<(u32, u32)>> {
    let mut out = Vec::with_capacity(c.lines);
    for (k, line) in c.text.split(|&b| b == b'\n').enumerate() {
        if is_skipped(line) {
            continue;
        }
        let line_no = c.first_line + k;
        let mut w = words(line);
        let mut index = |what: &str| -> Result<u32> {
            let t = w
                .next()
                .ok_or_else(|| parse_err(path, line_no, format!("'{}': an entry is 'row col{}'", text_of(line), if tokens == 3 { " value" } else { "" })))?;
            let v = parse_u64(t).ok_or_else(|| parse_err(path, line_no, format!("{what} index '{}' is not a positive integer", text_of(t))))?;
            if v == 0 || v > n {
                return Err(parse_err(path, line_no, format!("{what} index {v} is out of range 1..={n} (indices are 1-based)")));
            }
            Ok((v - 1) as u32)
        };
        let (i, j) = (index("row")?, index("column")?);
        let rest = w.count();
        if rest != tokens - 2 {
            let what = match (field, rest) {
                (MtxField::Pattern, _) => format!("'{}': a pattern entry is 'row col' (no value)", text_of(line)),
                (_, 0) => format!("'{}': a {} entry is 'row col value'; the value is missing", text_of(line), field.name()),
                _ => format!("'{}': a {} entry is 'row col value', not {} words", text_of(line), field.name(), rest + 2),
            };
            return Err(parse_err(path, line_no, what));
        }
        if tokens == 3 {
            let v = words(line).nth(2).unwrap_or_default();
            if !is_number(v, field) {
                return Err(parse_err(
                    path,
                    line_no,
                    format!("value '{}' is not {}", text_of(v), if field == MtxField::Integer { "an integer" } else { "a real number" }),
                ));
            }
        }
        out.push((i, j));
    }
    Ok(out)
}

/// Whether `t` looks like a value of `field` (checked by its characters only: values are not used).
fn is_number(t: &[u8], field: MtxField) -> bool {
    let body = t.strip_prefix(b"-").or_else(|| t.strip_prefix(b"+")).unwrap_or(t);
    if body.is_empty() {
        return false;
    }
    match field {
        MtxField::Integer => body.iter().all(u8::is_ascii_digit),
        _ => {
            let lower = body.to_ascii_lowercase();
            matches!(&lower[..], b"inf" | b"infinity" | b"nan")
                || (body.iter().any(u8::is_ascii_digit)
                    && body.iter().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'd' | b'D' | b'+' | b'-')))
        }
    }
}

/// The line of entry `index` (0-based across the file).
fn line_of_entry(chunks: &[Chunk<'_>], pieces: &[Vec<(u32, u32)>], mut index: u64) -> usize {
    for (c, p) in chunks.iter().zip(pieces) {
        if index < p.len() as u64 {
            let mut seen = 0;
            for (k, line) in c.text.split(|&b| b == b'\n').enumerate() {
                if !is_skipped(line) {
                    if seen == index {
                        return c.first_line + k;
                    }
                    seen += 1;
                }
            }
        }
        index -= p.len() as u64;
    }
    0
}

/// A general matrix's entries as edges: (i, j) and (j, i) give one edge {i, j}. Each pair {i, j}
/// (i ≠ j) stored u times as (i < j) and l times as (i > j) gives max(u, l) edges (repeats beyond the
/// mirror stay, for the adjacency to count); diagonal entries stay as they are. Returns the edges
/// and the pairs stored both ways and one way only.
fn fold_general(directed: Vec<(u32, u32)>) -> (Vec<(u32, u32)>, u64, u64) {
    let key = |a: u32, b: u32| ((a as u64) << 32) | b as u64;
    let mut upper: Vec<u64> = directed.par_iter().filter(|&&(i, j)| i < j).map(|&(i, j)| key(i, j)).collect();
    let mut lower: Vec<u64> = directed.par_iter().filter(|&&(i, j)| i > j).map(|&(i, j)| key(j, i)).collect();
    let mut edges: Vec<(u32, u32)> = directed.par_iter().copied().filter(|&(i, j)| i == j).collect();
    drop(directed);
    rayon::join(|| upper.par_sort_unstable(), || lower.par_sort_unstable());
    edges.reserve(upper.len().max(lower.len()));
    let (mut mirrored, mut one_sided) = (0, 0);
    let (mut a, mut b) = (0, 0);
    while a < upper.len() || b < lower.len() {
        let k = match (upper.get(a), lower.get(b)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => break,
        };
        let a0 = a;
        while upper.get(a) == Some(&k) {
            a += 1;
        }
        let b0 = b;
        while lower.get(b) == Some(&k) {
            b += 1;
        }
        let (u, l) = (a - a0, b - b0);
        if u > 0 && l > 0 {
            mirrored += 1;
        } else {
            one_sided += 1;
        }
        edges.extend(std::iter::repeat_n(((k >> 32) as u32, k as u32), u.max(l)));
    }
    (edges, mirrored, one_sided)
}

/// Write `edges` (ids below `n_nodes`) as `%%MatrixMarket matrix coordinate pattern symmetric`:
/// the simple graph's lower triangle (row > column, 1-based, ascending; self-loops and repeats
/// dropped), atomically. Returns the number of entries written.
pub fn write_pattern(path: &Path, n_nodes: usize, edges: &[(u32, u32)]) -> Result<u64> {
    let keys = simple_edges(n_nodes, edges)?;
    let mut out =
        format!("%%MatrixMarket matrix coordinate pattern symmetric\n% written by octile {}\n{n_nodes} {n_nodes} {}\n", env!("CARGO_PKG_VERSION"), keys.len())
            .into_bytes();
    format_lines(&mut out, &keys, |buf, hi, lo| {
        push_u64(buf, hi as u64 + 1);
        buf.push(b' ');
        push_u64(buf, lo as u64 + 1);
    });
    super::npy::write_atomic(path, &out)?;
    Ok(keys.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn general_pairs_fold_to_one_edge_and_are_counted() {
        let (e, m, o) = fold_general(vec![(0, 1), (1, 0), (2, 1), (3, 3), (0, 1), (4, 2)]);
        assert_eq!((m, o), (1, 2));
        let mut e = e;
        e.sort();
        assert_eq!(e, [(0, 1), (0, 1), (1, 2), (2, 4), (3, 3)]);
    }

    #[test]
    fn a_byte_order_mark_before_the_banner_is_skipped() {
        let g = parse(Path::new("g.mtx"), b"\xEF\xBB\xBF%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n").unwrap();
        assert_eq!(g.n_nodes, 3);
    }

    #[test]
    fn value_shapes() {
        for ok in [&b"1"[..], b"-2.5e-3", b"+.5", b"1D3", b"NaN", b"-inf"] {
            assert!(is_number(ok, MtxField::Real), "{}", String::from_utf8_lossy(ok));
        }
        for bad in [&b"x"[..], b"-", b"e", b"1,5"] {
            assert!(!is_number(bad, MtxField::Real), "{}", String::from_utf8_lossy(bad));
        }
        assert!(is_number(b"-12", MtxField::Integer) && !is_number(b"1.0", MtxField::Integer));
    }
}

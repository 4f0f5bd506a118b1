//! Edge lists: one edge `u v` per line, the graphlet transform's plainest input, and the writer of
//! the same format.
//!
//! ```text
//! # comment            (also % comments, and blank lines)
//! 0 1                  u v: node ids, 0-based by default
//! 1,2,0.5              commas or whitespace separate; columns past the second (a weight) are ignored
//! ```
//! The graph has n = (largest id + 1) nodes unless the caller gives n (isolated nodes past the
//! largest id exist only then). Self-loops and repeated edges are kept here;
//! [`Adjacency::from_edges`](crate::graphlets::Adjacency::from_edges) drops and counts them.
//!
//! The file is read whole and parsed in parallel over line-aligned chunks (the helpers
//! [`line_chunks`] and [`push_u64`] serve the Matrix Market reader and writer too); every bad line
//! is an [`OctileError::Parse`] naming the file and its 1-based line.
use super::npy::{append_par, push_u64};
use super::record::{parse_err, shorten};
use crate::error::{OctileError, Result};
use rayon::prelude::*;
use std::path::Path;

/// File extensions read as edge lists.
pub const EXTENSIONS: [&str; 5] = ["edges", "el", "edgelist", "tsv", "txt"];

/// How to read an edge list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EdgeListOptions {
    /// Nodes of the graph; `None`: the largest id + 1. Given, every id must be below it.
    pub n_nodes: Option<usize>,
    /// Ids count from 1 (id 0 is then an error).
    pub one_based: bool,
}

/// An edge list as read: node count and edges (0-based, as in the file: either direction,
/// self-loops and repeats included).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdgeList {
    /// Nodes.
    pub n_nodes: usize,
    /// Edges, in file order.
    pub edges: Vec<(u32, u32)>,
}

/// Whether `path`'s extension is one of [`EXTENSIONS`].
pub fn is_edge_list_path(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// Read the edge list in `path`.
pub fn read(path: &Path, opt: &EdgeListOptions) -> Result<EdgeList> {
    parse(path, &read_bytes(path)?, opt)
}

/// Parse the edge list `text` (read from `path`, named in errors).
pub fn parse(path: &Path, text: &[u8], opt: &EdgeListOptions) -> Result<EdgeList> {
    // ids must fit u32 and leave n = id + 1 representable
    let limit = opt.n_nodes.map_or(u32::MAX as u64, |n| n as u64);
    if opt.n_nodes.is_some_and(|n| n > u32::MAX as usize) {
        return Err(parse_err(path, 0, format!("{} nodes asked for: node ids must fit 32 bits (at most {} nodes)", limit, u32::MAX)));
    }
    let chunks = line_chunks(super::record::without_bom(text), 1);
    let parts: Vec<Result<Vec<(u32, u32)>>> = chunks.par_iter().map(|c| parse_chunk(path, c, opt.one_based, limit, opt.n_nodes.is_some())).collect();
    let mut pieces = Vec::with_capacity(parts.len());
    for p in parts {
        pieces.push(p?);
    }
    let edges = concat(pieces);
    let n_nodes = match opt.n_nodes {
        Some(n) => n,
        None => edges.par_iter().map(|&(u, v)| u.max(v) as usize + 1).max().unwrap_or(0),
    };
    Ok(EdgeList { n_nodes, edges })
}

fn parse_chunk(path: &Path, c: &Chunk<'_>, one_based: bool, limit: u64, n_given: bool) -> Result<Vec<(u32, u32)>> {
    let mut out = Vec::with_capacity(c.lines);
    for (k, line) in c.text.split(|&b| b == b'\n').enumerate() {
        let line_no = c.first_line + k;
        let mut tokens = line.split(|&b| matches!(b, b' ' | b'\t' | b'\r' | b',')).filter(|t| !t.is_empty());
        let Some(first) = tokens.next() else { continue };
        if first[0] == b'#' || first[0] == b'%' {
            continue;
        }
        let second = tokens.next().ok_or_else(|| parse_err(path, line_no, format!("'{}': an edge is two node ids 'u v'", text_of(line))))?;
        let id = |tok: &[u8]| -> Result<u32> {
            let raw = parse_u64(tok).ok_or_else(|| {
                parse_err(path, line_no, format!("'{}' is not a node id (a non-negative integer); comment a header line out with #", text_of(tok)))
            })?;
            let id = if one_based { raw.checked_sub(1).ok_or_else(|| parse_err(path, line_no, "node id 0 in a 1-based edge list"))? } else { raw };
            if id >= limit {
                let what = if n_given {
                    format!("node id {raw} is out of range: the graph has {limit} nodes (--nodes)")
                } else {
                    format!("node id {raw} does not fit 32 bits (ids must be below {})", u32::MAX)
                };
                return Err(parse_err(path, line_no, what));
            }
            Ok(id as u32)
        };
        let (u, v) = (id(first)?, id(second)?);
        out.push((u, v));
    }
    Ok(out)
}

/// Write `edges` (ids below `n_nodes`) as an edge list: a `#` comment giving the node count, then
/// one `u v` line per edge of the simple graph (u < v, ascending, 0-based; self-loops and repeats
/// dropped), atomically. Returns the number of edges written. Nodes past the largest id come back
/// only with `--nodes` / [`EdgeListOptions::n_nodes`] (or use Matrix Market, which keeps n).
pub fn write(path: &Path, n_nodes: usize, edges: &[(u32, u32)]) -> Result<u64> {
    let keys = simple_edges(n_nodes, edges)?;
    let mut out = format!("# octile edge list: {n_nodes} nodes, {} edges, 0-based ids\n", keys.len()).into_bytes();
    format_lines(&mut out, &keys, |buf, hi, lo| {
        push_u64(buf, lo as u64);
        buf.push(b' ');
        push_u64(buf, hi as u64);
    });
    super::npy::write_atomic(path, &out)?;
    Ok(keys.len() as u64)
}

/// The edges of the simple graph as sorted keys `hi << 32 | lo` (hi > lo): ids checked against
/// `n_nodes`, self-loops and repeats (either direction) dropped.
pub(crate) fn simple_edges(n_nodes: usize, edges: &[(u32, u32)]) -> Result<Vec<u64>> {
    if let Some(&(u, v)) = edges.par_iter().find_first(|&&(u, v)| u as usize >= n_nodes || v as usize >= n_nodes) {
        return Err(OctileError::InvalidGraph { graph: None, what: format!("edge ({u}, {v}): node out of range (the graph has {n_nodes} nodes)") });
    }
    let mut keys: Vec<u64> = edges.par_iter().filter(|&&(u, v)| u != v).map(|&(u, v)| ((u.max(v) as u64) << 32) | u.min(v) as u64).collect();
    keys.par_sort_unstable();
    keys.dedup();
    Ok(keys)
}

/// Append one line per key (`hi << 32 | lo`), formatted by `line` (which writes it without the
/// newline), in parallel.
pub(crate) fn format_lines(out: &mut Vec<u8>, keys: &[u64], line: impl Fn(&mut Vec<u8>, u32, u32) + Sync) {
    append_par(out, keys, 1 << 16, |buf, _, ks| {
        for &k in ks {
            line(buf, (k >> 32) as u32, k as u32);
            buf.push(b'\n');
        }
    });
}

/// The bytes of `path`; a folder is a parse error saying so, a missing file an I/O error, a file
/// whose text and parsed entries (at most 2 bytes of entries per byte of text) would not fit in the
/// available memory [`OctileError::TooLarge`], before reading it.
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let io = |cause| OctileError::Io { path: path.into(), cause };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        return Err(parse_err(path, 0, "a folder where a file was expected"));
    }
    crate::memory::check_with(
        meta.len() as u128 * 3,
        None,
        || format!("reading {} ({} bytes) and its edges", path.display(), meta.len()),
        "a smaller graph, or a machine with more memory",
    )?;
    std::fs::read(path).map_err(io)
}

/// A run of whole lines of a text, and the 1-based number of its first line.
pub(crate) struct Chunk<'a> {
    /// Line number of the first line.
    pub first_line: usize,
    /// Lines (`\n`-separated; the last one may lack its newline).
    pub text: &'a [u8],
    /// Lines in `text` (an upper bound on the records it holds).
    pub lines: usize,
}

/// `text` (whose first line is line `first_line`) cut into line-aligned chunks of about a
/// thread's share (at least 1 MiB each), with their first line numbers.
pub(crate) fn line_chunks(text: &[u8], first_line: usize) -> Vec<Chunk<'_>> {
    let target = (text.len() / (rayon::current_num_threads() * 8)).max(1 << 20);
    let mut cuts = vec![0];
    let mut at = 0;
    while at + target < text.len() {
        match text[at + target..].iter().position(|&b| b == b'\n') {
            Some(p) => {
                at += target + p + 1;
                cuts.push(at);
            }
            None => break,
        }
    }
    cuts.push(text.len());
    let newlines: Vec<usize> = cuts.par_windows(2).map(|w| text[w[0]..w[1]].iter().filter(|&&b| b == b'\n').count()).collect();
    let mut line = first_line;
    let mut chunks = Vec::with_capacity(newlines.len());
    for (w, nl) in cuts.windows(2).zip(newlines) {
        chunks.push(Chunk { first_line: line, text: &text[w[0]..w[1]], lines: nl + 1 });
        line += nl;
    }
    chunks
}

/// The pieces, concatenated in order (in parallel).
pub(crate) fn concat<T: Copy + Send + Sync + Default>(pieces: Vec<Vec<T>>) -> Vec<T> {
    if pieces.len() == 1 {
        return pieces.into_iter().next().unwrap_or_default();
    }
    let total = pieces.iter().map(Vec::len).sum();
    let mut out = vec![T::default(); total];
    let mut rest: &mut [T] = &mut out;
    let mut slots = Vec::with_capacity(pieces.len());
    for p in &pieces {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(p.len());
        slots.push(head);
        rest = tail;
    }
    slots.into_par_iter().zip(pieces.par_iter()).for_each(|(s, p)| s.copy_from_slice(p));
    out
}

/// A decimal without sign (ASCII digits only, at most `u64::MAX`), else `None`.
pub(crate) fn parse_u64(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in tok {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// Bytes of a file for a message: lossy text, at most 60 characters.
pub(crate) fn text_of(bytes: &[u8]) -> String {
    shorten(String::from_utf8_lossy(bytes).trim_end_matches('\r'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_format_and_parse_back() {
        for v in [0u64, 7, 10, 99, 4_294_967_295, u64::MAX] {
            let mut b = Vec::new();
            push_u64(&mut b, v);
            assert_eq!(b, v.to_string().as_bytes());
            assert_eq!(parse_u64(&b), Some(v));
        }
        for bad in [&b""[..], b"-1", b"1.0", b"18446744073709551616", b"1e3"] {
            assert_eq!(parse_u64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_id() {
        // what Windows editors write first; the other readers skip it too (`record::without_bom`)
        let e = parse(Path::new("g.edges"), b"\xEF\xBB\xBF0 1\r\n1 2\r\n", &EdgeListOptions::default()).unwrap();
        assert_eq!((e.n_nodes, e.edges), (3, vec![(0, 1), (1, 2)]));
    }

    #[test]
    fn chunks_cover_the_text_with_right_line_numbers() {
        let text: Vec<u8> = (0..300_000).flat_map(|i| format!("{i} {}\n", i + 1).into_bytes()).collect();
        let chunks = line_chunks(&text, 1);
        assert!(chunks.len() > 1);
        assert_eq!(chunks.iter().map(|c| c.text.len()).sum::<usize>(), text.len());
        for c in &chunks {
            let first: u64 = std::str::from_utf8(c.text).unwrap().split(' ').next().unwrap().parse().unwrap();
            assert_eq!(first as usize + 1, c.first_line);
        }
    }
}

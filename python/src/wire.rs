//! A list of graphs as one `bytes` object: how `octile.dask` sends the graphs to every worker.
//! Pickling each graph builds a Python list per feature array (20,000 molecules: 32 MB of
//! pickle, 2.4 s to dump and load); this writes the same [`Parts`] as flat little-endian arrays.
//!
//! ```text
//! "OCTG" u32 version | u64 graphs | per graph:
//!   u64 n | names(node) | f64 × n·kn | names(edge) | u64 m | (u32 i, u32 j, f64 w) × m | f64 × m·ke
//!   | u64 kinds, (string, u8) each | names(vocab)
//! names: u64 count, then (u64 length, UTF-8 bytes) each
//! ```
//! Every count is checked against the bytes left before anything is allocated, so damaged input
//! is a `ValueError`, never a huge allocation.

use crate::graphs::{Parts, PyGraph, graph_of, parts_of};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

const MAGIC: &[u8; 4] = b"OCTG";
const VERSION: u32 = 1;

fn put_u64(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&(v as u64).to_le_bytes());
}

/// A string as [`Reader::string`] reads it: its length, then its bytes.
fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u64(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

fn put_names(out: &mut Vec<u8>, names: &[String]) {
    put_u64(out, names.len());
    for s in names {
        put_str(out, s);
    }
}

fn put_f64s(out: &mut Vec<u8>, v: &[f64]) {
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

fn encode(p: &Parts, out: &mut Vec<u8>) {
    let (n, node_names, node, edge_names, edges, edge, kinds, vocab) = p;
    put_u64(out, *n);
    put_names(out, node_names);
    put_f64s(out, node);
    put_names(out, edge_names);
    put_u64(out, edges.len());
    for &(i, j, w) in edges {
        out.extend_from_slice(&i.to_le_bytes());
        out.extend_from_slice(&j.to_le_bytes());
        out.extend_from_slice(&w.to_le_bytes());
    }
    put_f64s(out, edge);
    put_u64(out, kinds.len());
    for (k, v) in kinds {
        put_str(out, k);
        out.push(*v as u8);
    }
    put_names(out, vocab);
}

/// The bytes not read yet.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize, what: &str) -> PyResult<&'a [u8]> {
        if len > self.0.len() {
            return Err(PyValueError::new_err(format!("graphs from bytes: the data ends inside {what} ({len} bytes wanted, {} left)", self.0.len())));
        }
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(head)
    }
    fn u64(&mut self, what: &str) -> PyResult<usize> {
        let v = u64::from_le_bytes(self.take(8, what)?.try_into().expect("8 bytes"));
        usize::try_from(v).map_err(|_| PyValueError::new_err(format!("graphs from bytes: {what} {v} is too large")))
    }
    /// A count of items of `size` bytes each that must still fit in the data.
    fn count(&mut self, size: usize, what: &str) -> PyResult<usize> {
        let c = self.u64(what)?;
        if c.checked_mul(size.max(1)).is_none_or(|b| b > self.0.len()) {
            return Err(PyValueError::new_err(format!("graphs from bytes: {c} {what} do not fit in the {} bytes left", self.0.len())));
        }
        Ok(c)
    }
    fn string(&mut self, what: &str) -> PyResult<String> {
        let len = self.count(1, what)?;
        String::from_utf8(self.take(len, what)?.to_vec()).map_err(|_| PyValueError::new_err(format!("graphs from bytes: {what} is not UTF-8")))
    }
    fn names(&mut self, what: &str) -> PyResult<Vec<String>> {
        let c = self.count(8, what)?;
        (0..c).map(|_| self.string(what)).collect()
    }
    fn f64s(&mut self, len: usize, what: &str) -> PyResult<Vec<f64>> {
        let bytes = len.checked_mul(8).ok_or_else(|| PyValueError::new_err(format!("graphs from bytes: {len} {what} overflow")))?;
        Ok(self.take(bytes, what)?.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
    }
    fn parts(&mut self) -> PyResult<Parts> {
        let n = self.u64("node count")?;
        let node_names = self.names("node feature names")?;
        let node = self.f64s(n.saturating_mul(node_names.len()), "node features")?;
        if node_names.is_empty() && n > self.0.len().saturating_mul(8).max(1 << 20) {
            // nothing backs a featureless node in the data: bounded, so that damaged bytes cannot
            // ask for billions of them
            return Err(PyValueError::new_err(format!("graphs from bytes: {n} nodes without features in {} bytes", self.0.len())));
        }
        let edge_names = self.names("edge feature names")?;
        let m = self.count(16, "edges")?;
        let edges = (0..m)
            .map(|_| {
                let b = self.take(16, "an edge")?;
                Ok((
                    u32::from_le_bytes(b[0..4].try_into().expect("4 bytes")),
                    u32::from_le_bytes(b[4..8].try_into().expect("4 bytes")),
                    f64::from_le_bytes(b[8..16].try_into().expect("8 bytes")),
                ))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let edge = self.f64s(m.saturating_mul(edge_names.len()), "edge features")?;
        let nk = self.count(9, "feature kinds")?;
        let kinds = (0..nk).map(|_| Ok((self.string("a feature kind")?, self.take(1, "a feature kind")?[0] != 0))).collect::<PyResult<Vec<_>>>()?;
        let vocab = self.names("string labels")?;
        Ok((n, node_names, node, edge_names, edges, edge, kinds, vocab))
    }
}

/// The graphs as one `bytes` object ([`_graphs_from_bytes`] reads it back, in any process).
#[pyfunction]
fn _graphs_to_bytes<'py>(py: Python<'py>, graphs: Vec<PyRef<'py, PyGraph>>) -> PyResult<Bound<'py, PyBytes>> {
    let mut out = Vec::with_capacity(16 + 64 * graphs.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    put_u64(&mut out, graphs.len());
    for g in &graphs {
        encode(&parts_of(g)?, &mut out);
    }
    Ok(PyBytes::new(py, &out))
}

/// The graphs [`_graphs_to_bytes`] wrote, each checked as any graph; string labels get this
/// process's codes.
#[pyfunction]
fn _graphs_from_bytes(data: &[u8]) -> PyResult<Vec<PyGraph>> {
    let mut r = Reader(data);
    if r.take(4, "the header").ok() != Some(MAGIC.as_slice()) {
        return Err(PyValueError::new_err("graphs from bytes: not octile's graph bytes (no OCTG header)"));
    }
    let version = u32::from_le_bytes(r.take(4, "the header")?.try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(PyValueError::new_err(format!("graphs from bytes: version {version}, this octile reads version {VERSION}")));
    }
    let count = r.count(8, "graphs")?;
    let graphs =
        (0..count).map(|k| r.parts().and_then(graph_of).map_err(|e| PyValueError::new_err(format!("graph {k}: {e}")))).collect::<PyResult<Vec<_>>>()?;
    if !r.0.is_empty() {
        return Err(PyValueError::new_err(format!("graphs from bytes: {} bytes after the last graph", r.0.len())));
    }
    Ok(graphs)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_graphs_to_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_graphs_from_bytes, m)?)?;
    Ok(())
}

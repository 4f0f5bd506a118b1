//! The graphlet transform's result: n × 16 raw and net frequencies, node-major (row i = node i).
use crate::error::OctileError;
use octile_types::graphlets::N_ORBITS;

/// The raw and net frequencies of every node: n × 16, node-major (row i = node i's 16 orbits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frequencies {
    n_nodes: usize,
    /// Raw frequencies d̂0–d̂15, n × 16 row-major.
    pub raw: Vec<i64>,
    /// Net frequencies d0–d15, n × 16 row-major.
    pub net: Vec<i64>,
}

impl Frequencies {
    /// From per-node rows.
    pub fn from_rows(raw: Vec<[i64; N_ORBITS]>, net: Vec<[i64; N_ORBITS]>) -> Frequencies {
        Frequencies { n_nodes: raw.len(), raw: raw.into_iter().flatten().collect(), net: net.into_iter().flatten().collect() }
    }
    /// From n × 16 row-major arrays.
    ///
    /// # Panics
    /// If the two arrays differ in length or are not a multiple of 16 long.
    pub fn from_flat(raw: Vec<i64>, net: Vec<i64>) -> Frequencies {
        assert!(raw.len() == net.len() && raw.len().is_multiple_of(N_ORBITS), "raw and net must both be n × 16");
        Frequencies { n_nodes: raw.len() / N_ORBITS, raw, net }
    }
    /// Nodes.
    pub fn n_nodes(&self) -> usize {
        self.n_nodes
    }
    /// Node i's raw frequencies.
    pub fn raw_row(&self, i: usize) -> &[i64] {
        &self.raw[i * N_ORBITS..(i + 1) * N_ORBITS]
    }
    /// Node i's net frequencies.
    pub fn net_row(&self, i: usize) -> &[i64] {
        &self.net[i * N_ORBITS..(i + 1) * N_ORBITS]
    }
}

/// The error for a count of node `i` past `i64`.
pub(crate) fn overflow(i: usize) -> OctileError {
    OctileError::InvalidGraph { graph: None, what: format!("node {i}: a graphlet count exceeds the int64 range") }
}

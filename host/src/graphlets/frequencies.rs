//! The graphlet transform's result: n × 16 raw and net frequencies, node-major (row i = node i).
use crate::error::OctileError;
use octile_types::graphlets::N_ORBITS;

/// Which frequencies a transform returns (the other's vector of [`Frequencies`] is left empty).
/// On the GPU, the one not kept is never copied back: for 4 M nodes that is 512 MB less over the
/// bus and in host memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Keep {
    /// Raw and net.
    #[default]
    Both,
    /// The net frequencies d0–d15 only.
    Net,
    /// The raw frequencies d̂0–d̂15 only.
    Raw,
}

/// The raw and net frequencies of every node: n × 16, node-major (row i = node i's 16 orbits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frequencies {
    n_nodes: usize,
    /// Raw frequencies d̂0–d̂15, n × 16 row-major (empty when the transform kept the net only).
    pub raw: Vec<i64>,
    /// Net frequencies d0–d15, n × 16 row-major (empty when the transform kept the raw only).
    pub net: Vec<i64>,
}

impl Frequencies {
    /// From per-node rows.
    pub fn from_rows(raw: Vec<[i64; N_ORBITS]>, net: Vec<[i64; N_ORBITS]>) -> Frequencies {
        Frequencies { n_nodes: raw.len(), raw: raw.into_iter().flatten().collect(), net: net.into_iter().flatten().collect() }
    }
    /// From n × 16 row-major arrays, either of them empty when not kept.
    ///
    /// # Panics
    /// If a non-empty array is not n × 16 long.
    pub fn from_flat(n_nodes: usize, raw: Vec<i64>, net: Vec<i64>) -> Frequencies {
        assert!([&raw, &net].iter().all(|v| v.is_empty() || v.len() == n_nodes * N_ORBITS), "raw and net must be n × 16 or empty");
        Frequencies { n_nodes, raw, net }
    }
    /// The same with only the frequencies `keep` names (the other's memory freed).
    pub fn keep(mut self, keep: Keep) -> Frequencies {
        match keep {
            Keep::Both => {}
            Keep::Net => self.raw = Vec::new(),
            Keep::Raw => self.net = Vec::new(),
        }
        self
    }
    /// Nodes.
    pub fn n_nodes(&self) -> usize {
        self.n_nodes
    }
    /// Node i's raw frequencies (the transform must have kept them).
    pub fn raw_row(&self, i: usize) -> &[i64] {
        &self.raw[i * N_ORBITS..(i + 1) * N_ORBITS]
    }
    /// Node i's net frequencies (the transform must have kept them).
    pub fn net_row(&self, i: usize) -> &[i64] {
        &self.net[i * N_ORBITS..(i + 1) * N_ORBITS]
    }
}

/// The error for a count of node `i` past `i64`.
pub(crate) fn overflow(i: usize) -> OctileError {
    OctileError::InvalidGraph { graph: None, what: format!("node {i}: a graphlet count exceeds the int64 range") }
}

/// Named phases of a transform and their seconds, in order (`TransformInfo::phases`).
pub type Phases = Vec<(&'static str, f64)>;

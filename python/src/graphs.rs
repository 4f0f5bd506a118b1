//! Graphs for Python: [`PyGraph`] wraps one octile graph; the readers are octile's own (files,
//! networkx node-link JSON, SMILES), so a graph read here equals the CLI's.
use crate::errors::to_py;
use octile::Graph;
use octile::io::{FeatureKinds, Format, ReadOptions, json, smiles};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// A labeled, weighted, undirected graph as octile holds it (read-only), and whether each of its
/// features held strings (coded as integers) where it was read: a kernel call checks that no
/// feature is strings in one graph and numbers in another (a code would equal a number).
#[pyclass(frozen, name = "Graph", module = "octile")]
#[derive(Clone)]
pub struct PyGraph {
    pub graph: Graph,
    pub kinds: Arc<FeatureKinds>,
}

/// The graph's parts, for pickling: nodes, feature names, row-major node features, edges
/// (i, j, weight), row-major edge features, string-feature flags, and the strings of its string
/// features (those features' values are indices into this list in the pickle, not the process's
/// codes: codes are per process, so a graph pickled in one process and loaded in another is coded
/// again there from its strings).
pub(crate) type Parts = (usize, Vec<String>, Vec<f64>, Vec<String>, Vec<(u32, u32, f64)>, Vec<f64>, Vec<(String, bool)>, Vec<String>);

/// Which of the columns `names` (of `side`, "node" or "edge") hold string codes.
fn string_columns(names: &[String], side: &str, kinds: &FeatureKinds) -> Vec<bool> {
    names.iter().map(|n| kinds.0.get(&format!("{side} {n}")).copied().unwrap_or(false)).collect()
}

/// Replaces the process's codes in the string columns of row-major `values` by indices into
/// `vocab` (each string listed once).
fn codes_to_vocab(values: &mut [f64], strings: &[bool], vocab: &mut Vec<String>, seen: &mut HashMap<u64, f64>) -> PyResult<()> {
    let width = strings.len();
    for (k, v) in values.iter_mut().enumerate() {
        if !strings[k % width] {
            continue;
        }
        let index = match seen.get(&v.to_bits()) {
            Some(&i) => i,
            None => {
                let s = json::string_of_code(*v).ok_or_else(|| PyRuntimeError::new_err(format!("internal: {v} is no string label's code in this process")))?;
                vocab.push(s);
                let i = (vocab.len() - 1) as f64;
                seen.insert(v.to_bits(), i);
                i
            }
        };
        *v = index;
    }
    Ok(())
}

/// [`codes_to_vocab`]'s inverse in the loading process: indices into `vocab` to this process's
/// codes of those strings.
fn vocab_to_codes(values: &mut [f64], strings: &[bool], vocab: &[String]) -> PyResult<()> {
    // each string coded once (the table is behind a lock), not once per value
    let codes: Vec<f64> = vocab.iter().map(|s| json::string_code(s)).collect();
    let width = strings.len();
    for (k, v) in values.iter_mut().enumerate() {
        if !strings[k % width] {
            continue;
        }
        let code = (*v >= 0.0 && v.fract() == 0.0).then(|| codes.get(*v as usize)).flatten();
        *v = *code.ok_or_else(|| PyValueError::new_err(format!("unpickling a graph: string label index {v} is not in its {} strings", vocab.len())))?;
    }
    Ok(())
}

#[pymethods]
impl PyGraph {
    /// Number of nodes.
    #[getter]
    fn n_nodes(&self) -> usize {
        self.graph.n_nodes()
    }
    /// Number of undirected edges (self-loops included).
    #[getter]
    fn n_edges(&self) -> usize {
        self.graph.n_edges()
    }
    /// Node feature names.
    #[getter]
    fn node_feature_names(&self) -> Vec<String> {
        self.graph.node_feature_names().to_vec()
    }
    /// Edge feature names.
    #[getter]
    fn edge_feature_names(&self) -> Vec<String> {
        self.graph.edge_feature_names().to_vec()
    }
    /// The edges as (i, j, weight).
    fn edges(&self) -> Vec<(u32, u32, f64)> {
        self.graph.edges().iter().map(|e| (e.i, e.j, e.weight)).collect()
    }
    /// The values of node feature `name`, one per node (string labels as their integer codes, which
    /// are this process's: compare them within one process only).
    fn node_feature(&self, name: &str) -> PyResult<Vec<f64>> {
        let f = self
            .graph
            .node_feature_index(name)
            .ok_or_else(|| PyValueError::new_err(format!("no node feature '{name}'; the graph has {:?}", self.graph.node_feature_names())))?;
        Ok((0..self.graph.n_nodes()).map(|i| self.graph.node_features(i)[f]).collect())
    }
    /// The values of edge feature `name`, one per edge of `edges()`.
    fn edge_feature(&self, name: &str) -> PyResult<Vec<f64>> {
        let f = self
            .graph
            .edge_feature_index(name)
            .ok_or_else(|| PyValueError::new_err(format!("no edge feature '{name}'; the graph has {:?}", self.graph.edge_feature_names())))?;
        Ok((0..self.graph.n_edges()).map(|e| self.graph.edge_features(e)[f]).collect())
    }
    /// Pickling (joblib, multiprocessing): the graph rebuilt from its parts by `_graph_from_parts`;
    /// string labels travel as strings (see [`Parts`]).
    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (Parts,))> {
        let f = py.import("octile._octile")?.getattr("_graph_from_parts")?.unbind();
        Ok((f, (parts_of(self)?,)))
    }
    fn __repr__(&self) -> String {
        format!(
            "octile.Graph({} nodes, {} edges, node features {:?}, edge features {:?})",
            self.graph.n_nodes(),
            self.graph.n_edges(),
            self.graph.node_feature_names(),
            self.graph.edge_feature_names()
        )
    }
}

/// The graphs of one read, sharing its feature kinds.
fn wrap(graphs: Vec<Graph>, kinds: FeatureKinds) -> Vec<PyGraph> {
    let kinds = Arc::new(kinds);
    graphs.into_iter().map(|graph| PyGraph { graph, kinds: kinds.clone() }).collect()
}

/// A pickled graph back (the inverse of `Graph.__reduce__`); the graph's own checks apply, and
/// its string labels get this process's codes.
#[pyfunction]
fn _graph_from_parts(parts: &Bound<'_, PyAny>) -> PyResult<PyGraph> {
    // an older pickle (seven parts) carried its process's codes, meaningless in this process
    let parts: Parts = parts.extract().map_err(|_| {
        PyValueError::new_err(
            "unpickling a graph: not a graph pickled by this version of octile (earlier versions pickled labels as per-process codes); pickle it again",
        )
    })?;
    graph_of(parts)
}

/// The graph's [`Parts`] (its string labels as indices into its own strings).
pub(crate) fn parts_of(pg: &PyGraph) -> PyResult<Parts> {
    let g = &pg.graph;
    let mut node: Vec<f64> = (0..g.n_nodes()).flat_map(|i| g.node_features(i).to_vec()).collect();
    let mut edge: Vec<f64> = (0..g.n_edges()).flat_map(|e| g.edge_features(e).to_vec()).collect();
    let (mut vocab, mut seen) = (Vec::new(), HashMap::new());
    codes_to_vocab(&mut node, &string_columns(g.node_feature_names(), "node", &pg.kinds), &mut vocab, &mut seen)?;
    codes_to_vocab(&mut edge, &string_columns(g.edge_feature_names(), "edge", &pg.kinds), &mut vocab, &mut seen)?;
    let edges = g.edges().iter().map(|e| (e.i, e.j, e.weight)).collect();
    let kinds = pg.kinds.0.iter().map(|(k, v)| (k.clone(), *v)).collect();
    Ok((g.n_nodes(), g.node_feature_names().to_vec(), node, g.edge_feature_names().to_vec(), edges, edge, kinds, vocab))
}

/// A graph from its [`Parts`], checked as any graph, its string labels coded in this process.
pub(crate) fn graph_of(parts: Parts) -> PyResult<PyGraph> {
    let (n, node_names, mut node, edge_names, edges, mut edge, kinds, vocab) = parts;
    let bad = |e: octile::OctileError| PyValueError::new_err(format!("unpickling a graph: {e}"));
    let (kn, ke) = (node_names.len(), edge_names.len());
    if node.len() != n * kn || edge.len() != edges.len() * ke {
        return Err(PyValueError::new_err("unpickling a graph: feature arrays do not match the sizes"));
    }
    let kinds = FeatureKinds(kinds.into_iter().collect());
    vocab_to_codes(&mut node, &string_columns(&node_names, "node", &kinds), &vocab)?;
    vocab_to_codes(&mut edge, &string_columns(&edge_names, "edge", &kinds), &vocab)?;
    let mut g = Graph::with_names(n, node_names, edge_names);
    // nothing to set on nodes without features: no loop over them (damaged bytes may claim many)
    if kn > 0 {
        for i in 0..n {
            g.set_node_features(i, &node[i * kn..(i + 1) * kn]).map_err(bad)?;
        }
    }
    for (e, &(i, j, w)) in edges.iter().enumerate() {
        g.add_edge(i as usize, j as usize, w, &edge[e * ke..(e + 1) * ke]).map_err(bad)?;
    }
    g.validate().map_err(bad)?;
    Ok(PyGraph { graph: g, kinds: Arc::new(kinds) })
}

/// Every graph of a file or TU folder (`format`: json, smi, csv, tu, sdf, pdb; default: from the
/// extension) and how many bad records were skipped (`skip_invalid`).
#[pyfunction]
#[pyo3(signature = (path, format=None, skip_invalid=false, pdb_cutoff=octile::io::pdb::DEFAULT_CUTOFF))]
fn read(py: Python<'_>, path: PathBuf, format: Option<&str>, skip_invalid: bool, pdb_cutoff: f64) -> PyResult<(Vec<PyGraph>, usize)> {
    let format = format
        .map(|f| Format::parse(f).ok_or_else(|| PyValueError::new_err(format!("unknown format '{f}'; use json, smi, csv, tu, sdf or pdb"))))
        .transpose()?;
    let opt = ReadOptions { format, skip_invalid, pdb_cutoff };
    let loaded = py.detach(|| octile::io::read_with(&path, &opt)).map_err(|e| to_py(py, e))?;
    Ok((wrap(loaded.graphs, loaded.kinds), loaded.skipped))
}

/// Graphs from networkx node-link JSON texts (one graph each), read as the JSON reader reads a
/// JSON Lines file: one feature kind (strings or numbers) per feature across the list.
/// `first`: the index of the first text in the caller's list (errors name `graph first + k`).
#[pyfunction]
#[pyo3(signature = (texts, first = 0))]
fn from_node_link(texts: Vec<String>, first: usize) -> PyResult<Vec<PyGraph>> {
    let mut kinds = FeatureKinds::default();
    let graphs = texts
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let bad = |e: String| PyValueError::new_err(format!("graph {}: {e}", first.saturating_add(k)));
            let v: serde_json::Value = serde_json::from_str(t).map_err(|e| bad(e.to_string()))?;
            json::graph_from_value(&v, &mut kinds).map_err(bad)
        })
        .collect::<PyResult<Vec<Graph>>>()?;
    Ok(wrap(graphs, kinds))
}

/// Molecules from SMILES strings (the `.smi` reader's graphs); `first` as for [`from_node_link`].
#[pyfunction]
#[pyo3(signature = (smiles, first = 0))]
fn from_smiles(smiles: Vec<String>, first: usize) -> PyResult<Vec<PyGraph>> {
    // the reader's message names the SMILES (shortened)
    let graphs = smiles
        .iter()
        .enumerate()
        .map(|(k, s)| smiles::parse(s).map_err(|e| PyValueError::new_err(format!("SMILES {}: {e}", first.saturating_add(k)))))
        .collect::<PyResult<Vec<Graph>>>()?;
    let kinds = FeatureKinds::numbers_of(&graphs);
    Ok(wrap(graphs, kinds))
}

/// `count` seeded synthetic graphs, as the CLI's generator inputs: "nws" (the paper's
/// Newman–Watts–Strogatz set), "ba" (Barabási–Albert) or "molecules" (molecule-like graphs with
/// the SMILES reader's features).
#[pyfunction]
#[pyo3(signature = (kind, count, seed = 2020))]
fn generate(py: Python<'_>, kind: &str, count: usize, seed: u64) -> PyResult<Vec<PyGraph>> {
    use octile::generators::{ba_set, molecule_set, nws_set};
    octile::memory::check(count as u128 * (32 << 10), None, || format!("generating {count} graphs")).map_err(|e| to_py(py, e))?;
    let graphs = match kind {
        "nws" => py.detach(|| nws_set(count, seed)),
        "ba" => py.detach(|| ba_set(count, seed)),
        "molecules" => py.detach(|| molecule_set(count, seed)),
        k => return Err(PyValueError::new_err(format!("unknown generator '{k}'; use nws, ba or molecules"))),
    };
    let kinds = FeatureKinds::numbers_of(&graphs);
    Ok(wrap(graphs, kinds))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_class::<PyGraph>()?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(from_node_link, m)?)?;
    m.add_function(wrap_pyfunction!(from_smiles, m)?)?;
    m.add_function(wrap_pyfunction!(_graph_from_parts, m)?)?;
    Ok(())
}

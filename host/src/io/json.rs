//! networkx node-link JSON (`json_graph.node_link_data(G)`): one graph per line (JSON Lines) or a
//! JSON array of graphs. Node attributes other than `id` become node features, link attributes
//! other than `source`/`target`/`weight`/`key` become edge features, `weight` is the edge weight
//! (default 1). Edges are read from `links` (older networkx) or `edges` (newer). Node ids may be any
//! JSON scalars. Feature values: numbers as is, booleans as 0/1, strings as integer codes
//! (consistent within a process, for Kronecker-delta kernels; Python's pickled graphs carry the
//! strings and are coded again in the process that loads them). Within a file a feature's values are
//! all strings or all numbers (booleans count as numbers): a code would otherwise equal a number
//! (the string "A" coded 0 and the number 0 compared equal), so a mix is an error naming the record;
//! across files, [`FeatureKinds::check_against`] checks the same.
use super::record::{FeatureKinds, Loaded, bad_record, parse_err, read_text};
use crate::error::Result;
use crate::graph::Graph;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

/// The process's string labels: code → string (`list`) and string → code (`map`). Codes are
/// small integers (exact in f32, which the GPU's f32 path stores), so they mean nothing outside
/// this process: a graph that leaves it (Python's pickle) carries its strings and is coded again
/// where it arrives ([`string_of_code`], [`string_code`]).
#[derive(Default)]
struct Codes {
    map: HashMap<String, f64>,
    list: Vec<String>,
}

static CODES: Mutex<Option<Codes>> = Mutex::new(None);

/// Integer code of a string label in this process (first seen = 0, 1, ...).
pub fn string_code(s: &str) -> f64 {
    // a panic elsewhere while holding the lock leaves the table as it was: still usable
    let mut g = CODES.lock().unwrap_or_else(|e| e.into_inner());
    let c = g.get_or_insert_with(Codes::default);
    if let Some(&code) = c.map.get(s) {
        return code;
    }
    let code = c.list.len() as f64;
    c.map.insert(s.to_string(), code);
    c.list.push(s.to_string());
    code
}

/// The string label of `code` in this process ([`string_code`]'s inverse); `None` for a value no
/// string was coded as.
pub fn string_of_code(code: f64) -> Option<String> {
    let g = CODES.lock().unwrap_or_else(|e| e.into_inner());
    let c = g.as_ref()?;
    if code < 0.0 || code.fract() != 0.0 {
        return None;
    }
    c.list.get(code as usize).cloned()
}

fn feature_value(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(*b as u8 as f64),
        Value::String(s) => Some(string_code(s)),
        _ => None,
    }
}

/// The values of `names` in a node or link object (`what` names it in errors, `side` is "node" or
/// "edge"), each feature's kind checked against `kinds`.
fn features(o: &serde_json::Map<String, Value>, names: &[String], what: &str, side: &str, kinds: &mut FeatureKinds) -> std::result::Result<Vec<f64>, String> {
    names
        .iter()
        .map(|k| {
            let v = o.get(k).ok_or_else(|| format!("{what} lacks feature '{k}'"))?;
            let x = feature_value(v).ok_or_else(|| format!("{what}: feature '{k}' = {v} is not a number, bool or string"))?;
            let is_string = v.is_string();
            let first = *kinds.0.entry(format!("{side} {k}")).or_insert(is_string);
            if first != is_string {
                let (this, earlier) = if is_string { ("a string", "numbers") } else { ("a number", "strings") };
                return Err(format!("{what}: {side} feature '{k}' = {v} is {this}, but earlier values of '{k}' are {earlier}; use one kind per feature (a string's code would equal a number)"));
            }
            Ok(x)
        })
        .collect()
}

/// A node id as networkx keys it: a string or a number (1 and 1.0 the same node, as in a Python
/// dict; "1" another), nothing else; an integer past 2⁵³ is refused, since JSON numbers are read as
/// f64 there and two different ids could become one (strings keep such ids exact).
fn id_key(id: &Value) -> std::result::Result<String, String> {
    match id {
        Value::String(_) => Ok(id.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
        Value::Number(n) => {
            let v = n.as_f64().unwrap_or(f64::NAN);
            if v.fract() == 0.0 && v.abs() < 2f64.powi(53) {
                Ok((v as i64).to_string())
            } else if v.fract() == 0.0 {
                Err(format!("node id {id} is an integer past 2^53, which JSON readers round: give such ids as strings"))
            } else {
                Ok(n.to_string())
            }
        }
        _ => Err(format!("node id {id}: an id must be a string or a number")),
    }
}

/// One node-link object to a graph (`kinds`: the file's feature kinds so far).
pub fn graph_from_value(v: &Value, kinds: &mut FeatureKinds) -> std::result::Result<Graph, String> {
    let obj = v.as_object().ok_or("expected a JSON object with 'nodes' and 'links' (or 'edges')")?;
    let nodes = obj.get("nodes").and_then(|n| n.as_array()).ok_or("missing 'nodes' array")?;
    for flag in ["directed", "multigraph"] {
        if let Some(v) = obj.get(flag).filter(|v| !v.is_boolean()) {
            return Err(format!("\"{flag}\": {v} — must be true or false"));
        }
    }
    if obj.get("directed").and_then(Value::as_bool) == Some(true) {
        return Err("\"directed\": true — octile's graphs are undirected (networkx: G.to_undirected() before node_link_data)".into());
    }
    if obj.get("multigraph").and_then(Value::as_bool) == Some(true) {
        return Err("\"multigraph\": true — octile's graphs have at most one edge per pair of nodes (networkx: nx.Graph(G))".into());
    }
    if obj.contains_key("links") && obj.contains_key("edges") {
        return Err("both 'links' and 'edges' arrays: give the edges once (networkx writes 'links', or 'edges' with edges=\"edges\")".into());
    }
    let links = obj.get("links").or_else(|| obj.get("edges")).and_then(|l| l.as_array()).ok_or("missing 'links' (or 'edges') array")?;
    let mut node_names: Vec<String> = Vec::new();
    for n in nodes {
        for k in n.as_object().ok_or("a node is not an object")?.keys() {
            if k != "id" && !node_names.contains(k) {
                node_names.push(k.clone());
            }
        }
    }
    let mut edge_names: Vec<String> = Vec::new();
    for l in links {
        for k in l.as_object().ok_or("a link is not an object")?.keys() {
            if !["source", "target", "weight", "key"].contains(&k.as_str()) && !edge_names.contains(k) {
                edge_names.push(k.clone());
            }
        }
    }
    let mut g = Graph::with_names(nodes.len(), node_names.clone(), edge_names.clone());
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let o = n.as_object().ok_or("a node is not an object")?;
        let id = o.get("id").ok_or_else(|| format!("node {i} has no 'id'"))?;
        if index.insert(id_key(id)?, i).is_some() {
            return Err(format!("duplicate node id {id}"));
        }
        let vals = features(o, &node_names, &format!("node {id}"), "node", kinds)?;
        g.set_node_features(i, &vals).map_err(|e| e.to_string())?;
    }
    for (e, l) in links.iter().enumerate() {
        let o = l.as_object().ok_or_else(|| format!("link {e} is not an object"))?;
        let end = |k: &str| -> std::result::Result<usize, String> {
            let id = o.get(k).ok_or_else(|| format!("link {e} has no '{k}'"))?;
            index.get(&id_key(id)?).copied().ok_or_else(|| format!("link {e}: {k} {id} is not a node id"))
        };
        let (s, t) = (end("source")?, end("target")?);
        let w = match o.get("weight") {
            Some(v) => v.as_f64().ok_or_else(|| format!("link {e}: weight {v} is not a number"))?,
            None => 1.0,
        };
        let vals = features(o, &edge_names, &format!("link {e}"), "edge", kinds)?;
        g.add_edge(s, t, w, &vals).map_err(|e| e.to_string())?;
    }
    g.validate().map_err(|e| e.to_string())?;
    Ok(g)
}

/// Whether `text` holds node-link objects spread over several lines rather than one a line: its
/// first non-blank line opens an object that ends past the line (a JSON Lines record that is
/// merely malformed fails otherwise, and keeps its line's message).
fn pretty_printed(text: &str) -> bool {
    let Some(first) = text.lines().find(|l| !l.trim().is_empty()) else { return false };
    first.trim_start().starts_with('{') && serde_json::from_str::<Value>(first).is_err_and(|e| e.is_eof())
}

/// Read a JSON Lines file, a JSON array file, or pretty-printed node-link objects.
pub fn read(path: &Path, skip_invalid: bool) -> Result<Loaded> {
    let text = read_text(path)?;
    let mut out = Loaded::default();
    let mut kinds = FeatureKinds::default();
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        let v: Value = serde_json::from_str(&text).map_err(|e| parse_err(path, e.line(), e.to_string()))?;
        let items = v.as_array().ok_or_else(|| parse_err(path, 1, "the file starts with '[' but is not a JSON array"))?;
        for (k, item) in items.iter().enumerate() {
            match graph_from_value(item, &mut kinds) {
                Ok(g) => out.keep(g, 0),
                Err(e) => bad_record(parse_err(path, 0, format!("graph {k} of the array: {e}")), skip_invalid, &mut out)?,
            }
        }
    } else if pretty_printed(&text) {
        // one or more node-link objects spread over lines (json.dump(..., indent=1)): read as a
        // stream of JSON values, each graph's line the one its object starts on
        let mut stream = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
        let mut start = text.len() - trimmed.len();
        while let Some(r) = stream.next() {
            let v = r.map_err(|e| parse_err(path, e.line(), format!("{e} (read as pretty-printed JSON: the first line is not a whole object)")))?;
            let ln = text[..start].matches('\n').count() + 1;
            match graph_from_value(&v, &mut kinds) {
                Ok(g) => out.keep(g, ln),
                Err(e) => bad_record(parse_err(path, ln, e), skip_invalid, &mut out)?,
            }
            let end = stream.byte_offset();
            start = end + (text[end..].len() - text[end..].trim_start().len());
        }
    } else {
        for (ln, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let r = serde_json::from_str::<Value>(line).map_err(|e| e.to_string()).and_then(|v| graph_from_value(&v, &mut kinds));
            match r {
                Ok(g) => out.keep(g, ln + 1),
                Err(e) => bad_record(parse_err(path, ln + 1, e), skip_invalid, &mut out)?,
            }
        }
    }
    out.kinds = kinds;
    Ok(out)
}

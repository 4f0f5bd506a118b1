//! TU benchmark dataset folders (`DS_A.txt`, `DS_graph_indicator.txt`, optional
//! `DS_node_labels.txt`, `DS_edge_labels.txt`): node feature `label` where the node label file is
//! there, edge feature `label` where the edge label file is (without it the graphs have no such
//! feature, so a kernel comparing labels the dataset lacks is refused, not fed zeros). Edges are
//! listed in both directions; each undirected edge is kept once, and its listings must carry the
//! same edge label (else an error names both lines). A folder holding files of two datasets is an
//! error naming both. Blank lines are skipped; messages name a record's own line.
use super::record::{Loaded, parse_err, read_text};
use crate::error::Result;
use crate::graph::Graph;
use std::path::{Path, PathBuf};

/// The endings of a TU dataset's files (`DS_A.txt`, ...): the part before one is the dataset's name.
const SUFFIXES: [&str; 8] = [
    "_A.txt",
    "_graph_indicator.txt",
    "_graph_labels.txt",
    "_node_labels.txt",
    "_edge_labels.txt",
    "_node_attributes.txt",
    "_edge_attributes.txt",
    "_graph_attributes.txt",
];

/// The name (file prefix) of the one TU dataset in `dir`. Files of two datasets in one folder are
/// an error naming both: which file of which dataset would be read depended on directory order
/// (graphs of one, labels of the other).
fn dataset_prefix(dir: &Path) -> Result<String> {
    let entries = std::fs::read_dir(dir).map_err(|cause| crate::error::OctileError::Io { path: dir.into(), cause })?;
    let mut prefixes: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    for name in entries.filter_map(|e| e.ok()).filter_map(|e| e.file_name().into_string().ok()) {
        if let Some(prefix) = SUFFIXES.iter().find_map(|s| name.strip_suffix(s)) {
            prefixes.entry(prefix.to_string()).or_default().push(name.clone());
        }
    }
    let mut names = prefixes.keys();
    match (names.next(), names.next()) {
        (None, _) => Err(parse_err(dir, 0, "no *_A.txt in this folder (not a TU dataset)")),
        (Some(one), None) => Ok(one.clone()),
        (Some(_), Some(_)) => {
            let list: Vec<String> = prefixes.iter().map(|(p, files)| format!("'{p}' ({})", sorted(files).join(", "))).collect();
            Err(parse_err(
                dir,
                0,
                format!("this folder holds files of {} TU datasets: {}; put each dataset in a folder of its own", prefixes.len(), list.join(" and ")),
            ))
        }
    }
}

fn sorted(files: &[String]) -> Vec<String> {
    let mut v = files.to_vec();
    v.sort();
    v
}

/// `dir/PREFIX_SUFFIX` when it exists.
fn find(dir: &Path, prefix: &str, suffix: &str) -> Option<PathBuf> {
    Some(dir.join(format!("{prefix}{suffix}"))).filter(|p| p.is_file())
}

/// The comma-separated integers of each non-blank line of `path`, with the line's number (from 1).
fn ints(path: &Path) -> Result<Vec<(usize, Vec<i64>)>> {
    let text = read_text(path)?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(ln, l)| {
            let row = l.split(',').map(|t| t.trim().parse::<i64>().map_err(|_| parse_err(path, ln + 1, format!("expected integers, got '{}'", l.trim()))));
            Ok((ln + 1, row.collect::<Result<Vec<i64>>>()?))
        })
        .collect()
}

/// The first integer of each record of a one-column file, and the records' line numbers.
fn column(path: &Path) -> Result<(Vec<i64>, Vec<usize>)> {
    Ok(ints(path)?.into_iter().map(|(ln, r)| (r[0], ln)).unzip())
}

/// [`column`] of a file that may be absent (a label file): `None` and no lines without it.
fn optional_column(path: Option<&PathBuf>) -> Result<(Option<Vec<i64>>, Vec<usize>)> {
    Ok(match path.map(|p| column(p)).transpose()? {
        Some((v, lines)) => (Some(v), lines),
        None => (None, Vec::new()),
    })
}

/// Read a TU dataset folder.
pub fn read(dir: &Path) -> Result<Loaded> {
    let ds = dataset_prefix(dir)?;
    let a_path = find(dir, &ds, "_A.txt").ok_or_else(|| parse_err(dir, 0, format!("no {ds}_A.txt in this folder (not a TU dataset)")))?;
    let gi_path = find(dir, &ds, "_graph_indicator.txt").ok_or_else(|| parse_err(dir, 0, format!("no {ds}_graph_indicator.txt")))?;
    let (indicator, gi_lines) = column(&gi_path)?;
    let nl_path = find(dir, &ds, "_node_labels.txt");
    let (node_labels, nl_lines) = optional_column(nl_path.as_ref())?;
    let el_path = find(dir, &ds, "_edge_labels.txt");
    let (edge_labels, el_lines) = optional_column(el_path.as_ref())?;
    let n_graphs = indicator.iter().copied().max().unwrap_or(0) as usize;
    if let Some((k, _)) = indicator.iter().enumerate().find(|(_, g)| **g < 1) {
        return Err(parse_err(&gi_path, gi_lines[k], "graph ids are 1-based"));
    }
    // every graph has at least one node, so no id can exceed the node count: a larger one (a typo, a
    // wrong file) is refused here, before anything is allocated for it
    if let Some((k, &g)) = indicator.iter().enumerate().find(|(_, g)| **g as usize > indicator.len()) {
        return Err(parse_err(
            &gi_path,
            gi_lines[k],
            format!("graph id {g} exceeds the {} nodes listed: ids run 1..=graphs and every graph has a node", indicator.len()),
        ));
    }
    if let Some(nl) = &node_labels
        && nl.len() != indicator.len()
    {
        return Err(parse_err(dir, 0, format!("{} node labels for {} nodes", nl.len(), indicator.len())));
    }
    // node k (0-based, global) -> (graph, local index)
    let mut local = vec![0usize; indicator.len()];
    let mut sizes = vec![0usize; n_graphs];
    for (k, &g) in indicator.iter().enumerate() {
        local[k] = sizes[g as usize - 1];
        sizes[g as usize - 1] += 1;
    }
    // an id that no node carries (1, 1, 3: no graph 2) would be a graph without nodes, which no
    // kernel accepts, and would shift every later graph against the dataset's graph labels
    if let Some(g) = sizes.iter().position(|&n| n == 0) {
        return Err(parse_err(&gi_path, 0, format!("no node belongs to graph {}: graph ids must run 1..={n_graphs} with every id listed", g + 1)));
    }
    let names = |labels: bool| if labels { &["label"][..] } else { &[][..] };
    let mut graphs: Vec<Graph> = sizes.iter().map(|&n| Graph::new(n, names(node_labels.is_some()), names(edge_labels.is_some()))).collect();
    if let (Some(nl), Some(p)) = (&node_labels, &nl_path) {
        for (k, &g) in indicator.iter().enumerate() {
            graphs[g as usize - 1].set_node_features(local[k], &[nl[k] as f64]).map_err(|e| parse_err(p, nl_lines[k], e.to_string()))?;
        }
    }
    let (edges, a_lines): (Vec<Vec<i64>>, Vec<usize>) = ints(&a_path)?.into_iter().map(|(ln, r)| (r, ln)).unzip();
    // the label count is checked after each edge's own checks (a one-column A file is reported at
    // its line, not as a count mismatch) and before its label is read
    let count_mismatch = |el: &Vec<i64>| parse_err(dir, 0, format!("{} edge labels for {} edges", el.len(), edges.len()));
    // each undirected edge once: its first listing's line
    let mut seen: std::collections::HashMap<(i64, i64), usize> = std::collections::HashMap::new();
    for (ln, e) in edges.iter().enumerate() {
        if e.len() != 2 {
            return Err(parse_err(&a_path, a_lines[ln], "expected 'i, j'"));
        }
        let (i, j) = (e[0], e[1]);
        let n = indicator.len() as i64;
        if i < 1 || j < 1 || i > n || j > n {
            return Err(parse_err(&a_path, a_lines[ln], format!("node id out of range 1..={n}: ({i}, {j})")));
        }
        let (gi, gj) = (indicator[i as usize - 1], indicator[j as usize - 1]);
        if gi != gj {
            return Err(parse_err(&a_path, a_lines[ln], format!("edge ({i}, {j}) joins graphs {gi} and {gj}")));
        }
        if let Some(el) = &edge_labels
            && ln >= el.len()
        {
            return Err(count_mismatch(el));
        }
        if let Some(&first) = seen.get(&(i.min(j), i.max(j))) {
            if let (Some(el), Some(p)) = (&edge_labels, &el_path)
                && el[first] != el[ln]
            {
                return Err(parse_err(
                    p,
                    el_lines[ln],
                    format!(
                        "edge ({i}, {j}) has label {}, but line {} gives it label {}: both listings of an edge must carry the same label",
                        el[ln], el_lines[first], el[first]
                    ),
                ));
            }
            continue;
        }
        seen.insert((i.min(j), i.max(j)), ln);
        let lab: Vec<f64> = edge_labels.iter().map(|v| v[ln] as f64).collect();
        graphs[gi as usize - 1]
            .add_edge(local[i as usize - 1], local[j as usize - 1], 1.0, &lab)
            .map_err(|e| parse_err(&a_path, a_lines[ln], e.to_string()))?;
    }
    if let Some(el) = &edge_labels
        && el.len() != edges.len()
    {
        return Err(count_mismatch(el));
    }
    Ok(Loaded { graphs, ..Loaded::default() })
}

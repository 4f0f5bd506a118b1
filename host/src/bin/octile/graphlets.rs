//! `octile graphlets`: the 16 orbit frequencies of every node of one graph (the fast graphlet
//! transform), written as an n × k int64 `.npy` or a `.csv` with a JSON summary.
use crate::common::{BackendArg, backend_of, file_source, provenance, same_file};
use anyhow::{Context, Result, bail};
use clap::Args;
use octile::graphlets::orbits::parse_orbit_list;
use octile::graphlets::{Adjacency, Frequencies, Keep, N_ORBITS, ORBIT_NAMES, TransformParams, transform};
use octile::io::edgelist::{self, EdgeListOptions};
use octile::io::{Format, ReadOptions, mtx, npy};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args)]
#[command(after_help = crate::common::EXIT_CODES)]
pub struct GraphletsArgs {
    /// The graph: a Matrix Market file (.mtx), an edge list (.edges, .el, .edgelist, .tsv, .txt),
    /// any input of `octile gram` (a set of graphs becomes their disjoint union, rows in graph
    /// order; `gram`'s generated sets nws:COUNT[:SEED], ba:..., molecules:... too) or a generator gen:delaunay:N[:SEED], gen:road:N[:SEED], gen:ba:N:M[:SEED],
    /// gen:rmat:SCALE:EDGE_FACTOR[:SEED].
    input: String,
    /// Output: n × k int64 .npy, or .csv with a header naming each orbit; a JSON summary is
    /// written beside it (or to --summary).
    #[arg(long)]
    out: PathBuf,
    /// Raw frequencies d̂ instead of the net frequencies d.
    #[arg(long)]
    raw: bool,
    /// Orbits (columns) to write, in this order: 0-15, e.g. 0-4 or 0,3,5-7. Default: all 16.
    #[arg(long)]
    orbits: Option<String>,
    /// auto: the GPU if there is one, else all CPU cores.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Input format when the extension does not tell: mtx, edges, json, smi, csv, tu, sdf, pdb.
    #[arg(long)]
    format: Option<String>,
    /// Edge lists: the number of nodes (default: the largest id + 1).
    #[arg(long)]
    nodes: Option<usize>,
    /// Edge lists: ids count from 1.
    #[arg(long)]
    one_based: bool,
    /// Run the transform this many times (timings: the median and every run); the last result is written.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// The JSON summary's path (default: the output's, with .json).
    #[arg(long)]
    summary: Option<PathBuf>,
    /// Contact cutoff of the PDB reader, in Å.
    #[arg(long, default_value_t = octile::io::pdb::DEFAULT_CUTOFF)]
    pdb_cutoff: f64,
    /// No progress lines.
    #[arg(long)]
    quiet: bool,
    /// Most memory reading the graph and the transform may need, e.g. 8G or 512M (default: the
    /// memory available, within RLIMIT_AS and the cgroup's limit); a larger need is refused
    /// before it is allocated.
    #[arg(long, value_parser = crate::common::max_memory)]
    max_memory: Option<u64>,
}

/// Neither the output nor the summary may replace the input, nor the summary the output (the same
/// file by any path): refused before any work.
fn refuse_overwriting(a: &GraphletsArgs, summary: &Path) -> Result<()> {
    crate::common::refuse_summary_over_output(summary, &a.out)?;
    let input = Path::new(&a.input);
    for (flag, path) in [("--out", a.out.as_path()), ("--summary", summary)] {
        if same_file(path, input) {
            bail!("{flag} {}: this run would write {}, which is the input {}; name it differently", path.display(), path.display(), a.input);
        }
    }
    Ok(())
}

/// A graph as read: nodes, edges and what the summary says about its source.
pub struct GraphInput {
    /// Nodes.
    pub n_nodes: usize,
    /// Edges (self-loops and repeats as in the source).
    pub edges: Vec<(u32, u32)>,
    /// "mtx", "edges", "gen", or the `octile gram` format.
    pub format: String,
    /// Source-specific summary fields.
    pub details: serde_json::Map<String, Value>,
}

pub fn graphlets(a: GraphletsArgs) -> Result<()> {
    // every argument and the output path fail now, not after reading or computing
    npy::check_output(&a.out)?;
    let summary_path = a.summary.clone().unwrap_or_else(|| a.out.with_extension("json"));
    refuse_overwriting(&a, &summary_path)?;
    npy::check_writable(&summary_path)?;
    octile::memory::set_process_limit(a.max_memory);
    let orbits = match &a.orbits {
        Some(s) => parse_orbits(s).with_context(|| format!("--orbits {s}"))?,
        None => (0..N_ORBITS).collect(),
    };
    let say = |s: String| {
        if !a.quiet {
            eprintln!("{s}");
        }
    };
    say(format!("reading {} ...", a.input));
    let t = Instant::now();
    let g = read_input(&a)?;
    if g.n_nodes == 0 {
        bail!("{}: the graph has no nodes: there is nothing to transform", a.input);
    }
    let read_seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let adj = Adjacency::from_edges(g.n_nodes, &g.edges).with_context(|| a.input.clone())?;
    drop(g.edges);
    let adjacency_seconds = t.elapsed().as_secs_f64();
    say(format!(
        "read {} nodes, {} edges ({} self-loops, {} repeats dropped) in {read_seconds:.3} s, adjacency in {adjacency_seconds:.3} s",
        adj.n_nodes(),
        adj.n_edges(),
        adj.self_loops_dropped,
        adj.repeats_dropped
    ));
    let params = TransformParams { backend: backend_of(a.backend), keep: if a.raw { Keep::Raw } else { Keep::Net } };
    let mut runs = Vec::with_capacity(a.repeat as usize);
    let mut last: Option<Frequencies> = None;
    for r in 0..a.repeat {
        drop(last.take()); // one result in memory at a time
        let (f, info) = transform(&adj, &params)?;
        let phases: Vec<String> = info.phases.iter().map(|(name, s)| format!("{name} {:.1} ms", s * 1e3)).collect();
        say(format!(
            "transform{} on {} ({}): {:.3} s (kernels {:.3} s){}",
            if a.repeat > 1 { format!(" {}/{}", r + 1, a.repeat) } else { String::new() },
            info.backend,
            info.device,
            info.seconds,
            info.kernel_seconds,
            if phases.is_empty() { String::new() } else { format!(": {}", phases.join(", ")) }
        ));
        runs.push(info);
        last = Some(f);
    }
    let mut f = last.context("no transform ran")?;
    let info = runs.last().context("no transform ran")?;
    let n = adj.n_nodes();
    let (k, values) = (orbits.len(), select(std::mem::take(if a.raw { &mut f.raw } else { &mut f.net }), &orbits));
    drop(f);
    let t = Instant::now();
    let names: Vec<&str> = orbits.iter().map(|&o| ORBIT_NAMES[o]).collect();
    // encoded here, written together with the summary below (both new or both as before)
    let matrix = npy::i64_matrix_bytes(&a.out, &values, n, k, "node", &names);
    let write_seconds = t.elapsed().as_secs_f64();
    let sums: Vec<Value> = column_sums(&values, k).into_iter().map(|s| i64::try_from(s).map_or_else(|_| json!(s.to_string()), |v| json!(v))).collect();
    let seconds: Vec<f64> = runs.iter().map(|r| r.seconds).collect();
    let kernel: Vec<f64> = runs.iter().map(|r| r.kernel_seconds).collect();
    // each GPU phase's median over the runs, in the order of the phases
    let phases: serde_json::Map<String, Value> = info
        .phases
        .iter()
        .map(|&(name, _)| {
            (name.to_string(), json!(median(&runs.iter().filter_map(|r| r.phases.iter().find(|p| p.0 == name).map(|p| p.1)).collect::<Vec<f64>>())))
        })
        .collect();
    let mut summary = json!({
        "input": a.input,
        "format": g.format,
        "output": a.out.display().to_string(),
        "shape": [n, k],
        "n_nodes": n,
        "n_edges": adj.n_edges(),
        "self_loops_dropped": adj.self_loops_dropped,
        "repeats_dropped": adj.repeats_dropped,
        "max_degree": adj.max_degree(),
        "kind": if a.raw { "raw" } else { "net" },
        "orbits": orbits,
        "orbit_names": names,
        "backend": info.backend,
        "device": info.device,
        "repeat": a.repeat,
        "seconds": median(&seconds),
        "kernel_seconds": median(&kernel),
        "seconds_all": seconds,
        "kernel_seconds_all": kernel,
        "phase_seconds": phases,
        "read_seconds": read_seconds,
        "adjacency_seconds": adjacency_seconds,
        "write_seconds": write_seconds,
        "column_sums": sums,
    });
    if let Some(s) = summary.as_object_mut() {
        s.extend(g.details);
        if g.format != "gen" && g.format != "generated" {
            s.insert("input_file".into(), file_source(&a.input)?);
        }
        s.insert("provenance".into(), provenance());
    }
    npy::write_together(&[(&a.out, &matrix), (&summary_path, serde_json::to_string_pretty(&summary)?.as_bytes())])?;
    say(format!("wrote {} ({n} × {k}) and {}", a.out.display(), summary_path.display()));
    Ok(())
}

/// The graph named by `a.input`, by `--format`, else its prefix (`gen:`) or extension.
fn read_input(a: &GraphletsArgs) -> Result<GraphInput> {
    let path = Path::new(&a.input);
    let format = a.format.as_deref().map(str::to_ascii_lowercase);
    if a.nodes.is_some() || a.one_based {
        let edges = matches!(format.as_deref(), Some("edges" | "edgelist" | "el")) || (format.is_none() && edgelist::is_edge_list_path(path));
        if !edges {
            bail!("--nodes and --one-based apply to edge lists only");
        }
    }
    if format.is_none() && a.input.starts_with("gen:") {
        let g = crate::generate::generated(&a.input)?;
        let mut details = serde_json::Map::new();
        details.insert("generator".into(), g.params);
        return Ok(GraphInput { n_nodes: g.n_nodes, edges: g.edges, format: "gen".into(), details });
    }
    if format.is_none() && crate::common::is_generated_set(&a.input) {
        // `gram`'s generated sets (nws:COUNT[:SEED], ...): their disjoint union, as a file's set
        let set = crate::common::load(std::slice::from_ref(&a.input), &ReadOptions::default(), &mut Vec::new())?;
        return union_of(&set.graphs, &a.input, "generated".into());
    }
    let is_mtx = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("mtx"));
    match format.as_deref() {
        Some("mtx") => read_mtx(path),
        None if is_mtx => read_mtx(path),
        Some("edges" | "edgelist" | "el") => read_edges(path, a),
        None if edgelist::is_edge_list_path(path) => read_edges(path, a),
        Some(f) => {
            let f = Format::parse(f).with_context(|| format!("unknown --format {f}; use mtx, edges, json, smi, csv, tu, sdf or pdb"))?;
            read_set(path, Some(f), a.pdb_cutoff)
        }
        None => read_set(path, None, a.pdb_cutoff),
    }
}

fn read_mtx(path: &Path) -> Result<GraphInput> {
    let m = mtx::read(path)?;
    let h = m.header;
    let mut details = serde_json::Map::new();
    details.insert("mtx".into(), json!({"field": h.field.name(), "symmetry": h.symmetry.name(), "rows": h.rows, "cols": h.cols, "entries": h.entries, "mirrored_pairs": m.mirrored_pairs, "one_sided_pairs": m.one_sided_pairs}));
    Ok(GraphInput { n_nodes: m.n_nodes, edges: m.edges, format: "mtx".into(), details })
}

fn read_edges(path: &Path, a: &GraphletsArgs) -> Result<GraphInput> {
    let e = edgelist::read(path, &EdgeListOptions { n_nodes: a.nodes, one_based: a.one_based })?;
    let mut details = serde_json::Map::new();
    details.insert("edge_lines".into(), json!(e.edges.len()));
    details.insert("one_based".into(), json!(a.one_based));
    Ok(GraphInput { n_nodes: e.n_nodes, edges: e.edges, format: "edges".into(), details })
}

/// Every graph of an `octile gram` input as one graph: their disjoint union, graph by graph.
fn read_set(path: &Path, format: Option<Format>, pdb_cutoff: f64) -> Result<GraphInput> {
    let l = octile::io::read_with(path, &ReadOptions { format, skip_invalid: false, pdb_cutoff })?;
    let fmt = format.or_else(|| Format::infer(path)).map_or("?".to_string(), |f| format!("{f:?}").to_lowercase());
    union_of(&l.graphs, &path.display().to_string(), fmt)
}

/// `graphs` (read from `input`, in format `fmt`) as one graph: their disjoint union.
fn union_of(graphs: &[octile::Graph], input: &str, fmt: String) -> Result<GraphInput> {
    let refs: Vec<&octile::Graph> = graphs.iter().collect();
    let octile::graphlets::adjacency::UnionEdges { n_nodes: n, edges, offsets } = Adjacency::union_edges(&refs).with_context(|| input.to_string())?;
    let mut details = serde_json::Map::new();
    details.insert("graphs".into(), json!(graphs.len()));
    details.insert("graph_node_offsets".into(), json!(offsets));
    Ok(GraphInput { n_nodes: n, edges, format: fmt, details })
}

/// The orbit indices of `--orbits` (`octile::graphlets::orbits::parse_orbit_list`).
pub fn parse_orbits(s: &str) -> Result<Vec<usize>> {
    parse_orbit_list(s).map_err(|e| anyhow::anyhow!(e))
}

/// The columns `orbits` of an n × 16 row-major array, as an n × k row-major array.
fn select(all: Vec<i64>, orbits: &[usize]) -> Vec<i64> {
    if orbits.len() == N_ORBITS && orbits.iter().enumerate().all(|(i, &o)| i == o) {
        return all;
    }
    all.chunks_exact(N_ORBITS).flat_map(|row| orbits.iter().map(move |&o| row[o])).collect()
}

/// Per-column totals of an n × k row-major array (i128: no overflow).
fn column_sums(values: &[i64], k: usize) -> Vec<i128> {
    let mut sums = vec![0i128; k];
    for row in values.chunks_exact(k.max(1)) {
        for (s, &v) in sums.iter_mut().zip(row) {
            *s += v as i128;
        }
    }
    sums
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orbit_lists_parse_and_bad_ones_say_why() {
        assert_eq!(parse_orbits("0-4").unwrap(), [0, 1, 2, 3, 4]);
        assert_eq!(parse_orbits("0,3,5-7").unwrap(), [0, 3, 5, 6, 7]);
        assert_eq!(parse_orbits("15,0").unwrap(), [15, 0]);
        for (bad, says) in [
            ("16", "does not exist"),
            ("4-2", "backwards"),
            ("1,1", "twice"),
            ("0-3,2", "twice"),
            ("a", "not an orbit"),
            ("", "not an orbit"),
            ("1-", "not an orbit"),
        ] {
            let e = format!("{:#}", parse_orbits(bad).unwrap_err());
            assert!(e.contains(says), "--orbits {bad}: expected '{says}', got: {e}");
        }
    }

    #[test]
    fn medians_and_selections() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0]), 2.5);
        let all: Vec<i64> = (0..32).collect();
        assert_eq!(select(all, &[15, 0]), [15, 0, 31, 16]);
        assert_eq!(column_sums(&[1, 2, 3, 4], 2), [4, 6]);
    }
}

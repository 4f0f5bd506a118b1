//! Large generated graphs (`octile::generators::large`) by spec: `octile generate SPEC --out G.mtx`
//! writes one, and `octile graphlets gen:...` reads one without a file.
use anyhow::{Context, Result, bail};
use clap::Args;
use octile::generators::large;
use octile::io::{edgelist, mtx, npy};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// The forms of a generator spec.
pub const SPECS: &str = "gen:delaunay:N[:SEED], gen:road:N[:SEED], gen:ba:N:M[:SEED] or gen:rmat:SCALE:EDGE_FACTOR[:SEED]";

/// The seed of a spec without one.
pub const DEFAULT_SEED: u64 = 1;

#[derive(Args)]
pub struct GenerateArgs {
    /// gen:delaunay:N[:SEED] (Delaunay triangulation of N random points), gen:road:N[:SEED]
    /// (road-like planar graph), gen:ba:N:M[:SEED] (Barabási–Albert), gen:rmat:SCALE:EDGE_FACTOR[:SEED]
    /// (Graph500 R-MAT); the `gen:` prefix may be left out. Seed default: 1.
    spec: String,
    /// Output: .mtx (symmetric pattern, keeps n) or an edge list (.edges, .el, .edgelist, .tsv, .txt).
    #[arg(long)]
    out: PathBuf,
    /// Also write a JSON summary here.
    #[arg(long)]
    summary: Option<PathBuf>,
}

/// A generated graph.
pub struct Generated {
    /// Nodes.
    pub n_nodes: usize,
    /// Edges, each once.
    pub edges: Vec<(u32, u32)>,
    /// The parsed spec: kind and parameters.
    pub params: serde_json::Value,
}

/// The graph of `spec` (`gen:KIND:...`; the prefix may be left out).
pub fn generated(spec: &str) -> Result<Generated> {
    let body = spec.strip_prefix("gen:").unwrap_or(spec);
    let parts: Vec<&str> = body.split(':').collect();
    let num = |i: usize, what: &str| -> Result<u64> {
        parts
            .get(i)
            .with_context(|| format!("{spec}: {what} is missing; use {SPECS}"))?
            .parse::<u64>()
            .with_context(|| format!("{spec}: {what} '{}' must be a non-negative integer", parts[i]))
    };
    let seed = |i: usize| -> Result<u64> {
        if parts.len() > i + 1 {
            bail!("{spec}: too many fields; use {SPECS}");
        }
        if parts.len() > i { num(i, "SEED") } else { Ok(DEFAULT_SEED) }
    };
    let size = |v: u64| usize::try_from(v).with_context(|| format!("{spec}: {v} is too large"));
    let (n, edges, params) = match parts[0] {
        "delaunay" | "road" => {
            let (n, s) = (size(num(1, "N")?)?, seed(2)?);
            let (n, e) = if parts[0] == "delaunay" { large::delaunay(n, s)? } else { large::road(n, s)? };
            (n, e, json!({"kind": parts[0], "n": n, "seed": s}))
        }
        "ba" => {
            let (nn, m, s) = (size(num(1, "N")?)?, size(num(2, "M")?)?, seed(3)?);
            let (n, e) = large::ba_edges(nn, m, s)?;
            (n, e, json!({"kind": "ba", "n": nn, "m": m, "seed": s}))
        }
        "rmat" => {
            let scale = u32::try_from(num(1, "SCALE")?).with_context(|| format!("{spec}: SCALE is too large"))?;
            let (ef, s) = (size(num(2, "EDGE_FACTOR")?)?, seed(3)?);
            let (n, e) = large::rmat(scale, ef, s)?;
            (n, e, json!({"kind": "rmat", "scale": scale, "edge_factor": ef, "seed": s}))
        }
        k => bail!("{spec}: unknown generator '{k}'; use {SPECS}"),
    };
    Ok(Generated { n_nodes: n, edges, params })
}

/// `octile generate`.
pub fn generate(a: GenerateArgs) -> Result<()> {
    let ext = a.out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    let is_mtx = ext == "mtx";
    if !is_mtx && !edgelist::is_edge_list_path(&a.out) {
        bail!("--out {}: write .mtx or an edge list (.{})", a.out.display(), edgelist::EXTENSIONS.join(", ."));
    }
    let dir = a.out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    if !dir.is_dir() {
        bail!("--out {}: folder {} does not exist", a.out.display(), dir.display());
    }
    if let Some(s) = &a.summary {
        crate::common::refuse_summary_over_output(s, &a.out)?;
    }
    let t = Instant::now();
    let Generated { n_nodes: n, edges, params } = generated(&a.spec)?;
    let gen_seconds = t.elapsed().as_secs_f64();
    eprintln!("generated {} nodes, {} edges in {gen_seconds:.3} s", n, edges.len());
    // the writers' buffers: each edge as a sorted key (8 bytes) and its text line (at most
    // "4294967295 4294967295\n", 22 bytes), before any is written
    octile::memory::check_with(edges.len() as u128 * 30, None, || format!("writing {} edges to {}", edges.len(), a.out.display()), "ask for a smaller graph")?;
    let t = Instant::now();
    let written = if is_mtx { mtx::write_pattern(&a.out, n, &edges)? } else { edgelist::write(&a.out, n, &edges)? };
    let write_seconds = t.elapsed().as_secs_f64();
    eprintln!("wrote {} ({written} edges) in {write_seconds:.3} s", a.out.display());
    if let Some(s) = &a.summary {
        let summary = json!({"spec": a.spec, "generator": params, "output": a.out.display().to_string(), "n_nodes": n, "n_edges": written, "generate_seconds": gen_seconds, "write_seconds": write_seconds});
        npy::write_atomic(s, serde_json::to_string_pretty(&summary)?.as_bytes())?;
    }
    Ok(())
}

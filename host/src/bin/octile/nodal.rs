//! `octile nodal`: the node-wise similarity matrix R of two graphs of the inputs (K = ΣR).
use crate::common::{BackendArg, PrecisionArg, ReorderArg, kernel_config, load, parse_format, provenance};
use anyhow::{Context, Result};
use clap::Args;
use octile::io::{ReadOptions, npy};
use octile::{GraphKernel, MarginalizedGraphKernel};
use serde_json::json;
use std::path::PathBuf;

#[derive(Args)]
pub struct NodalArgs {
    /// Inputs, as for `gram`; the graphs are numbered in input order from 0.
    #[arg(required = true)]
    inputs: Vec<String>,
    /// The two graphs, "I,J".
    #[arg(long, default_value = "0,1")]
    pair: String,
    /// Kernel configuration (TOML). Default: the paper's synthetic-set kernel.
    #[arg(long)]
    kernel: Option<PathBuf>,
    /// Output matrix (.npy float64 or .csv); a JSON summary is written beside it.
    #[arg(long)]
    out: PathBuf,
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Default: f32 on the GPU, f64 on the CPU.
    #[arg(long, value_enum)]
    precision: Option<PrecisionArg>,
    #[arg(long)]
    format: Option<String>,
    /// Node order for packing (the output is in input order whatever it is).
    #[arg(long, value_enum)]
    reorder: Option<ReorderArg>,
    /// Contact cutoff of the PDB reader, in Å.
    #[arg(long, default_value_t = octile::io::pdb::DEFAULT_CUTOFF)]
    pdb_cutoff: f64,
}

pub fn nodal(a: NodalArgs) -> Result<()> {
    let NodalArgs { inputs, pair, kernel, out, backend, precision, format, reorder, pdb_cutoff } = a;
    npy::check_output(&out)?;
    let (i, j) = pair
        .split_once(',')
        .and_then(|(a, b)| Some((a.trim().parse::<usize>().ok()?, b.trim().parse::<usize>().ok()?)))
        .with_context(|| format!("--pair {pair}: expected two graph indices \"I,J\""))?;
    let format = parse_format(format.as_deref())?;
    let cfg = kernel_config(kernel.as_deref(), backend, precision, reorder)?;
    let mut kinds = Vec::new();
    let set = load(&inputs, &ReadOptions { format, skip_invalid: false, pdb_cutoff }, &mut kinds)?;
    // as octile gram: no continuous kernel on strings, no kernel comparing no feature unasked
    octile::kernels::KernelFile::Marginalized(cfg.clone()).check_features(kinds.iter().map(|(p, k)| (p.display().to_string(), k)))?;
    let graphs = &set.graphs;
    let k = MarginalizedGraphKernel::new(cfg.clone())?;
    let t = std::time::Instant::now();
    let r = k.nodal_pairs(graphs, &[(i, j)])?.remove(0);
    let secs = t.elapsed().as_secs_f64();
    let summary = json!({
        "output": out.display().to_string(),
        "pair": [i, j],
        "shape": [r.rows, r.cols],
        "kernel_value": r.sum(),
        "iterations": r.info.iterations,
        "residual": r.info.residual,
        "seconds": secs,
        "backend": k.backend_name(),
        "precision": format!("{:?}", cfg.precision).to_lowercase(),
        "device": k.device_name(),
        "device_info": k.device_report(),
        "reorder": format!("{:?}", cfg.reorder).to_lowercase(),
        "node_order": "input",
        "inputs": set.sources,
        "provenance": provenance(),
    });
    // the matrix and its summary together: both new or both as before
    let summary_path = out.with_extension("json");
    let matrix = npy::matrix_bytes(&out, &r.values, r.rows, r.cols);
    npy::write_together(&[(&out, &matrix), (&summary_path, serde_json::to_string_pretty(&summary)?.as_bytes())])?;
    eprintln!("wrote {} ({}×{}, K = ΣR = {:.10e}) and {}", out.display(), r.rows, r.cols, r.sum(), summary_path.display());
    Ok(())
}

//! `octile nodal`: the node-wise similarity matrix R of two graphs of the inputs (K = ΣR).
use crate::common::{self, BackendArg, PrecisionArg, ReorderArg, kernel_config, load, parse_format, provenance};
use anyhow::{Result, bail};
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
    #[arg(long, default_value = "0,1", value_parser = graph_pair)]
    pair: (usize, usize),
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

/// `--pair`'s parser: two graph indices "I,J" (a bad value is a command-line error, exit 2).
fn graph_pair(s: &str) -> std::result::Result<(usize, usize), String> {
    s.split_once(',')
        .and_then(|(a, b)| Some((a.trim().parse::<usize>().ok()?, b.trim().parse::<usize>().ok()?)))
        .ok_or_else(|| format!("'{s}' is not two graph indices \"I,J\" (from 0, in input order)"))
}

pub fn nodal(a: NodalArgs) -> Result<()> {
    let NodalArgs { inputs, pair: (i, j), kernel, out, backend, precision, format, reorder, pdb_cutoff } = a;
    npy::check_output(&out)?;
    // the matrix and its summary NAME.json: neither may replace an input
    let graphs_in: Vec<PathBuf> = inputs.iter().map(PathBuf::from).chain(kernel.clone()).collect();
    common::refuse_replacing_inputs(
        "--out",
        &out,
        &[out.clone(), out.with_extension("json")],
        graphs_in.iter().map(PathBuf::as_path),
        " (the summary goes beside it as NAME.json)",
    )?;
    let format = parse_format(format.as_deref())?;
    let cfg = kernel_config(kernel.as_deref(), backend, precision, reorder)?;
    let mut kinds = Vec::new();
    let set = load(&inputs, &ReadOptions { format, skip_invalid: false, pdb_cutoff }, &mut kinds)?;
    // as octile gram: no continuous kernel on strings, no kernel comparing no feature unasked
    octile::kernels::KernelFile::Marginalized(cfg.clone()).check_features(kinds.iter().map(|(p, k)| (p.display().to_string(), k)))?;
    set.check_features_present(&cfg, &inputs)?;
    let graphs = &set.graphs;
    if let Some(&g) = [i, j].iter().find(|&&g| g >= graphs.len()) {
        bail!("--pair {i},{j}: graph {g} is past the {} graph(s) of the inputs (numbered from 0, in input order)", graphs.len());
    }
    let k = MarginalizedGraphKernel::new(cfg.clone())?;
    let t = std::time::Instant::now();
    // written whether or not the pair converged (nothing computed is lost), then exit 3 if not
    let r = k.nodal_pairs_unchecked(graphs, &[(i, j)])?.remove(0);
    let secs = t.elapsed().as_secs_f64();
    let summary = json!({
        "output": out.display().to_string(),
        "pair": [i, j],
        "shape": [r.rows, r.cols],
        "kernel_value": r.sum(),
        "iterations": r.info.iterations,
        "residual": r.info.residual,
        "converged": r.info.converged,
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
    if !r.info.converged {
        let why = if r.info.residual <= cfg.solver.rtol_for(cfg.precision) {
            format!("K = {:e}: {}", r.sum(), octile::mgk::diagnose::out_of_range(&cfg, r.info.residual))
        } else {
            format!("it did not converge in {} iterations (residual {:.3e})", r.info.iterations, r.info.residual)
        };
        return Err(crate::gram::NotConverged(format!("pair ({i}, {j}) could not be solved: {why}; its values are written in {}", out.display())).into());
    }
    Ok(())
}

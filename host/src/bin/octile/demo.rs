//! `octile demo`: the normalized Gram matrix of the paper's Newman–Watts–Strogatz set, built in.
use crate::common::{BackendArg, PrecisionArg, apply, check_generated_count, progress, tuning_from_env};
use anyhow::Result;
use clap::Args;
use octile::generators::nws_set;
use octile::io::npy;
use octile::mgk::config::synthetic_kernel;
use octile::mgk::essential;
use octile::{GraphKernel, MarginalizedGraphKernel};
use std::path::PathBuf;

#[derive(Args)]
pub struct DemoArgs {
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Default: f32 on the GPU, f64 on the CPU.
    #[arg(long, value_enum)]
    precision: Option<PrecisionArg>,
    /// Number of graphs (at least 1).
    #[arg(long, default_value_t = 160)]
    graphs: usize,
    /// Also write the matrix here (.npy or .csv).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn demo(a: DemoArgs) -> Result<()> {
    let DemoArgs { backend, precision, graphs: n, out } = a;
    // what gram checks of nws:COUNT and of --out, before any work
    check_generated_count("--graphs", n)?;
    if let Some(path) = &out {
        npy::check_output(path)?;
    }
    let graphs = nws_set(n, 2020);
    let mut cfg = synthetic_kernel(0.05);
    apply(&mut cfg, backend, precision);
    tuning_from_env(&mut cfg.gpu)?;
    let (bar, ctl) = progress(n * (n + 1) / 2, false);
    let k = MarginalizedGraphKernel::new(cfg.clone())?.with_control(ctl);
    println!("octile demo: {n} Newman–Watts–Strogatz graphs (96 nodes, k=3, p=0.1), κv = KroneckerDelta(0.5), κe = SquareExponential(1.0), q = 0.05");
    println!("backend: {} / {:?} on {}", k.backend_name(), cfg.precision, k.device_name());
    let g = k.gram_normalized(&graphs)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let (lo, med, hi) = g.iteration_stats();
    let off: Vec<f64> = (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j))).map(|(i, j)| g.get(i, j)).collect();
    let mean = off.iter().sum::<f64>() / off.len().max(1) as f64;
    println!("pairs solved: {} in {:.3} s = {:.0} pairs/s", g.pairs_solved, g.seconds, g.pairs_solved as f64 / g.seconds);
    println!("CG iterations min/median/max: {lo}/{med}/{hi}; all converged");
    // the yardstick of the README's share columns: divide by the machine's multiply-add rate
    let essential = essential::multiply_adds(&graphs, &graphs, &g, true);
    println!("essential work: {:.3e} multiply-adds (nnz·nnz′ + 6·n·n′ per CG iteration) = {:.2} G multiply-adds/s", essential, essential / g.seconds / 1e9);
    println!(
        "normalized K: diagonal 1, off-diagonal mean {mean:.6}, min {:.6}, max {:.6}",
        off.iter().cloned().fold(f64::INFINITY, f64::min),
        off.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
    );
    if let Some(path) = out {
        npy::write_matrix(&path, &g.values, g.rows, g.cols)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

//! `octile octiles`: non-empty octiles of each input under the natural, RCM, PBR and METIS orders.
use crate::common::load;
use anyhow::{Context, Result};
use clap::Args;
use octile::io::{Format, ReadOptions};
use octile::reorder::{Reordering, count_octiles};

#[derive(Args)]
pub struct OctilesArgs {
    /// Inputs, as for `gram` (each is one row of the table).
    #[arg(required = true)]
    inputs: Vec<String>,
    #[arg(long)]
    format: Option<String>,
    /// Contact cutoff of the PDB reader, in Å.
    #[arg(long, default_value_t = octile::io::pdb::DEFAULT_CUTOFF)]
    pdb_cutoff: f64,
}

pub fn octiles(a: OctilesArgs) -> Result<()> {
    let OctilesArgs { inputs, format, pdb_cutoff } = a;
    let format = format.as_deref().map(|f| Format::parse(f).with_context(|| format!("unknown --format {f}"))).transpose()?;
    println!("| input | graphs | nodes (mean) | nonzeros | octiles natural | RCM | PBR | METIS | nnz/octile natural → PBR | RCM s | PBR s | METIS s |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for inp in &inputs {
        let graphs = load(std::slice::from_ref(inp), &ReadOptions { format, skip_invalid: true, pdb_cutoff }, &mut Vec::new())?.graphs;
        let nodes: usize = graphs.iter().map(|g| g.n_nodes()).sum();
        let nnz: usize = graphs.iter().map(|g| g.edges().iter().map(|e| if e.i == e.j { 1 } else { 2 }).sum::<usize>()).sum();
        let mut counts = Vec::new();
        let mut secs = Vec::new();
        for r in [Reordering::Natural, Reordering::Rcm, Reordering::Pbr, Reordering::Metis] {
            let t = std::time::Instant::now();
            let c: usize = graphs.iter().map(|g| count_octiles(g, &r.order(g))).sum();
            secs.push(t.elapsed().as_secs_f64());
            counts.push(c);
        }
        println!(
            "| {inp} | {} | {:.1} | {nnz} | {} | {} | {} | {} | {:.2} → {:.2} | {:.3} | {:.3} | {:.3} |",
            graphs.len(),
            nodes as f64 / graphs.len() as f64,
            counts[0],
            counts[1],
            counts[2],
            counts[3],
            nnz as f64 / counts[0].max(1) as f64,
            nnz as f64 / counts[2].max(1) as f64,
            secs[1],
            secs[2],
            secs[3]
        );
    }
    Ok(())
}

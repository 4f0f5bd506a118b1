//! What an MGK run reports about how it computed its values, as typed values ([`MgkReport`] and
//! its parts): JSON summaries serialise them (`serde`: the summary's `report`), and their
//! `Display` is the line people read (the summary's `details`).
use crate::mgk::profile::MapOrigin;
use octile_types::EdgeShape;
use serde::Serialize;
use std::fmt;

/// Which κe entries of the resident solver ran: the specialized ones for one square-exponential
/// or one Kronecker-delta term, else the general interpreter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeEntry {
    /// Any κe (the `KernelSpec` interpreter).
    General,
    /// One square-exponential term.
    SquareExponential,
    /// One Kronecker-delta term.
    KroneckerDelta,
}

impl From<EdgeShape> for EdgeEntry {
    fn from(s: EdgeShape) -> Self {
        match s {
            EdgeShape::General => EdgeEntry::General,
            EdgeShape::SquareExponential => EdgeEntry::SquareExponential,
            EdgeShape::KroneckerDelta => EdgeEntry::KroneckerDelta,
        }
    }
}

impl fmt::Display for EdgeEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EdgeEntry::General => "general",
            EdgeEntry::SquareExponential => "square-exponential",
            EdgeEntry::KroneckerDelta => "Kronecker-delta",
        })
    }
}

/// How a resident team solves its pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TeamForm {
    /// Product rows computed on the fly, one per thread.
    OnTheFly,
    /// On the fly, the second graph's long rows walked in pieces.
    SplitRows,
    /// The product form (Kronecker-delta κe, unit weights).
    Product,
    /// On the fly, a team of blocks per pair with the vectors in global memory (pairs whose
    /// slice exceeds shared memory).
    Grid,
}

/// A kind of resident team that ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct TeamKind {
    /// Its form.
    pub form: TeamForm,
    /// Threads per team (32: one warp).
    pub threads: u32,
}

impl fmt::Display for TeamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.form == TeamForm::Grid {
            return write!(f, "team of {} blocks in global memory", self.threads / octile_types::mgk::names::SOLVER_BLOCK_THREADS);
        }
        if self.threads == 32 {
            f.write_str("warp")?;
        } else {
            write!(f, "{}-thread block", self.threads)?;
        }
        match self.form {
            TeamForm::OnTheFly => Ok(()),
            TeamForm::SplitRows => f.write_str(" with split rows"),
            TeamForm::Product => f.write_str(" in product form"),
            TeamForm::Grid => Ok(()),
        }
    }
}

/// What the resident solver did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResidentReport {
    /// The κe entries.
    pub edge_kernel: EdgeEntry,
    /// The kinds of team that ran, in (form, threads) order.
    pub teams: Vec<TeamKind>,
    /// Pairs it solved to rtol.
    pub pairs_solved: usize,
    /// Pairs it was given.
    pub pairs: usize,
    /// Launches.
    pub launches: usize,
    /// Pairs it solved whose true residual missed rtol (re-solved by the tile solver).
    pub above_rtol: usize,
    /// Of the pairs solved, those whose slice exceeds shared memory (solved in global memory).
    pub grid_pairs: usize,
}

impl fmt::Display for ResidentReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "resident solver ({} κe entry, teams: ", self.edge_kernel)?;
        if self.teams.is_empty() {
            f.write_str("none")?;
        }
        for (k, t) in self.teams.iter().enumerate() {
            write!(f, "{}{t}", if k > 0 { ", " } else { "" })?;
        }
        write!(f, ") for {} of {} pairs in {} launch(es)", self.pairs_solved, self.pairs, self.launches)?;
        if self.above_rtol > 0 {
            write!(f, "; {} pair(s) above rtol re-solved by the tile solver", self.above_rtol)?;
        }
        Ok(())
    }
}

/// How the dense primitives (D, R) walked tile B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "walk", rename_all = "snake_case")]
pub enum DenseWalks {
    /// Shared tiling (the default).
    SharedTiling,
    /// Tiling-blocking, κe gathered to this many features.
    TilingBlocking {
        /// Edge features the gathered κe reads.
        gathered_features: u32,
    },
    /// Shared tiling: tiling-blocking was asked for, but κe is not a product reading ≤ 2 edge
    /// features.
    SharedTilingFallback,
}

impl fmt::Display for DenseWalks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DenseWalks::SharedTiling => f.write_str("dense walks (D, R): shared tiling"),
            DenseWalks::TilingBlocking { gathered_features } => write!(f, "dense walks (D, R): tiling-blocking, κe gathered to {gathered_features} feature(s)"),
            DenseWalks::SharedTilingFallback => {
                f.write_str("dense walks (D, R): shared tiling (tiling-blocking asked for, but κe is not a product reading ≤ 2 edge features)")
            }
        }
    }
}

/// A GPU entry of the tile solver that ran (`mgk::gpu::batch::solve_pairs`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "entry", rename_all = "snake_case")]
pub enum GpuEntry {
    /// One block per pair, sparse × sparse only.
    SparseOnly {
        /// Share of the tile pairs for which the map picked another primitive (not used).
        overridden_share: f64,
    },
    /// One block per pair, the map's primitive per tile pair.
    Adaptive {
        /// Tiling-blocking dense walks.
        tiling_blocking: bool,
    },
    /// Teams of blocks per pair (pairs of large graphs).
    Team {
        /// Blocks per team.
        blocks_per_pair: u32,
        /// Pairs solved by teams.
        pairs: usize,
        /// Tiling-blocking dense walks.
        tiling_blocking: bool,
    },
    /// One block per pair, primal and adjoint solve and the hyperparameter gradient.
    Gradient {
        /// Pairs.
        pairs: usize,
    },
    /// Teams of blocks per pair, primal and adjoint solve and the hyperparameter gradient.
    GradientTeam {
        /// Blocks per team.
        blocks_per_pair: u32,
        /// Pairs.
        pairs: usize,
    },
}

impl fmt::Display for GpuEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            GpuEntry::SparseOnly { overridden_share } if overridden_share > 0.0 => {
                write!(f, "sparse-only (the map's other primitives, {:.2}% of tile pairs, not used)", 100.0 * overridden_share)
            }
            GpuEntry::SparseOnly { .. } => f.write_str("sparse-only"),
            GpuEntry::Adaptive { tiling_blocking } => f.write_str(if tiling_blocking { "adaptive, tiling-blocking" } else { "adaptive" }),
            GpuEntry::Team { blocks_per_pair, pairs, tiling_blocking } => {
                write!(f, "team of {blocks_per_pair} blocks per pair for {pairs} pair(s) (adaptive{})", if tiling_blocking { ", tiling-blocking" } else { "" })
            }
            GpuEntry::Gradient { pairs } => write!(f, "gradient (primal and adjoint solve, adaptive) for {pairs} pair(s)"),
            GpuEntry::GradientTeam { blocks_per_pair, pairs } => write!(f, "gradient, team of {blocks_per_pair} blocks per pair for {pairs} pair(s)"),
        }
    }
}

/// What the tile solver did (CPU or GPU).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TileReport {
    /// Pairs it solved.
    pub pairs: usize,
    /// The tile-pair primitive map and where it came from.
    pub primitives: MapOrigin,
    /// The dense walks.
    pub dense_walks: DenseWalks,
    /// On the GPU, the entries that ran (`None` on the CPU).
    pub gpu_entries: Option<Vec<GpuEntry>>,
}

impl fmt::Display for TileReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.primitives, self.dense_walks)?;
        if let Some(entries) = &self.gpu_entries {
            f.write_str("; GPU solver entry: ")?;
            for (k, e) in entries.iter().enumerate() {
                write!(f, "{}{e}", if k > 0 { " + " } else { "" })?;
            }
        }
        Ok(())
    }
}

/// What an MGK run did: the resident solver's part (GPU, f32 Gram entries) and the tile solver's
/// (every pair, or those the resident solver left). The Gram's `details` carries it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MgkReport {
    /// The resident solver, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resident: Option<ResidentReport>,
    /// The tile solver, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiles: Option<TileReport>,
}

impl fmt::Display for MgkReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.resident, &self.tiles) {
            (Some(r), Some(t)) => write!(f, "{r}; tile solver for {} pair(s): {t}", t.pairs),
            (Some(r), None) => write!(f, "{r}"),
            (None, Some(t)) => write!(f, "{t}"),
            (None, None) => Ok(()),
        }
    }
}

/// A run spread over several GPUs ([`super::spread`]): what each did.
#[derive(Clone, Debug, Serialize)]
pub struct SpreadReport {
    /// One per GPU, in the order of the selection.
    pub parts: Vec<DevicePart>,
}

/// One GPU's share of a spread run.
#[derive(Clone, Debug, Serialize)]
pub struct DevicePart {
    /// CUDA's ordinal.
    pub gpu: usize,
    /// The device, in words.
    pub device: String,
    /// Pairs it solved.
    pub pairs: usize,
    /// Its wall-clock seconds.
    pub seconds: f64,
    /// How it solved them.
    pub report: MgkReport,
}

impl fmt::Display for SpreadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "spread over {} GPUs (each every {}-th pair)", self.parts.len(), self.parts.len())?;
        for p in &self.parts {
            write!(f, "; GPU {} ({}): {} pairs in {:.3} s: {}", p.gpu, p.device, p.pairs, p.seconds, p.report)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mgk_report_reads_as_before() {
        let tiles = TileReport {
            pairs: 4,
            primitives: MapOrigin::Fixed { primitive: "sparse-sparse" },
            dense_walks: DenseWalks::TilingBlocking { gathered_features: 1 },
            gpu_entries: Some(vec![GpuEntry::SparseOnly { overridden_share: 0.0003 }, GpuEntry::Team { blocks_per_pair: 5, pairs: 78, tiling_blocking: true }]),
        };
        let line = "fixed: sparse-sparse; dense walks (D, R): tiling-blocking, κe gathered to 1 feature(s); GPU solver entry: sparse-only (the map's other primitives, 0.03% of tile pairs, not used) + team of 5 blocks per pair for 78 pair(s) (adaptive, tiling-blocking)";
        assert_eq!(MgkReport { resident: None, tiles: Some(tiles.clone()) }.to_string(), line);
        let resident = ResidentReport {
            edge_kernel: EdgeEntry::SquareExponential,
            teams: vec![TeamKind { form: TeamForm::OnTheFly, threads: 32 }],
            pairs_solved: 6,
            pairs: 10,
            launches: 1,
            above_rtol: 0,
            grid_pairs: 0,
        };
        let both = MgkReport {
            resident: Some(resident.clone()),
            tiles: Some(TileReport { gpu_entries: Some(vec![GpuEntry::Adaptive { tiling_blocking: false }]), ..tiles }),
        };
        assert_eq!(
            both.to_string(),
            "resident solver (square-exponential κe entry, teams: warp) for 6 of 10 pairs in 1 launch(es); tile solver for 4 pair(s): fixed: sparse-sparse; dense walks (D, R): tiling-blocking, κe gathered to 1 feature(s); GPU solver entry: adaptive"
        );
        let j = serde_json::to_value(&both).unwrap();
        assert_eq!(j["tiles"]["primitives"], serde_json::json!({"source": "fixed", "primitive": "sparse-sparse"}));
        assert_eq!(j["tiles"]["dense_walks"], serde_json::json!({"walk": "tiling_blocking", "gathered_features": 1}));
        assert_eq!(j["tiles"]["gpu_entries"][0], serde_json::json!({"entry": "adaptive", "tiling_blocking": false}));
        assert_eq!(j["resident"]["launches"], 1);
        assert!(serde_json::to_value(MgkReport { resident: Some(resident), tiles: None }).unwrap().get("tiles").is_none());
    }

    #[test]
    fn resident_report_reads_as_before() {
        let mut r = ResidentReport {
            edge_kernel: EdgeEntry::KroneckerDelta,
            teams: vec![
                TeamKind { form: TeamForm::OnTheFly, threads: 32 },
                TeamKind { form: TeamForm::SplitRows, threads: 256 },
                TeamKind { form: TeamForm::Product, threads: 32 },
                TeamKind { form: TeamForm::Grid, threads: 6 * 128 },
            ],
            pairs_solved: 10,
            pairs: 12,
            launches: 3,
            above_rtol: 1,
            grid_pairs: 2,
        };
        assert_eq!(
            r.to_string(),
            "resident solver (Kronecker-delta κe entry, teams: warp, 256-thread block with split rows, warp in product form, team of 6 blocks in global memory) for 10 of 12 pairs in 3 launch(es); 1 pair(s) above rtol re-solved by the tile solver"
        );
        r.teams.clear();
        r.above_rtol = 0;
        assert_eq!(r.to_string(), "resident solver (Kronecker-delta κe entry, teams: none) for 10 of 12 pairs in 3 launch(es)");
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!((j["edge_kernel"].as_str(), j["pairs_solved"].as_u64()), (Some("kronecker_delta"), Some(10)));
    }
}

//! What an MGK run reports about how it computed its values, as typed values: JSON summaries
//! serialise them (`serde`), and their `Display` is the line people read (the summary's
//! `details`).
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
        if self.threads == 32 {
            f.write_str("warp")?;
        } else {
            write!(f, "{}-thread block", self.threads)?;
        }
        match self.form {
            TeamForm::OnTheFly => Ok(()),
            TeamForm::SplitRows => f.write_str(" with split rows"),
            TeamForm::Product => f.write_str(" in product form"),
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
    /// Pairs it was given (those that did not fit shared memory went to the tile solver).
    pub pairs: usize,
    /// Launches.
    pub launches: usize,
    /// Pairs it solved whose true residual missed rtol (re-solved by the tile solver).
    pub above_rtol: usize,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_report_reads_as_before() {
        let mut r = ResidentReport {
            edge_kernel: EdgeEntry::KroneckerDelta,
            teams: vec![
                TeamKind { form: TeamForm::OnTheFly, threads: 32 },
                TeamKind { form: TeamForm::SplitRows, threads: 256 },
                TeamKind { form: TeamForm::Product, threads: 32 },
            ],
            pairs_solved: 10,
            pairs: 12,
            launches: 3,
            above_rtol: 1,
        };
        assert_eq!(
            r.to_string(),
            "resident solver (Kronecker-delta κe entry, teams: warp, 256-thread block with split rows, warp in product form) for 10 of 12 pairs in 3 launch(es); 1 pair(s) above rtol re-solved by the tile solver"
        );
        r.teams.clear();
        r.above_rtol = 0;
        assert_eq!(r.to_string(), "resident solver (Kronecker-delta κe entry, teams: none) for 10 of 12 pairs in 3 launch(es)");
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!((j["edge_kernel"].as_str(), j["pairs_solved"].as_u64()), (Some("kronecker_delta"), Some(10)));
    }
}

//! A graph staged in the team's slice.
use super::real::ResidentReal;
use octile_types::mgk::layout::NODE_D;
use octile_types::mgk::resident::{RESIDENT_NODE_EXTRA, graph_value_offset};
use octile_types::{Real, ResidentGraph};
/// A graph staged in the team's slice.
pub(super) struct View<T = f32> {
    pub(super) n: usize,
    pub(super) rp: *const u32,
    pub(super) col: *const u32,
    pub(super) edge: *const T,
    /// Node 0's `[d, p, features…]`, one value past its row's start: d's low part
    /// (`RESIDENT_NODE_EXTRA`) lies just before each row's d, at a fixed offset from the row.
    pub(super) node: *const T,
    /// `np` pieces (`octile_types::mgk::resident::PIECE_NONZEROS`).
    pub(super) pieces: *const u32,
    pub(super) np: usize,
}

impl<T> Clone for View<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for View<T> {}

impl<T: ResidentReal> View<T> {
    /// The views of graph `d`'s run of `graph_words` words at `s` (8-byte aligned for f64).
    #[inline(always)]
    pub(super) unsafe fn at(s: *const u32, d: &ResidentGraph, nz_stride: usize, node_stride: usize) -> View<T> {
        let (n, nnz) = (d.n_nodes as usize, d.nnz as usize);
        // SAFETY: the run is graph_words(n, nnz, .., n_pieces, T::WORDS) words long (caller's contract).
        unsafe {
            let col = s.add(n + 1);
            let edge = s.add(graph_value_offset(n, nnz, T::WORDS)) as *const T;
            let rows = edge.add(nnz * nz_stride);
            let node = rows.add(RESIDENT_NODE_EXTRA);
            View { n, rp: s, col, edge, node, pieces: rows.add(n * node_stride) as *const u32, np: d.n_pieces as usize }
        }
    }
}

impl<T: Real> View<T> {
    /// d₁·d₂ of node i of this graph and node i2 of `other`, in f64 from the rows' two words: d =
    /// d_hi·(1 + ρ), ρ the value before the row's d (`RESIDENT_NODE_EXTRA`: an immediate offset
    /// from the row's address; 0 in f64 sets). d₁d₂ = d_hi₁d_hi₂·(1 + ρ₁ + ρ₂) to ρ₁ρ₂ < 2⁻⁴⁸, with
    /// ρ₁ + ρ₂ added in T (|ρ| ≤ 2⁻²⁴: its rounding is < 2⁻⁴⁸ too) — one f64 multiply-add more than
    /// d_hi₁d_hi₂, and one T register for ρ₁ + ρ₂, where the true residual runs out of registers.
    #[inline(always)]
    pub(super) unsafe fn dd64(&self, i: usize, other: &View<T>, i2: usize, stride: usize) -> f64 {
        const { assert!(RESIDENT_NODE_EXTRA == 1 && NODE_D == 0, "d's relative low part is the value before d") };
        // SAFETY: i < n, i2 < other.n (caller's contract, as `rho`'s).
        unsafe {
            let hh = (*self.node.add(i * stride + NODE_D)).to_f64() * (*other.node.add(i2 * stride + NODE_D)).to_f64();
            hh + hh * (self.rho(i, stride) + other.rho(i2, stride)).to_f64()
        }
    }
    /// d's relative low part ρ of node i (the value before the row's d; 0 in f64 sets): d = d_hi·(1 + ρ).
    #[inline(always)]
    pub(super) unsafe fn rho(&self, i: usize, stride: usize) -> T {
        // SAFETY: i < n; row i starts at node + i·stride − 1 (`View::at`).
        unsafe { *self.node.add(i * stride).sub(1) }
    }
}

impl<T> View<T> {
    /// Node row i's `[d, p, features…]` (the row less d's low part, which precedes it).
    #[inline(always)]
    pub(super) unsafe fn node<'a>(&self, i: usize, stride: usize) -> &'a [T] {
        // SAFETY: i < n; the row's other stride − RESIDENT_NODE_EXTRA values follow its d.
        unsafe { core::slice::from_raw_parts(self.node.add(i * stride), stride - RESIDENT_NODE_EXTRA) }
    }
}

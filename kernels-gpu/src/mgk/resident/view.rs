//! A graph staged in the team's slice.
use super::real::ResidentReal;
use octile_types::ResidentGraph;
use octile_types::mgk::resident::graph_value_offset;
/// A graph staged in the team's slice.
pub(super) struct View<T = f32> {
    pub(super) n: usize,
    pub(super) rp: *const u32,
    pub(super) col: *const u32,
    pub(super) edge: *const T,
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
            let node = edge.add(nnz * nz_stride);
            View { n, rp: s, col, edge, node, pieces: node.add(n * node_stride) as *const u32, np: d.n_pieces as usize }
        }
    }
}

impl<T> View<T> {
    /// Node row i: `[d, p, features…]`.
    #[inline(always)]
    pub(super) unsafe fn node<'a>(&self, i: usize, stride: usize) -> &'a [T] {
        // SAFETY: i < n.
        unsafe { core::slice::from_raw_parts(self.node.add(i * stride), stride) }
    }
}

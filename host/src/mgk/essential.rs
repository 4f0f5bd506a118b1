//! The essential work of a marginalized-graph-kernel solve: the multiply-adds that any PCG on the
//! product system must do, whatever its data layout — the yardstick of the README's "share of the
//! machine's rate" columns.
//!
//! ```text
//! per CG iteration of the pair (G, G′):  nnz(A)·nnz(A′)   the off-diagonal product's nonzeros
//!                                       + 6·n·n′          diagonal, two dot products, three axpys
//! ```
//! (nnz: nonzeros of the adjacency, both triangles, a self-loop once.) Dividing the sum over pairs
//! by the machine's multiply-add rate (numpy's dgemm on the CPU, SMs × lanes × clock on the GPU)
//! gives the shortest time the solve could take; the measured time's share of it says how far an
//! implementation is from the hardware.
use crate::gram::Gram;
use crate::graph::Graph;

/// Nonzeros of `g`'s adjacency matrix (both triangles; a self-loop once).
pub fn adjacency_nnz(g: &Graph) -> u64 {
    g.edges().iter().map(|e| if e.i == e.j { 1 } else { 2 }).sum()
}

/// Σ over the entries `gram` solved of iterations × (nnz·nnz′ + 6·n·n′), with rows from `x` and
/// columns from `y` (`y = x` for K(X)). A symmetric Gram lists its mirrored entries twice in `info`;
/// they are counted once. Entries without diagnostics (exact methods, resumed tiles) count 0.
pub fn multiply_adds(x: &[Graph], y: &[Graph], gram: &Gram, symmetric: bool) -> f64 {
    if gram.info.len() != gram.rows * gram.cols || gram.rows != x.len() || gram.cols != y.len() {
        return 0.0;
    }
    let (nx, ny): (Vec<u64>, Vec<u64>) = (x.iter().map(adjacency_nnz).collect(), y.iter().map(adjacency_nnz).collect());
    let mut sum = 0.0;
    for (i, gi) in x.iter().enumerate() {
        let first = if symmetric { i } else { 0 };
        for (j, gj) in y.iter().enumerate().skip(first) {
            let per_iteration = (nx[i] * ny[j]) as f64 + 6.0 * (gi.n_nodes() * gj.n_nodes()) as f64;
            sum += f64::from(gram.info[i * gram.cols + j].iterations) * per_iteration;
        }
    }
    sum
}

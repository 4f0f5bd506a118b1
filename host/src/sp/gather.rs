//! Small parallel helpers of the shortest-path builds: how many graphs a task takes, and one
//! allocation filled from per-graph parts.
use rayon::prelude::*;

/// Graphs per parallel task for a set of `graphs` graphs with `nodes` nodes in all: the whole set
/// in one task below 50,000 nodes (handing tiny tasks to other threads costs more than it saves),
/// else 16.
pub fn grain(graphs: usize, nodes: usize) -> usize {
    if nodes < 50_000 { graphs.max(1) } else { 16 }
}

/// `parts` concatenated, copied in parallel into one allocation.
pub fn concat<T: Copy + Default + Send + Sync>(parts: &[Vec<T>]) -> Vec<T> {
    let total: usize = parts.iter().map(Vec::len).sum();
    let mut out = vec![T::default(); total];
    let mut rest = &mut out[..];
    let mut slots = Vec::with_capacity(parts.len());
    for p in parts {
        let (a, b) = std::mem::take(&mut rest).split_at_mut(p.len());
        slots.push(a);
        rest = b;
    }
    let g = grain(parts.len(), total / 4);
    slots.into_par_iter().zip(parts.par_iter()).with_min_len(g).for_each(|(d, p)| d.copy_from_slice(p));
    out
}

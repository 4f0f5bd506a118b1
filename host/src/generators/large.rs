//! Large seeded graphs for the graphlet-transform benchmark (issue 14): stand-ins for the paper's
//! SuiteSparse graphs, millions of nodes in seconds. Each returns `(n, edges)`: the node count and
//! every undirected edge once as `(u, v)` with `u < v < n`, no self-loops, no duplicates (a simple
//! graph, the input of [`crate::graphlets::Adjacency::from_edges`]). The same `seed` gives the same
//! graph on every machine and thread count (ChaCha8 streams, never the thread schedule).
//!
//! | generator | model | nodes | edges |
//! |---|---|---|---|
//! | [`delaunay`] | Delaunay triangulation of uniform random points (like `delaunay_n22`) | n | 3n − 3 − h (h = hull size, ~ 3n) |
//! | [`road`] | subdivided grid with missing streets and a few cell diagonals (like `road_usa`) | n | ~ 1.25 n (average degree ~ 2.5) |
//! | [`ba_edges`] | Barabási–Albert, networkx semantics (hubs) | n | m (n − m) |
//! | [`rmat`] | Graph500 R-MAT, ids permuted (hubs) | 2^scale | ≤ edge_factor · 2^scale |
use crate::error::{OctileError, Result};
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// The largest node count: node ids are `u32`.
pub const MAX_NODES: usize = u32::MAX as usize;

/// R-MAT's quadrant probabilities (Graph500): a, b, c; d = 1 − a − b − c = 0.05.
pub const RMAT_ABC: [f64; 3] = [0.57, 0.19, 0.19];

/// R-MAT edge draws per ChaCha8 stream (stream i + 1 draws chunk i; stream 0 the permutation).
const RMAT_CHUNK: usize = 1 << 16;

/// Road model: probability that a street between neighbouring intersections exists.
pub const ROAD_KEEP: f64 = 0.8;
/// Road model: probability that a grid cell has one diagonal street.
pub const ROAD_DIAGONAL: f64 = 0.05;
/// Road model: nodes per intersection, 4 (2 [`ROAD_KEEP`] + [`ROAD_DIAGONAL`] − 1), which puts the
/// expected average degree at 2.5 (see [`road`]).
pub const ROAD_NODES_PER_INTERSECTION: f64 = 4.0 * (2.0 * ROAD_KEEP + ROAD_DIAGONAL - 1.0);
/// The smallest node count [`road`] takes (a 4 × 4 grid of intersections and its chains).
pub const ROAD_MIN_NODES: usize = 64;

fn invalid(what: String) -> OctileError {
    OctileError::InvalidRequest(what)
}

fn check_memory(need: u128, what: impl FnOnce() -> String) -> Result<()> {
    crate::memory::check_with(need, None, what, "ask for a smaller graph")
}

/// The (min, max) of two ids.
#[inline]
fn ordered(u: u32, v: u32) -> (u32, u32) {
    if u < v { (u, v) } else { (v, u) }
}

/// Delaunay triangulation of `n` points drawn uniformly in the unit square (ChaCha8 from `seed`,
/// x then y for each point; node i is point i, so ids have no spatial order), as computed by the
/// `delaunator` crate: a planar graph where every inner face is a triangle, the stand-in for
/// SuiteSparse's `delaunay_n22` (n = 2^22: 4,194,304 nodes, ~12.58 M edges).
///
/// Edges: 3n − 3 − h for points in general position (h = number of points on the convex hull,
/// O(log n) for uniform points), so between 2n − 3 and 3n − 6; each edge once, `u < v`.
/// 2^22 points (12,582,867 edges for seed 1) take ~ 4.6 s (the triangulation is sequential).
///
/// # Errors
/// `InvalidConfig` unless 3 ≤ n ≤ 2^32 − 1, or if the points are all collinear (probability zero);
/// `TooLarge` if the triangulation's ~200 bytes per point do not fit in the available memory.
pub fn delaunay(n: usize, seed: u64) -> Result<(usize, Vec<(u32, u32)>)> {
    if !(3..=MAX_NODES).contains(&n) {
        return Err(invalid(format!("delaunay: n = {n} points; need 3 <= n <= {MAX_NODES}")));
    }
    check_memory(n as u128 * 200, || format!("the Delaunay triangulation of {n} points"))?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let points: Vec<delaunator::Point> = (0..n).map(|_| delaunator::Point { x: rng.r#gen::<f64>(), y: rng.r#gen::<f64>() }).collect();
    let t = delaunator::triangulate(&points);
    drop(points);
    if t.triangles.is_empty() {
        return Err(invalid(format!("delaunay: the {n} points are collinear (seed {seed}); no triangulation")));
    }
    // each half-edge e runs from triangles[e] to triangles[next(e)]; an inner edge has a twin
    // halfedges[e], a hull edge has none: keep the hull edges and the lower half-edge of each pair
    let (tri, half) = (&t.triangles, &t.halfedges);
    let edges: Vec<(u32, u32)> = (0..tri.len())
        .into_par_iter()
        .filter(|&e| half[e] == delaunator::EMPTY || e < half[e])
        .map(|e| ordered(tri[e] as u32, tri[delaunator::next_halfedge(e)] as u32))
        .collect();
    Ok((n, edges))
}

/// A road-like planar graph of exactly `n` nodes, the stand-in for SuiteSparse's road networks
/// (`road_usa`, `roadNet-*`: average degree 2.4–2.8, planar, long chains of degree-2 nodes, few
/// triangles). The model, with s = ⌊√(n / 2.6)⌋ ([`ROAD_NODES_PER_INTERSECTION`]):
///
/// 1. intersections: an s × s grid, ids `0..s²` row by row;
/// 2. streets: each of the 2s(s − 1) grid edges exists with probability [`ROAD_KEEP`] (0.8), and
///    each of the (s − 1)² cells gets one of its two diagonals with probability [`ROAD_DIAGONAL`]
///    (0.05; one per cell at most, so the graph stays planar);
/// 3. chains: the other c = n − s² nodes are spread over the streets uniformly at random (each node
///    picks a street, so chain lengths are ~Poisson with mean c / streets ≈ 1), and a street with k
///    of them becomes a path of k + 1 edges through them (ids `s²..n`, street by street).
///
/// Edges: streets + c, with E[streets] = (2 · 0.8 + 0.05) s² (to leading order), so the expected
/// average degree is 2 + 2 (1.65 − 1) / 2.6 = 2.5; for n ≥ 10⁵ it lies within 2.5 ± 0.05. Dead ends
/// (degree 1) and isolated intersections (all four streets missing) occur as on real maps; a
/// triangle needs a diagonal and two streets without chain nodes (a few per thousand cells).
/// One sequential pass, ~ 1.3 n random draws: 8 M nodes (~ 10.0 M edges) in ~ 0.2 s.
///
/// # Errors
/// `InvalidConfig` unless 64 ≤ n ≤ 2^32 − 1; `TooLarge` if its ~24 bytes per node do not fit.
pub fn road(n: usize, seed: u64) -> Result<(usize, Vec<(u32, u32)>)> {
    if !(ROAD_MIN_NODES..=MAX_NODES).contains(&n) {
        return Err(invalid(format!("road: n = {n} nodes; need {ROAD_MIN_NODES} <= n <= {MAX_NODES}")));
    }
    check_memory(n as u128 * 24, || format!("the road graph of {n} nodes"))?;
    let s = ((n as f64 / ROAD_NODES_PER_INTERSECTION).sqrt() as usize).max(4);
    let id = |r: usize, c: usize| (r * s + c) as u32;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut streets: Vec<(u32, u32)> = Vec::with_capacity(((2.0 * ROAD_KEEP + ROAD_DIAGONAL) * (s * s) as f64 * 1.01) as usize + 16);
    for r in 0..s {
        for c in 0..s {
            if c + 1 < s && rng.gen_bool(ROAD_KEEP) {
                streets.push((id(r, c), id(r, c + 1)));
            }
            if r + 1 < s && rng.gen_bool(ROAD_KEEP) {
                streets.push((id(r, c), id(r + 1, c)));
            }
            if r + 1 < s && c + 1 < s && rng.gen_bool(ROAD_DIAGONAL) {
                streets.push(if rng.r#gen::<bool>() { (id(r, c), id(r + 1, c + 1)) } else { (id(r, c + 1), id(r + 1, c)) });
            }
        }
    }
    if streets.is_empty() {
        streets.push((id(0, 0), id(0, 1))); // every street missing (probability ~ 0.2^24): keep one for the chains
    }
    let chain_nodes = n - s * s;
    let mut chain = vec![0u32; streets.len()];
    for _ in 0..chain_nodes {
        chain[rng.gen_range(0..streets.len())] += 1;
    }
    let mut edges: Vec<(u32, u32)> = Vec::with_capacity(streets.len() + chain_nodes);
    let mut next = (s * s) as u32;
    for (&(a, b), &k) in streets.iter().zip(&chain) {
        let mut prev = a;
        for _ in 0..k {
            edges.push(ordered(prev, next));
            prev = next;
            next += 1;
        }
        edges.push(ordered(prev, b));
    }
    debug_assert_eq!(next as usize, n);
    Ok((n, edges))
}

/// Barabási–Albert with networkx's semantics (`barabasi_albert_graph`, as
/// [`super::barabasi_albert`]): a star of m + 1 nodes (0 joined to 1..=m), then each new node joins
/// m distinct existing nodes drawn with probability proportional to their degree (uniform draws
/// from the list of edge endpoints, redrawn on a repeat). Exactly m (n − m) edges; hubs of degree
/// ~ m √(n / i) at the oldest nodes i.
///
/// Built for millions of edges: the endpoint list is `u32`, a new node's m targets are deduplicated
/// in a small vector, and no edge set is kept (a new node's edges cannot exist yet). Its random
/// stream is ChaCha8 from `seed`, drawn exactly as [`super::barabasi_albert`] draws it (so both give
/// the same graph for the same seeded `ChaCha8Rng`), not networkx's Mersenne Twister stream.
/// 1.25 M nodes with m = 8 (10 M edges) take ~ 0.4 s.
///
/// # Errors
/// `InvalidConfig` unless 1 ≤ m < n ≤ 2^32 − 1; `TooLarge` if its 16 m (n − m) bytes do not fit.
pub fn ba_edges(n: usize, m: usize, seed: u64) -> Result<(usize, Vec<(u32, u32)>)> {
    if !(m >= 1 && m < n && n <= MAX_NODES) {
        return Err(invalid(format!("ba: n = {n} nodes, m = {m} edges per node; need 1 <= m < n <= {MAX_NODES}")));
    }
    let n_edges = m as u128 * (n - m) as u128;
    check_memory(n_edges * 16, || format!("the Barabási–Albert graph of {n} nodes, m = {m} ({n_edges} edges)"))?;
    let n_edges = n_edges as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut edges: Vec<(u32, u32)> = Vec::with_capacity(n_edges);
    let mut repeated: Vec<u32> = Vec::with_capacity(2 * n_edges);
    edges.extend((1..=m as u32).map(|v| (0, v)));
    repeated.extend(std::iter::repeat_n(0, m));
    repeated.extend(1..=m as u32);
    let mut targets: Vec<u32> = Vec::with_capacity(m);
    for source in (m + 1)..n {
        targets.clear();
        while targets.len() < m {
            let t = repeated[rng.gen_range(0..repeated.len())];
            if !targets.contains(&t) {
                targets.push(t);
            }
        }
        let source = source as u32;
        edges.extend(targets.iter().map(|&t| (t, source)));
        repeated.extend(&targets);
        repeated.extend(std::iter::repeat_n(source, m));
    }
    Ok((n, edges))
}

/// Graph500's R-MAT (Kronecker) graph: n = 2^scale nodes and edge_factor · 2^scale edge draws; each
/// draw picks one quadrant per bit of the two ids with probabilities a = 0.57, b = 0.19, c = 0.19,
/// d = 0.05 ([`RMAT_ABC`]). The ids are then relabelled by a uniform random permutation (as Graph500
/// does, so the hubs are not all at small ids), each draw becomes an undirected edge, and
/// self-loops and duplicates are removed (parallel sort and dedup): the edge count is at most the
/// draws, measured at scale 20: 8.04 M edges of 8.39 M draws at edge factor 8 (96 %), 15.7 M of
/// 16.8 M at 16 (94 %). Nodes no draw reaches stay isolated, and n is 2^scale all the same. The
/// edges come sorted.
///
/// Draw chunk i uses ChaCha8 stream i + 1 of `seed` and the permutation stream 0, so the graph does
/// not depend on the thread count. Scale 20, edge factor 8 takes ~ 1.5 s on two cores.
///
/// # Errors
/// `InvalidConfig` unless 1 ≤ scale ≤ 32 and edge_factor ≥ 1 (and the draws fit in memory's
/// address space); `TooLarge` if its ~8 bytes per draw and 4 per node do not fit.
pub fn rmat(scale: u32, edge_factor: usize, seed: u64) -> Result<(usize, Vec<(u32, u32)>)> {
    if !(1..=32).contains(&scale) || edge_factor == 0 {
        return Err(invalid(format!("rmat: scale = {scale}, edge factor = {edge_factor}; need 1 <= scale <= 32 and edge factor >= 1")));
    }
    let n = 1usize << scale;
    let draws = edge_factor.checked_mul(n).ok_or_else(|| invalid(format!("rmat: {edge_factor} × 2^{scale} edge draws overflow")))?;
    check_memory(draws as u128 * 8 + n as u128 * 4, || format!("the R-MAT graph of scale {scale}, edge factor {edge_factor} ({draws} draws)"))?;
    let mut perm: Vec<u32> = (0..n).map(|i| i as u32).collect(); // n ≤ 2^32: the last id is u32::MAX
    perm.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let threshold = |p: f64| (p * 4_294_967_296.0) as u64;
    let (ta, tab, tabc) = (threshold(RMAT_ABC[0]), threshold(RMAT_ABC[0] + RMAT_ABC[1]), threshold(RMAT_ABC[0] + RMAT_ABC[1] + RMAT_ABC[2]));
    let mut edges = vec![(0u32, 0u32); draws];
    edges.par_chunks_mut(RMAT_CHUNK).enumerate().for_each(|(chunk, out)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(chunk as u64 + 1);
        for e in out.iter_mut() {
            let (mut u, mut v) = (0u64, 0u64);
            for _ in 0..scale {
                let r = rng.next_u32() as u64;
                let (bu, bv) = if r < ta {
                    (0, 0)
                } else if r < tab {
                    (0, 1)
                } else if r < tabc {
                    (1, 0)
                } else {
                    (1, 1)
                };
                u = (u << 1) | bu;
                v = (v << 1) | bv;
            }
            *e = ordered(perm[u as usize], perm[v as usize]);
        }
    });
    drop(perm);
    edges.retain(|&(u, v)| u != v);
    edges.par_sort_unstable();
    edges.dedup();
    Ok((n, edges))
}

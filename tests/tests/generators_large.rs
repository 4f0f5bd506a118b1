//! The large generators of the graphlet benchmark (`octile::generators::large`): seeded and
//! deterministic, simple graphs (no self-loops, no duplicates, ids < n, u < v), the documented edge
//! counts and degrees, the Delaunay property by brute force, the BA generator equal to the small
//! networkx-style one, and errors (not panics) for impossible sizes.
use octile::OctileError;
use octile::generators::barabasi_albert;
use octile::generators::large::{ba_edges, delaunay, rmat, road};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

type Edges = Vec<(u32, u32)>;

/// Every edge (u, v) has u < v < n and appears once; returns the degrees.
fn check_simple(what: &str, n: usize, edges: &[(u32, u32)]) -> Vec<u32> {
    let mut seen = HashSet::with_capacity(edges.len());
    let mut deg = vec![0u32; n];
    for (i, &(u, v)) in edges.iter().enumerate() {
        assert!(u < v, "{what}: edge {i} = ({u}, {v}): expected u < v");
        assert!((v as usize) < n, "{what}: edge {i} = ({u}, {v}): id {v} >= n = {n}");
        assert!(seen.insert((u, v)), "{what}: edge {i} = ({u}, {v}) appears twice");
        deg[u as usize] += 1;
        deg[v as usize] += 1;
    }
    deg
}

/// Same seed → same graph; another seed → another graph.
fn check_seeded(what: &str, make: impl Fn(u64) -> (usize, Edges)) {
    let (a, b, c) = (make(7), make(7), make(8));
    assert_eq!(a.0, b.0, "{what}: node count differs between two runs of seed 7");
    assert!(a.1 == b.1, "{what}: seed 7 gave different edge lists ({} and {} edges)", a.1.len(), b.1.len());
    let (sa, sc): (HashSet<_>, HashSet<_>) = (a.1.iter().collect(), c.1.iter().collect());
    assert!(sa != sc, "{what}: seeds 7 and 8 gave the same graph ({} edges)", a.1.len());
}

fn is_invalid(what: &str, r: octile::Result<(usize, Edges)>) {
    match r {
        Err(OctileError::InvalidRequest(msg)) => assert!(!msg.is_empty(), "{what}: empty message"),
        Err(e) => panic!("{what}: expected InvalidRequest, got {e}"),
        Ok((n, e)) => panic!("{what}: expected InvalidRequest, got a graph of {n} nodes and {} edges", e.len()),
    }
}

#[test]
fn deterministic_per_seed() {
    check_seeded("delaunay", |s| delaunay(2000, s).unwrap());
    check_seeded("road", |s| road(5000, s).unwrap());
    check_seeded("ba_edges", |s| ba_edges(2000, 3, s).unwrap());
    check_seeded("rmat", |s| rmat(11, 8, s).unwrap());
}

#[test]
fn delaunay_counts_and_planarity() {
    for (n, seed) in [(3usize, 1u64), (4, 2), (10, 3), (1000, 4), (100_000, 5)] {
        let (nn, e) = delaunay(n, seed).unwrap();
        assert_eq!(nn, n, "delaunay({n}): node count");
        let deg = check_simple(&format!("delaunay({n})"), n, &e);
        let m = e.len();
        // 3n − 3 − h edges with 3 <= h <= n: between 2n − 3 and 3n − 6
        assert!(m + 3 >= 2 * n && m + 6 <= 3 * n, "delaunay({n}): {m} edges, expected 2n−3..=3n−6 = {}..={}", 2 * n - 3, 3 * n - 6);
        if n >= 1000 {
            // uniform points: O(log n) on the hull (~ 8/3 ln n), so 3n − 3 − h with h < 100
            assert!(m + 103 > 3 * n, "delaunay({n}): {m} edges, expected > 3n − 103 (fewer than 100 hull points)");
            let (i, d) = deg.iter().enumerate().min_by_key(|x| *x.1).unwrap();
            assert!(*d >= 2, "delaunay({n}): node {i} has degree {d}, expected >= 2");
        }
    }
}

/// The points the generator draws (x then y per point, ChaCha8 from the seed).
fn delaunay_points(n: usize, seed: u64) -> Vec<(f64, f64)> {
    use rand::Rng;
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| (r.r#gen::<f64>(), r.r#gen::<f64>())).collect()
}

#[test]
fn delaunay_empty_circumcircles() {
    let n = 300;
    let (_, e) = delaunay(n, 11).unwrap();
    let p = delaunay_points(n, 11);
    let adj: HashSet<(u32, u32)> = e.iter().copied().collect();
    let has = |a: u32, b: u32| adj.contains(&(a.min(b), a.max(b)));
    // the triangles of the graph: 3-cycles; in a Delaunay triangulation of points in general
    // position each face is one, and no point lies inside any face's circumcircle
    let mut nbr = vec![Vec::new(); n];
    for &(u, v) in &e {
        nbr[u as usize].push(v);
        nbr[v as usize].push(u);
    }
    let mut faces = 0;
    for &(u, v) in &e {
        for &w in &nbr[u as usize] {
            if w > v && has(v, w) {
                let (a, b, c) = (p[u as usize], p[v as usize], p[w as usize]);
                // incircle determinant, signed by the triangle's orientation
                let orient = (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0);
                let mut inside = 0;
                for (k, &d) in p.iter().enumerate() {
                    if [u, v, w].contains(&(k as u32)) {
                        continue;
                    }
                    let (ax, ay, bx, by, cx, cy) = (a.0 - d.0, a.1 - d.1, b.0 - d.0, b.1 - d.1, c.0 - d.0, c.1 - d.1);
                    let det = (ax * ax + ay * ay) * (bx * cy - cx * by) - (bx * bx + by * by) * (ax * cy - cx * ay) + (cx * cx + cy * cy) * (ax * by - bx * ay);
                    if det * orient.signum() > 1e-12 {
                        inside += 1;
                    }
                }
                // a 3-cycle that is not a face (a separating triangle) has points inside: allow
                // those only if it is not a face, i.e. some point lies inside the triangle itself
                if inside > 0 {
                    let in_triangle = p.iter().enumerate().any(|(k, &d)| {
                        let s = |x: (f64, f64), y: (f64, f64)| (y.0 - x.0) * (d.1 - x.1) - (y.1 - x.1) * (d.0 - x.0);
                        ![u, v, w].contains(&(k as u32)) && s(a, b) * orient > 0.0 && s(b, c) * orient > 0.0 && s(c, a) * orient > 0.0
                    });
                    assert!(in_triangle, "delaunay: face ({u}, {v}, {w}) has {inside} point(s) inside its circumcircle");
                } else {
                    faces += 1;
                }
            }
        }
    }
    // Euler: a triangulation of n points with h on the hull has 2n − 2 − h faces = e − n + 1
    assert_eq!(faces, e.len() - n + 1, "delaunay: empty-circle triangles vs e − n + 1 (e = {})", e.len());
}

#[test]
fn road_degrees_and_size() {
    for (n, seed) in [(64usize, 1u64), (1000, 2), (100_000, 3), (1_000_000, 4)] {
        let (nn, e) = road(n, seed).unwrap();
        assert_eq!(nn, n, "road({n}): node count");
        let deg = check_simple(&format!("road({n})"), n, &e);
        let avg = 2.0 * e.len() as f64 / n as f64;
        if n >= 100_000 {
            assert!((2.45..=2.55).contains(&avg), "road({n}): average degree {avg:.4}, expected 2.5 ± 0.05");
            let two = deg.iter().filter(|&&d| d == 2).count() as f64 / n as f64;
            assert!(two > 0.5, "road({n}): {:.1} % of nodes of degree 2, expected most", 100.0 * two);
            let (i, d) = deg.iter().enumerate().max_by_key(|x| *x.1).unwrap();
            assert!(*d <= 8, "road({n}): node {i} has degree {d}; a grid with one diagonal per cell has <= 8");
        } else {
            assert!((2.0..=3.0).contains(&avg), "road({n}): average degree {avg:.4}, expected 2..3");
        }
        // planar: e <= 3n − 6
        assert!(e.len() + 6 <= 3 * n, "road({n}): {} edges > 3n − 6", e.len());
    }
}

#[test]
fn ba_edges_equals_the_small_generator() {
    for (n, m, seed) in [(2usize, 1usize, 1u64), (10, 3, 2), (500, 6, 3), (3000, 8, 4)] {
        let (nn, e) = ba_edges(n, m, seed).unwrap();
        assert_eq!(nn, n, "ba_edges({n}, {m}): node count");
        check_simple(&format!("ba_edges({n}, {m})"), n, &e);
        assert_eq!(e.len(), m * (n - m), "ba_edges({n}, {m}): edge count, expected m (n − m)");
        let small: HashSet<(u32, u32)> =
            barabasi_albert(n, m, &mut ChaCha8Rng::seed_from_u64(seed)).into_iter().map(|(u, v)| (u.min(v) as u32, u.max(v) as u32)).collect();
        let large: HashSet<(u32, u32)> = e.into_iter().collect();
        let first = small.symmetric_difference(&large).next();
        assert!(first.is_none(), "ba_edges({n}, {m}, {seed}) differs from barabasi_albert on edge {first:?}");
    }
}

#[test]
fn rmat_counts_and_hubs() {
    for (scale, ef, seed) in [(1u32, 1usize, 1u64), (4, 4, 2), (14, 8, 3)] {
        let (n, e) = rmat(scale, ef, seed).unwrap();
        assert_eq!(n, 1 << scale, "rmat({scale}, {ef}): node count");
        let deg = check_simple(&format!("rmat({scale}, {ef})"), n, &e);
        assert!(e.len() <= ef << scale, "rmat({scale}, {ef}): {} edges > {} draws", e.len(), ef << scale);
        assert!(e.windows(2).all(|w| w[0] < w[1]), "rmat({scale}, {ef}): edges not sorted");
        if scale == 14 {
            let draws = (ef << scale) as f64;
            assert!(e.len() as f64 > 0.7 * draws, "rmat(14, 8): {} edges, expected > 70 % of {draws} draws", e.len());
            // hubs, and not all at small ids (the permutation)
            let (hub, d) = deg.iter().enumerate().max_by_key(|x| *x.1).unwrap();
            assert!(*d > 500, "rmat(14, 8): largest degree {d} (node {hub}), expected a hub > 500");
            let top: Vec<usize> = {
                let mut idx: Vec<usize> = (0..n).collect();
                idx.sort_by_key(|&i| std::cmp::Reverse(deg[i]));
                idx[..10].to_vec()
            };
            assert!(top.iter().any(|&i| i >= n / 16), "rmat(14, 8): the 10 largest hubs {top:?} all have ids < n/16: no permutation?");
        }
    }
}

#[test]
fn bad_parameters_are_errors() {
    is_invalid("delaunay(0)", delaunay(0, 1));
    is_invalid("delaunay(2)", delaunay(2, 1));
    is_invalid("delaunay(2^32)", delaunay(1 << 32, 1));
    is_invalid("road(63)", road(63, 1));
    is_invalid("road(2^33)", road(1 << 33, 1));
    is_invalid("ba_edges(10, 0)", ba_edges(10, 0, 1));
    is_invalid("ba_edges(10, 10)", ba_edges(10, 10, 1));
    is_invalid("ba_edges(2^32, 1)", ba_edges(1 << 32, 1, 1));
    is_invalid("rmat(0, 8)", rmat(0, 8, 1));
    is_invalid("rmat(33, 8)", rmat(33, 8, 1));
    is_invalid("rmat(10, 0)", rmat(10, 0, 1));
    is_invalid("rmat(32, 2^40)", rmat(32, 1 << 40, 1));
    // possible sizes far beyond memory: refused before allocating
    for (what, r) in [
        ("delaunay(2^32 − 1)", delaunay((1 << 32) - 1, 1)),
        ("rmat(32, 2^20)", rmat(32, 1 << 20, 1)),
        ("ba_edges(2^32 − 1, 2^20)", ba_edges((1 << 32) - 1, 1 << 20, 1)),
    ] {
        match r {
            Err(OctileError::TooLarge { .. }) => {}
            Err(e) => panic!("{what}: expected TooLarge, got {e}"),
            Ok((n, e)) => panic!("{what}: expected TooLarge, got {n} nodes and {} edges", e.len()),
        }
    }
}

/// The benchmark's sizes, timed (`cargo test --release --test generators_large -- --ignored --nocapture`).
#[test]
#[ignore = "full-size timings: seconds and GBs"]
fn full_size_timings() {
    let timed = |what: &str, make: &dyn Fn() -> octile::Result<(usize, Edges)>| {
        let t = std::time::Instant::now();
        let (n, e) = make().unwrap();
        let s = t.elapsed().as_secs_f64();
        let max_id = e.iter().map(|&(_, v)| v).max().unwrap_or(0);
        assert!((max_id as usize) < n, "{what}: id {max_id} >= n = {n}");
        println!("{what}: {n} nodes, {} edges, average degree {:.3}, {s:.2} s", e.len(), 2.0 * e.len() as f64 / n as f64);
    };
    timed("delaunay 2^22", &|| delaunay(1 << 22, 1));
    timed("road 8M", &|| road(8_000_000, 1));
    timed("ba 1.25M m=8", &|| ba_edges(1_250_000, 8, 1));
    timed("rmat scale 20 ef 8", &|| rmat(20, 8, 1));
    timed("rmat scale 20 ef 16", &|| rmat(20, 16, 1));
}

//! Tiles of a Gram matrix (the unit of large runs: streamed output, `--rows/--cols`, Dask) equal
//! the same entries of the whole matrix on every backend (the CPU's bit for bit, the GPU's within
//! K's accuracy): K(X) and K(X, Y), raw and
//! normalized, odd tile sizes, with ∂K/∂θ, for the marginalized kernel on random graphs with every
//! edge case, and for the shortest-path and graphlet kernels; blocks of K(X) across its diagonal
//! evaluate each unordered pair once whatever the tile size.
use octile::gram::{Tile, TilePlan, block_tiles, gram_tile, normalize_tile};
use octile::mgk::gradient::normalize_gradient_tile;
use octile::{Gram, Graph, GraphKernel, GraphletConfig, GraphletKernel, MarginalizedGraphKernel, OctileError, ShortestPathKernel, SpConfig};
use octile_tests::{Shape, random_graph, random_shape, targets};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random graphs with the edge cases: 1 node, no edges, isolated nodes, self-loops, disconnected,
/// very different sizes.
fn graphs(seed: u64, n: usize) -> Vec<Graph> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = vec![
        random_graph(&mut rng, Shape { n: 1, density: 0.0, self_loops: 0.0, disconnected: false, weighted: false }),
        random_graph(&mut rng, Shape { n: 6, density: 0.0, self_loops: 0.0, disconnected: false, weighted: false }),
        random_graph(&mut rng, Shape { n: 9, density: 0.5, self_loops: 0.5, disconnected: true, weighted: true }),
        random_graph(&mut rng, Shape { n: 40, density: 0.1, self_loops: 0.0, disconnected: false, weighted: true }),
    ];
    while out.len() < n {
        let size = rng.gen_range(2..24);
        let s = random_shape(&mut rng, size);
        out.push(random_graph(&mut rng, s));
    }
    out
}

/// Entry (i, j) of a tile-assembled matrix equals the whole matrix's: bit for bit (`rtol` None),
/// or within `rtol` (two-sided, relative to the larger of the two, with a floor of a thousandth of
/// the largest entry).
fn same_bits(what: &str, tiled: &[f64], whole: &[f64], cols: usize, rtol: Option<f64>, errors: &mut Vec<String>) {
    assert_eq!(tiled.len(), whole.len(), "{what}: sizes");
    // relative to the entry, or to a thousandth of the largest (entries that cancel to ~0, e.g. ∂K/∂θ)
    let floor = 1e-3 * whole.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let differs = |k: usize| match rtol {
        None => tiled[k].to_bits() != whole[k].to_bits(),
        Some(r) => {
            let err = (tiled[k] - whole[k]).abs();
            // NaN fails too
            !err.is_finite() || err > r * whole[k].abs().max(tiled[k].abs()).max(floor)
        }
    };
    if let Some(k) = (0..whole.len()).find(|&k| differs(k)) {
        errors.push(format!("{what}: entry ({}, {}) tiled {:.17e}, whole {:.17e} (rtol {rtol:?})", k / cols, k % cols, tiled[k], whole[k]));
    }
}

/// How close a target's tiles must be to its whole matrix: the CPU's bit for bit; the GPU's within
/// K's accuracy, because the few pairs too large for the resident solver go to the tile solver,
/// whose blocks per pair grow when fewer such pairs share a launch (reductions split differently).
fn tolerance(t: &octile_tests::Target) -> Option<f64> {
    (t.backend != octile::Backend::Cpu).then_some(t.rtol)
}

/// The matrix assembled from the tiles of `plan`, each computed by `tile_of` (K(X): the
/// transposes below the diagonal), `width` values per entry.
fn assemble(plan: &TilePlan, width: usize, mut tile_of: impl FnMut(&Tile) -> Gram, pick: impl Fn(&Gram) -> &[f64]) -> Vec<f64> {
    let (rows, cols) = plan.shape();
    let mut m = vec![f64::NAN; rows * cols * width];
    for t in plan.tiles() {
        let g = tile_of(&t);
        let v = pick(&g);
        for (a, i) in t.rows.clone().enumerate() {
            for (b, j) in t.cols.clone().enumerate() {
                let src = &v[(a * t.cols.len() + b) * width..(a * t.cols.len() + b + 1) * width];
                m[(i * cols + j) * width..(i * cols + j + 1) * width].copy_from_slice(src);
                if plan.symmetric {
                    m[(j * cols + i) * width..(j * cols + i + 1) * width].copy_from_slice(src);
                }
            }
        }
    }
    m
}

fn ok(r: octile::Result<Gram>) -> Gram {
    match r {
        Ok(g) => g,
        Err(OctileError::NoConvergence { partial, .. }) => *partial,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn marginalized_tiles_equal_the_whole_matrix_on_every_backend() {
    let x = graphs(3, 17);
    let y = graphs(4, 6);
    let mut errors = Vec::new();
    for t in targets("marginalized_tiles_equal_the_whole_matrix_on_every_backend") {
        let mut cfg = octile_tests::random_config(&mut ChaCha8Rng::seed_from_u64(9));
        cfg.q = 0.05;
        t.apply(&mut cfg);
        let k = MarginalizedGraphKernel::new(cfg).unwrap();
        let tol = tolerance(&t);
        let whole = ok(k.gram(&x));
        let whole_norm = ok(k.gram_normalized(&x));
        let between = ok(k.gram_between(&x, &y));
        let dx = k.diag(&x).unwrap();
        let dy = k.diag(&y).unwrap();
        let between_norm = ok(k.gram_between_normalized(&x, &y));
        // K(X) and K(X, Y), raw and normalized (with the diagonals of the rows' and columns' graphs)
        let sides = [("K(X)", None, &dx[..], &whole, &whole_norm), ("K(X, Y)", Some(&y[..]), &dy[..], &between, &between_norm)];
        for size in [1, 4, 7, 17, 100] {
            for &(name, y_opt, d_cols, raw, norm) in &sides {
                let plan = TilePlan::of(&x, y_opt, size);
                for (normalized, want) in [(false, raw), (true, norm)] {
                    let tile = |t: &Tile| {
                        let mut g = ok(gram_tile(&k, &x, y_opt, t));
                        if normalized {
                            normalize_tile(&mut g, t, &dx[t.rows.clone()], &d_cols[t.cols.clone()], y_opt.is_none());
                        }
                        g
                    };
                    let m = assemble(&plan, 1, tile, |g| &g.values);
                    let what = format!("{} tile size {size}: {name}{}", t.name, if normalized { " normalized" } else { "" });
                    same_bits(&what, &m, &want.values, want.cols, tol, &mut errors);
                }
            }
        }
        // any rectangle of K(X), across the diagonal too
        for (rows, cols) in [(3..11, 0..17), (5..6, 5..6), (10..17, 2..9), (0..0, 0..4)] {
            let g = ok(gram_tile(&k, &x, None, &Tile { rows: rows.clone(), cols: cols.clone() }));
            let want: Vec<f64> = rows.clone().flat_map(|i| cols.clone().map(move |j| (i, j))).map(|(i, j)| whole.get(i, j)).collect();
            same_bits(&format!("{} block {rows:?} × {cols:?}", t.name), &g.values, &want, cols.len(), tol, &mut errors);
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// The block `rows` × `cols` of K(X) from `block_tiles` at `tile_size`, each tile by `tile_of`
/// (those standing for their transposes written both ways), and the pairs the tiles evaluated.
fn assemble_block(
    x: &[Graph],
    (rows, cols): (&std::ops::Range<usize>, &std::ops::Range<usize>),
    tile_size: usize,
    tile_of: impl Fn(&Tile) -> Gram,
) -> (Vec<f64>, usize) {
    let nodes: Vec<usize> = x.iter().map(Graph::n_nodes).collect();
    let (nr, nc) = (rows.len(), cols.len());
    let (mut m, mut solved) = (vec![f64::NAN; nr * nc], 0);
    for t in block_tiles(&nodes, rows.clone(), cols.clone(), tile_size).unwrap() {
        let g = tile_of(&t);
        assert_eq!(g.pairs_solved, t.pairs(true), "tile {t:?}: pairs solved {}, expected {}", g.pairs_solved, t.pairs(true));
        solved += g.pairs_solved;
        for (a, i) in t.rows.clone().enumerate() {
            for (b, j) in t.cols.clone().enumerate() {
                let v = g.values[a * t.cols.len() + b];
                m[(i - rows.start) * nc + j - cols.start] = v;
                if t.mirrored_in(rows, cols) {
                    m[(j - rows.start) * nc + i - cols.start] = v;
                }
            }
        }
    }
    (m, solved)
}

/// A block K[rows, cols] of K(X) that crosses the diagonal, cut into tiles of 1, 4 or 100 graphs
/// a side: each unordered pair of the block evaluated once (with `--tile-size 4` the mirrored
/// pairs of rows ∩ cols were evaluated twice, once per tile), so the pairs evaluated are the same
/// for every tile size, and every entry equals the whole matrix's (a two-sided tolerance: exact on
/// the CPU, K's accuracy on a GPU).
#[test]
fn blocks_across_the_diagonal_evaluate_each_pair_once_at_any_tile_size() {
    let x = graphs(11, 17);
    let sp = ShortestPathKernel::new(SpConfig::default()).unwrap();
    let mut errors = Vec::new();
    let blocks = [(3..11, 0..17), (10..17, 2..9), (0..12, 5..17), (4..13, 4..13), (0..17, 0..17), (0..5, 9..17)];
    let slice = |m: &Gram, r: &std::ops::Range<usize>, c: &std::ops::Range<usize>| -> Vec<f64> {
        r.clone().flat_map(|i| c.clone().map(move |j| m.get(i, j))).collect()
    };
    let mut check = |name: &str, k: &dyn GraphKernel, rtol: f64| {
        let whole = ok(k.gram(&x));
        for (rows, cols) in &blocks {
            let shared = rows.start.max(cols.start)..rows.end.min(cols.end).max(rows.start.max(cols.start));
            let want = rows.len() * cols.len() - shared.len() * shared.len().saturating_sub(1) / 2;
            let mut counts = Vec::new();
            for size in [1, 4, 100] {
                let (m, solved) = assemble_block(&x, (rows, cols), size, |t| ok(gram_tile(k, &x, None, t)));
                counts.push(solved);
                same_bits(&format!("{name} block {rows:?} × {cols:?} tile size {size}"), &m, &slice(&whole, rows, cols), cols.len(), Some(rtol), &mut errors);
            }
            if counts.iter().any(|&c| c != want) {
                errors.push(format!(
                    "{name} block {rows:?} × {cols:?}: pairs evaluated {counts:?} at tile sizes [1, 4, 100], expected {want} (its unordered pairs) at each"
                ));
            }
        }
    };
    for t in targets("blocks_across_the_diagonal_evaluate_each_pair_once_at_any_tile_size") {
        let mut cfg = octile_tests::random_config(&mut ChaCha8Rng::seed_from_u64(9));
        cfg.q = 0.05;
        t.apply(&mut cfg);
        let k = MarginalizedGraphKernel::new(cfg).unwrap();
        check(t.name, &k, tolerance(&t).unwrap_or(0.0));
    }
    // kernels that evaluate a tile as a matrix: their tiles on the diagonal count the upper triangle
    check("shortest path", &sp, 0.0);
    check("graphlets", &GraphletKernel::new(GraphletConfig::default()).unwrap(), 0.0);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn gradient_tiles_equal_the_whole_gradient_on_every_backend() {
    let x = graphs(5, 9);
    let y = graphs(6, 4);
    let mut errors = Vec::new();
    for t in targets("gradient_tiles_equal_the_whole_gradient_on_every_backend") {
        let mut cfg = octile_tests::random_config(&mut ChaCha8Rng::seed_from_u64(2));
        cfg.q = 0.1;
        t.apply(&mut cfg);
        let k = MarginalizedGraphKernel::new(cfg).unwrap();
        let tol = tolerance(&t);
        let np = k.config().hyperparameters().len();
        let pairs = |s: &[Graph]| (0..s.len()).map(|i| (i, i)).collect::<Vec<_>>();
        let dgx = ok(k.pairs_gradient(&x, &pairs(&x)));
        let dgy = ok(k.pairs_gradient(&y, &pairs(&y)));
        let dd = |g: &Gram| g.gradient.as_ref().unwrap().values.clone();
        let (ddx, ddy) = (dd(&dgx), dd(&dgy));
        for (y_opt, norm) in [(None, false), (None, true), (Some(&y[..]), false), (Some(&y[..]), true)] {
            let whole = ok(k.gram_gradient(&x, y_opt, norm));
            let cols = y_opt.map_or(x.len(), <[Graph]>::len);
            for size in [1, 2, 5, 9] {
                let plan = TilePlan::of(&x, y_opt, size);
                let tile = |t: &Tile| {
                    let mut g = ok(k.gram_gradient_tile(&x, y_opt, t));
                    if norm {
                        let (cv, cd) = if y_opt.is_some() { (&dgy.values, &ddy) } else { (&dgx.values, &ddx) };
                        let rows = (&dgx.values[t.rows.clone()], &ddx[t.rows.start * np..t.rows.end * np]);
                        let colsd = (&cv[t.cols.clone()], &cd[t.cols.start * np..t.cols.end * np]);
                        normalize_gradient_tile(&mut g, t, rows, colsd, y_opt.is_none());
                    }
                    g
                };
                let tag = format!("{} {} normalized {norm} tile size {size}", t.name, if y_opt.is_some() { "K(X, Y)" } else { "K(X)" });
                let m = assemble(&plan, 1, tile, |g| &g.values);
                same_bits(&format!("{tag}: K"), &m, &whole.values, cols, tol, &mut errors);
                let m = assemble(&plan, np, tile, |g| &g.gradient.as_ref().unwrap().values);
                same_bits(&format!("{tag}: dK (entry index / P)"), &m, &whole.gradient.as_ref().unwrap().values, cols * np, tol, &mut errors);
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn shortest_path_and_graphlet_tiles_equal_the_whole_matrix() {
    let x = graphs(7, 13);
    let y = graphs(8, 5);
    let sp = ShortestPathKernel::new(SpConfig::default()).unwrap();
    let gl = GraphletKernel::new(GraphletConfig::default()).unwrap();
    let kernels: [(&str, &dyn GraphKernel); 2] = [("shortest path", &sp), ("graphlets", &gl)];
    let mut errors = Vec::new();
    let tol = None;
    for (name, k) in kernels {
        let whole = ok(k.gram(&x));
        let between = ok(k.gram_between(&x, &y));
        for size in [1, 3, 13] {
            let plan = TilePlan::of(&x, None, size);
            let m = assemble(&plan, 1, |t| ok(gram_tile(k, &x, None, t)), |g| &g.values);
            same_bits(&format!("{name} K(X) tile size {size}"), &m, &whole.values, x.len(), tol, &mut errors);
            let plan = TilePlan::of(&x, Some(&y), size);
            let m = assemble(&plan, 1, |t| ok(gram_tile(k, &x, Some(&y), t)), |g| &g.values);
            same_bits(&format!("{name} K(X, Y) tile size {size}"), &m, &between.values, y.len(), tol, &mut errors);
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

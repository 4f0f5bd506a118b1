//! Tiles of a Gram matrix: blocks K[rows, cols] as the unit of work of large runs (the CLI's
//! streamed output, `--rows/--cols` job arrays, the Python package's Dask arrays).
//!
//! ```text
//!            cols → band 0   band 1   band 2          K(X): only the tiles on or above the
//! rows  band 0    [ T00 ]  [ T01 ]  [ T02 ]          diagonal are computed; K[C, R] is the
//!  ↓    band 1     (T01ᵀ)  [ T11 ]  [ T12 ]          transpose of K[R, C].
//!       band 2     (T02ᵀ)   (T12ᵀ)  [ T22 ]          K(X, Y): every tile.
//! ```
//! Bands are cut where the running sum of the graphs' node counts crosses equal shares, so every
//! off-diagonal tile costs about the same Σ nᵢ·nⱼ (the product graphs' sizes), whatever the mix of
//! small and large graphs: workers stay balanced.
//!
//! A tile's values equal the same entries of the whole matrix bit for bit: each pair's value does
//! not depend on the other pairs evaluated with it, and a tile of K(X) evaluates every pair in the
//! orientation the whole matrix does (the lower index first).
use super::kernel::{GraphKernel, check_memory, finish_entries, finite};
use crate::error::{OctileError, Result};
use crate::graph::Graph;
use crate::matrix::{Gram, PairInfo};
use std::ops::Range;

/// A block K[rows, cols] of a Gram matrix (half-open index ranges over the inputs' order).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tile {
    /// Rows: indices into X.
    pub rows: Range<usize>,
    /// Columns: indices into X (K(X)) or Y (K(X, Y)).
    pub cols: Range<usize>,
}

impl Tile {
    /// Entries rows × cols.
    pub fn entries(&self) -> usize {
        self.rows.len() * self.cols.len()
    }

    /// Checks that the tile lies within a `rows` × `cols` matrix.
    pub fn check(&self, rows: usize, cols: usize) -> Result<()> {
        if self.rows.start > self.rows.end || self.cols.start > self.cols.end || self.rows.end > rows || self.cols.end > cols {
            return Err(OctileError::InvalidRequest(format!("tile rows {:?} × cols {:?} is outside the {rows} × {cols} matrix", self.rows, self.cols)));
        }
        Ok(())
    }

    /// A tile on the diagonal of K(X): the same graphs on both sides.
    fn square(&self, symmetric: bool) -> bool {
        symmetric && self.rows == self.cols
    }

    /// Distinct pairs the tile evaluates ([`gram_tile`]'s `pairs_solved`): one per entry, but in
    /// a tile of K(X) (`symmetric`) an entry and its mirror both in the tile are one pair: k graphs
    /// on both sides make k (k − 1) / 2 fewer (a tile on the diagonal: n (n + 1) / 2).
    pub fn pairs(&self, symmetric: bool) -> usize {
        let k = if symmetric { overlap(&self.rows, &self.cols).len() } else { 0 };
        self.entries() - k * k.saturating_sub(1) / 2
    }

    /// Whether this tile of the block K[`rows`, `cols`] of K(X) stands for its transpose too: off
    /// the diagonal, with its transpose inside the block ([`block_tiles`] lists one of the two and
    /// the transpose is written from it).
    pub fn mirrored_in(&self, rows: &Range<usize>, cols: &Range<usize>) -> bool {
        self.rows != self.cols && inside(&self.rows, cols) && inside(&self.cols, rows)
    }
}

/// The indices in both `a` and `b` (empty where they do not meet).
pub fn overlap(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    let start = a.start.max(b.start);
    start..a.end.min(b.end).max(start)
}

/// Whether `a` is non-empty and every index of it is in `b`.
fn inside(a: &Range<usize>, b: &Range<usize>) -> bool {
    !a.is_empty() && b.start <= a.start && a.end <= b.end
}

/// How a Gram matrix is cut into tiles: band boundaries of its rows and columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilePlan {
    /// Row band k is `row_bounds[k]..row_bounds[k + 1]`.
    pub row_bounds: Vec<usize>,
    /// Column band k is `col_bounds[k]..col_bounds[k + 1]` (K(X): the row bounds).
    pub col_bounds: Vec<usize>,
    /// K(X): only tiles on or above the diagonal are computed.
    pub symmetric: bool,
}

impl TilePlan {
    /// Tiles of K(X) (`y_nodes` None) or K(X, Y) for graphs with `x_nodes` (and `y_nodes`) nodes,
    /// with bands of about `tile_size` graphs (≥ 1) cut at equal shares of the node count.
    pub fn new(x_nodes: &[usize], y_nodes: Option<&[usize]>, tile_size: usize) -> TilePlan {
        let row_bounds = bands(x_nodes, tile_size);
        match y_nodes {
            None => TilePlan { col_bounds: row_bounds.clone(), row_bounds, symmetric: true },
            Some(y) => TilePlan { row_bounds, col_bounds: bands(y, tile_size), symmetric: false },
        }
    }

    /// The plan of the graphs `x` (and `y`).
    pub fn of(x: &[Graph], y: Option<&[Graph]>, tile_size: usize) -> TilePlan {
        let nodes = |s: &[Graph]| s.iter().map(Graph::n_nodes).collect::<Vec<_>>();
        TilePlan::new(&nodes(x), y.map(nodes).as_deref(), tile_size)
    }

    /// Rows × columns of the whole matrix.
    pub fn shape(&self) -> (usize, usize) {
        (self.row_bounds.last().copied().unwrap_or(0), self.col_bounds.last().copied().unwrap_or(0))
    }

    /// The tiles to compute, row band by row band (K(X): those on or above the diagonal).
    pub fn tiles(&self) -> Vec<Tile> {
        let band = |b: &[usize], k: usize| b[k]..b[k + 1];
        let (nr, nc) = (self.row_bounds.len().saturating_sub(1), self.col_bounds.len().saturating_sub(1));
        (0..nr)
            .flat_map(|i| (if self.symmetric { i } else { 0 }..nc).map(move |j| (i, j)))
            .map(|(i, j)| Tile { rows: band(&self.row_bounds, i), cols: band(&self.col_bounds, j) })
            .collect()
    }

    /// Distinct pairs the tiles evaluate (K(X): the upper triangle).
    pub fn pairs(&self) -> usize {
        let (r, c) = self.shape();
        if self.symmetric { r * (r + 1) / 2 } else { r * c }
    }
}

/// Graphs per tile side of a tiled Gram matrix (`octile gram`, `octile.dask.gram`) when none is
/// given. CPU tiles (`gpu` false) of ~16 k pairs keep an interruption's loss to seconds and let
/// workers share the work evenly. GPU tiles start at 2048 a side (~4 M pairs keep a device full)
/// and shrink until the `rows` × `cols` region (`mirrored`: K(X), the tiles on and above the
/// diagonal) has [`TILES_PER_DEVICE`] tiles per GPU (`devices`: `--devices`, or Dask's GPU
/// workers): each GPU computes several tiles at once, one's host work (packing, planning,
/// writing) beside the others' launches, and takes whole tiles from one queue; with few tiles it
/// idles while the last one finishes. They shrink down to [`MIN_SHARED_TILE`] where tiles of that
/// side reach the count, else to [`SMALL_SET_TILE`] (a set too small for that many tiles is cut
/// into few: MUTAG's 188 graphs in one tile took 6.0 ms, in three 6.7 ms). Two H200s, three tiles
/// in flight: NCI 5K on one GPU 0.95 s with 6 tiles of 2048, 0.74 s with 10 of 1536; four in
/// flight: NCI 5K on one GPU 0.66–0.70 s with 21 tiles of 864 against 0.72–0.80 s with 10 of 1536
/// (run 25); ChEMBL's 1,935 graphs on one H200: 0.273 s with 10 tiles of 512, 0.262 s with 21 of
/// 384, 0.260 s with 28 of 320 and 36 of 256, 0.277 s with 66 of 192 (`results/xmv-rows-h200.md`,
/// calls 18–19); ChEMBL three times over (5,805 graphs) 2.22 s with tiles of 256 to 864 alike.
pub fn default_tile_size(gpu: bool, devices: usize, rows: usize, cols: usize, mirrored: bool) -> usize {
    if !gpu {
        return 128;
    }
    let want = TILES_PER_DEVICE * devices.max(1);
    let floor = if tile_count(MIN_SHARED_TILE, rows, cols, mirrored) >= want { MIN_SHARED_TILE } else { SMALL_SET_TILE };
    let mut size = 2048;
    while size > floor && tile_count(size, rows, cols, mirrored) < want {
        size = (size * 3 / 4).max(floor);
    }
    size
}

/// Tiles of side `size` over a `rows` × `cols` region (`mirrored`: K(X), those on and above the
/// diagonal), as [`TilePlan`] cuts them.
fn tile_count(size: usize, rows: usize, cols: usize, mirrored: bool) -> usize {
    let (br, bc) = (rows.div_ceil(size), cols.div_ceil(size));
    if mirrored { br * (br + 1) / 2 } else { br * bc }
}

/// Tiles per GPU that [`default_tile_size`] aims for.
pub const TILES_PER_DEVICE: usize = 16;
/// The smallest default tile side on a GPU: 256 × 256 = 65 k pairs a tile, four tiles in flight
/// 262 k pairs, still enough to keep a GPU busy.
pub const MIN_SHARED_TILE: usize = 256;
/// The smallest default tile side on a GPU for a set too small to give each GPU
/// [`TILES_PER_DEVICE`] tiles of [`MIN_SHARED_TILE`]: sets of up to 512 graphs stay one tile.
pub const SMALL_SET_TILE: usize = 512;

/// The tiles of the block K[`rows`, `cols`] of K(X) over graphs of `x_nodes` node counts (global
/// indices, row band by row band), each unordered pair of the block in one tile only, whatever
/// `tile_size`. The block's square part S = `rows` ∩ `cols` (where it crosses the diagonal) is cut
/// into the same bands on both sides and only its tiles on or above the diagonal are listed, each
/// off the diagonal standing for its transpose too ([`Tile::mirrored_in`]); the rest of the
/// block, whose entries' mirrors lie outside it, is cut as [`TilePlan`] cuts K(X, Y).
///
/// ```text
///            cols → 10:20   20:30   30:40        rows 0:30 × cols 10:40 (tiles of 10): S = 10:30
/// rows   0:10      [ T ]   [ T ]   [ T ]         in the same bands on both sides; D on the
///  ↓    10:20      [ D ]   [ T ]   [ T ]         diagonal (K of its graphs); (Tᵀ) not computed,
///       20:30      (Tᵀ)    [ D ]   [ T ]         the transpose of the tile above it
/// ```
/// The whole of K(X) (`rows` = `cols`) gets [`TilePlan`]'s tiles of K(X), a block off the
/// diagonal its tiles of K(X, Y). A block outside the matrix is an error.
pub fn block_tiles(x_nodes: &[usize], rows: Range<usize>, cols: Range<usize>, tile_size: usize) -> Result<Vec<Tile>> {
    Tile { rows: rows.clone(), cols: cols.clone() }.check(x_nodes.len(), x_nodes.len())?;
    let square = overlap(&rows, &cols);
    let (row_bands, col_bands) = (block_bands(x_nodes, &rows, &square, tile_size), block_bands(x_nodes, &cols, &square, tile_size));
    Ok(row_bands
        .iter()
        .flat_map(|r| col_bands.iter().map(move |c| Tile { rows: r.clone(), cols: c.clone() }))
        // below the square part's diagonal: the transpose of a tile listed
        .filter(|t| !(inside(&t.rows, &square) && inside(&t.cols, &square) && t.rows.start > t.cols.start))
        .collect())
}

/// The bands of one side `side` of a block of K(X) ([`block_tiles`]): each part of it before, in
/// and after the square part `square` cut by [`bands`] on its own, so that the bands in `square`
/// are the same on both sides.
fn block_bands(x_nodes: &[usize], side: &Range<usize>, square: &Range<usize>, tile_size: usize) -> Vec<Range<usize>> {
    let mut cuts = vec![side.start, side.end];
    if !square.is_empty() {
        cuts.extend([square.start, square.end]);
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2)
        .flat_map(|w| {
            let b = bands(&x_nodes[w[0]..w[1]], tile_size);
            b.windows(2).map(|k| w[0] + k[0]..w[0] + k[1]).collect::<Vec<_>>()
        })
        .collect()
}

/// Band boundaries over graphs of `nodes` node counts: ⌈n / tile_size⌉ bands, each cut where the
/// running node count (each graph counted as at least 1) reaches its equal share; never empty.
pub fn bands(nodes: &[usize], tile_size: usize) -> Vec<usize> {
    let n = nodes.len();
    let k = n.div_ceil(tile_size.max(1));
    let total: u128 = nodes.iter().map(|&v| v.max(1) as u128).sum();
    let mut bounds = vec![0];
    let mut run: u128 = 0;
    for (i, &v) in nodes.iter().enumerate() {
        run += v.max(1) as u128;
        let band = bounds.len() as u128;
        // close band `band` once its share is reached, leaving one graph at least per later band
        if (band as usize) < k && run * k as u128 >= band * total && n - (i + 1) >= k - band as usize {
            bounds.push(i + 1);
        }
    }
    if *bounds.last().unwrap_or(&0) != n || bounds.len() == 1 {
        bounds.push(n);
    }
    bounds.dedup();
    bounds
}

/// The pairs a tile evaluates: its graphs (the rows', then the columns'), one pair per entry in
/// the orientation of the whole matrix, and — K(X) tiles on the diagonal — entries below it taken
/// from their mirror above it.
pub struct TilePairs<'a> {
    /// The tile's graphs: X[rows] then (X or Y)[cols] (copied), or a tile on the diagonal of K(X):
    /// X[rows] once (borrowed: a one-tile call copies no graph).
    pub graphs: std::borrow::Cow<'a, [Graph]>,
    /// Pairs of `graphs` to evaluate.
    pub pairs: Vec<(u32, u32)>,
    /// Which pair each entry's value is (see [`Mirror`]).
    mirror: Mirror,
    /// Rows and columns of the tile.
    pub rows: usize,
    pub cols: usize,
}

impl<'a> TilePairs<'a> {
    /// The pairs of `tile` of K(X) (`y` None) or K(X, Y); a tile outside the matrix is an error.
    pub fn of(x: &'a [Graph], y: Option<&[Graph]>, tile: &Tile) -> Result<TilePairs<'a>> {
        let cols_of = y.unwrap_or(x);
        tile.check(x.len(), cols_of.len())?;
        let (nr, nc) = (tile.rows.len(), tile.cols.len());
        let (r0, c0) = (tile.rows.start, tile.cols.start);
        let symmetric = y.is_none();
        // a tile on the diagonal of K(X) packs its graphs once
        let square = tile.square(symmetric);
        let graphs: std::borrow::Cow<'a, [Graph]> = if square {
            std::borrow::Cow::Borrowed(&x[tile.rows.clone()])
        } else {
            std::borrow::Cow::Owned(x[tile.rows.clone()].iter().chain(&cols_of[tile.cols.clone()]).cloned().collect())
        };
        let off = if square { 0 } else { nr };
        let mirrored = symmetric && tile.rows.start < tile.cols.end && tile.cols.start < tile.rows.end;
        if square {
            // the upper triangle, row by row: pair (a, b), a ≤ b, is Mirror::Square's index
            let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(nr * (nr + 1) / 2);
            pairs.extend((0..nr as u32).flat_map(|a| (a..nr as u32).map(move |b| (a, b))));
            return Ok(TilePairs { graphs, pairs, mirror: Mirror::Square, rows: nr, cols: nc });
        }
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(nr * nc);
        let mut slot: Vec<u32> = Vec::with_capacity(if mirrored { nr * nc } else { 0 });
        for a in 0..nr {
            for b in 0..nc {
                let (i, j) = (r0 + a, c0 + b);
                if symmetric && i > j {
                    if tile.rows.contains(&j) && tile.cols.contains(&i) {
                        // entry (j, i) of this tile, listed before this one (row j < row i)
                        let s = slot[(j - r0) * nc + (i - c0)];
                        slot.push(s);
                        continue;
                    }
                    pairs.push(((off + b) as u32, a as u32));
                } else {
                    pairs.push((a as u32, (off + b) as u32));
                }
                if mirrored {
                    slot.push((pairs.len() - 1) as u32);
                }
            }
        }
        let mirror = if mirrored { Mirror::Table(slot) } else { Mirror::None };
        Ok(TilePairs { graphs, pairs, mirror, rows: nr, cols: nc })
    }

    /// Per-pair results (`width` each, e.g. a gradient's P) laid out per entry, row-major: moved
    /// as they are where entry k is pair k, else by [`place`] with the tile's map of entries to
    /// pairs.
    pub fn gather<T: Copy + Send + Sync>(&self, per_pair: Vec<T>, width: usize) -> Vec<T> {
        let (rows, cols) = (self.rows, self.cols);
        match &self.mirror {
            Mirror::None => per_pair,
            Mirror::Table(slot) => place(per_pair, (rows, cols, width), |a, b| slot[a * cols + b] as usize),
            Mirror::Square => place(per_pair, (rows, cols, width), |a, b| if a <= b { square_pair(cols, a, b) } else { square_pair(cols, b, a) }),
        }
    }
}

/// Per-pair results (`width` each) laid out per entry of a `rows` × `cols` tile, row-major, entry
/// (a, b) taking pair `pair(a, b)`'s (one map per kind of tile, so no per-entry branch on the
/// kind), walked row by row (no division per entry). A small tile (below the pool's threshold,
/// `crate::parallel`): in the same buffer, grown to the entries and filled from the last entry
/// back (entry k's pair is never after k — each entry lists at most one new pair, in entry order —
/// so the pairs still to be read are not yet overwritten); a fresh buffer cost a MUTAG-size tile
/// (35 k entries) more in first-touch page faults than the copy. A large tile: a fresh buffer
/// filled on the pool.
fn place<T: Copy + Send + Sync>(mut per_pair: Vec<T>, (rows, cols, width): (usize, usize, usize), pair: impl Fn(usize, usize) -> usize + Sync) -> Vec<T> {
    let Some(&fill) = per_pair.first() else { return per_pair };
    if width == 0 {
        return per_pair;
    }
    if crate::parallel::pooled(rows * cols * width) {
        use rayon::prelude::*;
        let (per_pair, pair) = (&per_pair, &pair);
        return (0..rows)
            .into_par_iter()
            .flat_map_iter(|a| {
                (0..cols).flat_map(move |b| {
                    let s = pair(a, b);
                    per_pair[s * width..(s + 1) * width].iter().copied()
                })
            })
            .collect();
    }
    per_pair.resize(rows * cols * width, fill);
    for a in (0..rows).rev() {
        for b in (0..cols).rev() {
            let (k, s) = (a * cols + b, pair(a, b));
            if width == 1 {
                per_pair[k] = per_pair[s];
            } else if s != k {
                per_pair.copy_within(s * width..(s + 1) * width, k * width);
            }
        }
    }
    per_pair
}

/// The index of pair (r, c), r ≤ c, among the upper triangle of an n × n tile listed row by row:
/// rows 0..r hold n, n − 1, …, n − r + 1 pairs, then c − r more.
fn square_pair(n: usize, r: usize, c: usize) -> usize {
    r * n - r * (r + 1) / 2 + c
}

/// Which pair each entry of a tile is (entries row-major).
///
/// ```text
/// None     every tile of K(X, Y), and of K(X) apart from the diagonal: entry k is pair k
/// Square   a tile on the diagonal of K(X) (rows = columns): the pairs are its upper triangle
///          row by row, entry (a, b) is pair (min, max) of (a, b)
/// Table    any other tile of K(X) that meets or crosses the diagonal: a table of each entry's
///          pair (the identity where it only touches it)
/// ```
enum Mirror {
    None,
    Square,
    Table(Vec<u32>),
}

/// K[tile] of K(X) (`y` None) or K(X, Y), un-normalized, as a `rows.len()` × `cols.len()` Gram:
/// the same values as those entries of [`GraphKernel::gram`] / [`GraphKernel::gram_between`]
/// (module docs). Only the tile's graphs are packed. A pair that does not converge:
/// [`OctileError::NoConvergence`] with the whole tile (entries local to it); cancelled:
/// [`OctileError::Cancelled`] (a tile is kept whole or not at all).
pub fn gram_tile<K: GraphKernel + ?Sized>(kernel: &K, x: &[Graph], y: Option<&[Graph]>, tile: &Tile) -> Result<Gram> {
    let (nr, nc) = (tile.rows.len(), tile.cols.len());
    let cols_of = y.unwrap_or(x);
    tile.check(x.len(), cols_of.len())?;
    check_memory(kernel, nr, nc, nr * nc)?;
    crate::phases::mark("checked");
    // a tile on the diagonal of K(X) is K(X) of its graphs (transformed once, as the whole matrix)
    let xr = &x[tile.rows.clone()];
    let against = (!tile.square(y.is_none())).then(|| &cols_of[tile.cols.clone()]);
    if let Some(e) = kernel.evaluate_matrix(xr, against)? {
        if kernel.control().cancelled() {
            return Err(OctileError::Cancelled);
        }
        // a tile on the diagonal evaluates its upper triangle, as the whole matrix does
        let pairs = if against.is_none() { nr * (nr + 1) / 2 } else { nr * nc };
        return super::kernel::from_matrix(kernel, nr, nc, pairs, e);
    }
    let tp = TilePairs::of(x, y, tile)?;
    crate::phases::mark("paired");
    let e = finite(kernel.evaluate(&tp.graphs, &tp.pairs)?);
    crate::phases::mark("evaluated");
    if e.values.len() != tp.pairs.len() {
        return Err(OctileError::Internal(format!("{} values for the tile's {} pairs", e.values.len(), tp.pairs.len())));
    }
    if kernel.control().cancelled() {
        return Err(OctileError::Cancelled);
    }
    let exact = PairInfo { iterations: 0, residual: 0.0, converged: true };
    let info = if e.info.len() == e.values.len() { tp.gather(e.info, 1) } else { vec![exact; nr * nc] };
    let values = tp.gather(e.values, 1);
    crate::phases::mark("gathered");
    let g = Gram {
        rows: nr,
        cols: nc,
        values,
        info,
        pairs_solved: tp.pairs.len(),
        backend: kernel.backend_name().into(),
        device: kernel.device_name(),
        seconds: e.seconds,
        details: e.details,
        gradient: None,
    };
    finish_entries(g)
}

/// K[tile] normalized, K_ij / √(K_ii K_jj), with the diagonals `d_rows` (K_ii of the tile's rows)
/// and `d_cols` (of its columns): the same values as those entries of the normalized whole matrix
/// (`symmetric`: a tile of K(X), whose entries with i = j are 1 where K_ii = 0).
pub fn normalize_tile(g: &mut Gram, tile: &Tile, d_rows: &[f64], d_cols: &[f64], symmetric: bool) {
    let (r0, c0) = (tile.rows.start, tile.cols.start);
    super::kernel::normalize(g, d_rows, d_cols, |i, j| symmetric && r0 + i == c0 + j);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathered_entries_are_their_pairs_on_every_kind_of_tile() {
        // K(X) of 9 graphs: tiles on the diagonal (square), across it (table), off it (moved as
        // is), of K(X, Y); each pair's results are (first, second) graph indices, `width` copies
        let x: Vec<Graph> = (0..9).map(|n| Graph::new(n % 3 + 1, &[], &[])).collect();
        let y: Vec<Graph> = (0..4).map(|_| Graph::new(2, &[], &[])).collect();
        let tiles = [(0..9, 0..9), (2..7, 2..7), (4..5, 4..5), (3..8, 0..9), (0..4, 2..9), (0..3, 5..9), (6..9, 0..2), (0..0, 0..3)];
        for (against, y_opt) in [("K(X)", None), ("K(X, Y)", Some(&y[..]))] {
            for (rows, cols) in tiles.iter().cloned() {
                if y_opt.is_some() && cols.end > y.len() {
                    continue;
                }
                let tile = Tile { rows: rows.clone(), cols: cols.clone() };
                let tp = TilePairs::of(&x, y_opt, &tile).unwrap();
                // the tile's graphs back to their indices in X or Y (a square tile's: X[rows] alone)
                let whole = |g: u32| if (g as usize) < rows.len() { rows.start + g as usize } else { cols.start + g as usize - rows.len() };
                for width in [1, 3] {
                    let per_pair: Vec<(usize, usize)> = tp.pairs.iter().flat_map(|&(a, b)| std::iter::repeat_n((whole(a), whole(b)), width)).collect();
                    let got = tp.gather(per_pair, width);
                    assert_eq!(got.len(), rows.len() * cols.len() * width, "{against} {rows:?} × {cols:?}");
                    for (k, &(i, j)) in got.iter().enumerate() {
                        let (a, b) = ((k / width) / cols.len(), (k / width) % cols.len());
                        let (want_i, want_j) = (rows.start + a, cols.start + b);
                        // K(X) pairs are in the whole matrix's orientation (lower index first)
                        let want = if y_opt.is_none() { (want_i.min(want_j), want_i.max(want_j)) } else { (want_i, want_j) };
                        assert_eq!((i, j), want, "{against} {rows:?} × {cols:?}, width {width}, entry {k}: actual {:?}, expected {want:?}", (i, j));
                    }
                }
            }
        }
    }

    #[test]
    fn large_tiles_gather_on_the_pool_as_small_ones_in_place() {
        // past the pool's threshold (`crate::parallel::POOL_MIN_ITEMS` entries): a tile on the
        // diagonal and one across it, of 600 graphs
        let x: Vec<Graph> = (0..600).map(|_| Graph::new(1, &[], &[])).collect();
        for (rows, cols) in [(0..520, 0..520), (0..520, 60..600)] {
            let tile = Tile { rows: rows.clone(), cols: cols.clone() };
            assert!(crate::parallel::pooled(rows.len() * cols.len()));
            let tp = TilePairs::of(&x, None, &tile).unwrap();
            let graph = |g: u32| if (g as usize) < rows.len() { rows.start + g as usize } else { cols.start + g as usize - rows.len() };
            for width in [1, 2] {
                let per_pair: Vec<(usize, usize)> = tp.pairs.iter().flat_map(|&(a, b)| std::iter::repeat_n((graph(a), graph(b)), width)).collect();
                let got = tp.gather(per_pair, width);
                assert_eq!(got.len(), rows.len() * cols.len() * width);
                for (k, &(i, j)) in got.iter().enumerate() {
                    let (wi, wj) = (rows.start + (k / width) / cols.len(), cols.start + (k / width) % cols.len());
                    let want = (wi.min(wj), wi.max(wj));
                    assert_eq!((i, j), want, "{rows:?} × {cols:?}, width {width}, entry {k}: actual {:?}, expected {want:?}", (i, j));
                }
            }
        }
    }

    #[test]
    fn gpus_get_smaller_default_tiles_until_each_has_its_share() {
        // the CPU: the fixed size
        assert_eq!(default_tile_size(false, 1, 5000, 5000, true), 128);
        assert_eq!(default_tile_size(false, 4, 20008, 20008, true), 128);
        let count = tile_count;
        // the count is TilePlan's: a plan of that size has that many tiles
        for (rows, cols, mirrored, size) in [(5000, 5000, true, 1152), (3000, 700, false, 512), (10, 10, true, 512)] {
            let rn = vec![3; rows];
            let plan = if mirrored { TilePlan::new(&rn, None, size) } else { TilePlan::new(&rn, Some(&vec![3; cols]), size) };
            assert_eq!(plan.tiles().len(), count(size, rows, cols, mirrored), "{rows}×{cols}, {size}");
        }
        for (rows, cols, mirrored) in [
            (5000, 5000, true),
            (1935, 1935, true),
            (20008, 20008, true),
            (3000, 700, false),
            (1000, 1000, true),
            (400, 400, true),
            (10, 10, true),
            (0, 0, true),
        ] {
            for devices in [1, 2, 3, 8] {
                let (size, want) = (default_tile_size(true, devices, rows, cols, mirrored), TILES_PER_DEVICE * devices);
                assert!((MIN_SHARED_TILE..=2048).contains(&size), "{rows}×{cols} on {devices}: {size}");
                // enough tiles for every GPU; else the smallest size allowed: MIN_SHARED_TILE where
                // tiles of that side give enough, else SMALL_SET_TILE
                let floor = if count(MIN_SHARED_TILE, rows, cols, mirrored) >= want { MIN_SHARED_TILE } else { SMALL_SET_TILE };
                assert!(size >= floor, "{rows}×{cols} on {devices}: {size} below {floor}");
                assert!(count(size, rows, cols, mirrored) >= want || size == floor, "{rows}×{cols} on {devices}: {size}");
                // never smaller than needed: the next larger step would have too few
                if size < 2048 {
                    assert!(count(size * 4 / 3 + 1, rows, cols, mirrored) < want, "{rows}×{cols} on {devices}: {size}");
                }
            }
        }
        // NCI 5K: 21 tiles of 864 on one GPU, 36 of 648 on two; ChEMBL's 1,935 graphs: 21 of 364
        // (10 of 512 before tiles below 512); sets too small for 16 tiles of 256 stay at 512
        assert_eq!(default_tile_size(true, 1, 5000, 5000, true), 864);
        assert_eq!(default_tile_size(true, 2, 5000, 5000, true), 648);
        assert!(count(default_tile_size(true, 2, 5000, 5000, true), 5000, 5000, true) >= 32);
        assert_eq!(default_tile_size(true, 1, 1935, 1935, true), 364);
        assert_eq!(count(364, 1935, 1935, true), 21);
        assert_eq!(default_tile_size(true, 1, 400, 400, true), SMALL_SET_TILE);
        assert_eq!(default_tile_size(true, 1, 188, 188, true), SMALL_SET_TILE);
        // 20,008 graphs already have 55 tiles of 2048
        assert_eq!(default_tile_size(true, 2, 20008, 20008, true), 2048);
    }

    #[test]
    fn bands_cover_every_graph_once_and_balance_node_counts() {
        for (nodes, size) in [
            (vec![], 4),
            (vec![3], 4),
            (vec![3; 10], 4),
            (vec![3; 10], 1),
            (vec![0, 0, 0], 2),
            (vec![100, 1, 1, 1, 1, 1, 1, 1], 2),
            ((1..50).collect::<Vec<_>>(), 7),
        ] {
            let b = bands(&nodes, size);
            assert_eq!(b[0], 0, "{nodes:?}");
            assert_eq!(*b.last().unwrap(), nodes.len(), "{nodes:?}");
            assert!(b.windows(2).all(|w| w[0] < w[1]) || nodes.is_empty(), "{nodes:?} {size}: {b:?}");
            if !nodes.is_empty() {
                assert_eq!(b.len() - 1, nodes.len().div_ceil(size), "{nodes:?} {size}: {b:?}");
            }
        }
        // 1..49 in 7 bands: node sums within a factor 2 of each other (the last graph is 49)
        let nodes: Vec<usize> = (1..50).collect();
        let b = bands(&nodes, 7);
        let sums: Vec<usize> = b.windows(2).map(|w| nodes[w[0]..w[1]].iter().sum()).collect();
        let (lo, hi) = (*sums.iter().min().unwrap(), *sums.iter().max().unwrap());
        assert!(hi <= 2 * lo, "band node sums {sums:?}");
    }

    #[test]
    fn block_tiles_hold_each_unordered_pair_of_a_block_once_whatever_the_tile_size() {
        // blocks of K(X) of 13 graphs across the diagonal (the mirrored pairs of rows ∩ cols once),
        // touching it, off it, the whole matrix and empty ones
        let nodes = [5, 1, 7, 2, 9, 3, 3, 8, 1, 1, 4, 6, 2];
        let n = nodes.len();
        let blocks = [
            (0..13, 0..13),
            (0..9, 4..13),
            (4..13, 0..9),
            (2..11, 5..8),
            (5..8, 2..11),
            (0..6, 6..13),
            (6..13, 0..6),
            (0..5, 9..13),
            (3..3, 0..13),
            (4..9, 4..9),
        ];
        for (rows, cols) in blocks {
            let k = overlap(&rows, &cols).len();
            let want = rows.len() * cols.len() - k * k.saturating_sub(1) / 2;
            for tile_size in [1, 2, 3, 4, 5, 8, 100] {
                let what = format!("block {rows:?} × {cols:?}, tile size {tile_size}");
                let tiles = block_tiles(&nodes, rows.clone(), cols.clone(), tile_size).unwrap();
                // each entry of the block once: by its tile, or by the transpose of a mirrored one
                let mut seen = vec![0u32; n * n];
                for t in &tiles {
                    assert!(t.rows.start >= rows.start && t.rows.end <= rows.end && t.cols.start >= cols.start && t.cols.end <= cols.end, "{what}: {t:?}");
                    // a tile meets the diagonal only on it (its pairs then K(S) of its graphs)
                    assert!(overlap(&t.rows, &t.cols).is_empty() || t.rows == t.cols, "{what}: {t:?} straddles the diagonal");
                    for (i, j) in t.rows.clone().flat_map(|i| t.cols.clone().map(move |j| (i, j))) {
                        seen[i * n + j] += 1;
                        if t.mirrored_in(&rows, &cols) {
                            seen[j * n + i] += 1;
                        }
                    }
                }
                for (i, j) in rows.clone().flat_map(|i| cols.clone().map(move |j| (i, j))) {
                    assert_eq!(seen[i * n + j], 1, "{what}: entry ({i}, {j}) covered {} times, expected once", seen[i * n + j]);
                }
                assert_eq!(seen.iter().map(|&c| c as usize).sum::<usize>(), rows.len() * cols.len(), "{what}: entries outside the block");
                let pairs: usize = tiles.iter().map(|t| t.pairs(true)).sum();
                assert_eq!(pairs, want, "{what}: pairs evaluated {pairs}, expected {want} unordered pairs");
            }
        }
        // the whole matrix: TilePlan's tiles of K(X); a block off the diagonal: its tiles of K(X, Y)
        let shift = |t: Tile, r0: usize, c0: usize| Tile { rows: t.rows.start + r0..t.rows.end + r0, cols: t.cols.start + c0..t.cols.end + c0 };
        for tile_size in [1, 3, 4, 100] {
            assert_eq!(block_tiles(&nodes, 0..n, 0..n, tile_size).unwrap(), TilePlan::new(&nodes, None, tile_size).tiles(), "size {tile_size}");
            let off: Vec<Tile> = TilePlan::new(&nodes[0..5], Some(&nodes[9..13]), tile_size).tiles().into_iter().map(|t| shift(t, 0, 9)).collect();
            assert_eq!(block_tiles(&nodes, 0..5, 9..13, tile_size).unwrap(), off, "size {tile_size}");
        }
        // outside the matrix: an error, not a panic
        assert!(matches!(block_tiles(&nodes, 0..14, 0..3, 4), Err(OctileError::InvalidRequest(_))));
        let backwards = Range { start: 5, end: 3 };
        assert!(matches!(block_tiles(&nodes, backwards, 0..3, 4), Err(OctileError::InvalidRequest(_))));
    }

    #[test]
    fn a_tiles_pairs_count_an_entry_and_its_mirror_once() {
        let t = |rows: Range<usize>, cols: Range<usize>| Tile { rows, cols };
        // (tile, K(X)'s pairs, K(X, Y)'s)
        for (tile, symmetric, plain) in
            [(t(0..4, 0..4), 10, 16), (t(0..4, 4..9), 20, 20), (t(2..6, 0..9), 36 - 6, 36), (t(3..3, 0..9), 0, 0), (t(5..6, 5..6), 1, 1)]
        {
            assert_eq!((tile.pairs(true), tile.pairs(false)), (symmetric, plain), "{tile:?}");
        }
        // written with the transpose only off the diagonal, the transpose inside the block
        assert!(t(0..4, 4..9).mirrored_in(&(0..9), &(0..9)));
        assert!(t(2..4, 4..7).mirrored_in(&(0..7), &(2..9)));
        assert!(!t(0..2, 4..7).mirrored_in(&(0..7), &(2..9)), "rows 0..2 are not columns of the block");
        assert!(!t(4..7, 4..7).mirrored_in(&(0..9), &(0..9)), "on the diagonal");
        assert!(!t(3..3, 4..7).mirrored_in(&(0..9), &(0..9)), "empty");
    }

    #[test]
    fn tiles_cover_the_upper_triangle_or_the_whole_matrix_once() {
        let nodes = [5, 1, 7, 2, 9, 3, 3];
        for tile_size in 1..=8 {
            for y in [None, Some(&[4usize, 4, 1][..])] {
                let plan = TilePlan::new(&nodes, y, tile_size);
                let (r, c) = plan.shape();
                let mut seen = vec![0u32; r * c];
                for t in plan.tiles() {
                    for i in t.rows.clone() {
                        for j in t.cols.clone() {
                            seen[i * c + j] += 1;
                        }
                    }
                }
                for i in 0..r {
                    for j in 0..c {
                        let want = if y.is_none() && i > j { seen[j * c + i] } else { 1 };
                        if y.is_none() && i > j {
                            // a tile on the diagonal holds both (i, j) and (j, i)
                            assert!(seen[i * c + j] <= 1 && seen[j * c + i] == 1, "size {tile_size}: ({i}, {j})");
                        } else {
                            assert_eq!(seen[i * c + j], want, "size {tile_size} y {y:?}: entry ({i}, {j})");
                        }
                    }
                }
            }
        }
    }
}

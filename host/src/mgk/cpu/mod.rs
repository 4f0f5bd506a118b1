//! CPU solver: the shared Jacobi-preconditioned CG (`octile_types::pcg`, a team of one thread) with
//! the on-the-fly octile XMV, generic over f32/f64, one pair per rayon task. It reads the same packed octiles and tiled vectors as the GPU kernel, and
//! multiplies tile pairs with the same primitives (`octile_types::mgk::primitives`), chosen per tile
//! pair by the same kind of map, on tiles expanded once per pair into the workspace.
mod params;
mod product;

pub use params::CpuParams;

use crate::mgk::pack::PackedGraphs;
use octile_types::mgk::blocked::{GatheredKernel, rows_pair_blocked};
pub use octile_types::mgk::gradient::Rhs;
use octile_types::mgk::layout::{NODE_D, NODE_FEATURES};
use octile_types::mgk::primitives::{Primitive, row_pair};
use octile_types::mgk::tiling::{TILE, TILE_AREA, n_tiles, tiled_coords};
use octile_types::pcg::{Alone, Operator, PcgError, PcgInfo, PcgParams, PcgVectors, Residual, Start, info_of, pcg, pcg_refined};
use octile_types::{KernelSpec, Octile, PairKernel, PairStatus, Real};

/// Reusable per-thread vectors.
pub struct Workspace<T> {
    x: Vec<T>,
    r: Vec<T>,
    p: Vec<T>,
    ap: Vec<T>,
    diag: Vec<T>,
    /// Expanded octiles of the pair's two graphs.
    tiles: [Vec<T>; 2],
    /// The product form's buffers (`product`).
    product: product::ProductBuffers,
}

impl<T: Copy> Workspace<T> {
    /// The last solve's x (tiled layout, `octile_types::mgk::tiling`).
    pub fn x(&self) -> &[T] {
        &self.x
    }
    /// The last solve's two graphs' octiles, expanded ([`PackedGraphs::expand_graph`]).
    pub fn tiles(&self) -> [&[T]; 2] {
        [&self.tiles[0], &self.tiles[1]]
    }
}

impl<T> MixedWorkspace<T> {
    /// The last mixed-precision solve's x (f64, tiled layout).
    pub fn x64(&self) -> &[f64] {
        &self.x64
    }
    /// The last solve's two graphs' octiles, expanded in f64.
    pub fn tiles64(&self) -> [&[f64]; 2] {
        [&self.tiles64[0], &self.tiles64[1]]
    }
}

impl<T> Default for Workspace<T> {
    fn default() -> Self {
        Workspace {
            x: Vec::new(),
            r: Vec::new(),
            p: Vec::new(),
            ap: Vec::new(),
            diag: Vec::new(),
            tiles: [Vec::new(), Vec::new()],
            product: product::ProductBuffers::default(),
        }
    }
}

/// Output blocks (8×8) of a pair from which [`CpuParams::parallel_xmv`] splits an XMV.
pub const PARALLEL_XMV_MIN_BLOCKS: usize = 64;

/// Sizes of a pair: (n, m, mt, len).
fn dims<T>(set: &PackedGraphs<T>, g1: usize, g2: usize) -> (usize, usize, usize, usize) {
    let (n, m) = (set.n_nodes(g1), set.n_nodes(g2));
    let mt = n_tiles(m);
    (n, m, mt, n_tiles(n) * mt * TILE_AREA)
}

/// Bytes one thread's workspace can take for the pair (g1, g2): the solver's vectors over the
/// padded product (5 in T, and 5 in f64 for the mixed-precision path) and both graphs' expanded
/// octiles (in T and f64), and for the product form its matrix and vectors. Checked before
/// solving: a pair of two 100,000-node graphs needs terabytes, a typed error rather than an abort.
pub fn workspace_bytes<T>(set: &PackedGraphs<T>, g1: usize, g2: usize, prm: &CpuParams) -> u128 {
    let (_, _, _, len) = dims(set, g1, g2);
    let tiles = (set.graph_octiles(g1).len() + set.graph_octiles(g2).len()) as u128 * 64 * set.nz_stride as u128;
    let t = std::mem::size_of::<T>() as u128;
    let product = match product::product_bytes(set, g1, g2, prm) {
        Some(w) if t == 8 => w + product::vector_bytes(set, g1, g2),
        _ => 0,
    };
    len as u128 * (5 * t + 5 * 8) + tiles * (t + 8) + product
}

/// (diagonal of M, right-hand side) of tiled entry `idx`; padding gets (1, 0).
fn diag_rhs<T: Real>(set: &PackedGraphs<T>, g1: usize, g2: usize, node: &KernelSpec, idx: usize, rhs: Rhs) -> (T, T) {
    let (n, m, mt, _) = dims(set, g1, g2);
    let (i, ip) = tiled_coords(idx, mt);
    if i < n && ip < m {
        let (a1, a2) = (set.node_row(g1, i), set.node_row(g2, ip));
        let dd = a1[NODE_D] * a2[NODE_D];
        let b = a1[rhs.node_slot()] * a2[rhs.node_slot()];
        (dd / node.eval(&a1[NODE_FEATURES..], &a2[NODE_FEATURES..]), b)
    } else {
        (T::ONE, T::ZERO)
    }
}

/// K = Σ p_i p'_i' x_ii' (primal), or K = Σ d_i d′_i′ y_ii′ (adjoint: bᵀy with the primal's b).
fn kernel_value<T: Real, X: Real>(set: &PackedGraphs<T>, g1: usize, g2: usize, x: &[X], rhs: Rhs) -> f64 {
    let (n, m, mt, len) = dims(set, g1, g2);
    let w = rhs.value_slot();
    let mut k = 0.0f64;
    for (idx, xv) in x.iter().enumerate().take(len) {
        let (i, ip) = tiled_coords(idx, mt);
        if i < n && ip < m {
            k += set.node_row(g1, i)[w].to_f64() * set.node_row(g2, ip)[w].to_f64() * xv.to_f64();
        }
    }
    k
}

fn resize<T: Real>(ws: &mut Workspace<T>, len: usize) {
    for v in [&mut ws.x, &mut ws.r, &mut ws.p, &mut ws.ap, &mut ws.diag] {
        v.clear();
        v.resize(len, T::ZERO);
    }
}

/// M·p of one pair on the CPU (the tiled XMV plus the diagonal), for the shared PCG.
struct CpuOperator<'a, T> {
    set: &'a PackedGraphs<T>,
    g1: usize,
    g2: usize,
    prm: &'a CpuParams<'a>,
    tiles: [&'a [T]; 2],
    diag: &'a [T],
}

impl<T: Real> Operator<T, Alone> for CpuOperator<'_, T> {
    unsafe fn apply(&mut self, _: &mut Alone, p: *const T, ap: *mut T) -> f64 {
        let len = self.diag.len();
        // SAFETY: the PCG passes this pair's p and ap, `len` entries each, not aliasing `diag`.
        let (p, ap) = unsafe { (std::slice::from_raw_parts(p, len), std::slice::from_raw_parts_mut(ap, len)) };
        xmv(self.set, self.g1, self.g2, self.prm, self.tiles, p, self.diag, ap);
        p.iter().zip(ap.iter()).map(|(a, b)| a.to_f64() * b.to_f64()).sum()
    }
}

/// The refinement's true residual r64 = b − M·x64 on the CPU, in f64 from the f64 graphs.
struct CpuResidual<'a> {
    set64: &'a PackedGraphs<f64>,
    g1: usize,
    g2: usize,
    prm: &'a CpuParams<'a>,
    tiles64: [&'a [f64]; 2],
    diag64: &'a [f64],
    b64: &'a [f64],
    ap64: &'a mut [f64],
}

impl Residual<Alone> for CpuResidual<'_> {
    unsafe fn residual(&mut self, _: &mut Alone, x64: *const f64, r64: *mut f64) -> f64 {
        let len = self.b64.len();
        // SAFETY: the refinement passes this pair's x64 and r64, `len` entries each, not aliasing
        // the fields.
        let (x64, r64) = unsafe { (std::slice::from_raw_parts(x64, len), std::slice::from_raw_parts_mut(r64, len)) };
        xmv(self.set64, self.g1, self.g2, self.prm, self.tiles64, x64, self.diag64, self.ap64);
        let mut rr = 0.0;
        for ((r, b), ap) in r64.iter_mut().zip(self.b64.iter()).zip(self.ap64.iter()) {
            *r = b - ap;
            rr += *r * *r;
        }
        rr
    }
}

/// The pair's status from the PCG's outcome and the value.
fn status_of(outcome: &Result<PcgInfo, PcgError>, value: f64) -> PairStatus {
    let info = info_of(outcome);
    PairStatus { value, residual: info.relative_residual(), iterations: info.iterations, converged: outcome.is_ok() as u32 }
}

/// Solve the pair (g1, g2) of `set` by PCG in T directly (the f64 path: in the product form where
/// it fits, see `product`, else with the tile path's XMV); `rhs`: the primal system
/// (the status's value is K) or the adjoint (its value is bᵀy = K as well).
pub fn solve_pair<T: Real>(set: &PackedGraphs<T>, g1: usize, g2: usize, prm: &CpuParams, ws: &mut Workspace<T>, rhs: Rhs) -> PairStatus {
    if T::BYTES == 8 && product::product_bytes(set, g1, g2, prm).is_some() {
        let outcome = product::solve(set, g1, g2, prm, &mut ws.product, &mut ws.x, &mut ws.tiles, rhs);
        return status_of(&outcome, kernel_value(set, g1, g2, &ws.x, rhs));
    }
    let (_, _, _, len) = dims(set, g1, g2);
    resize(ws, len);
    set.expand_graph(g1, &mut ws.tiles[0]);
    set.expand_graph(g2, &mut ws.tiles[1]);
    for idx in 0..len {
        let (dg, b) = diag_rhs(set, g1, g2, prm.node, idx, rhs);
        ws.diag[idx] = dg;
        ws.r[idx] = b;
    }
    let v = PcgVectors { x: ws.x.as_mut_ptr(), r: ws.r.as_mut_ptr(), p: ws.p.as_mut_ptr(), ap: ws.ap.as_mut_ptr(), diag: ws.diag.as_ptr() };
    let mut op = CpuOperator { set, g1, g2, prm, tiles: [&ws.tiles[0], &ws.tiles[1]], diag: &ws.diag };
    let params = PcgParams { rtol: prm.rtol, max_iterations: prm.max_iterations };
    // SAFETY: the five vectors hold len entries each (resized above) and are disjoint; a team of one.
    let outcome = unsafe { pcg(&mut Alone, &mut op, v, len, params, Start::Residual) };
    status_of(&outcome, kernel_value(set, g1, g2, &ws.x, rhs))
}

/// Per-thread vectors of the mixed-precision path.
pub struct MixedWorkspace<T> {
    inner: Workspace<T>,
    x64: Vec<f64>,
    r64: Vec<f64>,
    ap64: Vec<f64>,
    diag64: Vec<f64>,
    b64: Vec<f64>,
    tiles64: [Vec<f64>; 2],
}

impl<T> Default for MixedWorkspace<T> {
    fn default() -> Self {
        MixedWorkspace {
            inner: Workspace::default(),
            x64: Vec::new(),
            r64: Vec::new(),
            ap64: Vec::new(),
            diag64: Vec::new(),
            b64: Vec::new(),
            tiles64: [Vec::new(), Vec::new()],
        }
    }
}

/// Mixed precision (T = f32), as on the GPU: the shared refinement (`octile_types::pcg::pcg_refined`)
/// with PCG in T on `set` as the inner solver and the residual b − M·x computed in f64 from `set64`
/// (the same graphs in f64), so the result meets the f64 tolerance instead of f32's cond(M)·ε.
pub fn solve_pair_mixed<T: Real>(
    set: &PackedGraphs<T>,
    set64: &PackedGraphs<f64>,
    g1: usize,
    g2: usize,
    prm: &CpuParams,
    ws: &mut MixedWorkspace<T>,
    rhs: Rhs,
) -> PairStatus {
    let (_, _, _, len) = dims(set, g1, g2);
    resize(&mut ws.inner, len);
    for v in [&mut ws.x64, &mut ws.r64, &mut ws.ap64, &mut ws.diag64, &mut ws.b64] {
        v.clear();
        v.resize(len, 0.0);
    }
    set.expand_graph(g1, &mut ws.inner.tiles[0]);
    set.expand_graph(g2, &mut ws.inner.tiles[1]);
    set64.expand_graph(g1, &mut ws.tiles64[0]);
    set64.expand_graph(g2, &mut ws.tiles64[1]);
    let mut bb = 0.0;
    for idx in 0..len {
        let (dg, b) = diag_rhs(set64, g1, g2, prm.node, idx, rhs);
        ws.diag64[idx] = dg;
        ws.inner.diag[idx] = T::from_f64(dg);
        ws.b64[idx] = b;
        ws.r64[idx] = b;
        bb += b * b;
    }
    let w = &mut ws.inner;
    let inner = PcgVectors { x: w.x.as_mut_ptr(), r: w.r.as_mut_ptr(), p: w.p.as_mut_ptr(), ap: w.ap.as_mut_ptr(), diag: w.diag.as_ptr() };
    let mut op = CpuOperator { set, g1, g2, prm, tiles: [&w.tiles[0], &w.tiles[1]], diag: &w.diag };
    let (x64, r64) = (ws.x64.as_mut_ptr(), ws.r64.as_mut_ptr());
    let mut res = CpuResidual { set64, g1, g2, prm, tiles64: [&ws.tiles64[0], &ws.tiles64[1]], diag64: &ws.diag64, b64: &ws.b64, ap64: &mut ws.ap64 };
    let params = PcgParams { rtol: prm.rtol, max_iterations: prm.max_iterations };
    // SAFETY: every vector holds len entries (resized above) and they are disjoint; a team of one.
    let outcome = unsafe { pcg_refined(&mut Alone, &mut op, &mut res, inner, x64, r64, len, params, bb) };
    status_of(&outcome, kernel_value(set64, g1, g2, &ws.x64, rhs))
}

/// ap = M·p: diagonal, minus the off-diagonal product tile pair by tile pair, each with the
/// primitive `prm.primitives` picks for the two tiles' nonzero counts. `tiles` are the two graphs'
/// octiles expanded by [`PackedGraphs::expand_graph`].
#[allow(clippy::too_many_arguments)]
pub fn xmv<T: Real>(set: &PackedGraphs<T>, g1: usize, g2: usize, prm: &CpuParams, tiles: [&[T]; 2], p: &[T], diag: &[T], ap: &mut [T]) {
    xmv_with(set, g1, g2, prm, prm.edge, &prm.dense, tiles, p, Some(diag), ap)
}

/// ap = diag·p − (A×⊙K×)·p with the kernel `edge` on the edges (κe, or a derivative of it for
/// the gradients' contractions, with `diag` = None: ap = −(A×⊙K×)·p); `dense` as in
/// [`CpuParams::dense`] (`usable = 0` for any kernel but κe).
#[allow(clippy::too_many_arguments)]
pub fn xmv_with<T: Real, K: PairKernel + Sync>(
    set: &PackedGraphs<T>,
    g1: usize,
    g2: usize,
    prm: &CpuParams,
    edge: &K,
    dense: &GatheredKernel,
    tiles: [&[T]; 2],
    p: &[T],
    diag: Option<&[T]>,
    ap: &mut [T],
) {
    let (nt, mt) = (n_tiles(set.n_nodes(g1)), n_tiles(set.n_nodes(g2)));
    let s = set.nz_stride;
    let (first1, first2) = (set.graph_octiles(g1).start, set.graph_octiles(g2).start);
    let expanded = |which: usize, o: usize, first: usize| &tiles[which][(o - first) * TILE_AREA * s..(o - first + 1) * TILE_AREA * s];
    // one tile row of G (all its output blocks: mt·64 values of ap)
    let tile_row = |bi: usize, row: &mut [T]| {
        for bip in 0..mt {
            let base = (bi * mt + bip) * TILE_AREA;
            let out = &mut row[bip * TILE_AREA..(bip + 1) * TILE_AREA];
            for k in 0..TILE_AREA {
                out[k] = diag.map_or(T::ZERO, |d| d[base + k] * p[base + k]);
            }
            for oa in set.row_octiles(g1, bi) {
                let ta = &set.octiles[oa];
                for ob in set.row_octiles(g2, bip) {
                    let tb = &set.octiles[ob];
                    let src = (ta.tile_col as usize * mt + tb.tile_col as usize) * TILE_AREA;
                    let prim = prm.primitives.choose(ta.nnz(), tb.nnz());
                    tile_pair_sub(prim, edge, dense, ta, tb, expanded(0, oa, first1), expanded(1, ob, first2), &p[src..src + TILE_AREA], s, out);
                }
            }
        }
    };
    let rows = &mut ap[..nt * mt * TILE_AREA];
    if prm.parallel_xmv && nt * mt >= PARALLEL_XMV_MIN_BLOCKS {
        use rayon::prelude::*;
        rows.par_chunks_mut(mt * TILE_AREA).enumerate().for_each(|(bi, row)| tile_row(bi, row));
    } else {
        for (bi, row) in rows.chunks_mut(mt * TILE_AREA).enumerate() {
            tile_row(bi, row);
        }
    }
}

/// out[ra·8 + rb] −= the tile pair's product, for all 64 outputs, with primitive `prim`.
/// `ea`/`eb` are expanded tiles (64·stride values), `pb` the 64-value p block; `dense` is
/// `GatheredKernel::of(edge)` (the walks dense in B use register blocking when it is usable).
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn tile_pair_sub<T: Real, K: PairKernel>(
    prim: Primitive,
    edge: &K,
    dense: &GatheredKernel,
    ta: &Octile,
    tb: &Octile,
    ea: &[T],
    eb: &[T],
    pb: &[T],
    stride: usize,
    out: &mut [T],
) {
    match prim {
        Primitive::DenseDense => tile_pair_g::<T, K, true, true>(edge, dense, ta, tb, ea, eb, pb, stride, out),
        Primitive::DenseSparse => tile_pair_g::<T, K, true, false>(edge, dense, ta, tb, ea, eb, pb, stride, out),
        Primitive::SparseDense => tile_pair_g::<T, K, false, true>(edge, dense, ta, tb, ea, eb, pb, stride, out),
        Primitive::SparseSparse => tile_pair_g::<T, K, false, false>(edge, dense, ta, tb, ea, eb, pb, stride, out),
    }
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn tile_pair_g<T: Real, K: PairKernel, const DA: bool, const DB: bool>(
    edge: &K,
    dense: &GatheredKernel,
    ta: &Octile,
    tb: &Octile,
    ea: &[T],
    eb: &[T],
    pb: &[T],
    stride: usize,
    out: &mut [T],
) {
    assert!(stride >= 1 && ea.len() >= TILE_AREA * stride && eb.len() >= TILE_AREA * stride && pb.len() >= TILE_AREA && out.len() >= TILE_AREA);
    assert!(dense.usable == 0 || dense.fits(stride));
    if DB && dense.usable != 0 {
        // register-blocked walk: rows ra and ra + 4 of A together, as a GPU lane does
        for ra in 0..TILE / 2 {
            let (ma0, ma1) = (ta.row_mask(ra as u32), ta.row_mask(ra as u32 + 4));
            if !DA && ma0 | ma1 == 0 {
                continue;
            }
            for rb in 0..TILE {
                // SAFETY: lengths and slot offsets asserted above; ra, ra + 4, rb < 8; masks are the rows' masks.
                let (s0, s1) = unsafe { rows_pair_blocked::<T, DA>(dense, ea.as_ptr(), eb.as_ptr(), pb.as_ptr(), stride, ra, ra + 4, rb, ma0, ma1) };
                out[ra * TILE + rb] -= s0;
                out[(ra + 4) * TILE + rb] -= s1;
            }
        }
        return;
    }
    for ra in 0..TILE {
        let ma = ta.row_mask(ra as u32);
        if !DA && ma == 0 {
            continue;
        }
        for rb in 0..TILE {
            let mb = tb.row_mask(rb as u32);
            if !DB && mb == 0 {
                continue;
            }
            // SAFETY: lengths asserted above; ra, rb < 8; masks are the rows' masks.
            out[ra * TILE + rb] -= unsafe { row_pair::<T, _, DA, DB>(edge, ea.as_ptr(), eb.as_ptr(), pb.as_ptr(), stride, ra, rb, ma, mb) };
        }
    }
}

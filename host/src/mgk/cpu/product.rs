//! The CPU's product form: a pair's off-diagonal product matrix A×⊙K× built once per pair — κe
//! evaluated once per pair of undirected edges, not once per CG iteration — and applied by every
//! iteration of the shared PCG as contiguous, vectorized streams.
//!
//! ```text
//! G (n nodes): CSR; nonzero a = (i, j)
//! G′ (m nodes): jagged diagonals — nodes renumbered by degree, descending (r = rank of node i′);
//!   slot s holds the s-th nonzero of nodes r = 0 .. m_s (m_s: nodes of degree > s), so a
//!   nonzero b = (slot s, r) lies at b = off_s + r, off_s = m_0 + … + m_{s−1}; nnz′ in all,
//!   padded with zeros to nb = ⌈nnz′/16⌉·16
//! W    : one row per undirected edge of G (a and its mirror (j, i) share it), nb columns
//!        W[edge(a)][b] = w_a · w′_b · κe(e_a, e′_b)
//! vectors (x, r, p, ap, diag): n·m f64, entry (i, r) at i·m + r
//! per XMV, for each node i of G:
//!   Q[j][b]       = p[j·m + col′(b)]                                 gather (once per XMV), n·nb
//!   T[b]          = Σ_{a ∈ row i of G} W[edge(a)][b] · Q[j_a][b]    stream, nnz·nb multiply-adds
//!   ap[i·m + r]   = diag·p − Σ_{s: r < m_s} T[off_s + r]             m_0 + m_1 + … = nnz′ subtractions
//! ```
//! Why: the tile path evaluates κe (an `exp` for a square exponential) for every product nonzero
//! in every iteration; here the inner loop reads two contiguous rows (W, Q) and does one
//! multiply-add per product nonzero, and the sums over G′'s rows are adds of contiguous runs —
//! all of it vectorized by the compiler (AVX-512 or AVX2 with FMA, picked at run time), no
//! segment of a row shorter than a vector. W of a molecule- or NWS-sized pair (10²–10⁵ entries)
//! stays in the core's cache for the whole solve, and each pair of undirected edges' κe is
//! computed once (a quarter of the product's nonzeros). Pairs whose W would exceed
//! [`PRODUCT_MAX_BYTES`] take the tile path. The solution is handed back in the tiled layout and
//! G′'s own node order, so K, the gradients' contractions and the nodal matrices read it as they
//! read the tile path's.
use super::params::CpuParams;
use crate::mgk::pack::PackedGraphs;
use octile_types::Real;
use octile_types::mgk::gradient::Rhs;
use octile_types::mgk::layout::{NODE_D, NODE_FEATURES, NZ_FEATURES, NZ_WEIGHT};
use octile_types::mgk::tiling::{TILE, n_tiles, tiled_index};
use octile_types::pcg::{Alone, Operator, PcgError, PcgInfo, PcgParams, PcgVectors, Start, pcg};

/// f64 entries of one AVX-512 vector: the chunk of the XMV's and dot products' loops.
const LANES: usize = 8;
/// A W row is padded to a multiple of this many columns: two vectors, the step the compiler
/// unrolls the row loops to (a row of an odd number of vectors left its last one to a scalar loop).
const ROW_ALIGN: usize = 2 * LANES;

/// Most bytes of W for a pair to take the product form; larger pairs take the tile path (their W
/// would not stay in cache, and each thread holds one).
pub const PRODUCT_MAX_BYTES: usize = 32 << 20;

/// One graph of a pair in CSR form, read out of its packed octiles (columns ascending in a row).
#[derive(Default)]
struct Csr {
    row_ptr: Vec<u32>,
    col: Vec<u32>,
    /// Per nonzero: offset of its row (weight, features) in the set's `edge_data`.
    data: Vec<usize>,
    /// Per nonzero: its undirected edge (a nonzero and its mirror share one).
    edge: Vec<u32>,
    /// Per undirected edge: its first nonzero (the one in the lower row).
    first: Vec<u32>,
}

impl Csr {
    /// Graph `g` of `set`.
    fn read<T>(&mut self, set: &PackedGraphs<T>, g: usize) {
        let n = set.n_nodes(g);
        let mut entries: Vec<(u32, u32, usize)> = Vec::new();
        for tr in 0..n_tiles(n) {
            for o in set.row_octiles(g, tr) {
                let t = &set.octiles[o];
                for (bit, idx) in t.nonzeros() {
                    let src = if set.compact { idx } else { t.nz_offset as usize + bit };
                    entries.push(((tr * TILE + bit / TILE) as u32, t.tile_col * TILE as u32 + (bit % TILE) as u32, src * set.nz_stride));
                }
            }
        }
        // a tile row's octiles come in column order, and a row's bits in column order inside a
        // tile: a stable sort by row leaves every row's columns ascending
        entries.sort_by_key(|e| e.0);
        self.row_ptr.clear();
        self.row_ptr.resize(n + 1, 0);
        for e in &entries {
            self.row_ptr[e.0 as usize + 1] += 1;
        }
        for i in 0..n {
            self.row_ptr[i + 1] += self.row_ptr[i];
        }
        self.col.clear();
        self.col.extend(entries.iter().map(|e| e.1));
        self.data.clear();
        self.data.extend(entries.iter().map(|e| e.2));
        self.edge.clear();
        self.first.clear();
        for (a, &(i, j, _)) in entries.iter().enumerate() {
            // (j, i) with j < i was numbered in row j, which came earlier
            let mirror = if j < i {
                let row = &self.col[self.row_ptr[j as usize] as usize..self.row_ptr[j as usize + 1] as usize];
                row.binary_search(&i).ok().map(|k| self.row_ptr[j as usize] as usize + k)
            } else {
                None
            };
            match mirror {
                Some(b) => self.edge.push(self.edge[b]),
                None => {
                    self.edge.push(self.first.len() as u32);
                    self.first.push(a as u32);
                }
            }
        }
    }

    fn nnz(&self) -> usize {
        self.col.len()
    }
}

/// Nonzeros of graph `g` (both triangles, a self-loop once).
fn nnz_of<T>(set: &PackedGraphs<T>, g: usize) -> usize {
    set.octiles[set.graph_octiles(g)].iter().map(|t| t.nnz() as usize).sum()
}

/// Columns of a W row for a second graph of `nnz` nonzeros.
fn padded(nnz: usize) -> usize {
    nnz.div_ceil(ROW_ALIGN) * ROW_ALIGN
}

/// Bytes of the pair's W (an upper bound: one row per nonzero of G), or `None` when the pair takes
/// the tile path (`solver = "tiles"`, or W above [`PRODUCT_MAX_BYTES`]).
pub fn product_bytes<T>(set: &PackedGraphs<T>, g1: usize, g2: usize, prm: &CpuParams) -> Option<u128> {
    if !prm.product_form {
        return None;
    }
    let w = nnz_of(set, g1) as u128 * padded(nnz_of(set, g2)) as u128 * 8;
    (w <= PRODUCT_MAX_BYTES as u128).then_some(w)
}

/// Bytes of the product form's other buffers: Q (n·nb), T (nb), the five vectors (n·m) and G′'s
/// jagged diagonals.
pub fn vector_bytes<T>(set: &PackedGraphs<T>, g1: usize, g2: usize) -> u128 {
    let (n, m) = (set.n_nodes(g1) as u128, set.n_nodes(g2) as u128);
    let nb = padded(nnz_of(set, g2)) as u128;
    8 * ((n + 2) * nb + 6 * n * m + 2 * m)
}

/// G′ in jagged diagonals (module docs).
#[derive(Default)]
struct Jagged {
    /// Rank r → node of G′.
    node: Vec<u32>,
    /// (off_s, m_s) of each slot.
    slots: Vec<(usize, usize)>,
    /// Per entry b < nb: its column as a rank (0 for padding).
    col: Vec<u32>,
    /// Per entry b < nnz′: its undirected edge.
    edge: Vec<u32>,
}

impl Jagged {
    /// G′ given in CSR; entries padded to `nb`.
    fn of(&mut self, c: &Csr, nb: usize) {
        let n = c.row_ptr.len() - 1;
        let deg = |i: usize| (c.row_ptr[i + 1] - c.row_ptr[i]) as usize;
        self.node.clear();
        self.node.extend(0..n as u32);
        self.node.sort_by_key(|&i| std::cmp::Reverse(deg(i as usize)));
        let mut rank = vec![0u32; n];
        for (r, &i) in self.node.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        self.slots.clear();
        self.col.clear();
        self.edge.clear();
        let max_deg = self.node.first().map_or(0, |&i| deg(i as usize));
        for s in 0..max_deg {
            let m_s = self.node.iter().take_while(|&&i| deg(i as usize) > s).count();
            self.slots.push((self.col.len(), m_s));
            for &i in &self.node[..m_s] {
                let a = c.row_ptr[i as usize] as usize + s;
                self.col.push(rank[c.col[a] as usize]);
                self.edge.push(c.edge[a]);
            }
        }
        self.col.resize(nb, 0);
    }
}

/// Per-thread buffers of the product form.
#[derive(Default)]
pub struct ProductBuffers {
    csr: [Csr; 2],
    jagged: Jagged,
    /// Per undirected edge of G′: weight and features in f64.
    edges2: Vec<f64>,
    /// One W row before it is spread over G′'s nonzeros: per undirected edge of G′.
    by_edge: Vec<f64>,
    w: Vec<f64>,
    q: Vec<f64>,
    t: Vec<f64>,
    x: Vec<f64>,
    r: Vec<f64>,
    p: Vec<f64>,
    ap: Vec<f64>,
    diag: Vec<f64>,
    inv_diag: Vec<f64>,
}

/// The pair's W (module docs), row e for G's undirected edge e, from `b.csr` and `b.jagged`.
fn build_w<T: Real>(set: &PackedGraphs<T>, prm: &CpuParams, b: &mut ProductBuffers, nb: usize) {
    let s = set.nz_stride;
    let [c1, c2] = &b.csr;
    let f64s = |d: usize| set.edge_data[d..d + s].iter().map(|v| v.to_f64());
    b.edges2.clear();
    for &a in &c2.first {
        b.edges2.extend(f64s(c2.data[a as usize]));
    }
    // every entry is written below (the padding too): no zeroing pass
    b.w.resize(c1.first.len() * nb, 0.0);
    let mut ea = vec![0.0; s];
    for (e, &a) in c1.first.iter().enumerate() {
        for (v, x) in ea.iter_mut().zip(f64s(c1.data[a as usize])) {
            *v = x;
        }
        b.by_edge.clear();
        b.by_edge.extend(b.edges2.chunks_exact(s).map(|eb| ea[NZ_WEIGHT] * (eb[NZ_WEIGHT] * prm.edge.eval(&ea[NZ_FEATURES..], &eb[NZ_FEATURES..]))));
        let row = &mut b.w[e * nb..(e + 1) * nb];
        let (used, padding) = row.split_at_mut(b.jagged.edge.len());
        for (out, &e2) in used.iter_mut().zip(&b.jagged.edge) {
            *out = b.by_edge[e2 as usize];
        }
        padding.fill(0.0);
    }
}

/// M·p of one pair in the product form, for the shared PCG.
struct ProductOperator<'a, const FMA: bool> {
    m: usize,
    nb: usize,
    c1: &'a Csr,
    jagged: &'a Jagged,
    w: &'a [f64],
    q: &'a mut [f64],
    t: &'a mut [f64],
    diag: &'a [f64],
    inv_diag: &'a [f64],
}

#[inline(always)]
fn madd<const FMA: bool>(a: f64, b: f64, c: f64) -> f64 {
    if FMA { a.mul_add(b, c) } else { a * b + c }
}

/// Σ a·b with LANES independent partial sums (vectorizable; a fixed order, so deterministic).
#[inline(always)]
fn dot<const FMA: bool>(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0f64; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..LANES {
            acc[k] = madd::<FMA>(x[k], y[k], acc[k]);
        }
    }
    let mut s = 0.0;
    for (x, y) in ra.iter().zip(rb) {
        s = madd::<FMA>(*x, *y, s);
    }
    acc.iter().sum::<f64>() + s
}

impl<const FMA: bool> ProductOperator<'_, FMA> {
    /// ap = diag·p − (A×⊙K×)·p; returns p·ap.
    #[inline(always)]
    fn xmv(&mut self, p: &[f64], ap: &mut [f64]) -> f64 {
        let (m, nb, c1, jg) = (self.m, self.nb, self.c1, self.jagged);
        let n = c1.row_ptr.len() - 1;
        for j in 0..n {
            let prow = &p[j * m..(j + 1) * m];
            for (qv, &c) in self.q[j * nb..(j + 1) * nb].iter_mut().zip(&jg.col) {
                // SAFETY: every column of `jg.col` is a rank < m (`Jagged::of`), and prow holds m
                // entries; unchecked, the loop compiles to vector gathers.
                *qv = unsafe { *prow.get_unchecked(c as usize) };
            }
        }
        let mut pap = 0.0;
        for i in 0..n {
            // T = Σ_a W[edge(a)] ⊙ Q[j_a]: whole rows, one vector multiply-add per 8 entries
            // (in chunks of exactly LANES = one vector: nb is a multiple of it, so no scalar
            // remainder loop; unrolled by two vectors, a 216-entry row left 8 entries scalar)
            let t = &mut self.t[..nb];
            let mut row = c1.row_ptr[i] as usize..c1.row_ptr[i + 1] as usize;
            match row.next() {
                None => t.fill(0.0),
                Some(a) => {
                    let (wr, qr) = (&self.w[c1.edge[a] as usize * nb..][..nb], &self.q[c1.col[a] as usize * nb..][..nb]);
                    for ((tv, w), q) in t.chunks_exact_mut(LANES).zip(wr.chunks_exact(LANES)).zip(qr.chunks_exact(LANES)) {
                        for k in 0..LANES {
                            tv[k] = w[k] * q[k];
                        }
                    }
                }
            }
            for a in row {
                let (wr, qr) = (&self.w[c1.edge[a] as usize * nb..][..nb], &self.q[c1.col[a] as usize * nb..][..nb]);
                for ((tv, w), q) in t.chunks_exact_mut(LANES).zip(wr.chunks_exact(LANES)).zip(qr.chunks_exact(LANES)) {
                    for k in 0..LANES {
                        tv[k] = madd::<FMA>(w[k], q[k], tv[k]);
                    }
                }
            }
            // ap row = diag·p − Σ_s T[slot s]: the slot sums subtracted in place, run by run
            let (pr, apr, dr) = (&p[i * m..(i + 1) * m], &mut ap[i * m..(i + 1) * m], &self.diag[i * m..(i + 1) * m]);
            for ((o, &d), &pv) in apr.iter_mut().zip(dr).zip(pr) {
                *o = d * pv;
            }
            for &(off, m_s) in &jg.slots {
                for (o, tv) in apr[..m_s].iter_mut().zip(&self.t[off..off + m_s]) {
                    *o -= tv;
                }
            }
            pap += dot::<FMA>(pr, apr);
        }
        pap
    }
}

impl<const FMA: bool> Operator<f64, Alone> for ProductOperator<'_, FMA> {
    #[inline(always)]
    unsafe fn apply(&mut self, _: &mut Alone, p: *const f64, ap: *mut f64) -> f64 {
        let len = self.diag.len();
        // SAFETY: the PCG passes this pair's p and ap, `len` entries each, not aliasing the
        // operator's own buffers.
        let (p, ap) = unsafe { (std::slice::from_raw_parts(p, len), std::slice::from_raw_parts_mut(ap, len)) };
        self.xmv(p, ap)
    }

    #[inline(always)]
    unsafe fn precondition(&self, r: f64, idx: usize, _: *const f64) -> f64 {
        // SAFETY: idx < len = inv_diag.len() (the PCG's contract); unchecked, the PCG's loops
        // vectorize (a bounds check per entry kept them scalar).
        r * unsafe { *self.inv_diag.get_unchecked(idx) }
    }
}

/// The PCG on the prepared buffers (`b` in `r`, `diag` and `inv_diag` set, x = 0).
#[inline(always)]
fn run<const FMA: bool>(b: &mut ProductBuffers, m: usize, nb: usize, params: PcgParams) -> Result<PcgInfo, PcgError> {
    let len = b.diag.len();
    let v = PcgVectors { x: b.x.as_mut_ptr(), r: b.r.as_mut_ptr(), p: b.p.as_mut_ptr(), ap: b.ap.as_mut_ptr(), diag: b.diag.as_ptr() };
    let mut op = ProductOperator::<FMA> { m, nb, c1: &b.csr[0], jagged: &b.jagged, w: &b.w, q: &mut b.q, t: &mut b.t, diag: &b.diag, inv_diag: &b.inv_diag };
    // SAFETY: the five vectors hold len entries each (resized by the caller) and are disjoint from
    // each other and from the operator's buffers; a team of one.
    unsafe { pcg(&mut Alone, &mut op, v, len, params, Start::Residual) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
fn run_avx512(b: &mut ProductBuffers, m: usize, nb: usize, params: PcgParams) -> Result<PcgInfo, PcgError> {
    run::<true>(b, m, nb, params)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn run_avx2(b: &mut ProductBuffers, m: usize, nb: usize, params: PcgParams) -> Result<PcgInfo, PcgError> {
    run::<true>(b, m, nb, params)
}

/// [`run`] compiled for the widest vector unit this CPU has.
fn run_dispatched(b: &mut ProductBuffers, m: usize, nb: usize, params: PcgParams) -> Result<PcgInfo, PcgError> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has the features the function is compiled for (checked above).
            return unsafe { run_avx512(b, m, nb, params) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: as above.
            return unsafe { run_avx2(b, m, nb, params) };
        }
    }
    run::<false>(b, m, nb, params)
}

/// Solve the pair (g1, g2) in the product form (f64) in the buffers `b`; x goes to `x` in the
/// tiled layout and both graphs' octiles are expanded into `tiles`, as the tile path leaves them.
#[allow(clippy::too_many_arguments)]
pub fn solve<T: Real>(
    set: &PackedGraphs<T>,
    g1: usize,
    g2: usize,
    prm: &CpuParams,
    b: &mut ProductBuffers,
    x: &mut Vec<T>,
    tiles: &mut [Vec<T>; 2],
    rhs: Rhs,
) -> Result<PcgInfo, PcgError> {
    let (n, m) = (set.n_nodes(g1), set.n_nodes(g2));
    b.csr[0].read(set, g1);
    b.csr[1].read(set, g2);
    let nb = padded(b.csr[1].nnz());
    b.jagged.of(&b.csr[1], nb);
    build_w(set, prm, b, nb);
    // sized, not zeroed: the gather writes all of Q, the XMV all of T and ap, the loop below r,
    // diag and 1/diag, the PCG's start p; only x starts at 0
    for (v, len) in
        [(&mut b.q, n * nb), (&mut b.t, nb), (&mut b.r, n * m), (&mut b.p, n * m), (&mut b.ap, n * m), (&mut b.diag, n * m), (&mut b.inv_diag, n * m)]
    {
        v.resize(len, 0.0);
    }
    b.x.clear();
    b.x.resize(n * m, 0.0);
    for i in 0..n {
        let a1 = set.node_row(g1, i);
        for (r, &ip) in b.jagged.node.iter().enumerate() {
            let a2 = set.node_row(g2, ip as usize);
            let kv: f64 = prm.node.eval_as(&a1[NODE_FEATURES..], &a2[NODE_FEATURES..]);
            let d = a1[NODE_D].to_f64() * a2[NODE_D].to_f64() / kv;
            b.diag[i * m + r] = d;
            b.inv_diag[i * m + r] = 1.0 / d;
            b.r[i * m + r] = a1[rhs.node_slot()].to_f64() * a2[rhs.node_slot()].to_f64();
        }
    }
    let outcome = run_dispatched(b, m, nb, PcgParams { rtol: prm.rtol, max_iterations: prm.max_iterations });
    let mt = n_tiles(m);
    x.clear();
    x.resize(n_tiles(n) * mt * TILE * TILE, T::ZERO);
    for i in 0..n {
        for (r, &ip) in b.jagged.node.iter().enumerate() {
            x[tiled_index(i, ip as usize, mt)] = T::from_f64(b.x[i * m + r]);
        }
    }
    set.expand_graph(g1, &mut tiles[0]);
    set.expand_graph(g2, &mut tiles[1]);
    outcome
}

//! CPU solver: Jacobi-preconditioned CG with the on-the-fly octile XMV, generic over f32/f64, one
//! pair per rayon task. It reads the same packed octiles and tiled vectors as the GPU kernel.
use crate::pack::PackedGraphs;
use octile_types::layout::{NODE_D, NODE_FEATURES, NODE_P, NZ_FEATURES, NZ_WEIGHT};
use octile_types::tiling::{TILE_AREA, n_tiles, tiled_coords};
use octile_types::{KernelSpec, PairStatus, Real};

/// Reusable per-thread vectors.
pub struct Workspace<T> {
    x: Vec<T>,
    r: Vec<T>,
    p: Vec<T>,
    ap: Vec<T>,
    diag: Vec<T>,
}

impl<T> Default for Workspace<T> {
    fn default() -> Self {
        Workspace { x: Vec::new(), r: Vec::new(), p: Vec::new(), ap: Vec::new(), diag: Vec::new() }
    }
}

/// Kernel and tolerances for [`solve_pair`].
pub struct CpuParams<'a> {
    /// κv.
    pub node: &'a KernelSpec,
    /// κe.
    pub edge: &'a KernelSpec,
    /// Relative residual tolerance.
    pub rtol: f64,
    /// Iteration limit.
    pub max_iterations: u32,
}

/// Solve the pair (g1, g2) of `set`.
pub fn solve_pair<T: Real>(set: &PackedGraphs<T>, g1: usize, g2: usize, prm: &CpuParams, ws: &mut Workspace<T>) -> PairStatus {
    let (n, m) = (set.n_nodes(g1), set.n_nodes(g2));
    let mt = n_tiles(m);
    let len = n_tiles(n) * mt * TILE_AREA;
    for v in [&mut ws.x, &mut ws.r, &mut ws.p, &mut ws.ap, &mut ws.diag] {
        v.clear();
        v.resize(len, T::ZERO);
    }
    let (mut rho, mut bb) = (0.0f64, 0.0f64);
    for idx in 0..len {
        let (i, ip) = tiled_coords(idx, mt);
        let (dg, b) = if i < n && ip < m {
            let (a1, a2) = (set.node_row(g1, i), set.node_row(g2, ip));
            let dd = a1[NODE_D] * a2[NODE_D];
            (dd / prm.node.eval(&a1[NODE_FEATURES..], &a2[NODE_FEATURES..]), dd)
        } else {
            (T::ONE, T::ZERO)
        };
        let z = b / dg;
        ws.diag[idx] = dg;
        ws.r[idx] = b;
        ws.p[idx] = z;
        rho += b.to_f64() * z.to_f64();
        bb += b.to_f64() * b.to_f64();
    }
    let tol2 = prm.rtol * prm.rtol * bb;
    let mut rr = bb;
    let mut iterations = 0;
    let mut converged = rr <= tol2;
    while !converged && iterations < prm.max_iterations {
        xmv(set, g1, g2, prm.edge, &ws.p, &ws.diag, &mut ws.ap);
        let pap: f64 = ws.p.iter().zip(&ws.ap).map(|(a, b)| a.to_f64() * b.to_f64()).sum();
        if !(pap > 0.0) {
            break;
        }
        let alpha = T::from_f64(rho / pap);
        let (mut rho_new, mut rr_new) = (0.0f64, 0.0f64);
        for idx in 0..len {
            ws.x[idx] += alpha * ws.p[idx];
            let ri = ws.r[idx] - alpha * ws.ap[idx];
            ws.r[idx] = ri;
            let zi = ri / ws.diag[idx];
            rho_new += ri.to_f64() * zi.to_f64();
            rr_new += ri.to_f64() * ri.to_f64();
        }
        rr = rr_new;
        iterations += 1;
        if rr <= tol2 {
            converged = true;
            break;
        }
        let beta = T::from_f64(rho_new / rho);
        rho = rho_new;
        for idx in 0..len {
            ws.p[idx] = ws.r[idx] / ws.diag[idx] + beta * ws.p[idx];
        }
    }
    let mut k = 0.0f64;
    for idx in 0..len {
        let (i, ip) = tiled_coords(idx, mt);
        if i < n && ip < m {
            k += set.node_row(g1, i)[NODE_P].to_f64() * set.node_row(g2, ip)[NODE_P].to_f64() * ws.x[idx].to_f64();
        }
    }
    PairStatus { value: k, residual: (rr / bb).sqrt(), iterations, converged: converged as u32 }
}

/// ap = M·p: diagonal, minus the off-diagonal product tile pair by tile pair, walking the set bits
/// of both octiles (sparse × sparse) over their compact nonzeros.
pub fn xmv<T: Real>(set: &PackedGraphs<T>, g1: usize, g2: usize, edge: &KernelSpec, p: &[T], diag: &[T], ap: &mut [T]) {
    let (nt, mt) = (n_tiles(set.n_nodes(g1)), n_tiles(set.n_nodes(g2)));
    let s = set.nz_stride;
    for bi in 0..nt {
        for bip in 0..mt {
            let base = (bi * mt + bip) * TILE_AREA;
            let out = &mut ap[base..base + TILE_AREA];
            for k in 0..TILE_AREA {
                out[k] = diag[base + k] * p[base + k];
            }
            for ta in &set.octiles[set.row_octiles(g1, bi)] {
                for tb in &set.octiles[set.row_octiles(g2, bip)] {
                    let src = (ta.tile_col as usize * mt + tb.tile_col as usize) * TILE_AREA;
                    let pb = &p[src..src + TILE_AREA];
                    let mut ma = ta.nz_mask;
                    let mut ka = ta.nz_offset as usize;
                    while ma != 0 {
                        let bit_a = ma.trailing_zeros() as usize;
                        ma &= ma - 1;
                        let ea = &set.edge_data[ka * s..(ka + 1) * s];
                        ka += 1;
                        let (ra, j) = (bit_a / 8, bit_a % 8);
                        let mut mb = tb.nz_mask;
                        let mut kb = tb.nz_offset as usize;
                        while mb != 0 {
                            let bit_b = mb.trailing_zeros() as usize;
                            mb &= mb - 1;
                            let eb = &set.edge_data[kb * s..(kb + 1) * s];
                            kb += 1;
                            let (rb, jp) = (bit_b / 8, bit_b % 8);
                            let ke = edge.eval(&ea[NZ_FEATURES..], &eb[NZ_FEATURES..]);
                            out[ra * 8 + rb] -= ea[NZ_WEIGHT] * eb[NZ_WEIGHT] * ke * pb[j * 8 + jp];
                        }
                    }
                }
            }
        }
    }
}

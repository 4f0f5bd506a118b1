//! The fast graphlet transform's host/device boundary (FGlT: Floros, Pitsianis & Sun; the CUDA
//! design of `../shared/papers/graphlet-transform-cuda.txt`): for every node of a simple undirected
//! graph, how often it takes each of the 16 orbits σ0–σ15 of the graphlets with up to 4 nodes.
//!
//! Every backend computes per node the same few sums (the *row sums* below: sparse products with
//! A and A ⊙ A² that never form A²), then the **raw** frequencies d̂0–d̂15 from them
//! ([`finish_pass1`], [`finish_pass2`]) and the **net** frequencies d0–d15 ([`raw_to_net`]),
//! exactly as FGlT's `compute` does (the CPU and the GPU kernels share them; GPU layouts: [`launch`]), in checked `i64` arithmetic: a count past `i64::MAX` is an
//! error on both sides, never a wrapped value (FGlT's doubles are exact only up to 2⁵³).
//!
//! ```text
//! node i, d = deg(i), w_ij = |N(i) ∩ N(j)| (= (A²)_ij for j ≠ i), c3(j,k) = w_jk on an edge
//! pass 1 (rows of A and of the 2-walks from i)     pass 2 (needs pass 1 of the neighbours)
//!   s_deg  = Σ_{k∈N(i)} d_k                          s5  = Σ_{k∈N(i)} d̂2_k
//!   s_t04  = Σ_{k∈N(i)} C(d_k − 1, 2)                s9  = Σ_{k∈N(i)} d̂4_k
//!   c4     = Σ_{j≠i} C(w_ij, 2)                      s13 = Σ_{triangles {i,j,k}} (c3(j,k) − 1)
//!   tri2   = Σ_{j∈N(i)} w_ij        (= 2·d̂4)         k4  = 4-cliques containing i
//!   s10    = Σ_{j∈N(i)} w_ij·(d_j − 2)
//!   s14    = Σ_{j∈N(i)} w_ij²
//! out[i·16 + o]   i64, node-major: one row of 16 per node, the layout of the n × 16 result
//! ```
//! Why node-major: the result is the user's n × 16 matrix as is (`.npy`, row per node), and a
//! node's 16 values are written by one thread as one 128-byte row.

pub mod launch;

/// The number of orbits (σ0–σ15) of the graphlets with up to 4 nodes.
pub const N_ORBITS: usize = 16;

/// The orbits, in FGlT's order (pyfglt's column names without the `[k] ` prefix).
pub const ORBIT_NAMES: [&str; N_ORBITS] = [
    "vertex",
    "degree",
    "2-path",
    "bifork",
    "3-cycle",
    "3-path, end",
    "3-path, interior",
    "claw, leaf",
    "claw, root",
    "paw, handle",
    "paw, base",
    "paw, center",
    "4-cycle",
    "diamond, off-cord",
    "diamond, on-cord",
    "4-clique",
];

/// Pass 1's row sums of one node (see the module picture).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pass1Sums {
    /// deg(i).
    pub d: i64,
    /// Σ_{k∈N(i)} d_k.
    pub s_deg: i64,
    /// Σ_{k∈N(i)} C(d_k − 1, 2).
    pub s_t04: i64,
    /// Σ_{j≠i} C(w_ij, 2).
    pub c4: i64,
    /// Σ_{j∈N(i)} w_ij.
    pub tri2: i64,
    /// Σ_{j∈N(i)} w_ij·(d_j − 2).
    pub s10: i64,
    /// Σ_{j∈N(i)} w_ij².
    pub s14: i64,
}

/// Pass 2's row sums of one node (see the module picture).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pass2Sums {
    /// Σ_{k∈N(i)} d̂2_k.
    pub s5: i64,
    /// Σ_{k∈N(i)} d̂4_k.
    pub s9: i64,
    /// Σ over triangles {i, j, k} of (c3(j, k) − 1).
    pub s13: i64,
    /// 4-cliques containing i.
    pub k4: i64,
}

const _: () = assert!(core::mem::size_of::<Pass1Sums>() == 56 && core::mem::align_of::<Pass1Sums>() == 8);
const _: () = assert!(core::mem::size_of::<Pass2Sums>() == 32 && core::mem::align_of::<Pass2Sums>() == 8);

/// C(x − 1, 2) = (x − 1)(x − 2)/2, FGlT's `t04` (0 for x ≤ 2), checked.
#[inline(always)]
pub fn t04(x: i64) -> Option<i64> {
    if x <= 2 { Some(0) } else { (x - 1).checked_mul(x - 2).map(|p| p / 2) }
}

/// C(w, 2) = w(w − 1)/2, checked.
#[inline(always)]
pub fn choose2(w: i64) -> Option<i64> {
    if w <= 1 { Some(0) } else { w.checked_mul(w - 1).map(|p| p / 2) }
}

/// Raw frequencies d̂0–d̂4, d̂6–d̂8, d̂10–d̂12, d̂14 of one node from its pass-1 sums (FGlT's
/// `p2`, `spmv_first_pass` and `compute_all_available`); d̂5, d̂9, d̂13, d̂15 are left 0 for
/// [`finish_pass2`]. `None`: a value exceeds `i64`.
#[inline(always)]
pub fn finish_pass1(s: &Pass1Sums) -> Option<[i64; N_ORBITS]> {
    let d = s.d;
    let mut r = [0i64; N_ORBITS];
    r[0] = 1;
    r[1] = d;
    r[2] = s.s_deg.checked_sub(d)?;
    r[3] = choose2(d)?;
    r[4] = s.tri2 / 2;
    r[6] = r[2].checked_mul(d - 1)?.checked_sub(r[4].checked_mul(2)?)?;
    r[7] = s.s_t04;
    // C(d, 3) = d·C(d − 1, 2)/3, exact: d(d − 1)(d − 2) is a multiple of 6
    r[8] = d.checked_mul(t04(d)?)? / 3;
    r[10] = s.s10;
    r[11] = (d - 2).checked_mul(r[4])?;
    r[12] = s.c4;
    r[14] = (s.s14 / 2).checked_sub(r[4])?;
    Some(r)
}

/// d̂5, d̂9, d̂13, d̂15 of one node into its pass-1 row `r` (FGlT's `spmv_second_pass`,
/// `compute_d13`, `compute_k4`). `None`: a value exceeds `i64`.
#[inline(always)]
pub fn finish_pass2(r: &mut [i64; N_ORBITS], s: &Pass2Sums) -> Option<()> {
    let d = r[1];
    r[5] = s.s5.checked_sub(d.checked_mul(d - 1)?)?.checked_sub(r[4].checked_mul(2)?)?;
    r[9] = s.s9.checked_sub(r[4].checked_mul(2)?)?;
    r[13] = s.s13;
    r[15] = s.k4;
    Some(())
}

/// The net frequencies d0–d15 from the raw d̂0–d̂15 (FGlT's `raw2net`: the inverse of the
/// auxiliary table's overlap counts). `None`: a value exceeds `i64`.
#[inline(always)]
pub fn raw_to_net(d: &[i64; N_ORBITS]) -> Option<[i64; N_ORBITS]> {
    // (orbit, [(raw index, coefficient)]) rows of FGlT's raw2net, zero coefficients left out
    const ROWS: [&[(usize, i64)]; N_ORBITS] = [
        &[(0, 1)],
        &[(1, 1)],
        &[(2, 1), (4, -2)],
        &[(3, 1), (4, -1)],
        &[(4, 1)],
        &[(5, 1), (9, -2), (10, -1), (12, -2), (13, 4), (14, 2), (15, -6)],
        &[(6, 1), (10, -1), (11, -2), (12, -2), (13, 2), (14, 4), (15, -6)],
        &[(7, 1), (9, -1), (10, -1), (13, 2), (14, 1), (15, -3)],
        &[(8, 1), (11, -1), (14, 1), (15, -1)],
        &[(9, 1), (13, -2), (15, 3)],
        &[(10, 1), (13, -2), (14, -2), (15, 6)],
        &[(11, 1), (14, -2), (15, 3)],
        &[(12, 1), (13, -1), (14, -1), (15, 3)],
        &[(13, 1), (15, -3)],
        &[(14, 1), (15, -3)],
        &[(15, 1)],
    ];
    let mut f = [0i64; N_ORBITS];
    let mut o = 0;
    while o < N_ORBITS {
        let mut acc = 0i64;
        let row = ROWS[o];
        let mut t = 0;
        while t < row.len() {
            acc = acc.checked_add(d[row[t].0].checked_mul(row[t].1)?)?;
            t += 1;
        }
        f[o] = acc;
        o += 1;
    }
    Some(f)
}

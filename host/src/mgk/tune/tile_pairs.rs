//! Sets of random tile pairs and the tile-pair primitives applied to them on the CPU and the GPU —
//! what `octile tune` times and what the primitive tests check against a dense f64 reference (the GPU
//! side is [`super::tile_bench`]).
use crate::mgk::config::{DenseWalk, gathered};
use crate::mgk::cpu::tile_pair_sub;
use crate::mgk::pack::expand_octile;
use octile_types::kernel_spec::{BaseKernel, Combine, KernelSpec};
use octile_types::mgk::layout::NZ_FEATURES;
use octile_types::mgk::primitives::Primitive;
use octile_types::mgk::tiling::TILE_AREA;
use octile_types::{Octile, Real};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Tile pairs in compact storage: pair k = octiles 2k (A) and 2k+1 (B), p block k.
#[derive(Clone, Debug, PartialEq)]
pub struct TilePairs<T> {
    /// 2 per pair.
    pub octiles: Vec<Octile>,
    /// Compact nonzeros, `nz_stride` values each.
    pub edge_data: Vec<T>,
    /// 64 per pair.
    pub pblocks: Vec<T>,
    /// Values per nonzero (1 + edge features).
    pub nz_stride: usize,
}

impl<T> TilePairs<T> {
    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.octiles.len() / 2
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.octiles.is_empty()
    }
}

impl<T: Copy> TilePairs<T> {
    /// `n` pairs cycling through these (sharing their nonzero rows): fills every warp slot of a
    /// GPU with a few distinct pairs.
    pub fn cycled(&self, n: usize) -> TilePairs<T> {
        let mut full = TilePairs {
            octiles: Vec::with_capacity(2 * n),
            edge_data: self.edge_data.clone(),
            pblocks: Vec::with_capacity(TILE_AREA * n),
            nz_stride: self.nz_stride,
        };
        for k in 0..n {
            let j = k % self.len();
            full.octiles.extend_from_slice(&self.octiles[2 * j..2 * j + 2]);
            full.pblocks.extend_from_slice(&self.pblocks[TILE_AREA * j..TILE_AREA * (j + 1)]);
        }
        full
    }
}

impl TilePairs<f64> {
    /// The same pairs in precision T.
    pub fn to<T: Real>(&self) -> TilePairs<T> {
        TilePairs {
            octiles: self.octiles.clone(),
            edge_data: self.edge_data.iter().map(|&v| T::from_f64(v)).collect(),
            pblocks: self.pblocks.iter().map(|&v| T::from_f64(v)).collect(),
            nz_stride: self.nz_stride,
        }
    }
}

/// The edge kernel `octile tune` and the tests use for labeled tiles: two edge features, a
/// Kronecker delta on a bond order (h = 0.5) times a square exponential on a length (ℓ = 1).
pub fn labeled_edge_kernel() -> KernelSpec {
    let mut k = KernelSpec::unit();
    k.combine = Combine::Product as u32;
    k.n_terms = 2;
    k.terms[0] = BaseKernel::kronecker_delta(0, 0.5);
    k.terms[1] = BaseKernel::square_exponential(1, 1.0);
    k
}

/// The cheap labeled edge kernel `octile tune` measures (`labeled_cheap` maps): one Kronecker delta
/// on edge feature 0.
pub fn cheap_edge_kernel() -> KernelSpec {
    let mut k = KernelSpec::unit();
    k.combine = Combine::Product as u32;
    k.n_terms = 1;
    k.terms[0] = BaseKernel::kronecker_delta(0, 0.5);
    k
}

/// Edge features per nonzero for the labeled / unlabeled kernels above.
pub fn edge_features(labeled: bool) -> usize {
    if labeled { 2 } else { 0 }
}

/// `count` random pairs whose A tiles have exactly `nnz_a` and B tiles `nnz_b` nonzeros (0..=64),
/// random weights in (0, 1], random labels (bond order 1..=3, length in [1, 2)) when `labeled`,
/// random p in [−1, 1].
pub fn random_pairs(nnz_a: u32, nnz_b: u32, count: usize, labeled: bool, seed: u64) -> TilePairs<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((nnz_a as u64) << 32) ^ ((nnz_b as u64) << 40));
    let nf = edge_features(labeled);
    let mut out =
        TilePairs { octiles: Vec::with_capacity(2 * count), edge_data: Vec::new(), pblocks: Vec::with_capacity(64 * count), nz_stride: NZ_FEATURES + nf };
    let mut bits: Vec<u32> = (0..64).collect();
    for _ in 0..count {
        for nnz in [nnz_a, nnz_b] {
            bits.shuffle(&mut rng);
            let mask = bits[..nnz.min(64) as usize].iter().fold(0u64, |m, &b| m | (1u64 << b));
            let nz_offset = (out.edge_data.len() / out.nz_stride) as u32;
            out.octiles.push(Octile { nz_mask: mask, tile_row: 0, tile_col: 0, nz_offset, _pad: 0 });
            for _ in 0..mask.count_ones() {
                out.edge_data.push(rng.gen_range(0.0..1.0f64).max(1e-3));
                if labeled {
                    out.edge_data.push(rng.gen_range(1..=3) as f64);
                    out.edge_data.push(rng.gen_range(1.0..2.0f64));
                }
            }
        }
        out.pblocks.extend((0..TILE_AREA).map(|_| rng.gen_range(-1.0..1.0f64)));
    }
    out
}

/// The product of every pair with `prim` on the CPU, summed over `reps` repeats (64 values per
/// pair, output entry ra·8 + rb); `walk`: how D and R walk B.
pub fn cpu_products<T: Real>(pairs: &TilePairs<T>, edge: &KernelSpec, prim: Primitive, walk: DenseWalk, reps: u32) -> Vec<T> {
    let s = pairs.nz_stride;
    let (mut ea, mut eb) = (vec![T::ZERO; TILE_AREA * s], vec![T::ZERO; TILE_AREA * s]);
    let mut out = vec![T::ZERO; TILE_AREA * pairs.len()];
    let dense = gathered(edge, walk);
    for k in 0..pairs.len() {
        let (ta, tb) = (&pairs.octiles[2 * k], &pairs.octiles[2 * k + 1]);
        expand_octile(ta, &pairs.edge_data, s, true, &mut ea);
        expand_octile(tb, &pairs.edge_data, s, true, &mut eb);
        let pb = &pairs.pblocks[k * TILE_AREA..(k + 1) * TILE_AREA];
        let o = &mut out[k * TILE_AREA..(k + 1) * TILE_AREA];
        for _ in 0..reps {
            // tile_pair_sub subtracts: accumulate the negated product
            tile_pair_sub(prim, edge, &dense, ta, tb, std::hint::black_box(&ea), &eb, pb, s, o);
        }
        for v in o.iter_mut() {
            *v = -*v;
        }
    }
    out
}

/// The dense f64 reference: out[ra·8 + rb] = Σ over nonzero (ra, j) of A and nonzero (rb, j') of B
/// of w · w' · κe(e, e') · p[j·8 + j'], straight from the definition.
pub fn reference_products(pairs: &TilePairs<f64>, edge: &KernelSpec) -> Vec<f64> {
    let s = pairs.nz_stride;
    let mut out = vec![0.0; TILE_AREA * pairs.len()];
    for k in 0..pairs.len() {
        let (ta, tb) = (&pairs.octiles[2 * k], &pairs.octiles[2 * k + 1]);
        let pb = &pairs.pblocks[k * TILE_AREA..(k + 1) * TILE_AREA];
        for (bit_a, ia) in ta.nonzeros() {
            let ea = &pairs.edge_data[ia * s..(ia + 1) * s];
            for (bit_b, ib) in tb.nonzeros() {
                let eb = &pairs.edge_data[ib * s..(ib + 1) * s];
                let (ra, j, rb, jp) = (bit_a / 8, bit_a % 8, bit_b / 8, bit_b % 8);
                out[k * TILE_AREA + ra * 8 + rb] += ea[0] * eb[0] * edge.eval(&ea[NZ_FEATURES..], &eb[NZ_FEATURES..]) * pb[j * 8 + jp];
            }
        }
    }
    out
}

/// Median wall time per tile pair (ns) of `prim` on the CPU (one thread), over `samples` runs of
/// `reps` repeats.
pub fn cpu_time_ns<T: Real>(pairs: &TilePairs<T>, edge: &KernelSpec, prim: Primitive, walk: DenseWalk, reps: u32, samples: usize) -> f64 {
    let mut t: Vec<f64> = (0..samples.max(1))
        .map(|_| {
            let start = std::time::Instant::now();
            std::hint::black_box(cpu_products(pairs, edge, prim, walk, reps));
            start.elapsed().as_secs_f64() * 1e9 / (reps as f64 * pairs.len() as f64)
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

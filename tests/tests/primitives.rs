//! The four tile-pair primitives (dense×dense, dense×sparse, sparse×dense, sparse×sparse; D and R
//! also with the tiling-blocking walks) against
//! the dense f64 reference, on random tiles of every nonzero count 0..=64, for one edge kernel of
//! each cost class (κe ≡ 1; one Kronecker delta; delta × square exponential), on every backend (CPU f64/f32 in-process; GPU f32/f64 through the `tile_bench` kernel).
use octile::mgk::config::DenseWalk;
use octile::mgk::config::gathered;
use octile::mgk::tune::tile_bench::gpu_products;
use octile::mgk::tune::tile_pairs::{TilePairs, cheap_edge_kernel, cpu_products, labeled_edge_kernel, random_pairs, reference_products};
use octile_tests::gpu_or_skip;
use octile_types::mgk::primitives::Primitive;
use octile_types::{KernelSpec, Real};

/// Pairs covering every nnz of A (0..=64) against a spread of nnz of B, and every nnz of B against
/// a spread of nnz of A.
fn all_densities(labeled: bool) -> TilePairs<f64> {
    let mut all =
        TilePairs { octiles: Vec::new(), edge_data: Vec::new(), pblocks: Vec::new(), nz_stride: 1 + octile::mgk::tune::tile_pairs::edge_features(labeled) };
    let mut add = |a: u32, b: u32| {
        let p = random_pairs(a, b, 1, labeled, 99 + labeled as u64);
        let shift = (all.edge_data.len() / all.nz_stride) as u32;
        all.octiles.extend(p.octiles.iter().map(|t| octile_types::Octile { nz_offset: t.nz_offset + shift, ..*t }));
        all.edge_data.extend(p.edge_data);
        all.pblocks.extend(p.pblocks);
    };
    for x in 0..=64u32 {
        for y in [0, 1, 7, 8, 9, 33, 63, 64, (x * 7 + 3) % 65, 64 - x] {
            add(x, y);
            add(y, x);
        }
    }
    all
}

/// |got − want| ≤ tol · scale per output entry, where scale = Σ |terms| (the same product with |p|),
/// so cancellation in a sum does not make the bound meaningless.
fn check(what: &str, got: &[f64], want: &[f64], scale: &[f64], tol: f64) -> Vec<String> {
    let mut bad = Vec::new();
    if got.len() != want.len() {
        return vec![format!("{what}: {} outputs, expected {}", got.len(), want.len())];
    }
    for (i, ((g, w), s)) in got.iter().zip(want).zip(scale).enumerate() {
        let err = (g - w).abs();
        if err.is_nan() || err > tol * s + 1e-300 {
            bad.push(format!("{what}: pair {} entry {}: actual {g:.15e}, expected {w:.15e}, |diff| {err:.3e} > {tol:.0e}·{s:.3e}", i / 64, i % 64));
        }
    }
    bad
}

fn run_target<T: Real + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(name: &str, gpu: bool, tol: f64) -> usize {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (kind, labeled, edge) in [("unlabeled", false, KernelSpec::unit()), ("cheap", true, cheap_edge_kernel()), ("costly", true, labeled_edge_kernel())] {
        let pairs = all_densities(labeled);
        let want = reference_products(&pairs, &edge);
        let abs_pairs = TilePairs { pblocks: pairs.pblocks.iter().map(|v| v.abs()).collect(), ..pairs.clone() };
        let scale = reference_products(&abs_pairs, &edge);
        let pt = pairs.to::<T>();
        // the four primitives with shared-tiling walks, and the two dense in B (D, R) with the
        // tiling-blocking walks too
        let cases = Primitive::ALL
            .into_iter()
            .map(|p| (p, DenseWalk::SharedTiling))
            .chain([(Primitive::DenseDense, DenseWalk::TilingBlocking), (Primitive::SparseDense, DenseWalk::TilingBlocking)]);
        for (prim, walk) in cases {
            assert_eq!(gathered(&edge, walk).usable, (walk == DenseWalk::TilingBlocking) as u32, "κe {kind} must allow the walk under test");
            let got: Vec<T> = if gpu {
                gpu_products(&pt, &edge, prim, walk, 1).unwrap_or_else(|e| panic!("{name} {prim:?}: {e}"))
            } else {
                cpu_products(&pt, &edge, prim, walk, 1)
            };
            let got: Vec<f64> = got.iter().map(|v| v.to_f64()).collect();
            failures.extend(check(&format!("{name} {prim:?} {} κe {kind}", walk.name()), &got, &want, &scale, tol));
            checked += got.len();
        }
    }
    assert!(failures.is_empty(), "{} entries off:\n{}", failures.len(), failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
    checked
}

#[test]
fn cpu_f64_primitives_match_reference() {
    let n = run_target::<f64>("cpu-f64", false, 1e-12);
    assert!(n >= 6 * 3 * 65 * 20 * 64, "only {n} entries checked");
}

#[test]
fn cpu_f32_primitives_match_reference() {
    run_target::<f32>("cpu-f32", false, 1e-5);
}

#[test]
fn cuda_f32_primitives_match_reference() {
    if gpu_or_skip("cuda_f32_primitives_match_reference") {
        run_target::<f32>("cuda-f32", true, 1e-5);
    }
}

#[test]
fn cuda_f64_primitives_match_reference() {
    if gpu_or_skip("cuda_f64_primitives_match_reference") {
        run_target::<f64>("cuda-f64", true, 1e-12);
    }
}

#[test]
fn reference_is_not_trivial() {
    // the check above is meaningless if the reference were all zeros: most outputs of non-empty
    // tile pairs must be nonzero
    let pairs = all_densities(true);
    let want = reference_products(&pairs, &labeled_edge_kernel());
    let nonzero = want.iter().filter(|v| v.abs() > 0.0).count();
    assert!(nonzero > want.len() / 3, "only {nonzero} of {} reference outputs are nonzero", want.len());
}

//! One call spread over two GPUs (`--devices`, `OCTILE_DEVICES`, `with_gpus`): K and ∂K/∂θ equal
//! one GPU's — bit for bit on the resident solver (f32), within 1e-13 on the tile solver (f64; see
//! [`check`]) — whichever GPU comes first. Needs two GPUs: with fewer, an explicit SKIP.
use octile::generators::molecules::molecule_set;
use octile::generators::nws_set;
use octile::mgk::config::{BaseKernelConfig, FeatureKernel, MgkConfig, synthetic_kernel};
use octile::{Backend, Gram, Graph, MarginalizedGraphKernel, Precision};
use octile_tests::skip_line;

/// Bit for bit where `rtol` is 0, else within `rtol` relative (both ways).
fn same(what: &str, a: &[f64], b: &[f64], rtol: f64) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    let diff: Vec<usize> = (0..a.len()).filter(|&k| a[k].to_bits() != b[k].to_bits() && (a[k] - b[k]).abs() > rtol * b[k].abs()).collect();
    if let Some(&k) = diff.first() {
        panic!("{what}: {} of {} values differ (rtol {rtol:e}); first at {k}: actual {:.17e}, expected {:.17e}", diff.len(), a.len(), a[k], b[k]);
    }
}

fn kernels(cfg: &MgkConfig) -> [(String, MarginalizedGraphKernel); 3] {
    let one = MarginalizedGraphKernel::new(cfg.clone()).unwrap().with_gpus(&[0]).unwrap();
    let both = MarginalizedGraphKernel::new(cfg.clone()).unwrap().with_gpus(&[0, 1]).unwrap();
    let swapped = MarginalizedGraphKernel::new(cfg.clone()).unwrap().with_gpus(&[1, 0]).unwrap();
    [("GPU 0".into(), one), ("GPUs 0,1".into(), both), ("GPUs 1,0".into(), swapped)]
}

/// `rtol`: 0 (bit for bit) on the resident solver (f32); the tile solver (f64 here) sizes its teams
/// of blocks by the pairs of its call (`team_blocks_for`), so one GPU's own calls of other sizes
/// already differ in the last bits, and so do two GPUs' halves.
fn check(set: &str, graphs: &[Graph], cfg: &MgkConfig, gradient: bool, rtol: f64) {
    let [(_, one), rest @ ..] = kernels(cfg);
    let base: Gram = if gradient { one.gram_gradient(graphs, None, true).unwrap() } else { octile::GraphKernel::gram(&one, graphs).unwrap() };
    for (name, k) in rest {
        let g: Gram = if gradient { k.gram_gradient(graphs, None, true).unwrap() } else { octile::GraphKernel::gram(&k, graphs).unwrap() };
        assert!(g.details.to_string().starts_with("spread over 2 GPUs"), "{set} on {name}: not spread: {}", g.details);
        same(&format!("{set} K on {name}"), &g.values, &base.values, rtol);
        if gradient {
            same(&format!("{set} dK on {name}"), &g.gradient.as_ref().unwrap().values, &base.gradient.as_ref().unwrap().values, rtol);
        }
        let how = if rtol == 0.0 { "bit for bit".to_string() } else { format!("within {rtol:e} relative") };
        eprintln!("multi_gpu: {set}{} on {name}: {} values equal one GPU's {how} ({})", if gradient { " with gradient" } else { "" }, g.values.len(), g.device);
    }
}

#[test]
fn two_gpus_give_one_gpus_matrix() {
    if let Err(why) = octile::gpu::device_at(1) {
        skip_line(&format!("SKIP multi_gpu: needs two GPUs: {why}"));
        return;
    }
    // 160 NWS graphs (12,880 pairs: the demo set, square-exponential κe) and 200 molecules
    // (Kronecker-delta labels), f32 (resident solver) and f64 (tile solver)
    let nws = nws_set(160, 7);
    let mols = molecule_set(200, 7);
    for precision in [Precision::F32, Precision::F64] {
        let mut c = synthetic_kernel(0.05);
        (c.backend, c.precision) = (Backend::Cuda, precision);
        let rtol = if precision == Precision::F32 { 0.0 } else { 1e-13 };
        check(&format!("nws {precision:?}"), &nws, &c, false, rtol);
        let mut m = MgkConfig {
            node: vec![FeatureKernel { feature: "element".into(), kernel: BaseKernelConfig::KroneckerDelta { h: 0.3 }, weight: 1.0 }],
            edge: vec![FeatureKernel { feature: "order".into(), kernel: BaseKernelConfig::KroneckerDelta { h: 0.5 }, weight: 1.0 }],
            q: 0.05,
            ..MgkConfig::default()
        };
        (m.backend, m.precision) = (Backend::Cuda, precision);
        check(&format!("molecules {precision:?}"), &mols, &m, precision == Precision::F32, rtol);
    }
}

/// Without a GPU (or on the CPU backend) asking for GPUs is a typed error, not a silent CPU run.
#[test]
fn gpus_for_a_cpu_kernel_or_absent_gpus_are_refused() {
    let mut cpu = synthetic_kernel(0.05);
    cpu.backend = Backend::Cpu;
    let k = MarginalizedGraphKernel::new(cpu).unwrap();
    assert!(k.per_gpu().is_empty());
    match k.with_gpus(&[0]) {
        Err(octile::OctileError::InvalidConfig(m)) => assert!(m.contains("CPU backend"), "{m}"),
        other => panic!("expected InvalidConfig, got {:?}", other.err()),
    }
    if octile::gpu::device_at(0).is_ok() {
        let mut c = synthetic_kernel(0.05);
        c.backend = Backend::Cuda;
        match MarginalizedGraphKernel::new(c).unwrap().with_gpus(&[64]) {
            Err(octile::OctileError::NoGpu(m)) => assert!(m.contains("GPU 64 does not exist"), "{m}"),
            other => panic!("expected NoGpu, got {:?}", other.err()),
        }
    }
}

//! The GPU from several threads at once: every kernel's results equal the single-threaded ones.
//! Found by the property tests: launches that set a kernel's dynamic-shared-memory cap to their own
//! size raced (another thread lowered it before the launch: CUDA_ERROR_INVALID_VALUE), so
//! shortest-path calls failed intermittently when two threads used the GPU.
use octile::generators::nws_set;
use octile::mgk::config::{BaseKernelConfig, FeatureKernel, synthetic_kernel};
use octile::sp::config::{LengthKernelConfig, SpConfig};
use octile::{Backend, Gram, Graph, GraphKernel, MarginalizedGraphKernel, Precision, ShortestPathKernel};
use octile_tests::gpu_or_skip;

fn fk(feature: &str, kernel: BaseKernelConfig) -> FeatureKernel {
    FeatureKernel { feature: feature.into(), kernel, weight: 1.0 }
}

/// Makes a fresh kernel.
type Maker = Box<dyn Fn() -> Box<dyn GraphKernel> + Sync>;

/// The kernels under test: shortest-path histogram and general forms, and the marginalized kernel
/// (f32, resident solver), each as (name, a fresh kernel).
fn kernels() -> Vec<(&'static str, Maker)> {
    vec![
        (
            "sp-histogram",
            Box::new(|| {
                Box::new(
                    ShortestPathKernel::new(SpConfig {
                        backend: Backend::Cuda,
                        node: vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.0 })],
                        ..SpConfig::default()
                    })
                    .unwrap(),
                )
            }),
        ),
        (
            "sp-general",
            Box::new(|| {
                let cfg = SpConfig {
                    backend: Backend::Cuda,
                    node: vec![fk("label", BaseKernelConfig::KroneckerDelta { h: 0.5 })],
                    path_length: LengthKernelConfig::SquareExponential { length_scale: 1.0 },
                    ..SpConfig::default()
                };
                Box::new(ShortestPathKernel::new(cfg).unwrap())
            }),
        ),
        (
            "mgk-f32",
            Box::new(|| {
                let mut cfg = synthetic_kernel(0.05);
                cfg.backend = Backend::Cuda;
                cfg.precision = Precision::F32;
                Box::new(MarginalizedGraphKernel::new(cfg).unwrap())
            }),
        ),
    ]
}

fn bits(g: &Gram) -> Vec<u64> {
    g.values.iter().map(|v| v.to_bits()).collect()
}

/// Held by each test of this file while it uses the GPU: the stream pool's counts are only
/// meaningful with no other test's calls under way.
static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn several_threads_on_the_gpu_get_the_single_threaded_results() {
    if !gpu_or_skip("several_threads_on_the_gpu_get_the_single_threaded_results") {
        return;
    }
    let _alone = ALONE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let graphs: Vec<Graph> = nws_set(12, 3);
    let (x, y) = graphs.split_at(5);
    let ks = kernels();
    let want: Vec<(Vec<u64>, Vec<u64>)> = ks
        .iter()
        .map(|(_, make)| {
            let k = make();
            (bits(&k.gram(&graphs).unwrap()), bits(&k.gram_between(x, y).unwrap()))
        })
        .collect();
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..4 {
            let (ks, want, failures, graphs) = (&ks, &want, &failures, &graphs);
            s.spawn(move || {
                for round in 0..40 {
                    let which = (t + round) % ks.len();
                    let (name, make) = &ks[which];
                    let k = make();
                    let got = k.gram(graphs).map(|g| bits(&g)).and_then(|a| k.gram_between(x, y).map(|b| (a, bits(&b))));
                    match got {
                        Ok(g) if g == want[which] => {}
                        Ok(_) => failures.lock().unwrap().push(format!("thread {t} round {round} {name}: values differ from the single-threaded run")),
                        Err(e) => failures.lock().unwrap().push(format!("thread {t} round {round} {name}: {e}")),
                    }
                }
            });
        }
    });
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{} failures:\n{}", f.len(), f.join("\n"));
}

#[test]
fn a_call_borrows_its_streams_from_the_device_and_gives_them_back() {
    if !gpu_or_skip("a_call_borrows_its_streams_from_the_device_and_gives_them_back") {
        return;
    }
    let dev = octile::gpu::device().unwrap();
    let graphs: Vec<Graph> = nws_set(10, 5);
    let _alone = ALONE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let make = kernels().into_iter().find_map(|(name, make)| (name == "mgk-f32").then_some(make)).unwrap();
    let k = make();
    // a kernel made on the GPU has one solve's streams ready before its first call
    let per_solve = octile::mgk::gpu::resident::STREAMS_PER_SOLVE;
    let ready = dev.streams.idle();
    assert!(ready >= per_solve, "{ready} idle streams after the kernel was made, a solve takes {per_solve}");
    let first = bits(&k.gram(&graphs).unwrap());
    // every stream lent to the call came back (no other test of this binary uses the GPU
    // meanwhile: each holds ALONE)
    assert!(dev.streams.idle() >= ready, "{} idle streams after the call, {ready} before", dev.streams.idle());
    // the same streams again give the same values, bit for bit
    for round in 0..3 {
        assert_eq!(bits(&k.gram(&graphs).unwrap()), first, "round {round}: values differ from the first call's");
    }
}

//! GPU vs CPU on the paper's synthetic sets: 160 Newman–Watts–Strogatz graphs (96 nodes, k = 3,
//! p = 0.1) and 160 Barabási–Albert graphs (96 nodes, m = 6), labels in {0,1,2}, edge lengths in
//! [0.5, 2), κv = KroneckerDelta(0.5), κe = SquareExponential(1.0), q = 0.05 and q = 0.0005.
//!
//! The full 160×160 Gram matrix is computed on the GPU in f32 and f64; the CPU (f64) computes the
//! leading `CPU_GRAPHS` × 160 block, against which both GPU precisions are checked, and GPU f32 is
//! checked against GPU f64 on every entry.
use octile::GraphKernel;
use octile::generators::{ba_set, nws_set};
use octile::mgk::config::synthetic_kernel;
use octile::{Backend, Graph, MarginalizedGraphKernel, Precision};
use octile_tests::{check_rel, gpu_or_skip};

const CPU_GRAPHS: usize = 4;

fn run(set: &str, graphs: &[Graph], q: f64) -> Vec<String> {
    let kernel = |b, p| {
        let mut c = synthetic_kernel(q);
        c.backend = b;
        c.precision = p;
        MarginalizedGraphKernel::new(c).unwrap()
    };
    let g32 = kernel(Backend::Cuda, Precision::F32).gram(graphs).unwrap();
    let g64 = kernel(Backend::Cuda, Precision::F64).gram(graphs).unwrap();
    let cpu = kernel(Backend::Cpu, Precision::F64).gram_between(&graphs[..CPU_GRAPHS], graphs).unwrap();
    let n = graphs.len();
    let mut errors = Vec::new();
    for i in 0..n {
        for j in 0..n {
            errors.extend(check_rel(&format!("{set} q={q} gpu-f32 vs gpu-f64 K[{i},{j}]"), g32.get(i, j), g64.get(i, j), 1e-5).err());
            if i < CPU_GRAPHS {
                errors.extend(check_rel(&format!("{set} q={q} gpu-f64 vs cpu K[{i},{j}]"), g64.get(i, j), cpu.get(i, j), 1e-9).err());
                errors.extend(check_rel(&format!("{set} q={q} gpu-f32 vs cpu K[{i},{j}]"), g32.get(i, j), cpu.get(i, j), 1e-5).err());
            }
        }
    }
    let (lo, med, hi) = g32.iteration_stats();
    println!(
        "{set} q={q}: {n} graphs, gpu f32 {:.3} s ({} pairs), gpu f64 {:.3} s, iterations min/median/max {lo}/{med}/{hi}, {} mismatches",
        g32.seconds,
        g32.pairs_solved,
        g64.seconds,
        errors.len()
    );
    errors
}

#[test]
fn gpu_matches_cpu_on_synthetic_sets() {
    if !gpu_or_skip("gpu_matches_cpu_on_synthetic_sets") {
        return;
    }
    let mut errors = Vec::new();
    for q in [0.05, 0.0005] {
        errors.extend(run("NWS", &nws_set(160, 2020), q));
        errors.extend(run("BA", &ba_set(160, 2021), q));
    }
    let shown: Vec<_> = errors.iter().take(40).cloned().collect();
    assert!(errors.is_empty(), "{} mismatches, first ones:\n{}", errors.len(), shown.join("\n"));
}

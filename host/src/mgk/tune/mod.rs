//! `octile tune`: time the four tile-pair primitives over the (nnz_A, nnz_B) grid on the GPU or the
//! CPU, pick the winner per cell, and produce the profile the solver's adaptive switch reads, a
//! text table of the winner map (like the paper's Fig. 8) and an SVG plot of it ([`report`]). The
//! microbenchmark itself: random tile pairs and CPU timing ([`tile_pairs`]), the GPU kernel launch
//! ([`tile_bench`]). Tooling: no product module imports this tree.
pub mod report;
pub mod tile_bench;
pub mod tile_pairs;

use crate::backend::Precision;
use crate::error::{OctileError, Result};
use crate::mgk::config::DenseWalk;
use crate::mgk::profile::{self, Profile, Timings, map_to_rows};
use octile_types::mgk::primitives::{NNZ_BIN_WIDTH, NNZ_BINS, Primitive, PrimitiveMap};
use octile_types::{KernelSpec, Real};
use std::collections::BTreeMap;
use tile_pairs::{TilePairs, cheap_edge_kernel, cpu_time_ns, labeled_edge_kernel, random_pairs};

/// Where to tune.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TuneTarget {
    /// This machine's CPU (one thread; the solver runs one pair per thread).
    Cpu,
    /// The GPU.
    Cuda,
}

/// Tuning options.
#[derive(Clone, Debug)]
pub struct TuneOptions {
    /// CPU or GPU.
    pub target: TuneTarget,
    /// Precision of the primitives.
    pub precision: Precision,
    /// Fewer repeats (for tests / a first look); the map is noisier.
    pub quick: bool,
    /// How D and R walk tile B while timed (the profile records it; runs with that walk use it).
    pub dense_walk: DenseWalk,
}

/// The nonzero count representing bin `b` in the measurements (the bin's middle; 64 for bin 16).
pub fn bin_nnz(b: usize) -> u32 {
    if b + 1 >= NNZ_BINS { 64 } else { b as u32 * NNZ_BIN_WIDTH + NNZ_BIN_WIDTH / 2 }
}

/// Time every primitive on every cell, for the unlabeled (κe ≡ 1), cheap labeled (one Kronecker
/// delta) and labeled (delta × square exponential) kernels; returns the
/// profile (maps = per-cell winners, with the timings). `progress(done, total)` is called per cell.
pub fn tune(opt: &TuneOptions, progress: &dyn Fn(usize, usize)) -> Result<Profile> {
    match opt.precision {
        Precision::F32 => tune_t::<f32>(opt, progress),
        Precision::F64 => tune_t::<f64>(opt, progress),
    }
}

fn tune_t<T: Real + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(opt: &TuneOptions, progress: &dyn Fn(usize, usize)) -> Result<Profile> {
    let kinds: [(&str, bool, KernelSpec); 3] =
        [("unlabeled", false, KernelSpec::unit()), ("labeled_cheap", true, cheap_edge_kernel()), ("labeled", true, labeled_edge_kernel())];
    let total = kinds.len() * NNZ_BINS * NNZ_BINS;
    let mut done = 0;
    let mut maps: BTreeMap<&str, PrimitiveMap> = BTreeMap::new();
    let mut timings: BTreeMap<String, Timings> = BTreeMap::new();
    let (backend, device, arch) = match opt.target {
        TuneTarget::Cpu => ("cpu", profile::cpu_model(), std::env::consts::ARCH.to_string()),
        TuneTarget::Cuda => {
            let d = crate::gpu::device().map_err(OctileError::NoGpu)?;
            ("cuda", d.name.clone(), d.arch())
        }
    };
    for (kind, labeled, edge) in kinds {
        let mut map = PrimitiveMap::uniform(Primitive::DenseDense);
        let mut t: Timings = Primitive::ALL.iter().map(|p| (p.letter().to_string(), vec![0.0; NNZ_BINS * NNZ_BINS])).collect();
        for a in 0..NNZ_BINS {
            for b in 0..NNZ_BINS {
                let distinct = random_pairs(bin_nnz(a), bin_nnz(b), if opt.quick { 4 } else { 16 }, labeled, 0x7u64 ^ (a * NNZ_BINS + b) as u64);
                let ns = match opt.target {
                    TuneTarget::Cpu => time_cpu::<T>(&distinct, &edge, opt.dense_walk, opt.quick),
                    TuneTarget::Cuda => time_gpu::<T>(&distinct, &edge, opt.dense_walk, opt.quick)?,
                };
                let mut best = (f64::INFINITY, Primitive::DenseDense);
                for (p, v) in Primitive::ALL.iter().zip(ns) {
                    t.get_mut(&p.letter().to_string()).unwrap()[a * NNZ_BINS + b] = v;
                    if v < best.0 {
                        best = (v, *p);
                    }
                }
                map.set(a, b, best.1);
                done += 1;
                progress(done, total);
            }
        }
        maps.insert(kind, map);
        timings.insert(kind.to_string(), t);
    }
    Ok(Profile {
        backend: backend.into(),
        device,
        arch,
        precision: if T::BYTES == 4 { "f32".into() } else { "f64".into() },
        unlabeled: map_to_rows(&maps["unlabeled"]),
        labeled: map_to_rows(&maps["labeled"]),
        labeled_cheap: Some(map_to_rows(&maps["labeled_cheap"])),
        dense_walk: (opt.dense_walk != DenseWalk::SharedTiling).then(|| opt.dense_walk.name().to_string()),
        timings_ns: Some(timings),
    })
}

/// ns per tile pair of each primitive on the CPU.
fn time_cpu<T: Real>(pairs: &TilePairs<f64>, edge: &KernelSpec, walk: DenseWalk, quick: bool) -> [f64; 4] {
    let p = pairs.to::<T>();
    let (reps, samples) = if quick { (1, 1) } else { (8, 3) };
    Primitive::ALL.map(|prim| cpu_time_ns(&p, edge, prim, walk, reps, samples))
}

/// ns per tile pair of each primitive on the GPU: one warp per pair over every resident warp
/// slot, each pair repeated `reps` times in the kernel; median of 3 event-timed launches.
fn time_gpu<T: Real + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    pairs: &TilePairs<f64>,
    edge: &KernelSpec,
    walk: DenseWalk,
    quick: bool,
) -> Result<[f64; 4]> {
    use crate::mgk::gpu::launch::{SolverEntry, solver_blocks_per_sm};
    use tile_bench::{tile_bench, upload_tile_pairs};
    let dev = crate::gpu::device().map_err(OctileError::NoGpu)?;
    let blocks = dev.sm_count * solver_blocks_per_sm::<T>(&dev, SolverEntry::Adaptive);
    let n_warps = (blocks * 4) as usize;
    // fill every warp slot by cycling the distinct pairs
    let up = upload_tile_pairs(&dev, &pairs.to::<T>().cycled(n_warps))?;
    let (reps, samples) = if quick { (4, 1) } else { (32, 3) };
    let mut out = [0.0; 4];
    for (slot, prim) in Primitive::ALL.into_iter().enumerate() {
        tile_bench(&dev, &up, edge, prim, walk, 1, Some(blocks))?; // warm-up
        let mut ms: Vec<f64> = (0..samples).map(|_| tile_bench(&dev, &up, edge, prim, walk, reps, Some(blocks)).map(|r| r.1 as f64)).collect::<Result<_>>()?;
        ms.sort_by(f64::total_cmp);
        out[slot] = ms[ms.len() / 2] * 1e6 / (n_warps as f64 * reps as f64);
    }
    Ok(out)
}

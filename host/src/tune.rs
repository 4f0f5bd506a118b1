//! `octile tune`: time the four tile-pair primitives over the (nnz_A, nnz_B) grid on the GPU or the
//! CPU, pick the winner per cell, and produce the profile the solver's adaptive switch reads, a
//! text table of the winner map (like the paper's Fig. 8) and an SVG plot of it.
use crate::config::{DenseWalk, Precision};
use crate::error::Result;
use crate::profile::{Profile, Timings, map_to_rows};
use crate::tiles::{TilePairs, cheap_edge_kernel, cpu_time_ns, labeled_edge_kernel, random_pairs};
use octile_types::primitives::{NNZ_BIN_WIDTH, NNZ_BINS, Primitive, PrimitiveMap};
use octile_types::{KernelSpec, Real};
use std::collections::BTreeMap;

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
    let kinds: [(&str, bool, KernelSpec); 3] = [("unlabeled", false, KernelSpec::unit()), ("labeled_cheap", true, cheap_edge_kernel()), ("labeled", true, labeled_edge_kernel())];
    let total = kinds.len() * NNZ_BINS * NNZ_BINS;
    let mut done = 0;
    let mut maps: BTreeMap<&str, PrimitiveMap> = BTreeMap::new();
    let mut timings: BTreeMap<String, Timings> = BTreeMap::new();
    let (backend, device, arch) = match opt.target {
        TuneTarget::Cpu => ("cpu", crate::profile::cpu_model(), std::env::consts::ARCH.to_string()),
        TuneTarget::Cuda => {
            let d = crate::gpu::device().map_err(crate::OctileError::NoGpu)?;
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
fn time_gpu<T: Real + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(pairs: &TilePairs<f64>, edge: &KernelSpec, walk: DenseWalk, quick: bool) -> Result<[f64; 4]> {
    use crate::gpu::launch::{solver_blocks_per_sm, tile_bench, upload_tile_pairs};
    let dev = crate::gpu::device().map_err(crate::OctileError::NoGpu)?;
    let blocks = dev.sm_count * solver_blocks_per_sm::<T>(&dev, crate::gpu::launch::SolverEntry::Adaptive);
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

/// Text table of one map: rows = nnz(A) bins, columns = nnz(B) bins, one letter per cell.
pub fn winner_table(title: &str, rows: &[String]) -> String {
    let mut s = format!("{title}  (row: nonzeros of tile A, column: nonzeros of tile B; D dense×dense, L dense×sparse, R sparse×dense, S sparse×sparse)\n");
    s += "  nnz A\\B ";
    for b in 0..NNZ_BINS {
        s += &format!("{:>3}", bin_label_short(b));
    }
    s += "\n";
    for (a, row) in rows.iter().enumerate() {
        s += &format!("  {:>7} ", bin_label(a));
        for c in row.chars() {
            s += &format!("{c:>3}");
        }
        s += "\n";
    }
    s
}

fn bin_label(b: usize) -> String {
    if b + 1 >= NNZ_BINS { "64".into() } else { format!("{}-{}", b as u32 * NNZ_BIN_WIDTH, b as u32 * NNZ_BIN_WIDTH + NNZ_BIN_WIDTH - 1) }
}

fn bin_label_short(b: usize) -> String {
    format!("{}", if b + 1 >= NNZ_BINS { 64 } else { b as u32 * NNZ_BIN_WIDTH })
}

/// The winner tables of every map of a profile (unlabeled; cheap labeled, when present; labeled).
pub fn winner_tables(p: &Profile) -> String {
    let mut s = winner_table("unlabeled (κe ≡ 1)", &p.unlabeled);
    if let Some(cheap) = &p.labeled_cheap {
        s += &winner_table("labeled, cheap κe (one Kronecker delta)", cheap);
    }
    s + &winner_table("labeled (κe = delta × square exponential)", &p.labeled)
}

/// SVG of the maps of a profile (one 17×17 panel per map, one colour per primitive, with a legend).
pub fn winner_svg(p: &Profile) -> String {
    let cell = 18;
    let (left, top, gap) = (60, 50, 70);
    let panel = cell * NNZ_BINS as i32;
    let mut maps = vec![("unlabeled", &p.unlabeled)];
    if let Some(c) = &p.labeled_cheap {
        maps.push(("labeled, cheap κe (delta)", c));
    }
    maps.push(("labeled (delta × square exponential)", &p.labeled));
    let width = left + maps.len() as i32 * (panel + gap) + 20;
    let height = top + panel + 90;
    let colour = |c: char| match c {
        'D' => "#1f77b4",
        'L' => "#2ca02c",
        'R' => "#98df8a",
        _ => "#ff7f0e",
    };
    let mut s = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n");
    s += &format!("<text x=\"{left}\" y=\"18\" font-size=\"13\">Fastest tile-pair primitive: {} {} ({}, {}, {} dense walks)</text>\n", p.backend, p.device, p.arch, p.precision, p.walk());
    for (k, (name, rows)) in maps.into_iter().enumerate() {
        let x0 = left + k as i32 * (panel + gap);
        s += &format!("<text x=\"{}\" y=\"{}\" font-size=\"12\">{name}</text>\n", x0, top - 18);
        for (a, row) in rows.iter().enumerate() {
            for (b, c) in row.chars().enumerate() {
                let (x, y) = (x0 + b as i32 * cell, top + (NNZ_BINS - 1 - a) as i32 * cell);
                s += &format!("<rect x=\"{x}\" y=\"{y}\" width=\"{cell}\" height=\"{cell}\" fill=\"{}\" stroke=\"white\" stroke-width=\"0.5\"><title>nnz A {} / nnz B {}: {c}</title></rect>\n", colour(c), bin_label(a), bin_label(b));
            }
        }
        for b in (0..NNZ_BINS).step_by(4) {
            s += &format!("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x0 + b as i32 * cell + cell / 2, top + panel + 14, bin_label_short(b));
            s += &format!("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", x0 - 4, top + (NNZ_BINS - 1 - b) as i32 * cell + cell / 2 + 4, bin_label_short(b));
        }
        s += &format!("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">nonzeros of tile B</text>\n", x0 + panel / 2, top + panel + 30);
        s += &format!("<text transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\">nonzeros of tile A</text>\n", x0 - 36, top + panel / 2);
    }
    for (k, (c, label)) in [('D', "dense×dense"), ('L', "dense×sparse"), ('R', "sparse×dense"), ('S', "sparse×sparse")].into_iter().enumerate() {
        let x = left + k as i32 * 120;
        let y = top + panel + 50;
        s += &format!("<rect x=\"{x}\" y=\"{y}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{label}</text>\n", colour(c), x + 16, y + 10);
    }
    s += "</svg>\n";
    s
}

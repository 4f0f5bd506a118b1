//! `octile tune`: time the tile-pair primitives on this device and write the profile (`--show`: print a profile file instead).
use crate::common::{BackendArg, DenseWalkArg};
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use octile::io::npy;
use octile::mgk::config::DenseWalk;
use octile::{OctileError, Precision};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct TuneArgs {
    /// cuda: the GPU; cpu: this CPU; auto: the GPU if present.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Precision(s) to tune.
    #[arg(long, value_enum, default_value = "both")]
    precision: TunePrecisionArg,
    /// Profile file to create or update. Default: the user store (~/.config/octile/profiles.json), which the solver reads.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Winner-map plot (one SVG per precision; "-f32"/"-f64" is appended to the stem).
    #[arg(long, default_value = "octile-tune.svg")]
    pub svg: PathBuf,
    /// Fewer repeats: quick but noisy.
    #[arg(long)]
    quick: bool,
    /// Measure nothing: print the tables and write the plots of every profile in this file.
    #[arg(long)]
    pub show: Option<PathBuf>,
    /// Time D and R with this walk of tile B: shared (default) or blocked (tiling-blocking); the
    /// profile records it, and runs with `--dense-walk blocked` use the blocked-walk profile.
    #[arg(long, value_enum, default_value = "shared")]
    dense_walk: DenseWalkArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum TunePrecisionArg {
    F32,
    F64,
    Both,
}

/// Print the winner tables of every profile in `file` and write its plots (stem-backend-device-precision.svg).
pub fn show_profiles(file: &Path, svg: &Path) -> Result<()> {
    use octile::mgk::tune::report::{winner_svg, winner_tables};
    let f = octile::mgk::profile::ProfileFile::read(file)?;
    for p in &f.profiles {
        println!("{} {} ({}) {}, {} dense walks", p.backend, p.device, p.arch, p.precision, p.walk());
        print!("{}", winner_tables(p));
        let stem = svg.file_stem().and_then(|s| s.to_str()).unwrap_or("octile-tune");
        let walk = if p.walk() == "shared" { String::new() } else { format!("-{}", p.walk()) };
        let tag: String = format!("{}-{}-{}{walk}", p.backend, p.device, p.precision)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c.to_ascii_lowercase() } else { '-' })
            .collect();
        let path = svg.with_file_name(format!("{stem}-{tag}.svg"));
        npy::write_atomic(&path, winner_svg(p).as_bytes())?;
        println!("plot: {}", path.display());
    }
    Ok(())
}

/// Measure the primitives and write the profile (`--show` is handled by [`show_profiles`]).
pub fn tune(a: TuneArgs) -> Result<()> {
    use octile::mgk::profile::{ProfileFile, user_store};
    use octile::mgk::tune::report::{winner_svg, winner_tables};
    use octile::mgk::tune::{TuneOptions, TuneTarget};
    let TuneArgs { backend, precision, out, svg, quick, show: _, dense_walk } = a;
    let dense_walk: DenseWalk = dense_walk.into();
    let target = match backend {
        BackendArg::Cpu => TuneTarget::Cpu,
        BackendArg::Cuda => {
            octile::gpu::device().map_err(OctileError::NoGpu)?;
            TuneTarget::Cuda
        }
        BackendArg::Auto => {
            if octile::gpu::device().is_ok() {
                TuneTarget::Cuda
            } else {
                TuneTarget::Cpu
            }
        }
    };
    let out = match out {
        Some(p) => p,
        None => user_store().context("no HOME or XDG_CONFIG_HOME to place the profile store in; pass --out FILE")?,
    };
    let mut file = if out.is_file() { ProfileFile::read(&out)? } else { ProfileFile { version: 1, profiles: Vec::new() } };
    let precisions: &[Precision] = match precision {
        TunePrecisionArg::F32 => &[Precision::F32],
        TunePrecisionArg::F64 => &[Precision::F64],
        TunePrecisionArg::Both => &[Precision::F32, Precision::F64],
    };
    for &prec in precisions {
        let bar = ProgressBar::new(0);
        bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} cells  ETA {eta}").unwrap());
        let b2 = bar.clone();
        let t = std::time::Instant::now();
        let profile = octile::mgk::tune::tune(&TuneOptions { target, precision: prec, quick, dense_walk }, &move |done, total| {
            b2.set_length(total as u64);
            b2.set_position(done as u64);
        })?;
        bar.finish_and_clear();
        println!(
            "tuned {} {} ({}) {}, {} dense walks, in {:.1} s",
            profile.backend,
            profile.device,
            profile.arch,
            profile.precision,
            profile.walk(),
            t.elapsed().as_secs_f64()
        );
        print!("{}", winner_tables(&profile));
        let stem = svg.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "octile-tune".into());
        let walk = if profile.walk() == "shared" { String::new() } else { format!("-{}", profile.walk()) };
        let svg_path = svg.with_file_name(format!("{stem}-{}{walk}.svg", profile.precision));
        npy::write_atomic(&svg_path, winner_svg(&profile).as_bytes())?;
        println!("winner map plot: {}", svg_path.display());
        file.upsert(profile);
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    npy::write_atomic(&out, serde_json::to_string_pretty(&file)?.as_bytes())?;
    println!("profile written: {} (the solver reads it for this device from now on)", out.display());
    Ok(())
}

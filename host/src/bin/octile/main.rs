//! The `octile` command: Gram matrices of marginalized graph kernels from graph files.
mod common;
mod demo;
mod generate;
mod gram;
mod graphlets;
mod info;
mod nodal;
mod octiles;
mod resume;
mod tiled;
mod tune;

use clap::{Parser, Subcommand};
use octile::OctileError;

#[derive(Parser)]
#[command(name = "octile", version, about = "Marginalized graph kernels on GPUs and all CPU cores", after_help = common::EXIT_CODES)]
struct Cli {
    /// Print the solvers' phase timings on stderr (as does OCTILE_TRACE=1; GPU launches then run
    /// one at a time).
    #[arg(short, long, global = true)]
    verbose: bool,
    /// Worker threads of the CPU backend and of the host-side work (reading, packing, writing).
    /// Default: every core of the machine, or RAYON_NUM_THREADS where it is set. GPU tiles in
    /// flight share these out among pools of their own, beside the pool that reads and writes.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
    /// The GPUs to use: "all" or ordinals such as "0,1" (CUDA's numbering). `gram` with the
    /// marginalized kernel gives each GPU whole tiles (one GPU's values; the f64 tile solver's may
    /// differ in the last bits, as between one GPU's calls of other sizes); the other methods use
    /// the first. Default: GPU 0, or OCTILE_DEVICES where it is set.
    #[arg(long, global = true, value_name = "LIST")]
    devices: Option<String>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// The main job on built-in data: the paper's 160 Newman–Watts–Strogatz graphs (96 nodes,
    /// k = 3, p = 0.1), normalized Gram matrix, on the GPU if present, else the CPU.
    Demo(demo::DemoArgs),
    /// Which devices and backends are available, and why not if not.
    Info,
    /// Non-empty octiles of each input under the natural, RCM and partition-based orders (like
    /// the paper's Fig. 7), with the time each reordering takes.
    Octiles(octiles::OctilesArgs),
    /// Node-wise similarities of two graphs of the inputs (the paper's nodal output): the n × m
    /// matrix R[i][i'] = p_i·x_ii'·p'_i' with K = ΣR, rows and columns in the input node order.
    Nodal(nodal::NodalArgs),
    /// Gram matrix K(X) or K(X, Y) of graph files.
    Gram(gram::GramArgs),
    /// The fast graphlet transform: the 16 orbit frequencies (FGlT) of every node of one graph
    /// (.mtx, edge list, any `gram` input, or gen:...), as an n × k int64 .npy or .csv.
    Graphlets(graphlets::GraphletsArgs),
    /// Write a large generated graph (gen:delaunay:N, gen:road:N, gen:ba:N:M, gen:rmat:SCALE:EF)
    /// as .mtx or an edge list.
    Generate(generate::GenerateArgs),
    /// Time the four tile-pair primitives over the (nonzeros A, nonzeros B) grid on this GPU (or
    /// CPU), print the winner map, save it as SVG and write the profile the solver then uses.
    Tune(tune::TuneArgs),
}

/// Most worker threads `--threads` or RAYON_NUM_THREADS may ask for: far more than any machine's
/// cores, and each thread reserves a stack, so a mistyped count (65535) is refused at once rather
/// than after a minute of spawning threads.
const MAX_THREADS: usize = 1024;

/// The worker threads asked for by `--threads` (`flag`), else by RAYON_NUM_THREADS (`env`; 0 or
/// unset: rayon's default, every core), with the setting's name for messages; an error for a count
/// that is not a number or exceeds [`MAX_THREADS`].
fn worker_threads(flag: Option<u16>, env: Option<String>) -> Result<Option<(usize, String)>, String> {
    let (n, from) = match (flag, env) {
        (Some(n), _) => (usize::from(n), format!("--threads {n}")),
        (None, Some(v)) => match v.trim().parse::<usize>() {
            Ok(0) => return Ok(None),
            Ok(n) => (n, format!("RAYON_NUM_THREADS={v}")),
            Err(_) => return Err(format!("RAYON_NUM_THREADS={v}: not a number of threads (0 or unset: every core)")),
        },
        (None, None) => return Ok(None),
    };
    if n > MAX_THREADS {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        return Err(format!("{from}: at most {MAX_THREADS} worker threads (this machine has {cores} cores)"));
    }
    Ok(Some((n, from)))
}

fn main() {
    // a closed pipe (`octile info | head -1`) ends the process quietly, as it does other Unix tools,
    // instead of making println! panic
    #[cfg(unix)]
    // SAFETY: restores SIGPIPE's default disposition before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    octile::stderr_log::install(cli.verbose);
    // before any parallel work: the global pool is built once, on first use; built here, a pool
    // the machine cannot give is an error, not a panic inside the first parallel loop
    match worker_threads(cli.threads, std::env::var("RAYON_NUM_THREADS").ok()) {
        Ok(Some((n, from))) => {
            if let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(n).build_global() {
                eprintln!("error: {from}: {e}");
                std::process::exit(2);
            }
        }
        Ok(None) => {}
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
    if let Some(d) = &cli.devices
        && let Err(e) = octile::gpu::select_devices(d)
    {
        eprintln!("error: --devices {d}: {e}");
        std::process::exit(2);
    }
    let r = match cli.cmd {
        Cmd::Info => info::info(),
        Cmd::Octiles(a) => octiles::octiles(a),
        Cmd::Demo(a) => demo::demo(a),
        Cmd::Gram(a) => gram::gram(a),
        Cmd::Tune(tune::TuneArgs { show: Some(file), svg, .. }) => tune::show_profiles(&file, &svg),
        Cmd::Tune(a) => tune::tune(a),
        Cmd::Nodal(a) => nodal::nodal(a),
        Cmd::Graphlets(a) => graphlets::graphlets(a),
        Cmd::Generate(a) => generate::generate(a),
    };
    if let Err(e) = r {
        eprintln!("error: {e:#}");
        let code = match e.downcast_ref::<OctileError>() {
            Some(OctileError::Cancelled | OctileError::Interrupted { .. }) => 130,
            Some(OctileError::NoConvergence { .. }) => 3,
            _ if e.downcast_ref::<gram::NotConverged>().is_some() => 3,
            _ => 1,
        };
        std::process::exit(code);
    }
}

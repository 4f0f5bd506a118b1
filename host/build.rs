//! Builds `kernels-gpu` to PTX with a nested cargo (its own target dir and flags) and rustc's
//! nvptx64 backend, then leaves `octile_kernels.ptx` in OUT_DIR for `include_str!` and, assembled
//! by ptxas for the same architecture, `octile_kernels.cubin` for `include_bytes!`.
//!
//! Settings (environment, read at build time):
//! - `OCTILE_CUDA_ARCH`  target SM, default `sm_90` (`sm_80`, `sm_89`, ... work too)
//! - `OCTILE_PTX`        path of a prebuilt PTX file to embed instead of building one
//! - `OCTILE_PTXAS`      the ptxas that builds the cubin (default: the one in `.venv`, from scripts/setup)
//! - `OCTILE_MIN_BLOCKS_PER_SM`  occupancy hint for the solver kernels, default 5 (0: none). rustc has
//!   no `__launch_bounds__`, so the PTX entries get `.maxntid 128, 1, 1` and `.minnctapersm N`
//!   added here; ptxas then caps registers so N blocks fit an SM. Measured on an H200 (pairs/s,
//!   N = none/3/4/5): NWS 13.7k/17.6k/20.8k/23.1k, BA 746/936/991/1170, ChEMBL 165k/218k/252k/273k.
//! - `OCTILE_MIN_BLOCKS_PER_SM_BLOCKED`  the same for the tiling-blocking entries
//!   (`mgk_solve_blocked_*`, `mgk_solve_team_blocked_*`), default 5. B's row in registers needs
//!   more of them (ptxas: 255 registers without a bound, 168 and ~0.4 KB spill stores at 3, 96 and
//!   ~0.6–1 KB at 5), but fewer resident blocks cost more than the spills: measured on an H200,
//!   two protein chains 0.61 s at 3, 0.50 s at 5; with every tile pair dense×dense 0.92 vs 0.81 s.
//!
//! It fails with a message naming the fix when the nightly's `rust-src` or `llvm-tools` component
//! is missing (`rustup component add rust-src llvm-tools --toolchain <pinned>`).
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const PINNED_RUSTC: &str = "2026-05-19";

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().to_path_buf();
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let dest = out_dir.join("octile_kernels.ptx");
    for p in ["kernels-gpu/src", "kernels-gpu/Cargo.toml", "shared-types/src", "shared-types/Cargo.toml", "tools/ptx-link.sh"] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    println!("cargo:rerun-if-env-changed=OCTILE_CUDA_ARCH");
    println!("cargo:rerun-if-env-changed=OCTILE_PTX");
    println!("cargo:rerun-if-env-changed=OCTILE_MIN_BLOCKS_PER_SM");
    println!("cargo:rerun-if-env-changed=OCTILE_MIN_BLOCKS_PER_SM_BLOCKED");

    let arch = env::var("OCTILE_CUDA_ARCH").unwrap_or_else(|_| "sm_90".into());
    println!("cargo:rustc-env=OCTILE_CUDA_ARCH={arch}");
    if let Ok(prebuilt) = env::var("OCTILE_PTX") {
        std::fs::copy(&prebuilt, &dest).unwrap_or_else(|e| fail(&format!("OCTILE_PTX={prebuilt}: {e}")));
        build_cubin(&root, &dest, &arch);
        return;
    }
    if !arch.starts_with("sm_") || arch[3..].parse::<u32>().is_err() {
        fail(&format!("OCTILE_CUDA_ARCH={arch}: expected sm_NN (e.g. sm_90, sm_80)"));
    }

    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = run_text(Command::new(&rustc).arg("-vV"));
    if !version.contains("nightly") {
        fail(&format!("device code needs the nightly toolchain pinned in rust-toolchain.toml; {rustc} is:\n{version}"));
    }
    if !version.contains(PINNED_RUSTC) {
        println!("cargo:warning=rustc is not the pinned nightly ({PINNED_RUSTC}): {}", version.lines().next().unwrap_or(""));
    }
    let sysroot = PathBuf::from(run_text(Command::new(&rustc).args(["--print", "sysroot"])).trim());
    let host = version.lines().find_map(|l| l.strip_prefix("host: ")).unwrap_or("x86_64-unknown-linux-gnu").trim().to_string();
    let toolchain = sysroot.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let toolchain = toolchain.trim_end_matches(&format!("-{host}")).to_string();
    if !sysroot.join("lib/rustlib/src/rust/library/core/Cargo.toml").exists() {
        fail(&format!(
            "the `rust-src` component is missing (needed for -Zbuild-std=core).\n  fix: rustup component add rust-src llvm-tools --toolchain {toolchain}\n  (or run scripts/setup)"
        ));
    }
    let llvm_bin = sysroot.join("lib/rustlib").join(&host).join("bin");
    for tool in ["llvm-link", "opt", "llc", "llvm-ar"] {
        if !llvm_bin.join(tool).exists() {
            fail(&format!(
                "the `llvm-tools` component is missing ({} not found).\n  fix: rustup component add rust-src llvm-tools --toolchain {toolchain}\n  (or run scripts/setup)",
                llvm_bin.join(tool).display()
            ));
        }
    }

    let target_dir = ptx_target_dir(&out_dir);
    let linker = root.join("tools/ptx-link.sh");
    let rustflags = [
        format!("-Ctarget-cpu={arch}"),
        "-Zunstable-options".into(),
        "-Cpanic=immediate-abort".into(),
        // no runtime unrolling of loops with data-dependent trip counts (the resident XMV's
        // neighbour loops): unrolled 4×, they push the 512-thread entries past 128 registers
        "-Cllvm-args=-unroll-runtime=false".into(),
        format!("-Clinker={}", linker.display()),
    ]
    .join("\x1f");
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root.join("kernels-gpu"))
        .args(["build", "--release", "--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
        .arg("--manifest-path")
        .arg(root.join("kernels-gpu/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .env("CARGO_ENCODED_RUSTFLAGS", rustflags)
        .env("OCTILE_LLVM_BIN", &llvm_bin)
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_TARGET_DIR");
    let status = cmd.status().unwrap_or_else(|e| fail(&format!("cannot run nested cargo: {e}")));
    if !status.success() {
        fail("building kernels-gpu to PTX failed (see the output above)");
    }
    let ptx = target_dir.join("nvptx64-nvidia-cuda/release/octile_kernels.ptx");
    let text = std::fs::read_to_string(&ptx).unwrap_or_else(|e| fail(&format!("{}: {e}", ptx.display())));
    // `.extern .shared` is the launch's dynamic shared memory; any other extern is a missing function
    if text.lines().any(|l| l.contains(".extern") && !l.contains(".extern .shared")) {
        fail("the PTX declares .extern symbols: some function was not linked into the module");
    }
    let min_blocks: u32 =
        env::var("OCTILE_MIN_BLOCKS_PER_SM").ok().map(|v| v.parse().unwrap_or_else(|_| fail("OCTILE_MIN_BLOCKS_PER_SM must be an integer"))).unwrap_or(5);
    let text = if min_blocks > 0 {
        add_launch_bounds(
            &text,
            &[
                "mgk_solve_f32",
                "mgk_solve_f64",
                "mgk_solve_sparse_f32",
                "mgk_solve_sparse_f64",
                "mgk_solve_team_f32",
                "mgk_solve_team_f64",
                "tile_bench_f32",
                "tile_bench_f64",
            ],
            min_blocks,
        )
    } else {
        text
    };
    let min_blocked: u32 = env::var("OCTILE_MIN_BLOCKS_PER_SM_BLOCKED")
        .ok()
        .map(|v| v.parse().unwrap_or_else(|_| fail("OCTILE_MIN_BLOCKS_PER_SM_BLOCKED must be an integer")))
        .unwrap_or(5);
    let text = if min_blocked > 0 {
        add_launch_bounds(&text, &["mgk_solve_blocked_f32", "mgk_solve_blocked_f64", "mgk_solve_team_blocked_f32", "mgk_solve_team_blocked_f64"], min_blocked)
    } else {
        text
    };
    // the resident block entries run at most 512 threads (RESIDENT_BLOCK_THREADS; ptxas then keeps
    // them within 128 registers: at 1024 threads and 64 registers the unrolled XMV spills)
    let text = add_bounds(
        &text,
        &[
            "mgk_resident_block_general",
            "mgk_resident_block_sqexp",
            "mgk_resident_block_kdelta",
            "mgk_resident_block_general_split",
            "mgk_resident_block_sqexp_split",
            "mgk_resident_block_kdelta_split",
        ],
        "\n.maxntid 512, 1, 1",
    );
    // the product form's per-pair setup would take 138 registers; 96 spill nothing and let 21
    // warps share an SM
    let text = add_bounds(&text, &["mgk_resident_warp_product"], "\n.maxnreg 96");
    let text = add_bounds(&text, &["mgk_resident_block_product"], "\n.maxntid 512, 1, 1");
    // ptxas otherwise settles the general interpreter's block entries at 64 registers and spills
    let text = add_bounds(&text, &["mgk_resident_block_general", "mgk_resident_block_general_split"], "\n.maxnreg 128");
    // the graphlet transform's warp-per-node entries: 256 threads, 4 blocks an SM (≤ 64 registers,
    // 32 warps an SM to hide the CSR's dependent loads; pass 1's tables take 32 KiB a block)
    let text = add_bounds(&text, &["graphlet_pass1_light", "graphlet_pass2"], "\n.maxntid 256, 1, 1\n.minnctapersm 4");
    std::fs::write(&dest, text).unwrap();
    build_cubin(&root, &dest, &arch);
}

/// Assemble the PTX into a cubin for `arch` with ptxas (`OCTILE_PTXAS`, else the setup's
/// `.venv`), so that a GPU of that architecture loads machine code instead of JIT-compiling 5 MB of
/// PTX on its first run (~26 s on an H100). Without ptxas an empty cubin is embedded and every GPU
/// JIT-compiles the PTX (a warning says so).
fn build_cubin(root: &Path, ptx: &Path, arch: &str) {
    println!("cargo:rerun-if-env-changed=OCTILE_PTXAS");
    let cubin = ptx.with_extension("cubin");
    let ptxas = env::var_os("OCTILE_PTXAS").map(PathBuf::from).or_else(|| find_ptxas(&root.join(".venv")));
    let Some(ptxas) = ptxas else {
        println!("cargo:warning=no ptxas (run scripts/setup or set OCTILE_PTXAS): the kernels are embedded as PTX only and JIT-compiled on the first GPU run");
        std::fs::write(&cubin, b"").unwrap();
        return;
    };
    let status = Command::new(&ptxas).arg(format!("-arch={arch}")).arg("-O3").arg("-o").arg(&cubin).arg(ptx).status();
    match status {
        Ok(s) if s.success() => {}
        other => fail(&format!("{} failed on the kernels' PTX: {other:?}", ptxas.display())),
    }
}

/// `ptxas` of the PyPI wheel nvidia-cuda-nvcc inside a virtual environment.
fn find_ptxas(venv: &Path) -> Option<PathBuf> {
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    for py in lib.flatten() {
        for sub in ["site-packages/nvidia/cu13/bin/ptxas", "site-packages/nvidia/cuda_nvcc/bin/ptxas"] {
            let p = py.path().join(sub);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Insert `.maxntid 128, 1, 1` (the solver's block size, `SOLVER_BLOCK_THREADS`; a host test checks
/// they agree) and `.minnctapersm N` after the parameter list of each named entry.
fn add_launch_bounds(ptx: &str, entries: &[&str], min_blocks: u32) -> String {
    add_bounds(ptx, entries, &format!("\n.maxntid 128, 1, 1\n.minnctapersm {min_blocks}"))
}

/// Insert `directives` after the parameter list of each named entry.
fn add_bounds(ptx: &str, entries: &[&str], directives: &str) -> String {
    let mut out = ptx.to_string();
    for name in entries {
        let head = format!(".visible .entry {name}(");
        let start = out.find(&head).unwrap_or_else(|| fail(&format!("entry {name} not in the PTX")));
        let close = start + out[start..].find(')').unwrap_or_else(|| fail("unterminated parameter list"));
        out.insert_str(close + 1, directives);
    }
    out
}

/// `<target>/ptx`, next to the host's profile directories, so every profile shares one PTX build.
fn ptx_target_dir(out_dir: &Path) -> PathBuf {
    let build = out_dir.ancestors().find(|p| p.file_name().is_some_and(|n| n == "build")).expect("OUT_DIR inside a build dir");
    build.parent().unwrap().parent().unwrap().join("ptx")
}

fn run_text(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| fail(&format!("cannot run {cmd:?}: {e}")));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fail(msg: &str) -> ! {
    eprintln!("\nerror: octile build: {msg}\n");
    panic!("octile build: {msg}");
}

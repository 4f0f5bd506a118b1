//! Builds `kernels-gpu` to PTX with a nested cargo (its own target dir and flags) and rustc's
//! nvptx64 backend, then leaves `octile_kernels.ptx` in OUT_DIR for `include_str!` and, assembled
//! by ptxas for the same architecture, `octile_kernels.cubin` for `include_bytes!`.
//!
//! Settings (environment, read at build time):
//! - `OCTILE_CUDA_ARCH`  target SM, default `sm_90` (`sm_80`, `sm_89`, ... work too)
//! - `OCTILE_PTX`        path of a prebuilt PTX file to embed instead of building one
//! - `OCTILE_PTXAS`      the ptxas that builds the cubin (default: the one in `.venv`, from scripts/setup)
//!
//! Launch bounds: rustc has no `__launch_bounds__`, so each entry's `.maxntid` / `.minnctapersm` /
//! `.maxnreg` are written into the PTX here, from its declaration in `octile_types::entries` (the
//! one table of entries; the measurements behind each bound are documented there); the build fails
//! when the PTX exports an entry the table lacks, or lacks one it declares.
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
    for p in ["kernels-gpu/src", "kernels-gpu/Cargo.toml", "shared-types/src", "shared-types/Cargo.toml", "tools/ptx-link.sh", "tools/smem.ll"] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    println!("cargo:rerun-if-env-changed=OCTILE_CUDA_ARCH");
    println!("cargo:rerun-if-env-changed=OCTILE_PTX");
    embed_git_commit(&root);

    let arch = env::var("OCTILE_CUDA_ARCH").unwrap_or_else(|_| "sm_90".into());
    println!("cargo:rustc-env=OCTILE_CUDA_ARCH={arch}");
    if let Ok(prebuilt) = env::var("OCTILE_PTX") {
        std::fs::copy(&prebuilt, &dest).unwrap_or_else(|e| fail(&format!("OCTILE_PTX={prebuilt}: {e}")));
        build_cubin(&root, &dest, &arch, &ptx_target_dir(&out_dir).join("cubin"));
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
    // the linker beside the shared PTX build, not in this profile's OUT_DIR: its path is in the
    // nested cargo's flags, and a path of each profile would rebuild core and the kernels for each
    let linker = link_step(&root, &target_dir);
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
    let text = add_declared_bounds(&text);
    std::fs::write(&dest, text).unwrap();
    build_cubin(&root, &dest, &arch, &target_dir.join("cubin"));
}

/// Assemble the PTX into a cubin for `arch` with ptxas (`OCTILE_PTXAS`, else the setup's
/// `.venv`), so that a GPU of that architecture loads machine code instead of JIT-compiling 5 MB of
/// PTX on its first run (~26 s on an H100). Without ptxas an empty cubin is embedded and every GPU
/// JIT-compiles the PTX (a warning says so).
///
/// ptxas runs on every core (`--split-compile 0`: the same machine code, only its tool note differs)
/// and verbosely: its per-entry registers and spills go to `octile_kernels.ptxas-<arch>.log` beside
/// the PTX, which `scripts/check-ptx` reads instead of assembling again. The cubin and its log are
/// kept in `<target>/ptx/cubin/`, named by a hash of the PTX, the architecture and the ptxas: a
/// profile or a build script rerun (a new commit) with the same PTX copies them instead of spending
/// two minutes of ptxas.
///
/// ```text
/// target/ptx/cubin/<hash>.cubin  <hash>.log      one per (PTX, arch, ptxas): every profile's
///        │                                        build script finds it here
///        └─ copied to  target/<profile>/build/octile-*/out/octile_kernels.cubin
///                                                  octile_kernels.ptxas-sm_90.log
/// ```
fn build_cubin(root: &Path, ptx: &Path, arch: &str, cache: &Path) {
    use std::hash::{DefaultHasher, Hash, Hasher};
    println!("cargo:rerun-if-env-changed=OCTILE_PTXAS");
    let cubin = ptx.with_extension("cubin");
    let log = ptx.with_extension(format!("ptxas-{arch}.log"));
    // a log of another PTX must not outlive it (check-ptx would read it)
    let _ = std::fs::remove_file(&log);
    let ptxas = env::var_os("OCTILE_PTXAS").map(PathBuf::from).or_else(|| find_ptxas(&root.join(".venv")));
    let Some(ptxas) = ptxas else {
        println!("cargo:warning=no ptxas (run scripts/setup or set OCTILE_PTXAS): the kernels are embedded as PTX only and JIT-compiled on the first GPU run");
        std::fs::write(&cubin, b"").unwrap();
        return;
    };
    let ptx_text = std::fs::read(ptx).unwrap_or_else(|e| fail(&format!("{}: {e}", ptx.display())));
    let mut h = DefaultHasher::new();
    (&ptx_text, arch, &ptxas, std::fs::metadata(&ptxas).ok().and_then(|m| m.modified().ok())).hash(&mut h);
    let key = cache.join(format!("{:016x}", h.finish()));
    let (cached, cached_log) = (key.with_extension("cubin"), key.with_extension("log"));
    if !std::fs::metadata(&cached).is_ok_and(|m| m.len() > 0) || !cached_log.exists() {
        std::fs::create_dir_all(cache).unwrap_or_else(|e| fail(&format!("{}: {e}", cache.display())));
        // written under a name of this process, renamed when whole: a build of another profile
        // running beside this one never copies half a cubin
        let tmp = key.with_extension(format!("{}.tmp", std::process::id()));
        let out = Command::new(&ptxas).arg(format!("-arch={arch}")).args(["-O3", "-v", "--split-compile", "0", "-o"]).arg(&tmp).arg(ptx).output();
        let out = match out {
            Ok(o) if o.status.success() => o,
            Ok(o) => {
                fail(&format!("{} failed on the kernels' PTX:\n{}{}", ptxas.display(), String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
            }
            Err(e) => fail(&format!("cannot run {}: {e}", ptxas.display())),
        };
        let tmp_log = key.with_extension(format!("{}.log.tmp", std::process::id()));
        std::fs::write(&tmp_log, [out.stdout, out.stderr].concat()).unwrap_or_else(|e| fail(&format!("{}: {e}", tmp_log.display())));
        std::fs::rename(&tmp_log, &cached_log).unwrap_or_else(|e| fail(&format!("{}: {e}", cached_log.display())));
        std::fs::rename(&tmp, &cached).unwrap_or_else(|e| fail(&format!("{}: {e}", cached.display())));
        prune(cache, 8);
    } else if let Ok(f) = std::fs::File::options().append(true).open(&cached) {
        // used now: the pruning keeps the cubins used last
        let _ = f.set_modified(std::time::SystemTime::now());
    }
    std::fs::copy(&cached, &cubin).unwrap_or_else(|e| fail(&format!("{}: {e}", cubin.display())));
    std::fs::copy(&cached_log, &log).unwrap_or_else(|e| fail(&format!("{}: {e}", log.display())));
}

/// The newest `keep` cubins of the cache (with their logs); older ones go: a session of kernel
/// changes would otherwise leave 9 MB a change behind.
fn prune(cache: &Path, keep: usize) {
    let Ok(dir) = std::fs::read_dir(cache) else { return };
    let mut cubins: Vec<(std::time::SystemTime, PathBuf)> = dir
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cubin"))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    cubins.sort();
    for (_, p) in cubins.iter().rev().skip(keep) {
        let _ = std::fs::remove_file(p);
        let _ = std::fs::remove_file(p.with_extension("log"));
    }
}

/// The link step (`tools/ptx-link.sh` and the IR module it links, `tools/smem.ll`) copied into a
/// folder of `dir` (the shared PTX build's) named by their contents' hash: the nested cargo sees
/// the linker's path in its flags, so a changed link step rebuilds the kernels (cargo does not
/// watch a linker's contents).
fn link_step(root: &Path, dir: &Path) -> PathBuf {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let files = ["ptx-link.sh", "smem.ll"];
    let mut h = DefaultHasher::new();
    let texts: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(root.join("tools").join(f)).unwrap_or_else(|e| fail(&format!("tools/{f}: {e}")))).collect();
    texts.hash(&mut h);
    let dir = dir.join(format!("link-{:016x}", h.finish()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| fail(&format!("{}: {e}", dir.display())));
    // written only when missing: another profile's nested cargo may be running the script
    for (f, text) in files.iter().zip(&texts) {
        if std::fs::read(dir.join(f)).ok().as_ref() != Some(text) {
            std::fs::write(dir.join(f), text).unwrap_or_else(|e| fail(&format!("{}: {e}", dir.join(f).display())));
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir.join("ptx-link.sh"), std::fs::Permissions::from_mode(0o755));
    }
    dir.join("ptx-link.sh")
}

/// `OCTILE_GIT_COMMIT` for the binary's summaries: `git rev-parse --short HEAD` of the source tree,
/// or "unknown" without git or outside a checkout; the script reruns when HEAD or its branch moves.
fn embed_git_commit(root: &Path) {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=OCTILE_GIT_COMMIT={commit}");
    // only files that exist: a missing one would make cargo rerun the script on every build
    let mut watch = Vec::new();
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]).map(PathBuf::from) {
        watch.push(dir.join("HEAD"));
    }
    if let (Some(common), Some(branch)) = (git(&["rev-parse", "--git-common-dir"]), git(&["symbolic-ref", "-q", "HEAD"])) {
        let common = root.join(common);
        watch.extend([common.join(branch), common.join("packed-refs")]);
    }
    for p in watch.into_iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", p.display());
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
/// Check that the PTX exports exactly the declared entries, and write each one's launch bounds
/// after its parameter list.
fn add_declared_bounds(ptx: &str) -> String {
    use octile_types::entries::Kernel;
    let exported: Vec<&str> = ptx.lines().filter_map(|l| l.strip_prefix(".visible .entry ")).map(|l| l.split('(').next().unwrap_or("").trim()).collect();
    for name in &exported {
        if !Kernel::ALL.iter().any(|k| k.name() == *name) {
            fail(&format!("the PTX exports entry {name}, which octile_types::entries does not declare"));
        }
    }
    let mut out = ptx.to_string();
    for k in Kernel::ALL {
        let d = k.decl();
        if !exported.contains(&d.name) {
            fail(&format!("entry {} ({k:?}) is declared in octile_types::entries but not in the PTX", d.name));
        }
        let mut directives = String::new();
        if d.bounds.max_threads > 0 {
            directives += &format!("\n.maxntid {}, 1, 1", d.bounds.max_threads);
        }
        if d.bounds.min_blocks_per_sm > 0 {
            directives += &format!("\n.minnctapersm {}", d.bounds.min_blocks_per_sm);
        }
        if d.bounds.max_registers > 0 {
            directives += &format!("\n.maxnreg {}", d.bounds.max_registers);
        }
        if directives.is_empty() {
            continue;
        }
        let head = format!(".visible .entry {}(", d.name);
        let start = out.find(&head).unwrap_or_else(|| fail(&format!("entry {} not in the PTX", d.name)));
        let close = start + out[start..].find(')').unwrap_or_else(|| fail("unterminated parameter list"));
        out.insert_str(close + 1, &directives);
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

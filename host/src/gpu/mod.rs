//! The GPU runtime shared by every method: one context, stream and PTX module per process (loaded
//! once, on first use) and what we know of the device. No method logic lives here.
//!
//! Layers: cudarc's driver API (dynamically loaded: octile builds and runs without CUDA) is opened
//! here; each method's launches (e.g. `mgk::gpu::launch`) wrap its `unsafe` kernel launches behind
//! safe functions that check the contract first, using [`GpuDevice::function`] and its stream.

pub mod pinned;
pub mod staging;
pub mod streams;

use crate::error::OctileError;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DriverError, result, sys};
use cudarc::nvrtc::Ptx;
use octile_types::Kernel;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The PTX built from `kernels-gpu` by `host/build.rs`.
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/octile_kernels.ptx"));
/// The SM the PTX was built for.
pub const PTX_ARCH: &str = env!("OCTILE_CUDA_ARCH");
/// The same kernels assembled by ptxas for [`PTX_ARCH`] at build time (empty when the build had no
/// ptxas): loaded on a GPU of that architecture, so the first run skips the driver's PTX JIT.
pub const CUBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/octile_kernels.cubin"));

/// A ready GPU: context, stream, the loaded module and what we know of the device.
pub struct GpuDevice {
    /// The context.
    pub ctx: Arc<CudaContext>,
    /// The stream every launch and copy goes through.
    pub stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    /// CUDA's ordinal of the device (after `CUDA_VISIBLE_DEVICES`).
    pub ordinal: usize,
    /// Device name.
    pub name: String,
    /// Compute capability.
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Total memory in bytes.
    pub total_mem_bytes: usize,
    /// Driver's CUDA version, e.g. 13000.
    pub driver_version: i32,
    /// Most dynamic shared memory one block may opt in to, in bytes.
    pub max_smem_optin_bytes: usize,
    /// Where the kernels came from: "cubin" (built for this architecture) or "PTX (JIT)".
    pub kernels_from: &'static str,
    /// Page-locked host buffers for copies that must not stop the calling thread.
    pub pinned: pinned::PinnedPool,
    /// Streams made once and lent to each call (`streams::StreamPool`): a call does not pay for
    /// creating its own.
    pub streams: streams::StreamPool,
    /// Held while one caller queues a batch of launches that should reach the GPU together (a
    /// GPU tile's block of launches): batches of several threads then do not interleave, so the
    /// GPU finishes them one after another instead of all at once at the end.
    pub submission: Mutex<()>,
}

impl std::fmt::Debug for GpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.describe())
    }
}

/// A device a method ran on, for run reports: `Display` is the line people read (e.g. "NVIDIA
/// H100 80GB HBM3 (sm_90, 132 SMs, 79.2 GiB, driver CUDA 13.0, kernels: cubin)", "CPU (16
/// threads)"), JSON summaries serialise it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "backend", rename_all = "snake_case")]
pub enum DeviceInfo {
    /// All CPU cores.
    Cpu {
        /// rayon's threads.
        threads: usize,
    },
    /// A GPU.
    Cuda {
        /// Its name.
        name: String,
        /// "sm_XY".
        arch: String,
        /// Streaming multiprocessors.
        sms: u32,
        /// Total memory in bytes.
        memory_bytes: usize,
        /// The driver's CUDA version, e.g. "13.0".
        driver_cuda: String,
        /// Where the kernels came from: "cubin" or "PTX (JIT)".
        kernels_from: &'static str,
    },
}

impl std::fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceInfo::Cpu { threads } => write!(f, "CPU ({threads} threads)"),
            DeviceInfo::Cuda { name, arch, sms, memory_bytes, driver_cuda, kernels_from } => write!(
                f,
                "{name} ({arch}, {sms} SMs, {:.1} GiB, driver CUDA {driver_cuda}, kernels: {kernels_from})",
                *memory_bytes as f64 / (1u64 << 30) as f64
            ),
        }
    }
}

impl GpuDevice {
    /// The device for run reports.
    pub fn info(&self) -> DeviceInfo {
        DeviceInfo::Cuda {
            name: self.name.clone(),
            arch: self.arch(),
            sms: self.sm_count,
            memory_bytes: self.total_mem_bytes,
            driver_cuda: format!("{}.{}", self.driver_version / 1000, (self.driver_version % 1000) / 10),
            kernels_from: self.kernels_from,
        }
    }
    /// One line: name, SM, memory, driver ([`DeviceInfo`]'s `Display`).
    pub fn describe(&self) -> String {
        self.info().to_string()
    }
    /// Most dynamic shared memory one block may use, in bytes (the opt-in limit).
    pub fn max_smem_per_block_bytes(&self) -> usize {
        self.max_smem_optin_bytes
    }
    /// "sm_XY" of the device.
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.compute_capability.0, self.compute_capability.1)
    }
    /// An entry of the module by its declared id (`octile_types::entries`):
    /// [`OctileError::MissingKernel`] when the module has none of that name.
    pub fn function(&self, kernel: Kernel) -> Result<CudaFunction, OctileError> {
        let name = kernel.name();
        self.module.load_function(name).map_err(|cause| match cause.0 {
            sys::CUresult::CUDA_ERROR_NOT_FOUND => OctileError::MissingKernel { kernel: name.to_string(), cause },
            _ => OctileError::Driver(cause),
        })
    }
    /// A kernel that takes `smem_bytes` of dynamic shared memory: its dynamic-shared-memory cap is
    /// set to the most the device allows it (the opt-in limit less its static shared memory), the
    /// same value for every caller. Setting the cap to each launch's own size raced between
    /// threads: one thread lowered it between another's setting and launching, and that launch
    /// failed with CUDA_ERROR_INVALID_VALUE. The cap only bounds what a launch may ask for; the
    /// launch's own size is what occupancy sees. A size past the cap is an
    /// [`OctileError::LaunchContract`] error.
    pub fn function_with_smem(&self, kernel: Kernel, smem_bytes: usize) -> Result<CudaFunction, OctileError> {
        use cudarc::driver::sys::CUfunction_attribute_enum as A;
        let name = kernel.name();
        let f = self.function(kernel)?;
        let static_bytes = f.get_attribute(A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?.max(0) as usize;
        let cap = self.max_smem_optin_bytes.saturating_sub(static_bytes);
        if smem_bytes > cap {
            return Err(OctileError::LaunchContract {
                launch: name.to_string(),
                what: format!("{smem_bytes} bytes of dynamic shared memory, more than the {cap} this device allows it"),
            });
        }
        f.set_attribute(A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, cap as i32)?;
        Ok(f)
    }
    /// Free device memory in bytes.
    pub fn free_mem_bytes(&self) -> usize {
        self.ctx.mem_get_info().map(|(f, _)| f).unwrap_or(0)
    }
}

/// The process-level GPU switches, read from the environment in this one place, once per process
/// (by [`device`], on first use). They are deployment settings rather than options of a kernel:
/// the device, its context and the loaded module are one per process (a kernel's options cannot
/// reopen them), and every front end — the CLI, the Python package, the tests — must obey them
/// alike without passing anything. Tuning knobs of a method are its options instead (e.g.
/// `mgk::gpu::options::GpuTuning`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuOptions {
    /// `OCTILE_DISABLE_GPU` (any value): behave as if there were no GPU.
    pub disabled: bool,
    /// `OCTILE_PTX_FILE`: load this PTX — or cubin (an ELF file, ptxas's output for this GPU) —
    /// instead of the kernels built in (experiments with variants of the same kernels; a cubin
    /// loads without the driver's JIT, which takes minutes for the whole module).
    pub ptx_file: Option<std::path::PathBuf>,
}

impl GpuOptions {
    /// The switches as the environment sets them.
    pub fn from_env() -> Self {
        GpuOptions { disabled: std::env::var_os("OCTILE_DISABLE_GPU").is_some(), ptx_file: std::env::var_os("OCTILE_PTX_FILE").map(std::path::PathBuf::from) }
    }
}

/// Each device probed so far (by ordinal), or why it is not usable.
static DEVICES: Mutex<BTreeMap<usize, Result<Arc<GpuDevice>, String>>> = Mutex::new(BTreeMap::new());

/// The selection `--devices` made for this process (else `OCTILE_DEVICES` is read).
static SELECTION: OnceLock<String> = OnceLock::new();

/// The GPUs a kernel uses, as `--devices` / `OCTILE_DEVICES` spell them: "all", or ordinals
/// ("0,1"; CUDA's numbering, after `CUDA_VISIBLE_DEVICES`). Set once per process, before the
/// first kernel (the CLI's global `--devices`); an unusable spelling is an error naming it.
pub fn select_devices(spec: &str) -> Result<(), String> {
    if !is_all(spec) {
        parse_selection(spec, usize::MAX)?; // the spelling now; the ordinals against the GPUs there are at first use
    }
    SELECTION.set(spec.to_string()).map_err(|_| "the devices were already selected".to_string())
}

/// Whether `spec` selects every GPU ("all", any case, blanks around it).
fn is_all(spec: &str) -> bool {
    spec.trim().eq_ignore_ascii_case("all")
}

/// Ordinals of `spec` ("all": `0..count`); each below `count`, none twice.
fn parse_selection(spec: &str, count: usize) -> Result<Vec<usize>, String> {
    if is_all(spec) {
        return Ok((0..count).collect());
    }
    let spec = spec.trim();
    let mut out: Vec<usize> = Vec::new();
    for part in spec.split(',') {
        let k: usize =
            part.trim().parse().map_err(|_| format!("devices \"{spec}\": \"{}\" is not a GPU ordinal (write \"all\" or e.g. \"0,1\")", part.trim()))?;
        if k >= count {
            return Err(format!("devices \"{spec}\": GPU {k} does not exist ({count} visible)"));
        }
        if out.contains(&k) {
            return Err(format!("devices \"{spec}\": GPU {k} listed twice"));
        }
        out.push(k);
    }
    Ok(out)
}

/// The GPU with this ordinal, or why it is not usable. Probed once per process (under
/// [`GpuOptions::from_env`]); never panics.
pub fn device_at(ordinal: usize) -> Result<Arc<GpuDevice>, String> {
    let mut probed = DEVICES.lock().unwrap_or_else(|p| p.into_inner());
    probed
        .entry(ordinal)
        .or_insert_with(|| std::panic::catch_unwind(|| init(&GpuOptions::from_env(), ordinal)).unwrap_or_else(|_| Err("CUDA initialisation panicked".into())))
        .clone()
}

/// The GPUs selected for this process ([`select_devices`], else `OCTILE_DEVICES`; by default
/// GPU 0 alone), or why one of them is not usable.
pub fn devices() -> Result<Vec<Arc<GpuDevice>>, String> {
    selected_ordinals()?.into_iter().map(device_at).collect()
}

/// The ordinals selected (by default `[0]`), checked against the GPUs visible.
fn selected_ordinals() -> Result<Vec<usize>, String> {
    let Some(spec) = selection() else { return Ok(vec![0]) };
    let count = visible_count();
    if count == 0 {
        // the first probe says why there is no GPU at all (no driver, disabled)
        return Err(device_at(0).err().unwrap_or_else(|| "no GPU visible".into()));
    }
    let ordinals = parse_selection(&spec, count).map_err(|e| format!("OCTILE_DEVICES / --devices: {e}"))?;
    if ordinals.is_empty() {
        return Err(format!("devices \"{spec}\": no GPU selected"));
    }
    Ok(ordinals)
}

/// The selection `--devices` or `OCTILE_DEVICES` made, if any.
fn selection() -> Option<String> {
    SELECTION.get().cloned().or_else(|| std::env::var("OCTILE_DEVICES").ok().filter(|s| !s.trim().is_empty()))
}

/// The GPUs for `Backend::Auto`: the selected ones, `Ok(None)` (the CPU) when there is no usable
/// GPU and none was asked for by ordinal ("all" asks for whatever there is); GPUs named that
/// cannot be used are an error, not a silent run on the CPU.
pub fn auto_devices() -> Result<Option<Vec<Arc<GpuDevice>>>, String> {
    match devices() {
        Ok(d) => Ok(Some(d)),
        Err(e) if selection().is_some_and(|s| !is_all(&s)) => Err(e),
        Err(_) => Ok(None),
    }
}

/// GPUs the driver shows (0 without a driver).
fn visible_count() -> usize {
    // SAFETY: only checks whether libcuda.so can be dlopen'ed (cudarc has no safe form of it).
    if GpuOptions::from_env().disabled || !unsafe { sys::is_culib_present() } || result::init().is_err() {
        return 0;
    }
    result::device::get_count().map_or(0, |c| c.max(0) as usize)
}

/// The GPU: the first selected ([`devices`]; the others are not started), or why there is none.
pub fn device() -> Result<Arc<GpuDevice>, String> {
    device_at(selected_ordinals()?[0])
}

/// `cuDriverGetVersion`, which cudarc's `result` layer does not wrap, in that layer's style.
fn driver_version() -> Result<i32, DriverError> {
    let mut version = 0i32;
    // SAFETY: a valid out-pointer; the driver is initialised (result::init) before this is called.
    unsafe { sys::cuDriverGetVersion(&mut version) }.result()?;
    Ok(version)
}

/// `cuFuncLoad` (drivers of CUDA 12.4 and later), which cudarc's `result` layer does not wrap:
/// load a kernel now instead of at its first launch.
fn func_load(f: &CudaFunction) -> Result<(), DriverError> {
    // SAFETY: a valid function handle of a module that `f` keeps loaded.
    unsafe { sys::cuFuncLoad(f.cu_function()) }.result()
}

fn init(opts: &GpuOptions, ordinal: usize) -> Result<Arc<GpuDevice>, String> {
    if opts.disabled {
        return Err("disabled by OCTILE_DISABLE_GPU".into());
    }
    // SAFETY: only checks whether libcuda.so can be dlopen'ed (cudarc has no safe form of it).
    if !unsafe { sys::is_culib_present() } {
        return Err("no CUDA driver (libcuda.so.1 not found)".into());
    }
    // cuInit is idempotent
    result::init().map_err(|e| format!("cuInit: {e}"))?;
    let driver_version = driver_version().map_err(|e| format!("cuDriverGetVersion: {e}"))?;
    let count = result::device::get_count().map_err(|e| format!("cuDeviceGetCount: {e}"))?;
    if count == 0 {
        return Err("CUDA driver present but no GPU visible".into());
    }
    if ordinal >= count as usize {
        return Err(format!("GPU {ordinal} does not exist ({count} visible)"));
    }
    let ctx = CudaContext::new(ordinal).map_err(|e| format!("creating a context on device {ordinal}: {e}"))?;
    let compute_capability = ctx.compute_capability().map_err(|e| e.to_string())?;
    let ptx_file = opts.ptx_file.as_deref();
    let matches = format!("sm_{}{}", compute_capability.0, compute_capability.1) == PTX_ARCH;
    // the build's cubin on its own architecture (no JIT); else the PTX, JIT-compiled by the driver
    let cubin = if ptx_file.is_none() && matches && !CUBIN.is_empty() { ctx.load_module(Ptx::from_binary(CUBIN.to_vec())).ok() } else { None };
    let (module, kernels_from) = match cubin {
        Some(m) => (m, "cubin"),
        None => {
            let mut from = "PTX (JIT)";
            let image = match ptx_file {
                Some(p) => {
                    let bytes = std::fs::read(p).map_err(|e| format!("OCTILE_PTX_FILE={}: {e}", p.display()))?;
                    if bytes.starts_with(b"\x7fELF") {
                        from = "cubin (OCTILE_PTX_FILE)";
                        Ptx::from_binary(bytes)
                    } else {
                        Ptx::from_src(String::from_utf8(bytes).map_err(|e| format!("OCTILE_PTX_FILE={}: neither a cubin nor PTX text: {e}", p.display()))?)
                    }
                }
                None => Ptx::from_src(PTX.to_string()),
            };
            let m = ctx.load_module(image).map_err(|e| match ptx_file {
                Some(p) => format!(
                    "loading OCTILE_PTX_FILE={} ({from}) on a device of compute capability {}.{}: {e}",
                    p.display(),
                    compute_capability.0,
                    compute_capability.1
                ),
                None => format!(
                    "loading the PTX (built for {PTX_ARCH}) on a device of compute capability {}.{}: {e}; rebuild with OCTILE_CUDA_ARCH=sm_{}{}",
                    compute_capability.0, compute_capability.1, compute_capability.0, compute_capability.1
                ),
            })?;
            (m, from)
        }
    };
    let stream = ctx.default_stream();
    // the first allocation and transfers of a process set up the driver's memory pool and staging
    // buffers (~8 ms on an H100): done here, once, rather than inside the first Gram call's time
    let warm = (|| {
        let d = stream.clone_htod(&[0u32; 64])?;
        let back = stream.clone_dtoh(&d)?;
        stream.synchronize().map(|_| back)
    })();
    warm.map_err(|e| format!("first transfer to the GPU: {e}"))?;
    // the driver loads a module's kernels lazily, each at its first launch (0.5–3 ms apiece on an
    // H100): load every entry now (cuFuncLoad, drivers of CUDA 12.4 and later), once per process
    if driver_version >= 12040 {
        for k in Kernel::ALL {
            if let Ok(f) = module.load_function(k.name()) {
                // best effort: a kernel not loaded now loads at its first launch
                let _ = func_load(&f);
            }
        }
    }
    let sm_count = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).map_err(|e| e.to_string())? as u32;
    let max_smem_optin_bytes =
        ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN).map_err(|e| e.to_string())? as usize;
    let total_mem_bytes = ctx.total_mem().map_err(|e| e.to_string())?;
    let name = ctx.name().map_err(|e| e.to_string())?;
    Ok(Arc::new(GpuDevice {
        pinned: pinned::PinnedPool::new(ctx.clone()),
        streams: streams::StreamPool::default(),
        submission: Mutex::new(()),
        ctx,
        stream,
        module,
        ordinal,
        name,
        compute_capability,
        sm_count,
        total_mem_bytes,
        driver_version,
        max_smem_optin_bytes,
        kernels_from,
    }))
}

/// Where a method's computation runs: all CPU cores, or a GPU. Methods pick it from a
/// [`crate::Backend`] and name it in their results.
pub enum Engine {
    /// rayon over the CPU cores.
    Cpu,
    /// The GPU.
    Cuda(Arc<GpuDevice>),
}

impl Engine {
    /// The engine `backend` names: `Cpu` the CPU, `Cuda` the GPU (without a usable one an
    /// [`OctileError::NoGpu`] naming why), `Auto` the GPU when one is usable, else the CPU.
    pub fn for_backend(backend: crate::backend::Backend) -> Result<Engine, OctileError> {
        use crate::backend::Backend;
        Ok(match backend {
            Backend::Cpu => Engine::Cpu,
            Backend::Cuda => Engine::Cuda(device().map_err(OctileError::NoGpu)?),
            Backend::Auto => auto_devices().map_err(OctileError::NoGpu)?.map_or(Engine::Cpu, |d| Engine::Cuda(d[0].clone())),
        })
    }
    /// [`for_backend`](Self::for_backend) with every selected GPU ([`devices`]): the engine on
    /// the first, and the others (empty on the CPU), for a method that spreads its work.
    pub fn with_peers(backend: crate::backend::Backend) -> Result<(Engine, Vec<Arc<GpuDevice>>), OctileError> {
        use crate::backend::Backend;
        let gpus = match backend {
            Backend::Cpu => None,
            Backend::Cuda => Some(devices().map_err(OctileError::NoGpu)?),
            Backend::Auto => auto_devices().map_err(OctileError::NoGpu)?,
        };
        Ok(match gpus {
            Some(d) => (Engine::Cuda(d[0].clone()), d[1..].to_vec()),
            None => (Engine::Cpu, Vec::new()),
        })
    }
    /// "cpu" or "cuda".
    pub fn name(&self) -> &'static str {
        match self {
            Engine::Cpu => "cpu",
            Engine::Cuda(_) => "cuda",
        }
    }
    /// The device, for run reports.
    pub fn info(&self) -> DeviceInfo {
        match self {
            Engine::Cpu => DeviceInfo::Cpu { threads: rayon::current_num_threads() },
            Engine::Cuda(d) => d.info(),
        }
    }
    /// Human-readable device ([`DeviceInfo`]'s `Display`).
    pub fn describe(&self) -> String {
        self.info().to_string()
    }
}

#[cfg(test)]
mod selection_tests {
    use super::parse_selection;

    #[test]
    fn selections_name_each_visible_gpu_once() {
        assert_eq!(parse_selection("all", 3), Ok(vec![0, 1, 2]));
        assert_eq!(parse_selection(" ALL ", 0), Ok(vec![]));
        assert_eq!(parse_selection("1, 0", 2), Ok(vec![1, 0]));
        for (bad, why) in [
            ("2", "GPU 2 does not exist (2 visible)"),
            ("0,0", "GPU 0 listed twice"),
            ("0,x", "\"x\" is not a GPU ordinal"),
            ("", "\"\" is not a GPU ordinal"),
            ("-1", "\"-1\" is not"),
        ] {
            let e = parse_selection(bad, 2).expect_err(bad);
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}

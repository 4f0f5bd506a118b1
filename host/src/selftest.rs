//! GPU self-test: runs `smoke_intrinsics` (octile-kernels' `selftest`), which exercises every
//! intrinsic wrapper and the block reduction, so a test can check them against known answers on a
//! real GPU. Not used by any method.
use crate::error::Result;
use crate::gpu::GpuDevice;
use cudarc::driver::{LaunchConfig, PushKernelArg};
use octile_types::Kernel;
use octile_types::names::{SMOKE_BLOCK_THREADS, SMOKE_WORDS_PER_THREAD};

/// What the smoke kernel returned.
pub struct SmokeOutput {
    /// 8 words per thread.
    pub words: Vec<u32>,
    /// Final atomic counter.
    pub counter: u32,
    /// Σ 1.0 over threads (f32 atomics).
    pub acc_f32: f32,
    /// Σ 0.5 over threads (f64 atomics).
    pub acc_f64: f64,
    /// Per block: Σ tid, Σ 1.
    pub block_sums: Vec<f64>,
}

/// Run `smoke_intrinsics` on `blocks` blocks.
pub fn smoke(dev: &GpuDevice, blocks: u32) -> Result<SmokeOutput> {
    let threads = (blocks * SMOKE_BLOCK_THREADS) as usize;
    let mut words = dev.stream.alloc_zeros::<u32>(threads * SMOKE_WORDS_PER_THREAD)?;
    let mut counter = dev.stream.alloc_zeros::<u32>(1)?;
    let mut acc32 = dev.stream.alloc_zeros::<f32>(1)?;
    let mut acc64 = dev.stream.alloc_zeros::<f64>(1)?;
    let mut sums = dev.stream.alloc_zeros::<f64>(2 * blocks as usize)?;
    let f = dev.function(Kernel::SmokeIntrinsics)?;
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (SMOKE_BLOCK_THREADS, 1, 1), shared_mem_bytes: 0 };
    let mut b = dev.stream.launch_builder(&f);
    b.arg(&mut words).arg(&mut counter).arg(&mut acc32).arg(&mut acc64).arg(&mut sums);
    // SAFETY: words holds 8 u32 per launched thread, sums 2 f64 per block, the three scalars are
    // single zeroed elements, and the block size is SMOKE_BLOCK_THREADS (= BLOCK_THREADS,
    // as its block reduction requires).
    unsafe { b.launch(cfg) }?;
    dev.stream.synchronize()?;
    Ok(SmokeOutput {
        words: dev.stream.clone_dtoh(&words)?,
        counter: dev.stream.clone_dtoh(&counter)?[0],
        acc_f32: dev.stream.clone_dtoh(&acc32)?[0],
        acc_f64: dev.stream.clone_dtoh(&acc64)?[0],
        block_sums: dev.stream.clone_dtoh(&sums)?,
    })
}

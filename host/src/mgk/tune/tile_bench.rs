//! The GPU side of the tile-pair microbenchmark: upload random tile pairs and run `tile_bench_*`
//! (octile-kernels' `mgk::tune`) with one primitive, timed with events.
use super::tile_pairs::TilePairs;
use crate::error::{OctileError, Result};
use crate::gpu::GpuDevice;
use crate::mgk::config::{DenseWalk, gathered};
use cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits, sys};
use octile_types::Kernel;
use octile_types::mgk::layout::MAX_NZ_STRIDE;
use octile_types::mgk::names::SOLVER_BLOCK_THREADS;
use octile_types::mgk::tiling::TILE_AREA;
use octile_types::{KernelSpec, Octile, Primitive, Real, TileBenchParams};

/// Tile pairs resident on the device (see [`TilePairs`]).
pub struct DeviceTilePairs<T> {
    n_pairs: usize,
    nz_stride: usize,
    octiles: CudaSlice<Octile>,
    edge_data: CudaSlice<T>,
    pblocks: CudaSlice<T>,
    out: CudaSlice<T>,
}

/// Upload tile pairs (checks that every compact tile's nonzeros lie inside `edge_data`).
pub fn upload_tile_pairs<T: Real + DeviceRepr + ValidAsZeroBits>(dev: &GpuDevice, pairs: &TilePairs<T>) -> Result<DeviceTilePairs<T>> {
    let fail = |what: String| Err(OctileError::LaunchContract { launch: "tile-pair upload".into(), what });
    let n = pairs.len();
    if n == 0 || pairs.octiles.len() != 2 * n || pairs.pblocks.len() != TILE_AREA * n {
        return fail(format!("{} octiles / {} p values for {n} pairs", pairs.octiles.len(), pairs.pblocks.len()));
    }
    if pairs.nz_stride == 0 || pairs.nz_stride > MAX_NZ_STRIDE {
        return fail(format!("nz_stride {} outside 1..={MAX_NZ_STRIDE}", pairs.nz_stride));
    }
    let n_nz = pairs.edge_data.len() / pairs.nz_stride;
    if let Some(t) = pairs.octiles.iter().find(|t| t.nz_offset as usize + t.nnz() as usize > n_nz) {
        return fail(format!("a tile's nonzeros {}..{} exceed the {n_nz} stored", t.nz_offset, t.nz_offset + t.nnz()));
    }
    let edge: Vec<T> = if pairs.edge_data.is_empty() { vec![T::ZERO] } else { pairs.edge_data.clone() };
    Ok(DeviceTilePairs {
        n_pairs: n,
        nz_stride: pairs.nz_stride,
        octiles: dev.stream.clone_htod(&pairs.octiles)?,
        edge_data: dev.stream.clone_htod(&edge)?,
        pblocks: dev.stream.clone_htod(&pairs.pblocks)?,
        out: dev.stream.alloc_zeros::<T>(TILE_AREA * n)?,
    })
}

/// Run the tile-pair kernel with one primitive: returns the 64 outputs per pair (summed over
/// `reps`) and, when `timed`, the launch's event-measured milliseconds. `grid` defaults to one
/// warp per pair (at most the resident blocks).
pub fn tile_bench<T: Real + DeviceRepr + ValidAsZeroBits>(
    dev: &GpuDevice,
    up: &DeviceTilePairs<T>,
    edge: &KernelSpec,
    prim: Primitive,
    walk: DenseWalk,
    reps: u32,
    grid: Option<u32>,
) -> Result<(Vec<T>, f32)> {
    let width = up.nz_stride - 1;
    let name = if T::BYTES == 4 { Kernel::TileBenchF32 } else { Kernel::TileBenchF64 };
    if edge.terms().iter().any(|t| t.kind != 0 && t.feature as usize >= width) {
        return Err(OctileError::LaunchContract { launch: name.name().into(), what: "kernel feature index outside the feature rows".into() });
    }
    let f = dev.function(name)?;
    let warps_per_block = SOLVER_BLOCK_THREADS / 32;
    let grid = grid.unwrap_or_else(|| (up.n_pairs as u32).div_ceil(warps_per_block)).max(1);
    let params = TileBenchParams {
        edge_kernel: *edge,
        n_pairs: up.n_pairs as u32,
        reps,
        nz_stride: up.nz_stride as u32,
        primitive: prim as u32,
        dense_kernel: gathered(edge, walk),
    };
    let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (SOLVER_BLOCK_THREADS, 1, 1), shared_mem_bytes: 0 };
    let mut out = up.out.clone();
    let start = dev.stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?;
    let mut b = dev.stream.launch_builder(&f);
    b.arg(&params).arg(&up.octiles).arg(&up.edge_data).arg(&up.pblocks).arg(&mut out);
    // SAFETY: octiles holds 2·n_pairs tiles whose compact nonzeros lie inside edge_data (checked
    // in upload_tile_pairs), pblocks and out hold 64·n_pairs values, nz_stride ≤ MAX_NZ_STRIDE,
    // kernel feature indices are inside the rows (checked above), block size SOLVER_BLOCK_THREADS.
    unsafe { b.launch(cfg) }?;
    let stop = dev.stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?;
    let ms = start.elapsed_ms(&stop)?;
    Ok((dev.stream.clone_dtoh(&out)?, ms))
}

/// Same as [`super::tile_pairs::cpu_products`] on the GPU (the `tile_bench` kernel, `reps` repeats).
pub fn gpu_products<T: Real + DeviceRepr + ValidAsZeroBits>(
    pairs: &TilePairs<T>,
    edge: &KernelSpec,
    prim: Primitive,
    walk: DenseWalk,
    reps: u32,
) -> Result<Vec<T>> {
    let dev = crate::gpu::device().map_err(OctileError::NoGpu)?;
    let up = upload_tile_pairs(&dev, pairs)?;
    let (out, _) = tile_bench(&dev, &up, edge, prim, walk, reps, None)?;
    Ok(out)
}

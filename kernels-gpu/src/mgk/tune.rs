//! Tile-pair primitive kernel for `octile tune` and the primitive tests: every warp takes tile
//! pairs (octiles 2k, 2k+1 and p block k), stages them exactly as the solver's XMV does, and applies
//! one fixed primitive `reps` times, summing its 64 outputs into `out[k·64 ..]`.
//!
//! With `reps = 1` the outputs are the primitive's result (checked against the dense f64 reference
//! by the tests); with large `reps` the launch time, measured by the host with events, is the
//! primitive's cost for the tiles' (nnz_A, nnz_B). Tile B and the p block are restaged every repeat,
//! tile A once per pair — the same traffic per tile pair as in the solver, where A is staged once
//! per tile of G and reused over the tiles of G'.
use crate::intrinsics::{FULL_MASK, block_idx_x, grid_dim_x, lane_id, sync_warp, warp_id};
use crate::mgk::stage::{WarpStage, stage_b_and_p, stage_tile};
use octile_types::mgk::layout::TILE_STORAGE_COMPACT;
use octile_types::mgk::names::SOLVER_WARPS;
use octile_types::mgk::primitives::{Primitive, rows_pair_with};
use octile_types::mgk::tiling::{TILE, TILE_AREA};
use octile_types::{Octile, Real, TileBenchParams};

/// # Safety
/// Launched with `SOLVER_BLOCK_THREADS` threads; `octiles` holds 2·n_pairs compact tiles whose
/// nonzeros are in `edge_data` (`nz_stride` values each, `nz_stride ≤ MAX_NZ_STRIDE`); `pblocks`
/// and `out` hold 64·n_pairs values.
#[inline(always)]
unsafe fn bench<T: Real>(params: &TileBenchParams, octiles: *const Octile, edge_data: *const T, pblocks: *const T, out: *mut T) {
    let lane = lane_id() as usize;
    let st = WarpStage::<T>::of_warp(warp_id() as usize);
    let nz_stride = params.nz_stride as usize;
    let prim = Primitive::from_code(params.primitive as u8);
    let (ra0, rb) = (lane / TILE, lane % TILE);
    let n_warps = (grid_dim_x() * SOLVER_WARPS) as usize;
    let mut k = (block_idx_x() * SOLVER_WARPS + warp_id()) as usize;
    while k < params.n_pairs as usize {
        // SAFETY: k < n_pairs, so octiles 2k and 2k+1 exist.
        let (ta, tb) = unsafe { (*octiles.add(2 * k), *octiles.add(2 * k + 1)) };
        // SAFETY: the previous pair ended with a warp barrier.
        unsafe { stage_tile::<T, false>(&ta, edge_data, nz_stride, TILE_STORAGE_COMPACT, st.tile_a, lane) };
        let (ma0, ma1, mb) = (ta.row_mask(ra0 as u32), ta.row_mask(ra0 as u32 + 4), tb.row_mask(rb as u32));
        let (mut acc0, mut acc1) = (T::ZERO, T::ZERO);
        for _ in 0..params.reps {
            // SAFETY: whole warp; p block k has 64 values.
            unsafe { stage_b_and_p::<T, false>(&st, &tb, edge_data, nz_stride, TILE_STORAGE_COMPACT, pblocks.add(k * TILE_AREA), lane) };
            // SAFETY: staged above, ordered by the barrier.
            unsafe {
                let (s0, s1) = rows_pair_with(
                    prim,
                    &params.edge_kernel,
                    &params.dense_kernel,
                    st.tile_a,
                    st.tile_b,
                    st.pblk,
                    nz_stride,
                    (ra0, ra0 + 4, rb),
                    (ma0, ma1, mb),
                );
                acc0 += s0;
                acc1 += s1;
                sync_warp(FULL_MASK);
            }
        }
        // SAFETY: out has 64 values per pair.
        unsafe {
            *out.add(k * TILE_AREA + ra0 * TILE + rb) = acc0;
            *out.add(k * TILE_AREA + (ra0 + 4) * TILE + rb) = acc1;
        }
        k += n_warps;
    }
}

/// Defines one entry point (named by its `octile_types::entries` id) per precision over [`bench`].
macro_rules! bench_entry {
    ($(#[$doc:meta])* $name:ident, $t:ty) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// See [`bench`].
        #[unsafe(export_name = octile_types::entry_name!($name))]
        #[allow(non_snake_case)]
        pub unsafe extern "ptx-kernel" fn $name(params: TileBenchParams, octiles: *const Octile, edge_data: *const $t, pblocks: *const $t, out: *mut $t) {
            // SAFETY: forwarded to the launcher's contract.
            unsafe { bench::<$t>(&params, octiles, edge_data, pblocks, out) }
        }
    };
}

bench_entry!(
    /// `f32` tile-pair primitive kernel.
    TileBenchF32,
    f32
);
bench_entry!(
    /// `f64` tile-pair primitive kernel.
    TileBenchF64,
    f64
);

//! Per-warp staging of one tile pair in shared memory: both octiles expanded to 64 entries (layout
//! of `octile_types::mgk::primitives`) and the 8×8 block of the right-hand vector they multiply.
//!
//! ```text
//! octile_smem + warp · WARP_STAGE_BYTES:
//!   [ tile A : 64 × MAX_NZ_STRIDE ][ tile B : 64 × MAX_NZ_STRIDE ][ p block : 64 ]
//! ```
//! Why expand: whichever primitive the map picks, its lanes then address entry (r, c) directly
//! (a dense walk needs every entry; a sparse walk finds entries by bit position without a rank
//! computation per access). Compact storage keeps the *global* traffic at nnz entries per tile.
use crate::intrinsics::{FULL_MASK, sync_warp};
use crate::smem::{WARP_STAGE_BYTES, octile_smem};
use octile_types::mgk::layout::{MAX_NZ_STRIDE, TILE_STORAGE_DENSE};
use octile_types::mgk::tiling::TILE_AREA;
use octile_types::{Octile, Real};

/// The calling warp's staging area.
#[derive(Clone, Copy)]
pub struct WarpStage<T> {
    /// Expanded tile of G.
    pub tile_a: *mut T,
    /// Expanded tile of G'.
    pub tile_b: *mut T,
    /// The 64-value p block.
    pub pblk: *mut T,
}

impl<T: Real> WarpStage<T> {
    /// The staging area of warp `warp` of this block.
    #[inline(always)]
    pub fn of_warp(warp: usize) -> Self {
        // SAFETY: warp < SOLVER_WARPS; the area lies inside octile_smem (size asserted in smem.rs).
        let stage = unsafe { octile_smem().add(warp * WARP_STAGE_BYTES) } as *mut T;
        // SAFETY: as above; 2·64·MAX_NZ_STRIDE + 64 values of at most 8 bytes fit WARP_STAGE_BYTES.
        unsafe { WarpStage { tile_a: stage, tile_b: stage.add(TILE_AREA * MAX_NZ_STRIDE), pblk: stage.add(2 * TILE_AREA * MAX_NZ_STRIDE) } }
    }
}

/// Expand octile `t` into `dst` (64 × `nz_stride` values; weight and features 0 where the bitmap is
/// clear, so dense walks read finite zeros). Lane ℓ fills entries ℓ and ℓ + 32.
///
/// With `SPARSE` (the sparse-only kernel) only the set entries are written: sparse walks never read
/// the others.
///
/// # Safety
/// `dst` has room for 64·nz_stride values; `edge_data` holds the tile's entries in `storage`
/// layout (`TILE_STORAGE_*`; compact when `SPARSE`); `nz_stride ≤ MAX_NZ_STRIDE`.
#[inline(always)]
pub unsafe fn stage_tile<T: Real, const SPARSE: bool>(t: &Octile, edge_data: *const T, nz_stride: usize, storage: u32, dst: *mut T, lane: usize) {
    if SPARSE {
        // sparse walks read only entries whose bit is set: copy those, compact storage only
        for k in [lane, lane + 32] {
            if (t.nz_mask >> k) & 1 == 1 {
                // SAFETY: k < 64; the tile's nnz entries start at nz_offset; rank(k) < nnz.
                unsafe {
                    let out = dst.add(k * nz_stride);
                    let src = edge_data.add((t.nz_offset as usize + t.rank(k as u32) as usize) * nz_stride);
                    for f in 0..nz_stride {
                        *out.add(f) = *src.add(f);
                    }
                }
            }
        }
        return;
    }
    for k in [lane, lane + 32] {
        // SAFETY: k < 64 (caller's contract on dst).
        let out = unsafe { dst.add(k * nz_stride) };
        let present = (t.nz_mask >> k) & 1 == 1;
        if storage == TILE_STORAGE_DENSE {
            // all 64 entries are stored: load them all (what compact storage saves)
            // SAFETY: the tile's 64 entries start at nz_offset.
            let src = unsafe { edge_data.add((t.nz_offset as usize + k) * nz_stride) };
            for f in 0..nz_stride {
                // SAFETY: f < nz_stride.
                unsafe { *out.add(f) = *src.add(f) };
            }
        } else if present {
            // SAFETY: the tile's nnz entries start at nz_offset; rank(k) < nnz.
            let src = unsafe { edge_data.add((t.nz_offset as usize + t.rank(k as u32) as usize) * nz_stride) };
            for f in 0..nz_stride {
                // SAFETY: f < nz_stride.
                unsafe { *out.add(f) = *src.add(f) };
            }
        } else {
            for f in 0..nz_stride {
                // SAFETY: f < nz_stride.
                unsafe { *out.add(f) = T::ZERO };
            }
        }
    }
}

/// Stage tile `tb` of G' and the 64 values at `p_src` (tile A is staged once per tile of G by
/// the caller, outside its loop over tiles of G'), then a warp barrier.
///
/// # Safety
/// Called by all 32 lanes of the warp; see [`stage_tile`]; `p_src` has 64 readable values.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn stage_b_and_p<T: Real, const SPARSE: bool>(
    st: &WarpStage<T>,
    tb: &Octile,
    edge_data: *const T,
    nz_stride: usize,
    storage: u32,
    p_src: *const T,
    lane: usize,
) {
    // SAFETY: forwarded contract.
    unsafe {
        stage_tile::<T, SPARSE>(tb, edge_data, nz_stride, storage, st.tile_b, lane);
        *st.pblk.add(lane) = *p_src.add(lane);
        *st.pblk.add(lane + 32) = *p_src.add(lane + 32);
        sync_warp(FULL_MASK);
    }
}

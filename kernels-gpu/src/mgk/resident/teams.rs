//! The resident teams: one warp or one block, with its shared-memory slice and job drawing.
use crate::intrinsics::{FULL_MASK, atomic_add_u32, block_dim_x, block_idx_x, lane_id, shfl_idx_u32, sync_threads, sync_warp, thread_idx_x, warp_id};
use crate::reduce::warp_sum2;
use crate::smem::dynamic_smem;
use octile_types::mgk::resident::{RESIDENT_BLOCK_HEADER_BYTES, RESIDENT_BLOCK_WARPS};
use octile_types::pcg::Team;
/// A resident team (one warp, or one block): the PCG's [`Team`] with its shared-memory slice and
/// job drawing.
pub(super) trait ResidentTeam: Team {
    /// Whether the team kind walks G′'s long rows in pieces where a launch asks for it (block teams;
    /// warp teams never do, and their entries compile no split path).
    const SPLITS: bool = false;
    /// The team's shared-memory slice.
    fn slice(&self) -> *mut u32;
    /// The team's index in the grid (warp teams: block · warps per block + warp; block teams: the
    /// block).
    fn index(&self) -> usize;
    /// The next job index (`*counter` post-incremented once per team), the same in every thread.
    ///
    /// # Safety
    /// Every thread of the team must call it; `counter` is a valid global u32.
    unsafe fn next_job(&mut self, counter: *mut u32) -> u32;
}

/// One warp per pair; the warps of a block own consecutive slices of the dynamic shared memory.
pub(super) struct WarpTeam {
    pub(super) lane: usize,
    pub(super) slice: *mut u32,
}

impl Team for WarpTeam {
    const INDEX32: bool = true;
    #[inline(always)]
    fn rank(&self) -> usize {
        self.lane
    }
    #[inline(always)]
    fn size(&self) -> usize {
        32
    }
    #[inline(always)]
    unsafe fn barrier(&mut self) {
        // SAFETY: every lane reaches it (caller's contract).
        unsafe { sync_warp(FULL_MASK) }
    }
    #[inline(always)]
    unsafe fn sum2(&mut self, a: f64, b: f64) -> (f64, f64) {
        // SAFETY: every lane calls it; the barrier also orders the lanes' shared-memory writes
        // before the reads that follow the reduction.
        unsafe {
            sync_warp(FULL_MASK);
            warp_sum2(a, b)
        }
    }
}

impl ResidentTeam for WarpTeam {
    #[inline(always)]
    fn slice(&self) -> *mut u32 {
        self.slice
    }
    #[inline(always)]
    fn index(&self) -> usize {
        block_idx_x() as usize * (block_dim_x() as usize / 32) + warp_id() as usize
    }
    #[inline(always)]
    unsafe fn next_job(&mut self, counter: *mut u32) -> u32 {
        // SAFETY: lane 0 alone increments the valid counter; every lane takes part in the shuffle.
        unsafe {
            let v = if self.lane == 0 { atomic_add_u32(counter, 1) } else { 0 };
            shfl_idx_u32(FULL_MASK, v, 0)
        }
    }
}

/// One block per pair (a multiple of 32 threads, at most `RESIDENT_BLOCK_THREADS`); reductions go
/// through the header of the dynamic shared memory.
pub(super) struct BlockSliceTeam {
    pub(super) tid: usize,
    pub(super) size: usize,
    pub(super) slots: *mut f64,
    pub(super) slice: *mut u32,
}

impl Team for BlockSliceTeam {
    const INDEX32: bool = true;
    #[inline(always)]
    fn rank(&self) -> usize {
        self.tid
    }
    #[inline(always)]
    fn size(&self) -> usize {
        self.size
    }
    #[inline(always)]
    unsafe fn barrier(&mut self) {
        // SAFETY: every thread reaches it (caller's contract).
        unsafe { sync_threads() }
    }
    #[inline(always)]
    unsafe fn sum2(&mut self, a: f64, b: f64) -> (f64, f64) {
        // SAFETY: every thread calls it; slots 2w, 2w + 1 (w < RESIDENT_BLOCK_WARPS) lie in the header.
        unsafe {
            let (a, b) = warp_sum2(a, b);
            if lane_id() == 0 {
                let w = warp_id() as usize;
                *self.slots.add(2 * w) = a;
                *self.slots.add(2 * w + 1) = b;
            }
            sync_threads();
            let (mut sa, mut sb) = (0.0, 0.0);
            for w in 0..self.size / 32 {
                sa += *self.slots.add(2 * w);
                sb += *self.slots.add(2 * w + 1);
            }
            sync_threads();
            (sa, sb)
        }
    }
}

impl ResidentTeam for BlockSliceTeam {
    const SPLITS: bool = true;
    #[inline(always)]
    fn slice(&self) -> *mut u32 {
        self.slice
    }
    #[inline(always)]
    fn index(&self) -> usize {
        block_idx_x() as usize
    }
    #[inline(always)]
    unsafe fn next_job(&mut self, counter: *mut u32) -> u32 {
        // SAFETY: the broadcast slot follows the 2·WARPS f64 partials inside the header.
        unsafe {
            let slot = self.slots.add(2 * RESIDENT_BLOCK_WARPS as usize) as *mut u32;
            if self.tid == 0 {
                *slot = atomic_add_u32(counter, 1);
            }
            sync_threads();
            let v = *slot;
            sync_threads();
            v
        }
    }
}

/// This thread's warp team: warp w of the block owns slice w of the dynamic shared memory.
///
/// # Safety
/// The launch gives each of its warps `slice_words` words of dynamic shared memory.
#[inline(always)]
pub(super) unsafe fn warp_team(slice_words: u32) -> WarpTeam {
    // SAFETY: the warp's slice lies inside the launch's dynamic shared memory (contract).
    WarpTeam { lane: lane_id() as usize, slice: unsafe { (dynamic_smem() as *mut u32).add(warp_id() as usize * slice_words as usize) } }
}

/// This thread's block team: the reduction header, then the slice.
///
/// # Safety
/// The launch gives the block `RESIDENT_BLOCK_HEADER_BYTES` + its slice of dynamic shared memory.
#[inline(always)]
pub(super) unsafe fn block_team() -> BlockSliceTeam {
    let base = dynamic_smem();
    // SAFETY: header then slice inside the launch's dynamic shared memory (contract).
    BlockSliceTeam {
        tid: thread_idx_x() as usize,
        size: block_dim_x() as usize,
        slots: base as *mut f64,
        slice: unsafe { base.add(RESIDENT_BLOCK_HEADER_BYTES) } as *mut u32,
    }
}

//! Who solves one pair: a single block ([`BlockTeam`], the default) or a team of blocks
//! ([`GridTeam`], for pairs of large graphs that one block would take seconds on).
//!
//! The solver body is written once against [`TileTeam`]: the PCG's [`Team`] (`octile_types::pcg`,
//! which the CPU and the resident solver share) plus job drawing and dealing. Its loops stride over
//! the team's threads, the XMV's output blocks are dealt over the team's warps dynamically
//! ([`Deal`]: a warp draws its next block from a counter), and its dot products and barriers are
//! the team's. For `BlockTeam` every method is the block-level primitive it always was (a constant
//! stride, `bar.sync`, the shared-memory reduction), so the one-block entries compile as before.
//!
//! ```text
//! grid of a team launch: [ team 0: blocks 0 .. B-1 ][ team 1: blocks B .. 2B-1 ] ...
//!   thread rank in the team = (block − team·B)·128 + tid      warp rank = (block − team·B)·4 + warp
//!   barrier   = bar.sync; thread 0: fence, arrive++ (last one: arrive = 0, generation++),
//!               others spin on generation; fence; bar.sync
//!   sum2(a,b) = block sums; thread 0 stores them at its rank in slot i mod 3 of the team's partials;
//!               barrier; every block sums the partials in rank order (deterministic)
//! ```
//! Why blocks and not one block per pair here: the XMV of two 2,000-atom proteins is ~10⁹
//! edge-kernel terms; on one of the ~600 resident blocks of an H200 a pair takes minutes while
//! the rest of the GPU idles. Every block of a team must be resident at once (the host launches
//! cooperatively), or a barrier would wait for a block that never runs.
use crate::intrinsics::{
    FULL_MASK, atomic_add_shared_u32, atomic_add_u32, atomic_exch_u32, block_idx_x, fence_gpu, lane_id, load_acquire_u32, load_relaxed_f64, nanosleep,
    shfl_idx_u32, store_relaxed_f64, sync_threads, thread_idx_x, warp_id,
};
use crate::reduce::{block_broadcast_u32, block_sum2};
use crate::smem::{DEAL_SLOT_OFFSET, reduce_smem};
use octile_types::mgk::names::{SOLVER_BLOCK_THREADS, SOLVER_WARPS};
pub use octile_types::pcg::Team;
use octile_types::{TeamSync, team_sync_records};

/// A GPU team of the tile solver (one block, or a team of blocks): the PCG's [`Team`] that also
/// draws jobs and deals the XMV's output blocks over its warps.
pub trait TileTeam: Team {
    /// This warp's rank in the team.
    fn warp(&self) -> usize;
    /// Warps in the team.
    fn warps(&self) -> usize;
    /// Whether this is the thread that writes the team's results (thread 0 of the team's first block).
    fn leader(&self) -> bool;
    /// The next job index, drawn from `counter` once per team and returned to every thread.
    ///
    /// # Safety
    /// Every thread of the team must call it; `counter` is a valid global `u32`.
    unsafe fn next_job(&mut self, counter: *mut u32) -> u32;
    /// The calling warp's next output block of the current XMV (dynamic dealing: a warp that drew
    /// a cheap block draws again), returned to every lane; a value ≥ the XMV's block count means
    /// none is left. See [`Deal`].
    ///
    /// # Safety
    /// All lanes of the warp call it together; a warp stops drawing after its first value ≥ the
    /// block count, and every warp of the team draws until then before anyone calls
    /// [`TileTeam::end_deal`] (the XMV is followed by a team reduction, a barrier, in the solver).
    unsafe fn deal(&mut self) -> u32;
    /// Close the current XMV's dealing of `blocks` output blocks (every thread of the team calls
    /// it with the same value, after every warp's last draw of this XMV).
    fn end_deal(&mut self, blocks: u32);
}

/// Dynamic dealing of a team's XMV output blocks over its warps, without resetting the counter.
///
/// ```text
///   counter (shared memory for a block, TeamSync::deal for a team): draws so far, never reset
///   base    (a register, the same in every thread): the counter's value when this XMV began
///   draw    = lane 0: atomic add 1 → shfl to the warp → minus base (wrapping)
///   end     : base += blocks + warps   (each warp made exactly one draw past the last block)
/// ```
/// Why no reset: a reset would need its own barrier between XMVs; the counter advances by the
/// same amount in every XMV, so each thread knows the next base without reading it.
#[derive(Clone, Copy, Default)]
pub struct Deal {
    base: u32,
}

impl Deal {
    /// A draw from `counter`.
    ///
    /// # Safety
    /// All lanes of the warp call it together; `add` performs the atomic add on `counter`.
    #[inline(always)]
    unsafe fn draw(&self, counter: *mut u32, add: unsafe fn(*mut u32, u32) -> u32) -> u32 {
        // SAFETY: forwarded (the counter is valid for `add`); every lane reaches the shuffle.
        unsafe {
            let mine = if lane_id() == 0 { add(counter, 1) } else { 0 };
            shfl_idx_u32(FULL_MASK, mine, 0).wrapping_sub(self.base)
        }
    }
    #[inline(always)]
    fn end(&mut self, blocks: u32, warps: u32) {
        self.base = self.base.wrapping_add(blocks).wrapping_add(warps);
    }
}

/// One block per pair.
pub struct BlockTeam {
    deal: Deal,
}

impl BlockTeam {
    /// The calling block; zeroes its dealing counter.
    ///
    /// # Safety
    /// Every thread of the block calls it, once, before any other use of the block's shared memory.
    #[inline(always)]
    pub unsafe fn new() -> Self {
        if thread_idx_x() == 0 {
            // SAFETY: the deal slot lies inside reduce_smem (const-asserted in smem.rs).
            unsafe { *(reduce_smem().add(DEAL_SLOT_OFFSET) as *mut u32) = 0 };
        }
        // SAFETY: every thread reaches it (caller's contract).
        unsafe { sync_threads() };
        BlockTeam { deal: Deal::default() }
    }
}

impl Team for BlockTeam {
    #[inline(always)]
    fn rank(&self) -> usize {
        thread_idx_x() as usize
    }
    #[inline(always)]
    fn size(&self) -> usize {
        SOLVER_BLOCK_THREADS as usize
    }
    #[inline(always)]
    unsafe fn sum2(&mut self, a: f64, b: f64) -> (f64, f64) {
        // SAFETY: forwarded (the team is the block).
        unsafe { block_sum2(a, b) }
    }
    #[inline(always)]
    unsafe fn barrier(&mut self) {
        // SAFETY: forwarded.
        unsafe { sync_threads() }
    }
}

impl TileTeam for BlockTeam {
    #[inline(always)]
    fn warp(&self) -> usize {
        warp_id() as usize
    }
    #[inline(always)]
    fn warps(&self) -> usize {
        SOLVER_WARPS as usize
    }
    #[inline(always)]
    fn leader(&self) -> bool {
        thread_idx_x() == 0
    }
    #[inline(always)]
    unsafe fn next_job(&mut self, counter: *mut u32) -> u32 {
        // SAFETY: counter is valid (caller's contract); every thread reaches the broadcast.
        unsafe {
            let mine = if thread_idx_x() == 0 { atomic_add_u32(counter, 1) } else { 0 };
            block_broadcast_u32(mine)
        }
    }
    #[inline(always)]
    unsafe fn deal(&mut self) -> u32 {
        // SAFETY: the deal slot is this block's, zeroed by `new`; warp-collective (caller's contract).
        unsafe { self.deal.draw(reduce_smem().add(DEAL_SLOT_OFFSET) as *mut u32, atomic_add_shared_u32) }
    }
    #[inline(always)]
    fn end_deal(&mut self, blocks: u32) {
        self.deal.end(blocks, SOLVER_WARPS);
    }
}

/// `team_blocks` consecutive blocks per pair, synchronized through their [`TeamSync`].
pub struct GridTeam {
    blocks: u32,
    rank: u32,
    sync: *mut TeamSync,
    partials: *mut f64,
    reductions: u32,
    deal: Deal,
}

impl GridTeam {
    /// The team of the calling block.
    ///
    /// # Safety
    /// `team_blocks ≥ 1` divides the grid; `sync` holds `team_sync_records(team_blocks)` zeroed
    /// records per team; all blocks of the grid are resident together (cooperative launch).
    #[inline(always)]
    pub unsafe fn of_block(team_blocks: u32, sync: *mut TeamSync) -> Self {
        let b = block_idx_x();
        // SAFETY: team index < grid / team_blocks; each team owns team_sync_records(team_blocks)
        // records, its partials in the records after its TeamSync.
        let sync = unsafe { sync.add((b / team_blocks) as usize * team_sync_records(team_blocks)) };
        GridTeam { blocks: team_blocks, rank: b % team_blocks, sync, partials: unsafe { sync.add(1) } as *mut f64, reductions: 0, deal: Deal::default() }
    }
}

impl Team for GridTeam {
    #[inline(always)]
    fn rank(&self) -> usize {
        (self.rank * SOLVER_BLOCK_THREADS + thread_idx_x()) as usize
    }
    #[inline(always)]
    fn size(&self) -> usize {
        (self.blocks * SOLVER_BLOCK_THREADS) as usize
    }
    #[inline(always)]
    unsafe fn sum2(&mut self, a: f64, b: f64) -> (f64, f64) {
        let slot = (self.reductions % 3) as usize;
        self.reductions = self.reductions.wrapping_add(1);
        let blocks = self.blocks as usize;
        // SAFETY: every thread of the team calls it (caller's contract); the slot's 2·blocks f64
        // lie in this team's records (team_sync_records); slot discipline documented on TeamSync.
        unsafe {
            let (sa, sb) = block_sum2(a, b);
            let part = self.partials.add(slot * 2 * blocks);
            if thread_idx_x() == 0 {
                store_relaxed_f64(part.add(2 * self.rank as usize), sa);
                store_relaxed_f64(part.add(2 * self.rank as usize + 1), sb);
            }
            self.barrier();
            // every block sums the team's partials the same way: thread t takes ranks t, t + 128, …,
            // then the block reduction (a fixed order too)
            let (mut ta, mut tb) = (0.0, 0.0);
            let mut k = thread_idx_x() as usize;
            while k < blocks {
                ta += load_relaxed_f64(part.add(2 * k));
                tb += load_relaxed_f64(part.add(2 * k + 1));
                k += SOLVER_BLOCK_THREADS as usize;
            }
            block_sum2(ta, tb)
        }
    }
    #[inline(always)]
    unsafe fn barrier(&mut self) {
        // SAFETY: every thread of the team reaches it (caller's contract); all blocks of the team
        // are resident (of_block's contract), so the spin ends.
        unsafe {
            sync_threads();
            if thread_idx_x() == 0 {
                let s = self.sync;
                fence_gpu();
                // read the generation before arriving: it cannot change until this block arrives
                let generation = load_acquire_u32(&raw const (*s).generation);
                let arrived = atomic_add_u32(&raw mut (*s).arrive, 1);
                if arrived == self.blocks - 1 {
                    atomic_exch_u32(&raw mut (*s).arrive, 0);
                    fence_gpu();
                    atomic_add_u32(&raw mut (*s).generation, 1);
                } else {
                    while load_acquire_u32(&raw const (*s).generation) == generation {
                        nanosleep(64);
                    }
                }
                fence_gpu();
            }
            sync_threads();
        }
    }
}

impl TileTeam for GridTeam {
    #[inline(always)]
    fn warp(&self) -> usize {
        (self.rank * SOLVER_WARPS + warp_id()) as usize
    }
    #[inline(always)]
    fn warps(&self) -> usize {
        (self.blocks * SOLVER_WARPS) as usize
    }
    #[inline(always)]
    fn leader(&self) -> bool {
        self.rank == 0 && thread_idx_x() == 0
    }
    #[inline(always)]
    unsafe fn next_job(&mut self, counter: *mut u32) -> u32 {
        // SAFETY: caller's contract; the job slot is written by the leader before a barrier and
        // read by everyone after it; the second barrier keeps the leader from overwriting it early.
        unsafe {
            let slot = &raw mut (*self.sync).job;
            if self.leader() {
                atomic_exch_u32(slot, atomic_add_u32(counter, 1));
            }
            self.barrier();
            let j = load_acquire_u32(slot);
            self.barrier();
            j
        }
    }
    #[inline(always)]
    unsafe fn deal(&mut self) -> u32 {
        // SAFETY: TeamSync::deal is this team's global counter, zeroed by the host; warp-collective
        // (caller's contract).
        unsafe { self.deal.draw(&raw mut (*self.sync).deal, atomic_add_u32) }
    }
    #[inline(always)]
    fn end_deal(&mut self, blocks: u32) {
        self.deal.end(blocks, self.blocks * SOLVER_WARPS);
    }
}

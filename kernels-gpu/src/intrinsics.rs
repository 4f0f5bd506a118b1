//! Thin wrappers over PTX special registers and instructions, one concept each.
//!
//! Every wrapper is `#[inline(always)]`. The warp-level ones take a member mask: all lanes named in
//! it must execute the same instruction (converged) — the solver uses `FULL_MASK` only where the
//! whole warp is known to be converged.
use core::arch::asm;
use core::arch::nvptx;

/// All 32 lanes.
pub const FULL_MASK: u32 = 0xffff_ffff;
/// Lanes per warp.
pub const WARP_SIZE: u32 = 32;

/// `%tid.x`: thread index in the block.
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_thread_idx_x() as u32 }
}
/// `%ntid.x`: threads per block.
#[inline(always)]
pub fn block_dim_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_block_dim_x() as u32 }
}
/// `%ctaid.x`: block index in the grid.
#[inline(always)]
pub fn block_idx_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_block_idx_x() as u32 }
}
/// `%nctaid.x`: blocks in the grid.
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_grid_dim_x() as u32 }
}
/// Lane index within the warp (0..32), from `%laneid`.
#[inline(always)]
pub fn lane_id() -> u32 {
    let r: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe { asm!("mov.u32 {r}, %laneid;", r = out(reg32) r, options(nostack, preserves_flags, pure, nomem)) };
    r
}
/// Warp index within the block (assumes a 1-D block).
#[inline(always)]
pub fn warp_id() -> u32 {
    thread_idx_x() / WARP_SIZE
}

/// `bar.sync 0`: block-wide barrier; also orders shared and global memory accesses of the block.
///
/// # Safety
/// Every thread of the block must reach the same barrier (no divergence around it), or the block
/// deadlocks.
#[inline(always)]
pub unsafe fn sync_threads() {
    // SAFETY: forwarded to the caller.
    unsafe { nvptx::_syncthreads() }
}

/// `bar.warp.sync mask`: warp barrier, orders memory among the named lanes.
///
/// # Safety
/// Every lane in `mask` must execute this same call.
#[inline(always)]
pub unsafe fn sync_warp(mask: u32) {
    // SAFETY: forwarded to the caller.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack, preserves_flags)) };
}

/// `shfl.sync.down.b32`: value of lane `lane + delta` (own value when out of range).
///
/// # Safety
/// Every lane in `mask` must execute this call with the same `delta`.
#[inline(always)]
pub unsafe fn shfl_down_u32(mask: u32, v: u32, delta: u32) -> u32 {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("shfl.sync.down.b32 {r}, {v}, {d}, 0x1f, {m};", r = out(reg32) r, v = in(reg32) v,
             d = in(reg32) delta, m = in(reg32) mask, options(nostack, preserves_flags, nomem));
    }
    r
}
/// `shfl.sync.bfly.b32`: value of lane `lane ^ xor_mask`.
///
/// # Safety
/// Every lane in `mask` must execute this call with the same `xor_mask`.
#[inline(always)]
pub unsafe fn shfl_xor_u32(mask: u32, v: u32, xor_mask: u32) -> u32 {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("shfl.sync.bfly.b32 {r}, {v}, {d}, 0x1f, {m};", r = out(reg32) r, v = in(reg32) v,
             d = in(reg32) xor_mask, m = in(reg32) mask, options(nostack, preserves_flags, nomem));
    }
    r
}
/// `shfl.sync.idx.b32`: value of lane `src`.
///
/// # Safety
/// Every lane in `mask` must execute this call.
#[inline(always)]
pub unsafe fn shfl_idx_u32(mask: u32, v: u32, src: u32) -> u32 {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("shfl.sync.idx.b32 {r}, {v}, {s}, 0x1f, {m};", r = out(reg32) r, v = in(reg32) v,
             s = in(reg32) src, m = in(reg32) mask, options(nostack, preserves_flags, nomem));
    }
    r
}
/// Butterfly shuffle of an `f64` (two 32-bit shuffles).
///
/// # Safety
/// As [`shfl_xor_u32`].
#[inline(always)]
pub unsafe fn shfl_xor_f64(mask: u32, v: f64, xor_mask: u32) -> f64 {
    let bits = v.to_bits();
    // SAFETY: forwarded to the caller.
    let lo = unsafe { shfl_xor_u32(mask, bits as u32, xor_mask) };
    // SAFETY: forwarded to the caller.
    let hi = unsafe { shfl_xor_u32(mask, (bits >> 32) as u32, xor_mask) };
    f64::from_bits(((hi as u64) << 32) | lo as u64)
}

/// `vote.sync.ballot.b32`: bit k set iff lane k (in `mask`) has `pred`.
///
/// # Safety
/// Every lane in `mask` must execute this call.
#[inline(always)]
pub unsafe fn ballot(mask: u32, pred: bool) -> u32 {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .pred p; setp.ne.u32 p, {x}, 0; vote.sync.ballot.b32 {r}, p, {m}; }}",
             r = out(reg32) r, x = in(reg32) pred as u32, m = in(reg32) mask, options(nostack, preserves_flags, nomem));
    }
    r
}
/// `vote.sync.all.pred`: whether every lane in `mask` has `pred`.
///
/// # Safety
/// Every lane in `mask` must execute this call.
#[inline(always)]
pub unsafe fn vote_all(mask: u32, pred: bool) -> bool {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .pred p, q; setp.ne.u32 p, {x}, 0; vote.sync.all.pred q, p, {m}; selp.u32 {r}, 1, 0, q; }}",
             r = out(reg32) r, x = in(reg32) pred as u32, m = in(reg32) mask, options(nostack, preserves_flags, nomem));
    }
    r != 0
}
/// `vote.sync.any.pred`: whether some lane in `mask` has `pred`.
///
/// # Safety
/// Every lane in `mask` must execute this call.
#[inline(always)]
pub unsafe fn vote_any(mask: u32, pred: bool) -> bool {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .pred p, q; setp.ne.u32 p, {x}, 0; vote.sync.any.pred q, p, {m}; selp.u32 {r}, 1, 0, q; }}",
             r = out(reg32) r, x = in(reg32) pred as u32, m = in(reg32) mask, options(nostack, preserves_flags, nomem));
    }
    r != 0
}

/// `popc.b64`: number of set bits.
#[inline(always)]
pub fn popc64(v: u64) -> u32 {
    v.count_ones()
}
/// `fns.b32`: position of the `n`-th (1-based) set bit of `mask` at or above bit `base`, or
/// `0xffff_ffff` when there is none.
#[inline(always)]
pub fn fns(mask: u32, base: u32, n: i32) -> u32 {
    let r: u32;
    // SAFETY: a pure ALU instruction.
    unsafe {
        asm!("fns.b32 {r}, {m}, {b}, {n};", r = out(reg32) r, m = in(reg32) mask, b = in(reg32) base,
             n = in(reg32) n, options(nostack, preserves_flags, pure, nomem));
    }
    r
}

/// `rcp.approx.ftz.f32`: 1/x to within one unit in the last place (subnormals flushed to zero):
/// two instructions where IEEE division takes about ten with a slow path.
#[inline(always)]
pub fn rcp_approx(x: f32) -> f32 {
    let r: f32;
    // SAFETY: a pure ALU instruction.
    unsafe { asm!("rcp.approx.ftz.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x, options(nostack, preserves_flags, pure, nomem)) };
    r
}

/// `rcp.approx.ftz.f64`: 1/x to about 20 bits (one MUFU instruction on the upper word) — where a
/// fixed approximation of 1/x serves (a preconditioner), not a value.
#[inline(always)]
pub fn rcp_approx_f64(x: f64) -> f64 {
    let r: u64;
    // SAFETY: a pure ALU instruction.
    unsafe { asm!("rcp.approx.ftz.f64 {r}, {x};", r = out(reg64) r, x = in(reg64) x.to_bits(), options(nostack, preserves_flags, pure, nomem)) };
    f64::from_bits(r)
}

/// Adds `v` to `hit` where bit 0 of `flags` is set, else to `miss`: one bit test and two predicated
/// `add.rn.f32` (LLVM turns the same `if` into select chains, four instructions where these are
/// three; the product-form XMV's inner loop, `mgk::resident`).
#[inline(always)]
pub fn add_by_bit0_f32(flags: u32, v: f32, hit: &mut f32, miss: &mut f32) {
    // SAFETY: pure ALU instructions on registers.
    unsafe {
        asm!(
            "{{ .reg .pred %bit; .reg .b32 %low; and.b32 %low, {f}, 1; setp.ne.b32 %bit, %low, 0; @%bit add.rn.f32 {h}, {h}, {v}; @!%bit add.rn.f32 {m}, {m}, {v}; }}",
            f = in(reg32) flags,
            v = in(reg32) v,
            h = inout(reg32) *hit,
            m = inout(reg32) *miss,
            options(nostack, preserves_flags, pure, nomem)
        )
    };
}

/// [`add_by_bit0_f32`] in f64 (`add.rn.f64`).
#[inline(always)]
pub fn add_by_bit0_f64(flags: u32, v: f64, hit: &mut f64, miss: &mut f64) {
    let (mut h, mut m) = (hit.to_bits(), miss.to_bits());
    // SAFETY: pure ALU instructions on registers.
    unsafe {
        asm!(
            "{{ .reg .pred %bit; .reg .b32 %low; and.b32 %low, {f}, 1; setp.ne.b32 %bit, %low, 0; @%bit add.rn.f64 {h}, {h}, {v}; @!%bit add.rn.f64 {m}, {m}, {v}; }}",
            f = in(reg32) flags,
            v = in(reg64) v.to_bits(),
            h = inout(reg64) h,
            m = inout(reg64) m,
            options(nostack, preserves_flags, pure, nomem)
        )
    };
    (*hit, *miss) = (f64::from_bits(h), f64::from_bits(m));
}

/// [`add_by_bit0_f32`] for two values at once (an entry of the fused solve's interleaved pair):
/// `v0` to `hit0` or `miss0`, `v1` to `hit1` or `miss1`, one bit test for both.
#[inline(always)]
pub fn add_pair_by_bit0_f32(flags: u32, (v0, v1): (f32, f32), (hit0, hit1): (&mut f32, &mut f32), (miss0, miss1): (&mut f32, &mut f32)) {
    // SAFETY: pure ALU instructions on registers.
    unsafe {
        asm!(
            "{{ .reg .pred %bit; .reg .b32 %low; and.b32 %low, {f}, 1; setp.ne.b32 %bit, %low, 0; @%bit add.rn.f32 {h0}, {h0}, {v0}; @%bit add.rn.f32 {h1}, {h1}, {v1}; @!%bit add.rn.f32 {m0}, {m0}, {v0}; @!%bit add.rn.f32 {m1}, {m1}, {v1}; }}",
            f = in(reg32) flags,
            v0 = in(reg32) v0,
            v1 = in(reg32) v1,
            h0 = inout(reg32) *hit0,
            h1 = inout(reg32) *hit1,
            m0 = inout(reg32) *miss0,
            m1 = inout(reg32) *miss1,
            options(nostack, preserves_flags, pure, nomem)
        )
    };
}

/// `atom.global.add.u32`: adds `v` to `*p`, returns the old value.
///
/// # Safety
/// `p` must point to a valid, 4-byte aligned `u32` in global memory.
#[inline(always)]
pub unsafe fn atomic_add_u32(p: *mut u32, v: u32) -> u32 {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .b64 g; cvta.to.global.u64 g, {p}; atom.global.add.u32 {r}, [g], {v}; }}",
             r = out(reg32) r, p = in(reg64) p, v = in(reg32) v, options(nostack, preserves_flags));
    }
    r
}
/// `atom.global.max.u32`: `*p = max(*p, v)`, returns the old value.
///
/// # Safety
/// `p` must point to a valid, 4-byte aligned `u32` in global memory.
#[inline(always)]
pub unsafe fn atomic_max_u32(p: *mut u32, v: u32) -> u32 {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .b64 g; cvta.to.global.u64 g, {p}; atom.global.max.u32 {r}, [g], {v}; }}",
             r = out(reg32) r, p = in(reg64) p, v = in(reg32) v, options(nostack, preserves_flags));
    }
    r
}
/// `atom.shared.add.u32`: adds `v` to `*p` (a generic address of shared memory), returns the old
/// value.
///
/// # Safety
/// `p` must be the generic address of a valid, 4-byte aligned `u32` in this block's shared memory.
#[inline(always)]
pub unsafe fn atomic_add_shared_u32(p: *mut u32, v: u32) -> u32 {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .b64 s; cvta.to.shared.u64 s, {p}; atom.shared.add.u32 {r}, [s], {v}; }}",
             r = out(reg32) r, p = in(reg64) p, v = in(reg32) v, options(nostack, preserves_flags));
    }
    r
}
/// `atom.shared.cas.b32`: stores `new` into `*p` if it holds `cmp`; returns the old value (a
/// generic address of shared memory).
///
/// # Safety
/// `p` must be the generic address of a valid, 4-byte aligned `u32` in this block's shared memory.
#[inline(always)]
pub unsafe fn atomic_cas_shared_u32(p: *mut u32, cmp: u32, new: u32) -> u32 {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .b64 s; cvta.to.shared.u64 s, {p}; atom.shared.cas.b32 {r}, [s], {c}, {n}; }}",
             r = out(reg32) r, p = in(reg64) p, c = in(reg32) cmp, n = in(reg32) new, options(nostack, preserves_flags));
    }
    r
}
/// `red.shared.add.f32`: `*p += v` (a generic address of shared memory), no return value.
///
/// # Safety
/// `p` must be the generic address of a valid, 4-byte aligned `f32` in this block's shared memory.
#[inline(always)]
pub unsafe fn atomic_add_shared_f32(p: *mut f32, v: f32) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .b64 s; cvta.to.shared.u64 s, {p}; red.shared.add.f32 [s], {v}; }}",
             p = in(reg64) p, v = in(reg32) v, options(nostack, preserves_flags));
    }
}
/// `red.shared.add.f64`: `*p += v` (a generic address of shared memory), no return value (sm_60+).
///
/// # Safety
/// `p` must be the generic address of a valid, 8-byte aligned `f64` in this block's shared memory.
#[inline(always)]
pub unsafe fn atomic_add_shared_f64(p: *mut f64, v: f64) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .b64 s; cvta.to.shared.u64 s, {p}; red.shared.add.f64 [s], {v}; }}",
             p = in(reg64) p, v = in(reg64) v.to_bits(), options(nostack, preserves_flags));
    }
}

/// `red.add.f32` on a generic address (shared or global memory): `*p += v`, no return value.
///
/// # Safety
/// `p` is the generic address of a valid, aligned f32 in shared or global memory.
#[inline(always)]
pub unsafe fn atomic_add_generic_f32(p: *mut f32, v: f32) {
    // SAFETY: caller's contract.
    unsafe {
        asm!("red.add.f32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v, options(nostack, preserves_flags));
    }
}

/// `red.global.add.f32`: `*p += v`, no return value.
///
/// # Safety
/// `p` must point to a valid, 4-byte aligned `f32` in global memory.
#[inline(always)]
pub unsafe fn atomic_add_f32(p: *mut f32, v: f32) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .b64 g; cvta.to.global.u64 g, {p}; red.global.add.f32 [g], {v}; }}",
             p = in(reg64) p, v = in(reg32) v.to_bits(), options(nostack, preserves_flags));
    }
}
/// `red.global.add.f64`: `*p += v`, no return value (sm_60+).
///
/// # Safety
/// `p` must point to a valid, 8-byte aligned `f64` in global memory.
#[inline(always)]
pub unsafe fn atomic_add_f64(p: *mut f64, v: f64) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .b64 g; cvta.to.global.u64 g, {p}; red.global.add.f64 [g], {v}; }}",
             p = in(reg64) p, v = in(reg64) v.to_bits(), options(nostack, preserves_flags));
    }
}

/// `atom.global.exch.b32`: stores `v` into `*p`, returns the old value.
///
/// # Safety
/// `p` must point to a valid, 4-byte aligned `u32` in global memory.
#[inline(always)]
pub unsafe fn atomic_exch_u32(p: *mut u32, v: u32) -> u32 {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .b64 g; cvta.to.global.u64 g, {p}; atom.global.exch.b32 {r}, [g], {v}; }}",
             r = out(reg32) r, p = in(reg64) p, v = in(reg32) v, options(nostack, preserves_flags));
    }
    r
}

/// `ld.acquire.gpu.global.u32`: a load that sees the latest value at GPU scope (never a stale L1
/// copy) and orders this thread's later accesses after it (sm_70+).
///
/// # Safety
/// `p` must point to a valid, 4-byte aligned `u32` in global memory.
#[inline(always)]
pub unsafe fn load_acquire_u32(p: *const u32) -> u32 {
    let r: u32;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .b64 g; cvta.to.global.u64 g, {p}; ld.acquire.gpu.global.u32 {r}, [g]; }}",
             r = out(reg32) r, p = in(reg64) p, options(nostack, preserves_flags));
    }
    r
}

/// `ld.relaxed.gpu.global.f64`: a load coherent at GPU scope (reads L2, not a stale L1 copy).
///
/// # Safety
/// `p` must point to a valid, 8-byte aligned `f64` in global memory.
#[inline(always)]
pub unsafe fn load_relaxed_f64(p: *const f64) -> f64 {
    let r: u64;
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .b64 g; cvta.to.global.u64 g, {p}; ld.relaxed.gpu.global.b64 {r}, [g]; }}",
             r = out(reg64) r, p = in(reg64) p, options(nostack, preserves_flags));
    }
    f64::from_bits(r)
}

/// `st.relaxed.gpu.global.f64`: a store coherent at GPU scope.
///
/// # Safety
/// `p` must point to a valid, 8-byte aligned `f64` in global memory.
#[inline(always)]
pub unsafe fn store_relaxed_f64(p: *mut f64, v: f64) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!("{{ .reg .b64 g; cvta.to.global.u64 g, {p}; st.relaxed.gpu.global.b64 [g], {v}; }}",
             p = in(reg64) p, v = in(reg64) v.to_bits(), options(nostack, preserves_flags));
    }
}

/// `fence.acq_rel.gpu`: this thread's memory accesses before it are ordered before those after it,
/// at GPU scope (with a barrier, makes one block's writes visible to another block).
///
/// # Safety
/// None beyond executing on the device; `unsafe` only because it is inline PTX.
#[inline(always)]
pub unsafe fn fence_gpu() {
    // SAFETY: a fence touches no memory.
    unsafe { asm!("fence.acq_rel.gpu;", options(nostack, preserves_flags)) };
}

/// `nanosleep.u32`: suspend this thread for about `ns` nanoseconds (sm_70+); used while spinning.
#[inline(always)]
pub fn nanosleep(ns: u32) {
    // SAFETY: sleeping has no preconditions.
    unsafe { asm!("nanosleep.u32 {n};", n = in(reg32) ns, options(nostack, preserves_flags, nomem)) };
}

/// `trap`: abort the kernel; the launch reports `CUDA_ERROR_LAUNCH_FAILED`.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: `trap` never returns and touches no memory the program can observe afterwards.
    unsafe { nvptx::trap() }
}

/// PTX's `.pragma "nounroll"` at this point: placed in a loop's header block, it keeps ptxas from
/// unrolling that loop (ptxas unrolls short loops 4× with a remainder chain of its own).
#[inline(always)]
pub fn no_unroll() {
    // SAFETY: a directive to the assembler; no instruction, no register, no memory.
    unsafe { asm!(".pragma \"nounroll\";", options(nostack, preserves_flags, nomem)) };
}

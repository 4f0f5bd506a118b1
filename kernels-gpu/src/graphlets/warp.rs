//! Warp-level building blocks of the graphlet kernels: a prefix sum, a checked sum, and the
//! load-balanced walk over many runs of CSR entries at once.
use crate::intrinsics::{FULL_MASK, lane_id, shfl_idx_u32, shfl_xor_u32, vote_any};

/// Inclusive prefix sum of `v` over the lanes (lane l gets v_0 + … + v_l), wrapping.
///
/// # Safety
/// All 32 lanes of the warp must call it together.
#[inline(always)]
pub unsafe fn warp_scan_u32(v: u32) -> u32 {
    let lane = lane_id();
    let mut x = v;
    let mut d = 1;
    while d < 32 {
        // SAFETY: all lanes converged (caller's contract).
        let y = unsafe { shfl_idx_u32(FULL_MASK, x, if lane >= d { lane - d } else { lane }) };
        if lane >= d {
            x = x.wrapping_add(y);
        }
        d *= 2;
    }
    x
}

/// The `i64` sum of `v` over the warp, in every lane, and whether any lane came in with `ok`
/// false or any partial sum passed `i64` (then the sum is meaningless).
///
/// # Safety
/// All 32 lanes of the warp must call it together.
#[inline(always)]
pub unsafe fn warp_sum_i64_checked(mut v: i64, mut ok: bool) -> (i64, bool) {
    let mut d = 16;
    while d > 0 {
        let u = v as u64;
        // SAFETY: all lanes converged (caller's contract).
        let (lo, hi) = unsafe { (shfl_xor_u32(FULL_MASK, u as u32, d), shfl_xor_u32(FULL_MASK, (u >> 32) as u32, d)) };
        match v.checked_add(((hi as u64) << 32 | lo as u64) as i64) {
            Some(s) => v = s,
            None => ok = false,
        }
        d /= 2;
    }
    // SAFETY: as above.
    (v, !unsafe { vote_any(FULL_MASK, !ok) })
}

/// Every lane brings one run of CSR entries `[start, start + len)` (len 0: none) and two tags;
/// `visit(tag_a, tag_b, entry)` is called once for every entry of every run with its run's tags,
/// the entries dealt evenly over the lanes (entry t of the concatenation goes to lane t mod 32),
/// so a warp whose runs differ in length keeps all lanes busy. The total must fit `u32`.
///
/// # Safety
/// All 32 lanes of the warp must call it together; `visit` must not call warp-synchronous
/// functions (the lanes past the total skip it).
#[inline(always)]
pub unsafe fn warp_flat_runs(start: u32, len: u32, tag_a: u32, tag_b: u32, mut visit: impl FnMut(u32, u32, u32)) {
    let lane = lane_id();
    // SAFETY: all lanes converged (caller's contract), here and in the shuffles below.
    let incl = unsafe { warp_scan_u32(len) };
    let total = unsafe { shfl_idx_u32(FULL_MASK, incl, 31) };
    let excl = incl - len;
    let mut t0 = 0u32;
    while t0 < total {
        let t = t0 + lane;
        // the owner: the last lane whose run starts at or before t in the concatenation
        let mut owner = 0u32;
        let mut step = 16u32;
        while step > 0 {
            let e = unsafe { shfl_idx_u32(FULL_MASK, excl, owner + step) };
            if e <= t {
                owner += step;
            }
            step /= 2;
        }
        let (s, x) = unsafe { (shfl_idx_u32(FULL_MASK, start, owner), shfl_idx_u32(FULL_MASK, excl, owner)) };
        let (a, b) = unsafe { (shfl_idx_u32(FULL_MASK, tag_a, owner), shfl_idx_u32(FULL_MASK, tag_b, owner)) };
        if t < total {
            visit(a, b, s + (t - x));
        }
        t0 += 32;
    }
}

//! When a light host-side pass (a check, copy, gather or count per pair, entry or graph) runs on
//! the thread pool, and when on the calling thread.
//!
//! Waking the pool costs more than such a pass over a few hundred thousand items, and far more
//! when other threads hold the cores: OpenBLAS's workers spin for a while after each BLAS call, as
//! between the kernel calls of a scikit-learn GP fit, and every pool wake-up then waits for a time
//! slice. On one H200 (16 cores), the FreeSolv fit's gradient calls (131 k pairs each) took 114 ms
//! in-process with OpenBLAS's threads about, 40 ms with OpenBLAS on one thread
//! (`results/gradient-h200.md`).

/// Items from which a light pass goes to the pool.
pub const POOL_MIN_ITEMS: usize = 1 << 18;

/// Whether a light pass over `items` items goes to the pool.
#[inline]
pub fn pooled(items: usize) -> bool {
    items >= POOL_MIN_ITEMS
}

/// `[f(0), f(1), …, f(n − 1)]`, on the pool when `pooled` ([`pooled`] of the pass's items), else on
/// the calling thread.
pub fn collect<R: Send>(n: usize, pooled: bool, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
    use rayon::prelude::*;
    if pooled { (0..n).into_par_iter().map(f).collect() } else { (0..n).map(f).collect() }
}

/// Bytes from which [`drop_aside`] frees on another thread.
pub const ASIDE_MIN_BYTES: usize = 1 << 20;

/// Free `value` (large buffers a call no longer needs: `bytes` of them) on a thread of its own when
/// it holds at least [`ASIDE_MIN_BYTES`], else here. Returning the pages of a few hundred MB to the
/// system takes tens of milliseconds (ChEMBL's gradient call: ~40 ms) that are no part of the
/// answer. Where no thread can be started, here.
pub fn drop_aside<T: Send + 'static>(value: T, bytes: usize) {
    if bytes < ASIDE_MIN_BYTES {
        return;
    }
    // (a failed spawn hands the closure back to be dropped, and `value` with it, here)
    let _ = std::thread::Builder::new().name("octile-free".into()).spawn(move || drop(value));
}

/// Work (in `weight` units: a graph's nodes plus nonzeros for the packers, ~60 ns each) from which
/// a per-graph pass is split over the pool: below it the pass takes under ~2 ms on one thread, and
/// a wake-up of a pool whose cores are held elsewhere can cost as much (module docs).
pub const PARTS_MIN_WEIGHT: usize = 1 << 15;

/// `0..n` cut into consecutive ranges of about equal total `weight(i)`, a few per pool thread so
/// that uneven items even out, or one range when the total is below [`PARTS_MIN_WEIGHT`].
pub fn parts_by_weight(n: usize, weight: impl Fn(usize) -> usize) -> Vec<std::ops::Range<usize>> {
    let weights: Vec<usize> = (0..n).map(weight).collect();
    let total: usize = weights.iter().sum();
    let want = if total < PARTS_MIN_WEIGHT { 1 } else { (4 * rayon::current_num_threads()).min(n) };
    if want <= 1 {
        return std::iter::once(0..n).collect();
    }
    let share = total.div_ceil(want);
    let (mut parts, mut start, mut acc) = (Vec::with_capacity(want), 0, 0);
    for (i, w) in weights.iter().enumerate() {
        acc += w;
        if acc >= share {
            parts.push(start..i + 1);
            (start, acc) = (i + 1, 0);
        }
    }
    if start < n {
        parts.push(start..n);
    }
    parts
}

/// `part(r)` of each range of `parts` (consecutive, from 0) on the pool, in order; with an error,
/// the one a single pass meets: a failing part's error is `part(0..end)`'s, `end` that part's end
/// (a part counts offsets and totals from its own start, so only a pass from 0 sees them run out
/// first), and an earlier part's error comes before a later one's.
pub fn try_parts<P: Send, E: Send>(parts: &[std::ops::Range<usize>], part: impl Fn(std::ops::Range<usize>) -> Result<P, E> + Sync) -> Result<Vec<P>, E> {
    use rayon::prelude::*;
    let results: Vec<Result<P, E>> = parts.par_iter().map(|r| part(r.clone())).collect();
    let mut done = Vec::with_capacity(results.len());
    for (r, range) in results.into_iter().zip(parts) {
        match r {
            Ok(p) => done.push(p),
            Err(e) if done.is_empty() => return Err(e),
            Err(e) => return Err(part(0..range.end).err().unwrap_or(e)),
        }
    }
    Ok(done)
}

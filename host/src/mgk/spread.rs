//! One call's pairs spread over several GPUs (`--devices`, `OCTILE_DEVICES`): GPU d of N solves
//! pairs d, d + N, d + 2N, … — every GPU gets the same mix of sizes, whatever the pairs' order, at
//! no cost of sorting — each on its own host thread with the kernel's own configuration, and the
//! statuses go back to pair order. On the resident solver a pair's value does not depend on the
//! other pairs of its call (each is solved by its own team), so the result equals one GPU's bit
//! for bit; the tile solver sizes its teams of blocks by its call's pair count
//! (`gpu::batch::team_blocks_for`), so its values (f64, large pairs) may differ in the last bits,
//! as they do between one GPU's calls of other sizes. One GPU's error is reported when the
//! others have finished their shares.
//!
//! ```text
//! pairs:   p0 p1 p2 p3 p4 p5 p6 …        GPU 0: p0 p2 p4 p6 …   GPU 1: p1 p3 p5 …
//! ```

use super::report::{DevicePart, MgkReport, SpreadReport};
use crate::error::{OctileError, Result};
use crate::gpu::GpuDevice;
use std::sync::Arc;
use std::time::Instant;

/// Fewest pairs per GPU worth a GPU of its own (below, the call stays on the first): a launch's
/// fixed costs are milliseconds.
pub const MIN_PAIRS_PER_DEVICE: usize = 4096;

/// Whether `pairs` pairs are spread over `devices` GPUs.
pub fn spreads(devices: usize, pairs: usize) -> bool {
    devices > 1 && pairs >= 2 * MIN_PAIRS_PER_DEVICE
}

/// Pairs of GPU `d` of `n`: every n-th from d.
fn share(pairs: &[(u32, u32)], d: usize, n: usize) -> Vec<(u32, u32)> {
    pairs.iter().skip(d).step_by(n).copied().collect()
}

/// How many pairs [`share`] gives GPU `d` of `n` out of `len`.
fn share_len(len: usize, d: usize, n: usize) -> usize {
    len.saturating_sub(d).div_ceil(n)
}

/// What one GPU returns: statuses (or anything per pair) of its share, `width` values per pair in
/// `per_pair`, and its report.
pub struct Part<S> {
    pub status: Vec<S>,
    pub per_pair: Vec<f64>,
    pub report: MgkReport,
}

/// Runs `solve(device, its pairs)` for every device on its own thread and puts the results back in
/// pair order: (statuses, `width` values per pair, the report of every GPU, seconds).
pub fn spread<S: Copy + Default + Send>(
    devices: &[Arc<GpuDevice>],
    pairs: &[(u32, u32)],
    width: usize,
    solve: impl Fn(&Arc<GpuDevice>, &[(u32, u32)]) -> Result<Part<S>> + Sync,
) -> Result<(Vec<S>, Vec<f64>, SpreadReport, f64)> {
    let t = Instant::now();
    let n = devices.len();
    let parts: Vec<Result<(Part<S>, f64)>> = std::thread::scope(|scope| {
        let solve = &solve;
        let handles: Vec<_> = devices
            .iter()
            .enumerate()
            .map(|(d, dev)| {
                scope.spawn(move || {
                    let t = Instant::now();
                    solve(dev, &share(pairs, d, n)).map(|p| (p, t.elapsed().as_secs_f64()))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(OctileError::Internal("a GPU's solving thread panicked".into())))).collect()
    });
    let mut status = vec![S::default(); pairs.len()];
    let mut per_pair = vec![0.0; pairs.len() * width];
    let mut report = SpreadReport { parts: Vec::with_capacity(n) };
    for (d, (part, dev)) in parts.into_iter().zip(devices).enumerate() {
        let (part, seconds) = part?;
        let expected = share_len(pairs.len(), d, n);
        if part.status.len() != expected || part.per_pair.len() != part.status.len() * width {
            return Err(OctileError::Internal(format!("GPU {} returned {} statuses for its {expected} pairs", dev.ordinal, part.status.len())));
        }
        for (i, s) in part.status.iter().enumerate() {
            let k = d + i * n;
            status[k] = *s;
            per_pair[k * width..(k + 1) * width].copy_from_slice(&part.per_pair[i * width..(i + 1) * width]);
        }
        report.parts.push(DevicePart { gpu: dev.ordinal, device: dev.describe(), pairs: part.status.len(), seconds, report: part.report });
    }
    Ok((status, per_pair, report, t.elapsed().as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_pair_once_in_turn() {
        let pairs: Vec<(u32, u32)> = (0..11).map(|k| (k, k + 1)).collect();
        for n in 1..5 {
            let mut seen: Vec<(u32, u32)> = (0..n).flat_map(|d| share(&pairs, d, n)).collect();
            seen.sort();
            assert_eq!(seen, pairs, "{n} devices");
            for len in 0..pairs.len() {
                for d in 0..n {
                    assert_eq!(share_len(len, d, n), share(&pairs[..len], d, n).len(), "{len} pairs, GPU {d} of {n}");
                }
            }
            assert_eq!(share(&pairs, 1, 3), vec![(1, 2), (4, 5), (7, 8), (10, 11)]);
        }
        assert!(!spreads(1, 1 << 20) && !spreads(2, 2 * MIN_PAIRS_PER_DEVICE - 1) && spreads(2, 2 * MIN_PAIRS_PER_DEVICE));
    }
}

//! Progress reporting and cancellation of long runs, and the one loop that streams blocks of
//! pairs through a backend with both.
use crate::error::Result;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Progress reporting and cancellation for long runs.
#[derive(Clone, Default)]
pub struct RunControl {
    /// Called with the number of pairs just finished.
    pub progress: Option<Arc<dyn Fn(usize) + Send + Sync>>,
    /// Set to stop early (the call returns `Cancelled`).
    pub cancel: Option<Arc<AtomicBool>>,
    /// Most bytes a call may need (`--max-memory`); the memory available bounds it too.
    pub max_memory_bytes: Option<u64>,
}

impl RunControl {
    /// Whether cancellation was requested.
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }
    /// Report finished pairs.
    pub fn report(&self, n: usize) {
        if let Some(p) = &self.progress {
            p(n)
        }
    }
    /// Evaluate consecutive `blocks` (ranges of a pair list) with `eval`, which returns one result
    /// per pair of its block: progress is reported after each block, and the results come back
    /// concatenated in block order. Cancellation is checked before each block: once it is set, the
    /// blocks not yet evaluated get [`Pending::pending`] results (a NaN value), so the caller still
    /// gets one result per pair and what was computed is kept; the Gram driver then reports the
    /// pending pairs as not done ([`Interrupted`](crate::OctileError::Interrupted)).
    pub fn stream<R: Pending>(&self, blocks: impl IntoIterator<Item = Range<usize>>, mut eval: impl FnMut(Range<usize>) -> Result<Vec<R>>) -> Result<Vec<R>> {
        let mut out = Vec::new();
        for block in blocks {
            if self.cancelled() {
                out.extend(block.map(|_| R::pending()));
                continue;
            }
            let part = eval(block)?;
            self.report(part.len());
            out.extend(part);
        }
        Ok(out)
    }
}

impl RunControl {
    /// [`stream`](Self::stream) with one block in flight: `submit` starts a block (e.g. queues its
    /// GPU launches) and returns a handle, `collect` waits for a handle's results and stores them.
    /// Block k + 1 is submitted before block k is collected, so that the device computes the next
    /// block while the host takes the last one's results:
    ///
    /// ```text
    ///   host:    submit 0 | submit 1, collect 0 | submit 2, collect 1 | … | collect n−1
    ///   device:  [ block 0 ][ block 1          ][ block 2           ] …
    /// ```
    ///
    /// Progress is reported after each `collect`. Cancellation is checked before each submit: a
    /// block already submitted is still collected (what was computed is kept); the blocks never
    /// submitted are left to the caller's pending value. An error from either stops the loop (a
    /// block in flight is dropped with its handle).
    pub fn pipeline<H>(
        &self,
        blocks: impl IntoIterator<Item = Range<usize>>,
        submit: impl FnMut(Range<usize>) -> Result<H>,
        collect: impl FnMut(Range<usize>, H) -> Result<()>,
    ) -> Result<()> {
        self.pipeline_deep(blocks, 2, submit, collect)
    }

    /// [`pipeline`](Self::pipeline) with up to `depth` (≥ 1) blocks submitted and not yet
    /// collected: the first `depth` blocks are all submitted before block 0 is collected (a
    /// device gets them together), then one is submitted per block collected.
    pub fn pipeline_deep<H>(
        &self,
        blocks: impl IntoIterator<Item = Range<usize>>,
        depth: usize,
        mut submit: impl FnMut(Range<usize>) -> Result<H>,
        mut collect: impl FnMut(Range<usize>, H) -> Result<()>,
    ) -> Result<()> {
        let mut in_flight: std::collections::VecDeque<(Range<usize>, H)> = std::collections::VecDeque::new();
        for block in blocks {
            if self.cancelled() {
                break;
            }
            in_flight.push_back((block.clone(), submit(block)?));
            if in_flight.len() >= depth.max(1)
                && let Some((range, h)) = in_flight.pop_front()
            {
                let n = range.len();
                collect(range, h)?;
                self.report(n);
            }
        }
        while let Some((range, h)) = in_flight.pop_front() {
            let n = range.len();
            collect(range, h)?;
            self.report(n);
        }
        Ok(())
    }
}

/// The result of a pair that was not evaluated because the run was cancelled: its value is NaN
/// (never a result: the driver treats non-finite values as failures, and after a cancellation as
/// not done).
pub trait Pending {
    /// The not-evaluated result.
    fn pending() -> Self;
}

impl Pending for f64 {
    fn pending() -> Self {
        f64::NAN
    }
}

impl Pending for octile_types::PairStatus {
    fn pending() -> Self {
        octile_types::PairStatus { value: f64::NAN, residual: f64::NAN, iterations: 0, converged: 0 }
    }
}

impl<A: Pending, B: Default> Pending for (A, B) {
    fn pending() -> Self {
        (A::pending(), B::default())
    }
}

/// `0..len` cut into consecutive ranges of at most `block` (≥ 1) elements.
pub fn blocks_of(len: usize, block: usize) -> impl Iterator<Item = Range<usize>> {
    let block = block.max(1);
    (0..len.div_ceil(block)).map(move |k| k * block..((k + 1) * block).min(len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::OctileError;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn blocks_cover_every_index_once_in_order() {
        for (len, block) in [(0, 4), (1, 4), (8, 4), (9, 4), (10, 1), (5, 0)] {
            let ranges: Vec<Range<usize>> = blocks_of(len, block).collect();
            let flat: Vec<usize> = ranges.iter().cloned().flatten().collect();
            assert_eq!(flat, (0..len).collect::<Vec<_>>(), "len {len} block {block}: {ranges:?}");
            assert!(ranges.iter().all(|r| !r.is_empty() && r.len() <= block.max(1)), "len {len} block {block}: {ranges:?}");
        }
    }

    #[test]
    fn pipeline_submits_the_next_block_before_collecting_and_keeps_submitted_blocks_once_cancelled() {
        let done = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let ctl = RunControl {
            progress: Some(Arc::new(move |n| {
                d.fetch_add(n, Ordering::Relaxed);
            })),
            cancel: Some(cancel.clone()),
            max_memory_bytes: None,
        };
        let events = std::cell::RefCell::new(Vec::new());
        let mut got = vec![f64::NAN; 10];
        ctl.pipeline(
            blocks_of(10, 4),
            |r| {
                events.borrow_mut().push(format!("s{}", r.start));
                Ok(r.clone().map(|i| i as f64).collect::<Vec<f64>>())
            },
            |r, v| {
                events.borrow_mut().push(format!("c{}", r.start));
                got[r].copy_from_slice(&v);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(events.borrow().join(" "), "s0 s4 c0 s8 c4 c8");
        assert_eq!(got, (0..10).map(|i| i as f64).collect::<Vec<_>>());
        assert_eq!(done.load(Ordering::Relaxed), 10);
        // cancelled while block 0 is in flight: block 0 is still collected, nothing else submitted
        events.borrow_mut().clear();
        let mut got = vec![f64::NAN; 10];
        ctl.pipeline(
            blocks_of(10, 4),
            |r| {
                events.borrow_mut().push(format!("s{}", r.start));
                cancel.store(true, Ordering::Relaxed);
                Ok(r.start)
            },
            |r, start| {
                events.borrow_mut().push(format!("c{start}"));
                got[r].fill(1.0);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(events.borrow().join(" "), "s0 c0");
        assert!(got[..4].iter().all(|&v| v == 1.0) && got[4..].iter().all(|v| v.is_nan()), "{got:?}");
        assert_eq!(done.load(Ordering::Relaxed), 14);
        // an error stops the loop
        cancel.store(false, Ordering::Relaxed);
        let err = ctl.pipeline(
            blocks_of(3, 1),
            |r| Ok(r.start),
            |_, s| if s == 1 { Err(crate::error::OctileError::InvalidConfig("block 1".into())) } else { Ok(()) },
        );
        assert!(err.is_err());
        // deeper: three blocks submitted before the first is collected; depth 1: one at a time
        let order = |len: usize, depth: usize| {
            let events = std::cell::RefCell::new(Vec::new());
            let note = |what: String| events.borrow_mut().push(what);
            let submit = |r: Range<usize>| {
                note(format!("s{}", r.start));
                Ok(r.start)
            };
            let collect = |_: Range<usize>, start: usize| {
                note(format!("c{start}"));
                Ok(())
            };
            ctl.pipeline_deep(blocks_of(len, 2), depth, submit, collect).unwrap();
            events.into_inner().join(" ")
        };
        assert_eq!(order(10, 3), "s0 s2 s4 c0 s6 c2 s8 c4 c6 c8");
        assert_eq!(order(4, 1), "s0 c0 s2 c2");
    }

    #[test]
    fn stream_reports_each_block_and_pads_pending_results_once_cancelled() {
        let done = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let (d, c) = (done.clone(), cancel.clone());
        let ctl = RunControl {
            progress: Some(Arc::new(move |n| {
                d.fetch_add(n, Ordering::Relaxed);
            })),
            cancel: Some(cancel.clone()),
            max_memory_bytes: None,
        };
        let out = ctl.stream(blocks_of(10, 4), |r| Ok(r.map(|i| i as f64).collect::<Vec<f64>>())).unwrap();
        assert_eq!(out, (0..10).map(|i| i as f64).collect::<Vec<_>>());
        assert_eq!(done.load(Ordering::Relaxed), 10);
        // cancel during the first block: the others are never evaluated, their results pending
        let mut calls = 0;
        let out = ctl
            .stream(blocks_of(10, 4), |r| {
                calls += 1;
                c.store(true, Ordering::Relaxed);
                Ok(r.map(|i| i as f64).collect::<Vec<f64>>())
            })
            .unwrap();
        assert_eq!(calls, 1);
        assert_eq!(out.len(), 10);
        assert_eq!(&out[..4], &[0.0, 1.0, 2.0, 3.0]);
        assert!(out[4..].iter().all(|v| v.is_nan()), "{out:?}");
        assert_eq!(done.load(Ordering::Relaxed), 14);
        // an error of a block is returned as is
        let ctl = RunControl::default();
        let err = ctl.stream(blocks_of(3, 1), |r| if r.start == 1 { Err(OctileError::InvalidConfig("block 1".into())) } else { Ok(vec![r.start as f64]) });
        assert!(matches!(err, Err(OctileError::InvalidConfig(ref m)) if m == "block 1"));
    }
}

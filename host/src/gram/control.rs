//! Progress reporting and cancellation of long runs, and the one loop that streams blocks of
//! pairs through a backend with both.
use crate::error::{OctileError, Result};
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
    /// per pair of its block: cancellation is checked before each block (`Cancelled`), progress is
    /// reported after each, and the results come back concatenated in block order.
    pub fn stream<R>(&self, blocks: impl IntoIterator<Item = Range<usize>>, mut eval: impl FnMut(Range<usize>) -> Result<Vec<R>>) -> Result<Vec<R>> {
        let mut out = Vec::new();
        for block in blocks {
            if self.cancelled() {
                return Err(OctileError::Cancelled);
            }
            let part = eval(block)?;
            self.report(part.len());
            out.extend(part);
        }
        Ok(out)
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
    fn stream_reports_each_block_and_stops_before_the_next_when_cancelled() {
        let done = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let (d, c) = (done.clone(), cancel.clone());
        let ctl = RunControl { progress: Some(Arc::new(move |n| { d.fetch_add(n, Ordering::Relaxed); })), cancel: Some(cancel.clone()), max_memory_bytes: None };
        let out = ctl.stream(blocks_of(10, 4), |r| Ok(r.collect::<Vec<usize>>())).unwrap();
        assert_eq!(out, (0..10).collect::<Vec<_>>());
        assert_eq!(done.load(Ordering::Relaxed), 10);
        // cancel after the first block: the second is never evaluated
        let mut calls = 0;
        let err = ctl.stream(blocks_of(10, 4), |r| {
            calls += 1;
            c.store(true, Ordering::Relaxed);
            Ok(r.collect::<Vec<usize>>())
        });
        assert!(matches!(err, Err(OctileError::Cancelled)), "{:?}", err.map(|v| v.len()));
        assert_eq!(calls, 1);
        assert_eq!(done.load(Ordering::Relaxed), 14);
        // an error of a block is returned as is
        let ctl = RunControl::default();
        let err = ctl.stream(blocks_of(3, 1), |r| if r.start == 1 { Err(OctileError::InvalidConfig("block 1".into())) } else { Ok(vec![r.start]) });
        assert!(matches!(err, Err(OctileError::InvalidConfig(ref m)) if m == "block 1"));
    }
}

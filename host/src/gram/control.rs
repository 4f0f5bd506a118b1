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

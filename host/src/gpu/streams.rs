//! Streams made once per device and lent out again and again, so that a call does not create
//! (and destroy) its own.
//!
//! Why: a GPU call of the resident solver puts its launches on a few streams of its own (one
//! shape's tail overlaps the next shape's start), its uploads on another and its downloads on a
//! third. Created per call (`CudaStream::fork`: a stream, an event, a record and a wait each)
//! they cost a small call ~0.2 ms of its ~4 ms (MUTAG's 17,766 pairs on an H100, phase marks
//! "uploaded → streams", `results/spill-bounds-h100.md`); lent from here, a few microseconds.
//!
//! ```text
//! pool:  [s1][s2][s3] …          idle streams, non-blocking, made by this device's context
//! keep_ready(parent, n):        forks of `parent` until n are idle (a user's calls' worth,
//!                                made before its first call)
//! take(parent, n) → Lent:        n streams (idle ones first, new ones for the rest), each
//!                                waiting for `parent`'s work so far (one event, as `fork`)
//! Lent dropped → its streams back to the pool (work still queued on them stays queued: the
//!                next borrower's work runs after it, as on any stream)
//! ```
use cudarc::driver::{CudaStream, DriverError};
use std::sync::{Arc, Mutex, PoisonError};

/// Idle streams of one device (see the module docs).
#[derive(Default)]
pub struct StreamPool {
    free: Mutex<Vec<Arc<CudaStream>>>,
}

/// Streams lent by a [`StreamPool`]: they go back to it when this is dropped.
pub struct LentStreams<'a> {
    pool: &'a StreamPool,
    streams: Vec<Arc<CudaStream>>,
}

impl StreamPool {
    /// `n` streams that wait for the work queued on `parent` so far (as `parent.fork()` would
    /// make them): idle ones of the pool first, new ones (forks of `parent`) for the rest.
    pub fn take(&self, parent: &Arc<CudaStream>, n: usize) -> Result<LentStreams<'_>, DriverError> {
        let mut streams: Vec<Arc<CudaStream>> = {
            let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
            let at = free.len().saturating_sub(n);
            free.split_off(at)
        };
        // the lent ones wait for `parent` (one event for all), before any new one is made: a
        // fork joins by itself
        if !streams.is_empty() {
            let e = parent.record_event(None)?;
            for s in &streams {
                s.wait(&e)?;
            }
        }
        while streams.len() < n {
            streams.push(parent.fork()?);
        }
        Ok(LentStreams { pool: self, streams })
    }

    /// Make (forks of `parent`) as many streams as the pool lacks of `n` idle ones: a user of
    /// the device that knows how many one of its calls takes has them made once, before its
    /// first call, not during it.
    pub fn keep_ready(&self, parent: &Arc<CudaStream>, n: usize) -> Result<(), DriverError> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while free.len() < n {
            free.push(parent.fork()?);
        }
        Ok(())
    }

    /// How many idle streams the pool holds.
    pub fn idle(&self) -> usize {
        self.free.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl std::ops::Deref for LentStreams<'_> {
    type Target = [Arc<CudaStream>];
    fn deref(&self) -> &Self::Target {
        &self.streams
    }
}

impl Drop for LentStreams<'_> {
    fn drop(&mut self) {
        let mut free = self.pool.free.lock().unwrap_or_else(PoisonError::into_inner);
        free.append(&mut self.streams);
    }
}

//! Page-locked host buffers, pinned once and lent out again and again: the host side of
//! copies that must not stop the calling thread.
//!
//! Why: a copy between the GPU and ordinary (pageable) host memory goes through the driver's
//! own staging, and a device → host copy into pageable memory returns only when the copy is
//! done — that is, when every launch before it on its stream is done. With several GPU tiles
//! in flight on one device, one tile's thread sat in such a copy while the others' uploads,
//! launches and even planning waited for it (phase marks: 40–100 ms with nothing to do). From
//! pinned memory the copies are asynchronous; the caller waits on an event of its own.
//! Pinning is slow (the driver locks every page) and freeing pinned memory synchronizes the
//! device, so buffers are kept for the process and lent out. Small requests (under
//! [`PINNED_MIN_BYTES`]) get ordinary memory instead: their copies are short, and pinning a
//! buffer for them cost a small call (MUTAG's 17,766 pairs) more than it saved.
//!
//! ```text
//! pool:  [ 4 MiB ][ 8 MiB ][ 4 MiB ] …   free buffers, each at least 1 MiB, a power of two
//! take(bytes, direction, stream) → Lent: the smallest free buffer that holds `bytes`, else a
//!                       new one (under PINNED_MIN_BYTES: a heap buffer, not pooled)
//! Lent: typed views of plain values for copies on `stream` in one direction, an event recorded
//!       after its last copy (record); a view waits for that event where a copy could race it
//!       (writing: always; reading: after a download); dropped → waits for it (none recorded:
//!       for all of `stream`'s work so far), then goes back to the pool
//! ```
use crate::error::{OctileError, Result};
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, PinnedHostSlice};
use octile_types::PairStatus;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The smallest buffer the pool pins (smaller pinned requests share its size class).
const MIN_BUFFER_BYTES: usize = 1 << 20;
/// Requests smaller than this get heap memory, not pinned.
pub const PINNED_MIN_BYTES: usize = 1 << 19;

/// Which way a lent buffer's copies go: what a view of it may do while they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Host → device: the copies only read the buffer, so reading it never waits.
    Up,
    /// Device → host: the copies write it; every view waits for them.
    Down,
}

/// Plain values a lent buffer may be viewed as: `Copy`, `repr(C)` or primitive, every bit
/// pattern valid, alignment at most 8 (what the heap buffers give).
///
/// # Safety
/// Implement it only for types of which any bytes are a valid value.
pub unsafe trait Plain: Copy {}
// SAFETY: primitive numbers: any bits are a value.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}
// SAFETY: as above.
unsafe impl Plain for f32 {}
// SAFETY: as above.
unsafe impl Plain for f64 {}
// SAFETY: repr(C) of f64, f64, u32, u32: any bits are a value.
unsafe impl Plain for PairStatus {}

/// The pool's list, usable after a panic elsewhere (it guards no invariant a panic can break).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Pinned buffers of one context, free for the taking.
pub struct PinnedPool {
    ctx: Arc<CudaContext>,
    free: Mutex<Vec<PinnedHostSlice<u8>>>,
}

impl PinnedPool {
    /// An empty pool on `ctx`.
    pub fn new(ctx: Arc<CudaContext>) -> Self {
        PinnedPool { ctx, free: Mutex::new(Vec::new()) }
    }

    /// A buffer of at least `bytes` bytes for copies on `stream` in `direction`, pinned now if
    /// no free one is that large.
    pub fn take(&self, bytes: usize, direction: Direction, stream: &Arc<CudaStream>) -> Result<Lent<'_>> {
        let stream = stream.clone();
        if bytes < PINNED_MIN_BYTES {
            return Ok(Lent { pool: self, buf: Some(Buffer::Heap(vec![0u64; bytes.div_ceil(8)])), direction, stream, done: None });
        }
        let mut free = lock(&self.free);
        let fit = free.iter().enumerate().filter(|(_, b)| b.len() >= bytes).min_by_key(|(_, b)| b.len()).map(|(i, _)| i);
        let buf = match fit {
            Some(i) => free.swap_remove(i),
            None => {
                drop(free);
                let size = bytes.max(MIN_BUFFER_BYTES).next_power_of_two();
                // SAFETY: page-locked host memory of `size` bytes (u8: any bits are valid);
                // flags 0: cached, so the host reads it at full speed (write-combined memory
                // is not); typed views of it are only read after the copies into it are done
                // (the caller's events) and `Lent` waits for its event before lending it again.
                unsafe { self.ctx.alloc_pinned_with_flags::<u8>(size, 0) }?
            }
        };
        Ok(Lent { pool: self, buf: Some(Buffer::Pinned(buf)), direction, stream, done: None })
    }
}

/// A buffer lent by a [`PinnedPool`] for copies on one stream; back to the pool when dropped (if
/// pinned), once its copies are done: those before [`Lent::record`], or — nothing recorded, e.g.
/// an error between queueing a copy and recording it — all of the stream's work queued so far.
pub struct Lent<'a> {
    pool: &'a PinnedPool,
    buf: Option<Buffer>,
    direction: Direction,
    stream: Arc<CudaStream>,
    done: Option<CudaEvent>,
}

/// What a [`Lent`] holds: pinned memory of the pool, or (small requests) 8-byte-aligned heap memory.
enum Buffer {
    Pinned(PinnedHostSlice<u8>),
    Heap(Vec<u64>),
}

impl Lent<'_> {
    /// The buffer's first `len` values as `T`, to fill (an upload's source) or to read back (a
    /// download's result): waits first for the copies recorded last, so no copy runs beside the
    /// borrow. Pinned buffers are page-aligned, heap ones 8-byte aligned.
    pub fn view_mut<T: Plain>(&mut self, len: usize) -> Result<&mut [T]> {
        self.wait()?;
        let raw = self.bytes()?;
        let (ptr, n) = (raw.as_mut_ptr(), raw.len());
        check::<T>(ptr, n, len)?;
        // SAFETY: the bytes are ours (a unique borrow of the buffer, no copy in flight: waited
        // above), large enough and aligned for T (checked); any bytes are a T (Plain).
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr as *mut T, len) })
    }

    /// The buffer's first `len` values as `T`, to read while an upload from it may still run
    /// (it only reads them); a download's buffer waits for its copies first.
    pub fn view<T: Plain>(&mut self, len: usize) -> Result<&[T]> {
        if self.direction == Direction::Down {
            self.wait()?;
        }
        let raw = self.bytes()?;
        let (ptr, n) = (raw.as_mut_ptr(), raw.len());
        check::<T>(ptr, n, len)?;
        // SAFETY: as in view_mut; an upload running beside this shared borrow only reads the bytes.
        Ok(unsafe { std::slice::from_raw_parts(ptr as *const T, len) })
    }

    /// The buffer's bytes.
    fn bytes(&mut self) -> Result<&mut [u8]> {
        Ok(match self.buf.as_mut() {
            Some(Buffer::Pinned(p)) => p.as_mut_slice()?,
            // SAFETY: the Vec's own bytes (u64 → u8: any bits are valid, alignment only shrinks)
            Some(Buffer::Heap(v)) => unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, v.len() * 8) },
            None => return Err(OctileError::Internal("pinned buffer already returned".into())),
        })
    }

    /// Mark the end of the copies queued on its stream so far: [`Lent::wait`], the views and the
    /// return to the pool wait for it. Call it after the buffer's last copy.
    pub fn record(&mut self) -> Result<()> {
        self.done = Some(self.stream.record_event(None)?);
        Ok(())
    }

    /// Wait until the copies recorded last have finished.
    pub fn wait(&self) -> Result<()> {
        if let Some(e) = &self.done {
            e.synchronize()?;
        }
        Ok(())
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        // a copy may still be reading or writing it: lend it again only once that is done (a
        // pinned buffer with nothing recorded: once its stream's work so far is); if that
        // cannot be known (no event, a failed wait), keep the buffer out of use for good
        let pinned = matches!(self.buf, Some(Buffer::Pinned(_)));
        if pinned && self.done.is_none() {
            self.done = self.stream.record_event(None).ok();
        }
        let finished = (!pinned || self.done.is_some()) && self.wait().is_ok();
        match self.buf.take() {
            Some(buf) if !finished => std::mem::forget(buf),
            Some(Buffer::Pinned(buf)) => lock(&self.pool.free).push(buf),
            _ => {}
        }
    }
}

/// `len` values of `T` fit the `n` bytes at `ptr`, which are aligned for `T`.
fn check<T>(ptr: *const u8, n: usize, len: usize) -> Result<()> {
    if len.checked_mul(std::mem::size_of::<T>()).is_none_or(|b| b > n) {
        return Err(OctileError::Internal(format!("{len} values of {} bytes in a buffer of {n}", std::mem::size_of::<T>())));
    }
    if ptr.align_offset(std::mem::align_of::<T>()) != 0 {
        return Err(OctileError::Internal("pinned buffer not aligned for its values".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a view may cover: `len` values that fit the bytes, at an address aligned for them;
    /// a length whose byte count overflows is refused, not wrapped.
    #[test]
    fn a_view_fits_its_bytes_and_alignment() {
        let words = [0u64; 4];
        let p = words.as_ptr() as *const u8;
        assert!(check::<u64>(p, 32, 4).is_ok());
        assert!(check::<PairStatus>(p, 32, 1).is_ok());
        assert!(check::<u64>(p, 32, 5).is_err(), "5 u64 in 32 bytes");
        assert!(check::<PairStatus>(p, 32, 2).is_err(), "2 statuses (48 bytes) in 32");
        assert!(check::<u64>(p, 32, usize::MAX / 4).is_err(), "an overflowing byte count");
        assert!(check::<u64>(p.wrapping_add(4), 28, 1).is_err(), "u64 at a 4-byte offset");
        assert!(check::<u32>(p.wrapping_add(4), 28, 7).is_ok());
        assert!(check::<u8>(p.wrapping_add(3), 29, 29).is_ok());
    }
}

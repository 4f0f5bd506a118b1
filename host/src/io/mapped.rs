//! Raw file calls of the streamed writer, wrapped once: reserving a file's blocks
//! (`fallocate`) and a writable window of it mapped into memory (`mmap`, `MAP_SHARED`).
//!
//! Why: a tile of the Gram matrix lands in the output as one short piece per row (its rows, and
//! below the diagonal its transpose's), a few KiB each, rows a whole matrix row apart. Written
//! with one `pwrite` per piece, a tile costs one system call per row: on the two-GPU machine 0.18 s
//! for 140 MB of tiles from one thread (and slower from several, which queue on the file's
//! lock), while the GPUs computed NCI 5K's 200 MB in 0.37 s. Copied into a mapping of the file
//! from every core, the same tiles take 0.09–0.11 s (measured apart on that machine:
//! `results/scale/scale-h200x2-run25.md`).
//!
//! A mapped page written where the file has no block raises SIGBUS when the disk is full; so a
//! window is only made of a file whose blocks were reserved first ([`reserve`]), on a file system
//! that writes in place into reserved blocks (ext4, XFS, tmpfs; not copy-on-write or network
//! ones, where a write may still find no room).
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Reserve `len` bytes of `file`'s blocks (from its start) so that writes through a mapping
/// cannot meet a full disk. `Ok(true)`: reserved, on a file system that writes in place;
/// `Ok(false)`: not reserved, or not such a file system (write through positioned writes then);
/// `Err`: no room (ENOSPC, EFBIG, EDQUOT).
pub fn reserve(file: &File, len: u64) -> io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        if !writes_in_place(file) {
            return Ok(false);
        }
        let Ok(len) = i64::try_from(len) else { return Ok(false) };
        if len == 0 {
            return Ok(true);
        }
        // SAFETY: fallocate on an open descriptor of ours; mode 0 allocates blocks (and extends
        // the size to at most `len`, which the file already has).
        let r = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) };
        if r == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EFBIG) | Some(libc::EDQUOT) => Err(e),
            _ => Ok(false),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, len);
        Ok(false)
    }
}

/// Whether `file` lies on a file system that writes into a reserved block in place (ext4, XFS,
/// tmpfs): a write through a mapping then cannot fail for room.
#[cfg(target_os = "linux")]
fn writes_in_place(file: &File) -> bool {
    const EXT4: i64 = 0xef53;
    const XFS: i64 = 0x5846_5342;
    const TMPFS: i64 = 0x0102_1994;
    // SAFETY: a zeroed statfs is valid to fill; fstatfs writes within it for an open descriptor.
    unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        libc::fstatfs(file.as_raw_fd(), &mut st) == 0 && [EXT4, XFS, TMPFS].contains(&(st.f_type as i64))
    }
}

/// Bytes `offset..offset + len` of a file mapped shared and writable (page-aligned below
/// `offset`): what is written to [`bytes_mut`](Self::bytes_mut) is the file's content (the page
/// cache's, on disk at the next writeback or sync). Unmapped on drop.
pub struct MappedWindow {
    base: *mut u8,
    mapped_len: usize,
    lead: usize,
    len: usize,
}

// SAFETY: the window owns its mapping; nothing else refers to it.
unsafe impl Send for MappedWindow {}

impl MappedWindow {
    /// Map bytes `offset..offset + len` of `file` (opened for reading and writing; its size
    /// must cover them, its blocks reserved by [`reserve`]).
    ///
    /// # Safety
    /// While the window lives, nothing else writes those bytes — no other window over them, no
    /// positioned write into them, no other process — and the file is not truncated (a page past
    /// its end raises SIGBUS).
    pub unsafe fn map(file: &File, offset: u64, len: usize) -> io::Result<MappedWindow> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let page = u64::try_from(page).ok().filter(|&p| p > 0).unwrap_or(4096);
        let start = offset / page * page;
        let lead = (offset - start) as usize;
        let size = file.metadata()?.len();
        if offset.checked_add(len as u64).is_none_or(|end| end > size) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bytes {offset}..+{len} past the file's {size}")));
        }
        if len == 0 {
            return Ok(MappedWindow { base: std::ptr::null_mut(), mapped_len: 0, lead: 0, len: 0 });
        }
        let mapped_len = lead + len;
        let at = libc::off_t::try_from(start).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset past off_t"))?;
        // SAFETY: a fresh shared mapping of `mapped_len` bytes of an open descriptor, inside the
        // file's size (checked above); the kernel picks the address.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), mapped_len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, file.as_raw_fd(), at) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(MappedWindow { base: p.cast(), mapped_len, lead, len })
    }

    /// The window's bytes.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: `base + lead .. + len` lies in the live mapping (borrowed mutably here); `map`'s
        // contract keeps every other writer of these bytes away while the window lives.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(self.lead), self.len) }
    }
}

impl Drop for MappedWindow {
    fn drop(&mut self) {
        if self.mapped_len > 0 {
            // SAFETY: the mapping made in `map`, unmapped once; dirty pages stay in the page cache.
            unsafe { libc::munmap(self.base.cast(), self.mapped_len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};

    #[test]
    fn a_window_writes_the_file_in_place() {
        let path = std::env::temp_dir().join(format!("octile-mapped-{}", std::process::id()));
        let mut f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        f.write_all(&[7u8; 10_000]).unwrap();
        let reserved = reserve(&f, 10_000).unwrap();
        // offsets inside a page and across pages; an empty window; one past the end refused
        for (offset, len) in [(5u64, 3usize), (4090, 20), (8191, 1809), (0, 0)] {
            // SAFETY: one window at a time, nothing else writes the file
            let mut w = unsafe { MappedWindow::map(&f, offset, len) }.unwrap();
            for (k, b) in w.bytes_mut().iter_mut().enumerate() {
                *b = (k % 251) as u8;
            }
        }
        // SAFETY: refused before mapping
        assert!(unsafe { MappedWindow::map(&f, 9_990, 11) }.is_err(), "past the end");
        let mut back = Vec::new();
        f.rewind().unwrap();
        f.read_to_end(&mut back).unwrap();
        assert_eq!(back.len(), 10_000);
        for (at, &b) in back.iter().enumerate() {
            let want = [(5, 3), (4090, 20), (8191, 1809)].iter().find(|&&(o, n)| at >= o && at < o + n).map_or(7, |&(o, _)| ((at - o) % 251) as u8);
            assert_eq!(b, want, "byte {at}: {b} read back, {want} written (reserved: {reserved})");
        }
        std::fs::remove_file(&path).ok();
    }
}

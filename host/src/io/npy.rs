//! `.npy` (NumPy format 1.0, little-endian float64 or bool, C order) and `.csv` matrix writers, and
//! the `.npy` reader of an interrupted run's partial matrix and mask. Files are written to
//! `NAME.partial` and renamed when complete, so an interrupted run never leaves a file that looks
//! finished.
use crate::error::{OctileError, Result};
use std::io::Write;
use std::path::Path;

fn io_err(path: &Path, source: std::io::Error) -> OctileError {
    OctileError::Io { path: path.into(), cause: source }
}

/// Append `values` as the little-endian float64 bytes an `.npy` file holds.
fn extend_f64_bytes(out: &mut Vec<u8>, values: &[f64]) {
    out.reserve(values.len() * 8);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// `values` as little-endian bytes: the values' own memory on a little-endian machine (no copy:
/// a fresh buffer of a MUTAG-size tile cost more in page faults than its write), else a copy.
fn f64_le_bytes(values: &[f64]) -> std::borrow::Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        // SAFETY: f64 has no padding and every byte is initialized; u8 needs no alignment; the
        // slice covers exactly the values' size_of_val bytes and borrows them for its lifetime.
        std::borrow::Cow::Borrowed(unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) })
    } else {
        let mut out = Vec::new();
        extend_f64_bytes(&mut out, values);
        std::borrow::Cow::Owned(out)
    }
}

/// Bytes of an `.npy` file holding `values` (row-major) with shape (rows, cols).
pub fn npy_bytes(values: &[f64], rows: usize, cols: usize) -> Vec<u8> {
    let mut out = npy_header("<f8", rows, cols, values.len() * 8);
    extend_f64_bytes(&mut out, values);
    out
}

/// Bytes of an `.npy` file holding the booleans `mask` (row-major) with shape (rows, cols).
pub fn mask_bytes(mask: &[bool], rows: usize, cols: usize) -> Vec<u8> {
    let mut out = npy_header("|b1", rows, cols, mask.len());
    out.extend(mask.iter().map(|&b| b as u8));
    out
}

/// Bytes of an `.npy` file holding `values` (C order) with any `shape`, e.g. (rows, cols, P) for a
/// Gram matrix's gradient.
pub fn npy_bytes_nd(values: &[f64], shape: &[usize]) -> Vec<u8> {
    debug_assert_eq!(shape.iter().product::<usize>(), values.len());
    let mut out = npy_header_nd("<f8", shape, values.len() * 8);
    extend_f64_bytes(&mut out, values);
    out
}

/// Write `values` (C order) with shape `shape` as a float64 `.npy` file, atomically.
pub fn write_nd(path: &Path, values: &[f64], shape: &[usize]) -> Result<()> {
    write_atomic(path, &npy_bytes_nd(values, shape))
}

/// The magic, version and header of an `.npy` file, with room for `data_len` more bytes.
fn npy_header(descr: &str, rows: usize, cols: usize, data_len: usize) -> Vec<u8> {
    npy_header_nd(descr, &[rows, cols], data_len)
}

/// [`npy_header`] of any shape (a 1-D shape is written `(n,)`, as NumPy does).
fn npy_header_nd(descr: &str, shape: &[usize], data_len: usize) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let shape = if dims.len() == 1 { format!("{},", dims[0]) } else { dims.join(", ") };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({shape}), }}");
    let unpadded = 10 + dict.len() + 1;
    let pad = (64 - unpadded % 64) % 64;
    let header = format!("{dict}{}\n", " ".repeat(pad));
    let mut out = Vec::with_capacity(10 + header.len() + data_len);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out
}

/// A 2-D array read from an `.npy` file: float64 values, or booleans as 0.0 / 1.0.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyMatrix {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Row-major values.
    pub values: Vec<f64>,
}

/// Read a 2-D C-order `.npy` file of little-endian float64 (`<f8`) or booleans (`|b1`, `|u1`), as
/// octile writes them; anything else is a typed error naming what is wrong.
pub fn read_matrix(path: &Path) -> Result<NpyMatrix> {
    let bad = |what: String| OctileError::Parse { path: path.to_path_buf(), line: 0, what };
    let bytes = std::fs::read(path).map_err(|e| io_err(path, e))?;
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not an .npy file".into()));
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => return Err(bad(format!(".npy version {v} is not supported"))),
    };
    let header =
        bytes.get(start..start + header_len).and_then(|h| std::str::from_utf8(h).ok()).ok_or_else(|| bad("truncated or non-text .npy header".into()))?;
    let field = |key: &str| header.split_once(&format!("'{key}':")).map(|(_, rest)| rest.trim_start());
    let descr = field("descr")
        .and_then(|r| r.strip_prefix('\''))
        .and_then(|r| r.split_once('\''))
        .map(|(d, _)| d)
        .ok_or_else(|| bad("no 'descr' in the .npy header".into()))?;
    if field("fortran_order").is_some_and(|r| r.starts_with("True")) {
        return Err(bad("Fortran-order arrays are not supported".into()));
    }
    let shape = field("shape")
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.split_once(')'))
        .map(|(s, _)| s)
        .ok_or_else(|| bad("no 'shape' in the .npy header".into()))?;
    let dims: Vec<usize> = shape
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse::<usize>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| bad(format!("shape ({shape}) is not a list of sizes")))?;
    let [rows, cols] = dims[..] else { return Err(bad(format!("shape ({shape}) is not 2-D"))) };
    let width = match descr {
        "<f8" => 8,
        "|b1" | "|u1" => 1,
        d => return Err(bad(format!("element type '{d}' is not float64 ('<f8') or bool ('|b1')"))),
    };
    let data = &bytes[start + header_len..];
    let n = rows
        .checked_mul(cols)
        .filter(|n| n.checked_mul(width) == Some(data.len()))
        .ok_or_else(|| bad(format!("{} data bytes for shape ({rows}, {cols}) of '{descr}'", data.len())))?;
    let values = if width == 8 {
        data.chunks_exact(8).map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).collect()
    } else {
        data.iter().map(|&b| (b != 0) as u8 as f64).collect()
    };
    debug_assert_eq!(n, rows * cols);
    Ok(NpyMatrix { rows, cols, values })
}

/// The temporary file [`write_atomic`] writes `path` through: `path.EXT.partial`.
pub fn temporary_of(path: &Path) -> std::path::PathBuf {
    path.with_extension(format!("{}.partial", path.extension().and_then(|e| e.to_str()).unwrap_or("")))
}

/// Write `bytes` to `path` atomically (through [`temporary_of`]); an error names `path` (the file
/// the user asked for), not the temporary.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_temporary(path, bytes)?;
    let tmp = temporary_of(path);
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_err(path, e)
    })
}

/// Write `bytes` to `path`'s temporary ([`temporary_of`]) and flush it to disk, not yet renamed
/// (see [`replace_together`]); on failure nothing is left behind and the error names `path`.
pub fn write_temporary(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temporary_of(path);
    let done = std::fs::File::create(&tmp).and_then(|mut f| f.write_all(bytes).and_then(|_| f.sync_all())).map_err(|e| io_err(path, e));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Move finished temporaries into place, all or none: each `(temporary, path)` in order. When one
/// fails, those already moved are undone (the files they replaced put back, new ones removed), so
/// a new matrix never sits beside an old summary; the temporaries not moved stay (the caller keeps
/// or removes them). The error names the user's `path`.
pub fn replace_together(moves: &[(std::path::PathBuf, std::path::PathBuf)]) -> Result<()> {
    // (path, its previous file moved aside to here, if there was one)
    let mut done: Vec<(&Path, Option<std::path::PathBuf>)> = Vec::new();
    let mut failed = None;
    for (tmp, path) in moves {
        let aside = path.with_extension(format!("{}.replaced", path.extension().and_then(|e| e.to_str()).unwrap_or("")));
        let old = match std::fs::rename(path, &aside) {
            Ok(()) => Some(aside),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                failed = Some(io_err(path, e));
                break;
            }
        };
        if let Err(e) = std::fs::rename(tmp, path) {
            if let Some(old) = &old {
                let _ = std::fs::rename(old, path);
            }
            failed = Some(io_err(path, e));
            break;
        }
        done.push((path, old));
    }
    for (path, old) in done.iter().rev() {
        match (&failed, old) {
            // all moved: the replaced files go
            (None, Some(old)) => {
                let _ = std::fs::remove_file(old);
            }
            (None, None) => {}
            // undone: the new file back to its temporary (kept for the caller), the old one back
            (Some(_), old) => {
                let tmp = moves.iter().find(|(_, p)| p == path).map(|(t, _)| t);
                let _ = tmp.map(|t| std::fs::rename(path, t));
                if let Some(old) = old {
                    let _ = std::fs::rename(old, path);
                }
            }
        }
    }
    failed.map_or(Ok(()), Err)
}

/// Checks, before any work, that `path` can take a matrix: its extension is `.npy` or `.csv` (the
/// JSON summary goes beside it as `.json`, which any other extension could collide with or mislead)
/// and a file can be written there ([`check_writable`]).
pub fn check_output(path: &Path) -> Result<()> {
    let bad = |what: String| Err(OctileError::Output { path: path.to_path_buf(), what });
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("npy") | Some("csv") => {}
        _ => return bad("the output is written as .npy or .csv; name the file so (the summary goes beside it as .json)".into()),
    }
    check_writable(path)
}

/// Checks, before any work, that a file can be written at `path`: its folder exists and takes a
/// new file (tried: permissions, a read-only file system, a full quota all show), and `path` is not
/// a folder. The error names `path` as the user gave it.
pub fn check_writable(path: &Path) -> Result<()> {
    let bad = |what: String| Err(OctileError::Output { path: path.to_path_buf(), what });
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return bad(format!("folder {} does not exist", dir.display()));
    }
    if path.is_dir() {
        return bad("is a folder; name a file".into());
    }
    let probe = dir.join(format!(".octile-write-check-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => bad(format!("folder {} cannot be written ({e})", dir.display())),
    }
}

/// Write a matrix as `.npy` or `.csv` (by extension).
pub fn write_matrix(path: &Path, values: &[f64], rows: usize, cols: usize) -> Result<()> {
    write_atomic(path, &matrix_bytes(path, values, rows, cols))
}

/// The bytes [`write_matrix`] writes to `path` (`.csv` by its extension, else `.npy`).
pub fn matrix_bytes(path: &Path, values: &[f64], rows: usize, cols: usize) -> Vec<u8> {
    let csv = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if csv {
        let mut s = String::with_capacity(values.len() * 24);
        for r in 0..rows {
            let row: Vec<String> = values[r * cols..(r + 1) * cols].iter().map(|v| format!("{v:.17e}")).collect();
            s.push_str(&row.join(","));
            s.push('\n');
        }
        s.into_bytes()
    } else {
        npy_bytes(values, rows, cols)
    }
}

/// Write several files so that they are all new or all as before (a matrix and its summary): each
/// `(path, bytes)` to its temporary, then all moved into place by [`replace_together`]. An error
/// names the user's path; no temporary is left behind.
pub fn write_together(files: &[(&Path, &[u8])]) -> Result<()> {
    let remove = |paths: &mut dyn Iterator<Item = &Path>| {
        for p in paths {
            let _ = std::fs::remove_file(temporary_of(p));
        }
    };
    for (k, (path, bytes)) in files.iter().enumerate() {
        if let Err(e) = write_temporary(path, bytes) {
            remove(&mut files[..k].iter().map(|f| f.0));
            return Err(e);
        }
    }
    let moves: Vec<(std::path::PathBuf, std::path::PathBuf)> = files.iter().map(|(p, _)| (temporary_of(p), p.to_path_buf())).collect();
    let done = replace_together(&moves);
    if done.is_err() {
        remove(&mut files.iter().map(|f| f.0));
    }
    done
}

/// Bytes of an `.npy` file holding the int64 `values` (row-major) with shape (rows, cols).
pub fn npy_i64_bytes(values: &[i64], rows: usize, cols: usize) -> Vec<u8> {
    let mut out = npy_header("<i8", rows, cols, values.len() * 8);
    out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    out
}

/// Write an int64 matrix (row-major, `rows` × `cols`) atomically as `.npy` (int64) or, by
/// extension, `.csv`: a header line `index_name,names...` (a name holding a comma or quote is
/// quoted) and one line per row, its row index first. Rows are formatted in parallel.
pub fn write_i64_matrix(path: &Path, values: &[i64], rows: usize, cols: usize, index_name: &str, names: &[&str]) -> Result<()> {
    write_atomic(path, &i64_matrix_bytes(path, values, rows, cols, index_name, names))
}

/// The bytes [`write_i64_matrix`] writes to `path`.
pub fn i64_matrix_bytes(path: &Path, values: &[i64], rows: usize, cols: usize, index_name: &str, names: &[&str]) -> Vec<u8> {
    if !path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")) {
        return npy_i64_bytes(values, rows, cols);
    }
    let quote = |s: &str| if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() };
    let mut out = std::iter::once(quote(index_name)).chain(names.iter().map(|n| quote(n))).collect::<Vec<_>>().join(",").into_bytes();
    out.push(b'\n');
    const ROWS_PER_TASK: usize = 4096;
    append_par(&mut out, values, ROWS_PER_TASK * cols, |buf, t, block| {
        for (r, row) in block.chunks(cols.max(1)).enumerate() {
            push_i64(buf, (t * ROWS_PER_TASK + r) as i64);
            for &v in row {
                buf.push(b',');
                push_i64(buf, v);
            }
            buf.push(b'\n');
        }
    });
    out
}

/// Append the text of `items` to `out`, formatted in parallel: `write(buf, t, chunk)` appends the
/// text of chunk `t` (items `t·per_task ..`, `per_task` at a time); the chunks land in order.
pub(crate) fn append_par<T: Sync>(out: &mut Vec<u8>, items: &[T], per_task: usize, write: impl Fn(&mut Vec<u8>, usize, &[T]) + Sync) {
    use rayon::prelude::*;
    let pieces: Vec<Vec<u8>> = items
        .par_chunks(per_task.max(1))
        .enumerate()
        .map(|(t, chunk)| {
            let mut buf = Vec::with_capacity(chunk.len() * 8);
            write(&mut buf, t, chunk);
            buf
        })
        .collect();
    out.reserve(pieces.iter().map(Vec::len).sum());
    for p in pieces {
        out.extend_from_slice(&p);
    }
}

/// Append `v` in decimal.
fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

/// Append `v` in decimal.
pub(crate) fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
}

/// A float64 `.npy` file of a fixed shape filled in place, piece by piece (through mapped windows
/// or positioned writes):
/// what streams a Gram matrix (or its gradient) larger than memory to disk, tile by tile.
///
/// ```text
/// [ magic, version, header (shape) ][ element 0 | element 1 | … ]   C order, 8 bytes each
///                                    ↑ data_offset: element k at data_offset + 8·k
/// ```
/// The file is created at its full size, so pieces can be written in any order and a run can be
/// resumed in place; unwritten entries read as 0.0. Its blocks are reserved up front where the
/// file system can (`fallocate`): a disk without room for the whole output is an error before
/// the first tile, and pieces can then be written through [`window`](Self::window)s mapped into
/// memory (see `io::mapped` for why), else with [`write_at`](Self::write_at).
pub struct NpyWriter {
    file: std::fs::File,
    path: std::path::PathBuf,
    data_offset: u64,
    len: usize,
    reserved: bool,
}

/// Elements of an [`NpyWriter`]'s file mapped into memory (from [`NpyWriter::window`]); what is
/// written to [`elements_mut`](Self::elements_mut) is the file's content. Unmapped on drop.
pub struct MappedElements(super::mapped::MappedWindow);

impl MappedElements {
    /// The window's elements (native little-endian f64, as the `.npy` header says).
    pub fn elements_mut(&mut self) -> &mut [f64] {
        // SAFETY: any bit pattern is an f64; `window` checked the alignment (the prefix and
        // suffix below are empty).
        let (head, mid, tail) = unsafe { self.0.bytes_mut().align_to_mut::<f64>() };
        debug_assert!(head.is_empty() && tail.is_empty());
        mid
    }
}

impl NpyWriter {
    /// A new file of `shape` at `path` (replacing one there).
    pub fn create(path: &Path, shape: &[usize]) -> Result<NpyWriter> {
        let len = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).filter(|n| n.checked_mul(8).is_some());
        let len = len.ok_or_else(|| OctileError::Output { path: path.into(), what: format!("shape {shape:?} is too large for a file") })?;
        let header = npy_header_nd("<f8", shape, 0);
        // read too: a tile's checksum can be taken from what the file holds (`read_at`)
        let mut file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path).map_err(|e| io_err(path, e))?;
        file.write_all(&header).map_err(|e| io_err(path, e))?;
        let size = header.len() as u64 + len as u64 * 8;
        file.set_len(size).map_err(|e| io_err(path, e))?;
        // a disk without room: nothing left behind
        let reserved = reserve_blocks(&file, path, size).inspect_err(|_| {
            let _ = std::fs::remove_file(path);
        })?;
        Ok(NpyWriter { file, path: path.into(), data_offset: header.len() as u64, len, reserved })
    }

    /// An existing file of `shape` written by [`create`](Self::create), to go on filling (a resumed
    /// run); a file of another shape or size is an error.
    pub fn open(path: &Path, shape: &[usize]) -> Result<NpyWriter> {
        let len: usize = shape.iter().product();
        let mut file = std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(|e| io_err(path, e))?;
        let size = file.metadata().map_err(|e| io_err(path, e))?.len();
        let data_offset = expect_header(&mut file, path, shape)?;
        if size != data_offset + len as u64 * 8 {
            return Err(not_ours(path, shape));
        }
        let reserved = reserve_blocks(&file, path, size)?;
        Ok(NpyWriter { file, path: path.into(), data_offset, len, reserved })
    }

    /// Elements `elements` (C order) mapped into memory to be written in place, where the file's
    /// blocks are reserved; `None` where they are not (or the platform is big-endian): write
    /// with [`write_at`](Self::write_at) then.
    ///
    /// # Safety
    /// While the window lives, nothing else writes those elements: no other window over them and
    /// no [`write_at`](Self::write_at) into them (`io::mapped::MappedWindow::map`'s contract).
    pub unsafe fn window(&self, elements: std::ops::Range<usize>) -> Result<Option<MappedElements>> {
        if elements.start > elements.end || elements.end > self.len {
            return Err(OctileError::Output { path: self.path.clone(), what: format!("elements {elements:?} past the {} of the file", self.len) });
        }
        if !self.reserved || cfg!(target_endian = "big") || !self.data_offset.is_multiple_of(8) {
            return Ok(None);
        }
        // SAFETY: forwarded contract.
        let w = unsafe { super::mapped::MappedWindow::map(&self.file, self.data_offset + elements.start as u64 * 8, elements.len() * 8) }
            .map_err(|e| io_err(&self.path, e))?;
        Ok(Some(MappedElements(w)))
    }

    /// Write `values` as elements `first..first + values.len()` (C order).
    pub fn write_at(&self, first: usize, values: &[f64]) -> Result<()> {
        use std::os::unix::fs::FileExt;
        if first.checked_add(values.len()).is_none_or(|end| end > self.len) {
            return Err(OctileError::Output { path: self.path.clone(), what: format!("elements {first}.. past the {} of the file", self.len) });
        }
        self.file.write_all_at(&f64_le_bytes(values), self.data_offset + first as u64 * 8).map_err(|e| io_err(&self.path, e))
    }

    /// Read elements `first..first + n` (C order) back, e.g. to check a resumed run's tiles
    /// against their checksums.
    pub fn read_at(&self, first: usize, n: usize) -> Result<Vec<f64>> {
        use std::os::unix::fs::FileExt;
        if first.checked_add(n).is_none_or(|end| end > self.len) {
            return Err(OctileError::Output { path: self.path.clone(), what: format!("elements {first}.. past the {} of the file", self.len) });
        }
        let mut bytes = vec![0u8; n * 8];
        self.file.read_exact_at(&mut bytes, self.data_offset + first as u64 * 8).map_err(|e| io_err(&self.path, e))?;
        Ok(bytes.chunks_exact(8).map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).collect())
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flush what was written to the disk.
    pub fn sync(&self) -> Result<()> {
        self.file.sync_all().map_err(|e| io_err(&self.path, e))
    }
}

/// Reserve the blocks of `file` (`size` bytes): true if reserved, false where the file system
/// cannot; a disk without room is an error naming the size.
fn reserve_blocks(file: &std::fs::File, path: &Path, size: u64) -> Result<bool> {
    super::mapped::reserve(file, size)
        .map_err(|e| OctileError::Output { path: path.into(), what: format!("no room on its disk for the output's {:.2} GB ({e})", size as f64 / 1e9) })
}

/// The error of a file that is not the float64 `.npy` of `shape` octile writes.
fn not_ours(path: &Path, shape: &[usize]) -> OctileError {
    OctileError::Parse { path: path.into(), line: 0, what: format!("not the float64 .npy of shape {shape:?} this run writes") }
}

/// Read the header of a float64 `.npy` of `shape` as [`npy_header_nd`] writes it from `r`; returns
/// its length (where the data starts). Another header is an error.
fn expect_header(r: &mut impl std::io::Read, path: &Path, shape: &[usize]) -> Result<u64> {
    let header = npy_header_nd("<f8", shape, 0);
    let mut head = vec![0u8; header.len()];
    if r.read_exact(&mut head).is_err() || head != header {
        return Err(not_ours(path, shape));
    }
    Ok(header.len() as u64)
}

/// Rewrite the 2-D float64 `.npy` at `npy` as a `.csv` at `csv` (as [`write_matrix`] writes it),
/// row by row: memory for one row, whatever the matrix.
pub fn npy_to_csv(npy: &Path, csv: &Path, rows: usize, cols: usize) -> Result<()> {
    npy_to_csv_temporary(npy, csv, rows, cols)?;
    let tmp = temporary_of(csv);
    std::fs::rename(&tmp, csv).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_err(csv, e)
    })
}

/// [`npy_to_csv`] into `csv`'s temporary ([`temporary_of`]), not yet renamed (see
/// [`replace_together`]); on failure nothing is left behind and the error names `csv`.
pub fn npy_to_csv_temporary(npy: &Path, csv: &Path, rows: usize, cols: usize) -> Result<()> {
    use std::io::{BufWriter, Read};
    let mut input = std::io::BufReader::new(std::fs::File::open(npy).map_err(|e| io_err(npy, e))?);
    expect_header(&mut input, npy, &[rows, cols])?;
    let tmp = temporary_of(csv);
    let out = (|| -> std::io::Result<()> {
        let mut w = BufWriter::new(std::fs::File::create(&tmp)?);
        let mut row = vec![0u8; cols * 8];
        for _ in 0..rows {
            input.read_exact(&mut row)?;
            let cells: Vec<String> = row.chunks_exact(8).map(|c| format!("{:.17e}", f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))).collect();
            w.write_all(cells.join(",").as_bytes())?;
            w.write_all(b"\n")?;
        }
        w.into_inner().map_err(|e| e.into_error())?.sync_all()
    })();
    let done = out.map_err(|e| io_err(csv, e));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

#[cfg(test)]
mod atomic_tests {
    use super::*;

    #[test]
    fn written_matrices_and_masks_read_back_and_bad_files_are_typed_errors() {
        let dir = std::env::temp_dir().join(format!("octile-npy-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (v, m) = (dir.join("v.npy"), dir.join("m.npy"));
        let values = [1.5, -0.0, f64::NAN, 1e300, 2.0, 3.0];
        write_atomic(&v, &npy_bytes(&values, 2, 3)).unwrap();
        let r = read_matrix(&v).unwrap();
        assert_eq!((r.rows, r.cols), (2, 3));
        assert_eq!(r.values.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), values.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        write_atomic(&m, &mask_bytes(&[true, false, true], 3, 1)).unwrap();
        assert_eq!(read_matrix(&m).unwrap(), NpyMatrix { rows: 3, cols: 1, values: vec![1.0, 0.0, 1.0] });
        let mut cut = npy_bytes(&values, 2, 3);
        cut.truncate(cut.len() - 3);
        for (bytes, says) in [
            (b"hello".to_vec(), "not an .npy file"),
            (cut, "data bytes for shape (2, 3)"),
            (npy_header("<i4", 1, 1, 4).into_iter().chain([0; 4]).collect(), "'<i4' is not float64"),
        ] {
            write_atomic(&v, &bytes).unwrap();
            let e = read_matrix(&v).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("v.npy"), "expected '{says}', got: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_replaced_together_are_all_new_or_all_old() {
        let dir = std::env::temp_dir().join(format!("octile-together-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (k, j) = (dir.join("K.npy"), dir.join("K.json"));
        std::fs::write(&k, "old K").unwrap();
        std::fs::write(&j, "old J").unwrap();
        let (tk, tj) = (temporary_of(&k), temporary_of(&j));
        std::fs::write(&tk, "new K").unwrap();
        // the second move fails (its temporary is missing): the first is undone, both old files stay
        let e = replace_together(&[(tk.clone(), k.clone()), (tj.clone(), j.clone())]).unwrap_err().to_string();
        assert!(e.contains("K.json") && !e.contains(".partial"), "{e}");
        assert_eq!(std::fs::read_to_string(&k).unwrap(), "old K", "the first file put back");
        assert_eq!(std::fs::read_to_string(&j).unwrap(), "old J", "the second file put back");
        assert_eq!(std::fs::read_to_string(&tk).unwrap(), "new K", "its new version back in its temporary");
        std::fs::write(&tj, "new J").unwrap();
        // both succeed: both new, nothing left aside
        replace_together(&[(tk.clone(), k.clone()), (tj.clone(), j.clone())]).unwrap();
        assert_eq!((std::fs::read_to_string(&k).unwrap(), std::fs::read_to_string(&j).unwrap()), ("new K".into(), "new J".into()));
        assert!(!tk.exists() && !tj.exists() && !dir.join("K.npy.replaced").exists() && !dir.join("K.json.replaced").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_written_together_are_all_new_or_all_old() {
        let dir = std::env::temp_dir().join(format!("octile-write-together-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (k, j) = (dir.join("K.npy"), dir.join("K.json"));
        std::fs::write(&k, "old K").unwrap();
        std::fs::write(&j, "old J").unwrap();
        // the summary cannot be placed (a folder stands at its temporary's and its own path): the
        // matrix stays the old one, and no temporary is left
        std::fs::create_dir_all(dir.join("K.json.partial")).unwrap();
        let e = write_together(&[(&k, b"new K"), (&j, b"new J")]).unwrap_err().to_string();
        assert!(e.contains("K.json") && !e.contains("K.json.partial"), "{e}");
        assert_eq!((std::fs::read_to_string(&k).unwrap(), std::fs::read_to_string(&j).unwrap()), ("old K".into(), "old J".into()));
        assert!(!temporary_of(&k).exists(), "the matrix's temporary left behind");
        std::fs::remove_dir_all(dir.join("K.json.partial")).unwrap();
        write_together(&[(&k, b"new K"), (&j, b"new J")]).unwrap();
        assert_eq!((std::fs::read_to_string(&k).unwrap(), std::fs::read_to_string(&j).unwrap()), ("new K".into(), "new J".into()));
        assert!(!temporary_of(&k).exists() && !temporary_of(&j).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_neither_the_file_nor_a_partial_behind() {
        let dir = std::env::temp_dir().join(format!("octile-atomic-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("K.npy")).unwrap(); // a folder where the file should go: rename fails
        let e = write_atomic(&dir.join("K.npy"), b"x").unwrap_err().to_string();
        assert!(e.contains("K.npy"), "{e}");
        assert!(!dir.join("K.npy.partial").exists(), "partial file left behind");
        write_atomic(&dir.join("ok.npy"), b"y").unwrap();
        assert_eq!(std::fs::read(dir.join("ok.npy")).unwrap(), b"y");
        assert!(!dir.join("ok.npy.partial").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

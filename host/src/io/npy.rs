//! `.npy` (NumPy format 1.0, little-endian float64, C order) and `.csv` matrix writers. Files are
//! written to `NAME.partial` and renamed when complete, so an interrupted run never leaves a file
//! that looks finished.
use crate::error::{OctileError, Result};
use std::io::Write;
use std::path::Path;

fn io_err(path: &Path, source: std::io::Error) -> OctileError {
    OctileError::Io { path: path.into(), cause: source }
}

/// Bytes of an `.npy` file holding `values` (row-major) with shape (rows, cols).
pub fn npy_bytes(values: &[f64], rows: usize, cols: usize) -> Vec<u8> {
    let dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    let unpadded = 10 + dict.len() + 1;
    let pad = (64 - unpadded % 64) % 64;
    let header = format!("{dict}{}\n", " ".repeat(pad));
    let mut out = Vec::with_capacity(10 + header.len() + values.len() * 8);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// Write `bytes` to `path` atomically (through `path.partial`).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!("{}.partial", path.extension().and_then(|e| e.to_str()).unwrap_or("")));
    let mut f = std::fs::File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
    // a failed write or rename leaves no .partial file behind
    let done = f.write_all(bytes).and_then(|_| f.sync_all()).map_err(|e| io_err(&tmp, e)).and_then(|_| std::fs::rename(&tmp, path).map_err(|e| io_err(path, e)));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Checks, before any work, that `path` can take a matrix: its extension is `.npy` or `.csv` (the
/// JSON summary goes beside it as `.json`, which any other extension could collide with or mislead)
/// and its folder exists.
pub fn check_output(path: &Path) -> Result<()> {
    let bad = |what: String| Err(OctileError::Output { path: path.to_path_buf(), what });
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("npy") | Some("csv") => {}
        _ => return bad("the matrix is written as .npy (float64) or .csv; name the file so (the summary goes beside it as .json)".into()),
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return bad(format!("folder {} does not exist", dir.display()));
    }
    Ok(())
}

/// Write a matrix as `.npy` or `.csv` (by extension).
pub fn write_matrix(path: &Path, values: &[f64], rows: usize, cols: usize) -> Result<()> {
    let csv = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let bytes = if csv {
        let mut s = String::with_capacity(values.len() * 24);
        for r in 0..rows {
            let row: Vec<String> = values[r * cols..(r + 1) * cols].iter().map(|v| format!("{v:.17e}")).collect();
            s.push_str(&row.join(","));
            s.push('\n');
        }
        s.into_bytes()
    } else {
        npy_bytes(values, rows, cols)
    };
    write_atomic(path, &bytes)
}

#[cfg(test)]
mod atomic_tests {
    use super::*;

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

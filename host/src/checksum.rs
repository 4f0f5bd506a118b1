//! A 64-bit checksum (FNV-1a) for telling an edited or damaged file from the one octile wrote:
//! the values of an interrupted run's partial matrix, and the inputs a summary records. Not a
//! cryptographic hash (it guards against accidents, not adversaries); written here so that no
//! dependency is needed for it.

/// FNV-1a, 64-bit: feed bytes (or `f64`s) in order, read [`hex`](Self::hex).
#[derive(Clone, Copy, Debug)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv64 {
    /// Feed `bytes`.
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }

    /// Feed `values` as their little-endian bytes (as an `.npy` file holds them), so a checksum of
    /// values in memory equals one of the same values read back from the file.
    pub fn f64s(&mut self, values: &[f64]) -> &mut Self {
        for v in values {
            self.bytes(&v.to_le_bytes());
        }
        self
    }

    /// The checksum so far.
    pub fn value(&self) -> u64 {
        self.0
    }

    /// The checksum so far as 16 hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// The [`Fnv64`] checksum of a file's bytes and its size, read in pieces (memory for one piece,
/// whatever the file).
pub fn file(path: &std::path::Path) -> std::io::Result<(String, u64)> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let (mut h, mut size, mut buf) = (Fnv64::default(), 0u64, vec![0u8; 1 << 20]);
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok((h.hex(), size));
        }
        h.bytes(&buf[..n]);
        size += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_its_reference_values_and_values_hash_as_their_bytes() {
        // the published FNV-1a 64 test vectors
        assert_eq!(Fnv64::default().hex(), "cbf29ce484222325");
        assert_eq!(Fnv64::default().bytes(b"a").hex(), "af63dc4c8601ec8c");
        assert_eq!(Fnv64::default().bytes(b"foobar").hex(), "85944171f73967e8");
        let v = [1.5f64, -2.0];
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(Fnv64::default().f64s(&v).value(), Fnv64::default().bytes(&bytes).value());
    }
}

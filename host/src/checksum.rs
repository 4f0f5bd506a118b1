//! A 64-bit checksum (FNV-1a) for telling an edited or damaged file from the one octile wrote:
//! the values of an interrupted run's partial matrix, and the inputs a summary records. Not a
//! cryptographic hash (it guards against accidents, not adversaries); written here so that no
//! dependency is needed for it.

/// FNV-1a, 64-bit: feed bytes in order, read [`hex`](Self::hex) (runs of values: [`values_checksum`]).
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

    /// The checksum so far.
    pub fn value(&self) -> u64 {
        self.0
    }

    /// The checksum so far as 16 hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// A checksum of `values` at memory speed, for runs of tens of megabytes (the tiles of a streamed
/// Gram matrix, written as fast as several GPUs compute them: FNV-1a's byte-wise chain of
/// multiplications costs ~3 ns per value, 0.3 s per 80 MB tile, which held two H200s back).
/// Four lanes take every fourth value each, through x ← m(x ⊕ w), m(y) = z ⊕ (z ≫ 32) with
/// z = y·K (odd K): each step is a bijection of the lane, so a change of any one value changes
/// its lane; the lanes and the count end in [`Fnv64`]. Values hash as their bits (the
/// little-endian bytes an `.npy` holds), so a checksum of values in memory equals one of the same
/// values read back.
pub fn values_checksum(values: &[f64]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mix = |x: u64, w: f64| {
        let z = (x ^ w.to_bits()).wrapping_mul(K);
        z ^ (z >> 32)
    };
    let mut lanes = [0x243f_6a88_85a3_08d3u64, 0x1319_8a2e_0370_7344, 0xa409_3822_299f_31d0, 0x082e_fa98_ec4e_6c89];
    let mut quads = values.chunks_exact(4);
    for q in &mut quads {
        for k in 0..4 {
            lanes[k] = mix(lanes[k], q[k]);
        }
    }
    for (k, &v) in quads.remainder().iter().enumerate() {
        lanes[k] = mix(lanes[k], v);
    }
    let mut h = Fnv64::default();
    h.bytes(&(values.len() as u64).to_le_bytes());
    for l in lanes {
        h.bytes(&l.to_le_bytes());
    }
    h.value()
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
    fn fnv1a_matches_its_reference_values() {
        // the published FNV-1a 64 test vectors
        assert_eq!(Fnv64::default().hex(), "cbf29ce484222325");
        assert_eq!(Fnv64::default().bytes(b"a").hex(), "af63dc4c8601ec8c");
        assert_eq!(Fnv64::default().bytes(b"foobar").hex(), "85944171f73967e8");
    }

    #[test]
    fn values_checksum_sees_every_single_change_and_the_length() {
        let base: Vec<f64> = (0..37).map(|k| (k as f64 * 0.37).sin()).collect();
        let h = values_checksum(&base);
        assert_eq!(h, values_checksum(&base.clone()), "deterministic");
        for k in 0..base.len() {
            for changed in [base[k] + 1e-15, -base[k], f64::from_bits(base[k].to_bits() ^ 1), 0.0] {
                if changed.to_bits() == base[k].to_bits() {
                    continue;
                }
                let mut v = base.clone();
                v[k] = changed;
                assert_ne!(values_checksum(&v), h, "value {k} changed to {changed:e} (was {:e}) kept the checksum", base[k]);
            }
        }
        // swapping two values of different lanes, a value appended or dropped
        let mut v = base.clone();
        v.swap(3, 4);
        assert_ne!(values_checksum(&v), h, "swap of values 3 and 4");
        assert_ne!(values_checksum(&base[..36]), h, "one value dropped");
        assert_ne!(values_checksum(&[&base[..], &[0.0]].concat()), h, "a zero appended");
        assert_ne!(values_checksum(&[]), values_checksum(&[0.0]), "empty vs one zero");
        // pinned: partial files on disk carry these checksums, so a change of the function (its
        // constants, its lanes) would refuse every interrupted run's tiles as edited
        assert_eq!(values_checksum(&[]), 0x6db4_c236_ad3a_3cf8, "{:#018x}", values_checksum(&[]));
        assert_eq!(values_checksum(&[1.5, -2.0, 0.0, 1e300, 3.25]), 0xeafb_1f7f_19d2_ab52, "{:#018x}", values_checksum(&[1.5, -2.0, 0.0, 1e300, 3.25]));
    }
}

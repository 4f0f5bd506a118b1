//! Orbit lists as users write them (`--orbits 0-4,15`, `orbits = "0-4,15"` in a kernel file).

use octile_types::graphlets::N_ORBITS;

/// The orbit indices of a list such as `0-4,15`: comma-separated indices and ascending ranges
/// `a-b`, each in 0..=15, none twice, in the order given. The error says what is wrong (the
/// caller names the flag or key).
pub fn parse_orbit_list(s: &str) -> Result<Vec<usize>, String> {
    let index = |t: &str| -> Result<usize, String> {
        let t = t.trim();
        let v: usize = t.parse().map_err(|_| format!("'{t}' is not an orbit number (0-{})", N_ORBITS - 1))?;
        if v >= N_ORBITS {
            return Err(format!("orbit {v} does not exist ({v} is not an orbit of 0-{})", N_ORBITS - 1));
        }
        Ok(v)
    };
    let mut out: Vec<usize> = Vec::new();
    for part in s.split(',') {
        let range = match part.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (index(lo)?, index(hi)?);
                if lo > hi {
                    return Err(format!("range {lo}-{hi} is empty (it runs backwards)"));
                }
                lo..=hi
            }
            None => {
                let v = index(part)?;
                v..=v
            }
        };
        for v in range {
            if out.contains(&v) {
                return Err(format!("orbit {v} is asked for twice"));
            }
            out.push(v);
        }
    }
    Ok(out)
}

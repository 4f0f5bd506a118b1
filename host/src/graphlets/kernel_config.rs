//! The graphlet kernel's configuration, in the kernel TOML `octile gram --kernel` reads:
//!
//! ```toml
//! method = "graphlets"
//! features = "summed"    # | "histogram": per orbit, a histogram of the node counts (bins below)
//! counts = "net"         # | "raw": FGlT's net (induced) or raw frequencies
//! orbits = "0-15"        # ranges and single orbits, "0-4,15", or a list [0, 1, 2, 3, 4]
//! scale = "none"         # | "log1p": φ ← ln(1 + φ), element by element
//! kernel = "linear"      # | "rbf" (needs gamma > 0)
//! # gamma = 0.1          # rbf only: exp(−γ‖φ − φ′‖²)
//! # bins = 16            # histogram only: bins per orbit, 2..=64
//! backend = "auto"       # | "cpu" | "cuda": where the transform runs
//! ```
//! Every key is optional (the defaults are the values above); an unknown key, a key that does not
//! apply to the chosen form (`gamma` with `linear`, `bins` with `summed`) and a value out of range
//! are [`OctileError::InvalidConfig`] errors naming the key.
use crate::backend::Backend;
use crate::error::{OctileError, Result};
use crate::graphlets::orbits::parse_orbit_list;
use octile_types::graphlets::N_ORBITS;

/// The most histogram bins per orbit: a count is below 2⁶³, so bins past 64 would stay empty.
pub const MAX_BINS: usize = 64;

/// What φ(G) holds per chosen orbit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FeatureForm {
    /// The orbit's count summed over the graph's nodes (one number per orbit).
    #[default]
    Summed,
    /// How many of the graph's nodes have a count in each bin (`bins` numbers per orbit): bin 0
    /// holds count 0, bin b ≥ 1 the counts 2^(b−1) ..= 2^b − 1, the last bin everything from
    /// 2^(bins−2) up (see [`bin_of`]).
    Histogram,
}

/// Which of FGlT's per-node frequencies φ is built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Counts {
    /// Net frequencies d0–d15: induced graphlets (each subgraph counted in one orbit only).
    #[default]
    Net,
    /// Raw frequencies d̂0–d̂15: non-induced (a 4-clique also counts as its 4-cycles, paths, ...).
    Raw,
}

/// A scaling applied to every entry of φ after it is summed or binned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Scale {
    /// φ as it is.
    #[default]
    None,
    /// ln(1 + φ): tames the counts of large or dense graphs (φ ≥ 0, so it is defined).
    Log1p,
}

/// The kernel between two graphs' feature vectors (linear or RBF), in f64: a vector kernel, not one of
/// the base kernels on node and edge features (`octile_types::BaseKernel`).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum VectorKernel {
    /// ⟨φ, φ′⟩.
    #[default]
    Linear,
    /// exp(−γ‖φ − φ′‖²).
    Rbf {
        /// γ > 0, finite.
        gamma: f64,
    },
}

/// Everything that defines a graphlet kernel computation (see the module docs for the TOML).
#[derive(Clone, Debug, PartialEq)]
pub struct GraphletConfig {
    /// Summed counts or per-orbit histograms.
    pub features: FeatureForm,
    /// Net or raw frequencies.
    pub counts: Counts,
    /// The orbits used, ascending, distinct, each < 16.
    pub orbits: Vec<usize>,
    /// Scaling of φ.
    pub scale: Scale,
    /// The base kernel.
    pub kernel: VectorKernel,
    /// Histogram bins per orbit, 2..=[`MAX_BINS`] (used by [`FeatureForm::Histogram`] only).
    pub bins: usize,
    /// Where the graphlet transform runs.
    pub backend: Backend,
}

impl Default for GraphletConfig {
    /// Summed net counts of all 16 orbits, no scaling, the linear kernel, 16 bins, `Auto`.
    fn default() -> Self {
        GraphletConfig {
            features: FeatureForm::Summed,
            counts: Counts::Net,
            orbits: (0..N_ORBITS).collect(),
            scale: Scale::None,
            kernel: VectorKernel::Linear,
            bins: 16,
            backend: Backend::Auto,
        }
    }
}

/// The graphlet kernel's TOML as serde reads it (the names of the keys; each value is checked by
/// [`GraphletConfig::from_table`], whose messages name the key and what it accepts).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphletFile {
    method: Option<toml::Value>,
    features: Option<toml::Value>,
    counts: Option<toml::Value>,
    orbits: Option<toml::Value>,
    scale: Option<toml::Value>,
    kernel: Option<toml::Value>,
    gamma: Option<toml::Value>,
    bins: Option<toml::Value>,
    backend: Option<toml::Value>,
}

impl GraphletConfig {
    /// Parse the TOML form (see the module docs); the result is validated.
    pub fn from_toml(text: &str) -> Result<Self> {
        Self::from_table(crate::toml_file::parse_table(text)?)
    }

    /// Read a parsed kernel TOML (serde: every key checked, an unknown one refused naming those
    /// that exist), then validate every value.
    pub fn from_table(table: toml::Table) -> Result<Self> {
        let file: GraphletFile = crate::toml_file::read_table(table, "")?;
        let mut cfg = GraphletConfig::default();
        if let Some(v) = &file.method
            && v.as_str() != Some("graphlets")
        {
            return Err(bad(format!("method must be \"graphlets\" here, got {v}")));
        }
        if let Some(v) = &file.features {
            cfg.features = choice("features", v, &[("summed", FeatureForm::Summed), ("histogram", FeatureForm::Histogram)])?;
        }
        if let Some(v) = &file.counts {
            cfg.counts = choice("counts", v, &[("net", Counts::Net), ("raw", Counts::Raw)])?;
        }
        if let Some(v) = &file.scale {
            cfg.scale = choice("scale", v, &[("none", Scale::None), ("log1p", Scale::Log1p)])?;
        }
        if let Some(v) = &file.kernel {
            cfg.kernel = choice("kernel", v, &[("linear", VectorKernel::Linear), ("rbf", VectorKernel::Rbf { gamma: f64::NAN })])?;
        }
        if let Some(v) = &file.backend {
            cfg.backend = choice("backend", v, &[("auto", Backend::Auto), ("cpu", Backend::Cpu), ("cuda", Backend::Cuda)])?;
        }
        if let Some(v) = &file.orbits {
            cfg.orbits = parse_orbits(v)?;
        }
        let gamma = match &file.gamma {
            Some(v) => Some(v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).ok_or_else(|| bad(format!("gamma must be a number, got {v}")))?),
            None => None,
        };
        let bins = match &file.bins {
            Some(v) => Some(v.as_integer().ok_or_else(|| bad(format!("bins must be an integer, got {v}")))?),
            None => None,
        };
        match (&mut cfg.kernel, gamma) {
            (VectorKernel::Rbf { gamma: g }, Some(v)) => *g = v,
            (VectorKernel::Rbf { .. }, None) => return Err(bad("kernel = \"rbf\" needs gamma (> 0): exp(−γ‖φ − φ′‖²)".into())),
            (VectorKernel::Linear, Some(_)) => return Err(bad("gamma applies to kernel = \"rbf\" only (the kernel is \"linear\")".into())),
            (VectorKernel::Linear, None) => {}
        }
        match (cfg.features, bins) {
            (FeatureForm::Histogram, Some(b)) => cfg.bins = usize::try_from(b).map_err(|_| bad(format!("bins must be in 2..={MAX_BINS}, got {b}")))?,
            (FeatureForm::Summed, Some(_)) => return Err(bad("bins applies to features = \"histogram\" only (the features are \"summed\")".into())),
            _ => {}
        }
        cfg.validate()?;
        Ok(cfg)
    }

    /// Values in range: at least one orbit, each < 16, ascending and distinct; 2 ≤ bins ≤ 64; γ
    /// finite and > 0.
    pub fn validate(&self) -> Result<()> {
        if self.orbits.is_empty() {
            return Err(bad("orbits: at least one orbit is needed".into()));
        }
        if let Some(&o) = self.orbits.iter().find(|&&o| o >= N_ORBITS) {
            return Err(bad(format!("orbits: {o} is not an orbit (0..={})", N_ORBITS - 1)));
        }
        if self.orbits.windows(2).any(|w| w[0] >= w[1]) {
            return Err(bad(format!("orbits must be ascending and distinct, got {:?}", self.orbits)));
        }
        if !(2..=MAX_BINS).contains(&self.bins) {
            return Err(bad(format!("bins must be in 2..={MAX_BINS}, got {}", self.bins)));
        }
        if let VectorKernel::Rbf { gamma } = self.kernel
            && !(gamma.is_finite() && gamma > 0.0)
        {
            return Err(bad(format!("gamma must be finite and > 0, got {gamma}")));
        }
        Ok(())
    }

    /// Entries of φ per graph: one per orbit (summed) or `bins` per orbit (histogram).
    pub fn dim(&self) -> usize {
        match self.features {
            FeatureForm::Summed => self.orbits.len(),
            FeatureForm::Histogram => self.orbits.len() * self.bins,
        }
    }
}

/// The histogram bin of a node count `c` among `bins` bins: 0 for c ≤ 0, else the bit length of c
/// (1 → 1, 2–3 → 2, 4–7 → 3, ...), capped at `bins − 1`.
pub fn bin_of(c: i64, bins: usize) -> usize {
    if c <= 0 { 0 } else { ((64 - c.leading_zeros()) as usize).min(bins - 1) }
}

fn bad(m: String) -> OctileError {
    OctileError::InvalidConfig(m)
}

/// The value of a string key that must be one of `options`.
fn choice<T: Copy>(key: &str, v: &toml::Value, options: &[(&str, T)]) -> Result<T> {
    let names: Vec<String> = options.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    let s = v.as_str().ok_or_else(|| bad(format!("{key} must be a string, one of {}; got {v}", names.join(", "))))?;
    options.iter().find(|(n, _)| *n == s).map(|&(_, t)| t).ok_or_else(|| bad(format!("{key} = \"{s}\" is not known; use one of {}", names.join(", "))))
}

/// `orbits`: a string of comma-separated orbits and ranges ("0-4,15") or a list of integers;
/// sorted ascending (a repeat is an error: it would weigh an orbit twice).
fn parse_orbits(v: &toml::Value) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    if let Some(s) = v.as_str() {
        out = parse_orbit_list(s).map_err(|e| bad(format!("orbits: {e}")))?;
    } else if let Some(list) = v.as_array() {
        for x in list {
            let i = x.as_integer().ok_or_else(|| bad(format!("orbits: {x} is not an orbit number")))?;
            out.push(usize::try_from(i).map_err(|_| bad(format!("orbits: {i} is not an orbit (0..={})", N_ORBITS - 1)))?);
        }
    } else {
        return Err(bad(format!("orbits must be a string such as \"0-4,15\" or a list of integers, got {v}")));
    }
    out.sort_unstable();
    if let Some(w) = out.windows(2).find(|w| w[0] == w[1]) {
        return Err(bad(format!("orbits: {} is given twice", w[0])));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_bit_lengths_capped() {
        for (c, bins, want) in [
            (0, 16, 0),
            (-3, 16, 0),
            (1, 16, 1),
            (2, 16, 2),
            (3, 16, 2),
            (4, 16, 3),
            (7, 16, 3),
            (8, 16, 4),
            (16383, 16, 14),
            (16384, 16, 15),
            (1 << 40, 16, 15),
            (5, 2, 1),
            (i64::MAX, 64, 63),
        ] {
            assert_eq!(bin_of(c, bins), want, "count {c}, {bins} bins");
        }
    }

    #[test]
    fn parses_every_key_and_orbit_form() {
        let c = GraphletConfig::from_toml("method = \"graphlets\"\nfeatures = \"histogram\"\ncounts = \"raw\"\norbits = \"0-2, 15,4\"\nscale = \"log1p\"\nkernel = \"rbf\"\ngamma = 0.5\nbins = 8\nbackend = \"cpu\"\n").unwrap();
        assert_eq!(
            c,
            GraphletConfig {
                features: FeatureForm::Histogram,
                counts: Counts::Raw,
                orbits: vec![0, 1, 2, 4, 15],
                scale: Scale::Log1p,
                kernel: VectorKernel::Rbf { gamma: 0.5 },
                bins: 8,
                backend: Backend::Cpu
            }
        );
        assert_eq!(c.dim(), 40);
        let c = GraphletConfig::from_toml("orbits = [4, 0]\nkernel = \"rbf\"\ngamma = 2\n").unwrap();
        assert_eq!((c.orbits.clone(), c.kernel, c.dim()), (vec![0, 4], VectorKernel::Rbf { gamma: 2.0 }, 2));
        assert_eq!(GraphletConfig::from_toml("").unwrap(), GraphletConfig::default());
    }
}

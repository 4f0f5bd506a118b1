//! The shortest-path kernel's configuration: the node kernel κv (the same `[node.<feature>]` tables
//! as the marginalized kernel, here with h = 0 allowed for the Kronecker delta, since no inverse is
//! taken) and the path-length kernel κℓ in one `[path_length]` table:
//!
//! ```toml
//! method = "shortest_path"
//! [node.label]
//! kernel = "kronecker_delta"
//! h = 0.0
//! [path_length]
//! kernel = "kronecker_delta"      # | "square_exponential" (length_scale) | "brownian_bridge" (c)
//! h = 0.0
//! ```
//! With Kronecker deltas of h = 0 everywhere this is GraKeL's `ShortestPath(with_labels=True)`
//! (no node tables: `with_labels=False`).
use crate::backend::Backend;
use crate::error::{OctileError, Result};
use crate::mgk::config::{BaseKernelConfig, FeatureKernel, combine_named, resolve_terms, terms_of};
use octile_types::sp::LengthKernel;
use octile_types::{Combine, KernelSpec};

/// κℓ as configured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LengthKernelConfig {
    /// 1 if the lengths are equal, else h ∈ [0, 1].
    KroneckerDelta {
        /// Value for unequal lengths.
        h: f64,
    },
    /// exp(−(d − d′)²/(2ℓ²)).
    SquareExponential {
        /// ℓ > 0.
        length_scale: f64,
    },
    /// max(0, c − |d − d′|).
    BrownianBridge {
        /// c > 0.
        c: f64,
    },
}

impl LengthKernelConfig {
    /// The device form.
    pub fn kernel(&self) -> LengthKernel {
        match *self {
            LengthKernelConfig::KroneckerDelta { h } => LengthKernel::kronecker_delta(h),
            LengthKernelConfig::SquareExponential { length_scale } => LengthKernel::square_exponential(length_scale),
            LengthKernelConfig::BrownianBridge { c } => LengthKernel::brownian_bridge(c),
        }
    }
}

/// Everything that defines a shortest-path kernel computation.
#[derive(Clone, Debug, PartialEq)]
pub struct SpConfig {
    /// κv terms (none: κv ≡ 1, unlabeled).
    pub node: Vec<FeatureKernel>,
    /// How κv terms combine.
    pub node_combine: Combine,
    /// κℓ.
    pub path_length: LengthKernelConfig,
    /// Hardware.
    pub backend: Backend,
}

impl Default for SpConfig {
    /// GraKeL's `ShortestPath(with_labels=False)`: no node kernel, a delta on the length.
    fn default() -> Self {
        SpConfig { node: Vec::new(), node_combine: Combine::Product, path_length: LengthKernelConfig::KroneckerDelta { h: 0.0 }, backend: Backend::Auto }
    }
}

impl SpConfig {
    /// Parse the TOML form (see the module docs).
    pub fn from_toml(text: &str) -> Result<Self> {
        Self::from_table(crate::toml_file::parse_table(text)?)
    }

    /// Read a parsed kernel TOML (serde: every key checked, an unknown one refused naming those
    /// that exist), then validate every value.
    pub fn from_table(table: toml::Table) -> Result<Self> {
        let file: SpFile = crate::toml_file::read_table(table, "")?;
        if let Some(m) = &file.method
            && m != "shortest_path"
        {
            return Err(OctileError::InvalidConfig(format!("method must be \"shortest_path\" here, got \"{m}\"")));
        }
        let mut cfg = SpConfig { node: terms_of("node", file.node)?, ..SpConfig::default() };
        if let Some(c) = file.node_combine {
            cfg.node_combine = combine_named(&c)?;
        }
        if let Some(l) = file.path_length {
            cfg.path_length = match l {
                LengthFile::KroneckerDelta { h } => LengthKernelConfig::KroneckerDelta { h },
                LengthFile::SquareExponential { length_scale } => LengthKernelConfig::SquareExponential { length_scale },
                LengthFile::BrownianBridge { c } => LengthKernelConfig::BrownianBridge { c },
            };
        }
        cfg.validate()?;
        Ok(cfg)
    }

    /// Hyperparameters in range: κv terms as the marginalized kernel's but h ∈ [0, 1]; κℓ's h ∈
    /// [0, 1], ℓ > 0, c > 0, all finite.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(OctileError::InvalidConfig(m));
        for t in &self.node {
            let ok = match t.kernel {
                BaseKernelConfig::Constant { c } => c.is_finite() && c > 0.0,
                BaseKernelConfig::KroneckerDelta { h } => (0.0..=1.0).contains(&h),
                BaseKernelConfig::SquareExponential { length_scale } => length_scale_ok(length_scale),
            };
            if !ok {
                return bad(format!(
                    "node kernel on '{}': {:?} out of range (constant c > 0, kronecker_delta h in [0, 1], square_exponential length_scale > 0 with 1/(2ℓ²) finite)",
                    t.feature, t.kernel
                ));
            }
            if !(t.weight.is_finite() && t.weight > 0.0) {
                return bad(format!("node kernel on '{}': weight {} must be > 0", t.feature, t.weight));
            }
        }
        let ok = match self.path_length {
            LengthKernelConfig::KroneckerDelta { h } => (0.0..=1.0).contains(&h),
            LengthKernelConfig::SquareExponential { length_scale } => length_scale_ok(length_scale),
            LengthKernelConfig::BrownianBridge { c } => c.is_finite() && c > 0.0,
        };
        if !ok {
            return bad(format!(
                "[path_length]: {:?} out of range (kronecker_delta h in [0, 1], square_exponential length_scale > 0 with 1/(2ℓ²) finite, brownian_bridge c > 0)",
                self.path_length
            ));
        }
        Ok(())
    }

    /// κv as a [`KernelSpec`] and the node features it reads, in spec order.
    pub fn node_spec(&self) -> (KernelSpec, Vec<String>) {
        let (spec, names, _) = resolve_terms(&self.node, self.node_combine);
        (spec, names)
    }

    /// Kronecker deltas of h = 0 everywhere (κv a product of them, or none; κℓ one): the kernel is
    /// then the dot product of (label u, label v, length) histograms, exactly.
    pub fn is_histogram(&self) -> bool {
        let node_delta = self.node.iter().all(|t| matches!(t.kernel, BaseKernelConfig::KroneckerDelta { h } if h == 0.0));
        let product = self.node_combine == Combine::Product || self.node.len() <= 1;
        node_delta && product && self.path_length == LengthKernelConfig::KroneckerDelta { h: 0.0 }
    }
}

/// A square exponential's ℓ: finite, > 0, and not so small that the −1/(2ℓ²) the kernels multiply
/// by overflows (ℓ below ~1e-154: κ(d, d) would be −∞·0 = NaN, a Gram matrix of NaN).
fn length_scale_ok(l: f64) -> bool {
    l.is_finite() && l > 0.0 && (0.5 / (l * l)).is_finite()
}

/// The shortest-path kernel's TOML as serde reads it.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SpFile {
    method: Option<String>,
    #[serde(default)]
    node: toml::Table,
    node_combine: Option<String>,
    path_length: Option<LengthFile>,
}

/// The `[path_length]` table, tagged by its `kernel`.
#[derive(serde::Deserialize)]
#[serde(tag = "kernel", rename_all = "snake_case", deny_unknown_fields)]
enum LengthFile {
    KroneckerDelta { h: f64 },
    SquareExponential { length_scale: f64 },
    BrownianBridge { c: f64 },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_grakel_labelled_form_and_rejects_bad_keys() {
        let c = SpConfig::from_toml(
            "method = \"shortest_path\"\n[node.label]\nkernel = \"kronecker_delta\"\nh = 0\n[path_length]\nkernel = \"kronecker_delta\"\nh = 0\n",
        )
        .unwrap();
        assert!(c.is_histogram());
        assert_eq!(c.node.len(), 1);
        let c = SpConfig::from_toml("method = \"shortest_path\"\n[path_length]\nkernel = \"brownian_bridge\"\nc = 3\n").unwrap();
        assert_eq!(c.path_length, LengthKernelConfig::BrownianBridge { c: 3.0 });
        assert!(!c.is_histogram());
        for (text, want) in [
            ("method = \"shortest_path\"\nq = 0.1\n", "unknown key 'q'"),
            ("method = \"shortest_path\"\n[path_length]\nkernel = \"brownian_bridge\"\nc = -1\n", "out of range"),
            ("method = \"shortest_path\"\n[path_length]\nkernel = \"cosine\"\n", "unknown kernel 'cosine'"),
            ("method = \"shortest_path\"\n[path_length]\nkernel = \"kronecker_delta\"\nh = 0\nc = 1\n", "unknown key 'c'"),
        ] {
            let e = SpConfig::from_toml(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        let m = |t: &str| crate::toml_file::method_of(&crate::toml_file::parse_table(t).unwrap());
        assert_eq!(m("q = 0.1").unwrap(), "marginalized");
        assert_eq!(m("method = \"shortest_path\"").unwrap(), "shortest_path");
        assert_eq!(m("method = \"graphlets\"").unwrap(), "graphlets");
        assert!(m("method = \"wl\"").unwrap_err().to_string().contains("method must be"));
    }
}

//! Every method by name: a kernel TOML (its `method` key: "marginalized", the default,
//! "shortest_path" or "graphlets") to a ready [`GraphKernel`]. The one place where the CLI's
//! `octile gram` and the Python package turn a kernel file into a kernel, so both compute the same
//! values from the same text.
//!
//! ```no_run
//! use octile::kernels::KernelFile;
//! use octile::{Backend, GraphKernel, RunControl, generators::nws_set};
//! let mut file = KernelFile::from_toml("method = \"shortest_path\"").unwrap();
//! file.set_backend(Backend::Cpu, None);
//! let kernel = file.build(RunControl::default()).unwrap();
//! let k = kernel.gram(&nws_set(4, 1)).unwrap();
//! assert_eq!((k.rows, k.cols), (4, 4));
//! ```
use crate::backend::{Backend, Precision};
use crate::error::{OctileError, Result};
use crate::gram::{GraphKernel, RunControl};
use crate::graphlets::kernel::GraphletKernel;
use crate::graphlets::kernel_config::{FeatureForm, GraphletConfig, VectorKernel};
use crate::io::FeatureKinds;
use crate::mgk::MarginalizedGraphKernel;
use crate::mgk::config::MgkConfig;
use crate::mgk::config::{BaseKernelConfig, FeatureKernel};
use crate::sp::ShortestPathKernel;
use crate::sp::config::SpConfig;
use crate::toml_file::{method_of, parse_table};

/// A kernel configuration of any method.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelFile {
    /// `method = "marginalized"` (or no `method`).
    Marginalized(MgkConfig),
    /// `method = "shortest_path"`.
    ShortestPath(SpConfig),
    /// `method = "graphlets"`.
    Graphlets(GraphletConfig),
}

/// A base kernel of a kernel file on one feature.
#[derive(Clone, Debug, PartialEq)]
pub struct FeatureTerm {
    /// "node NAME" or "edge NAME" (the keys of [`FeatureKinds`]).
    pub feature: String,
    /// The base kernel as the TOML names it ("kronecker_delta", ...).
    pub kernel: &'static str,
    /// Whether it may read string labels' codes: a Kronecker delta or a constant compares them as
    /// labels; a square exponential would take the arbitrary codes as quantities.
    pub labels_ok: bool,
}

/// A kernel ready to compute, shareable across threads (the Python package computes with the
/// interpreter's lock released).
pub type DynKernel = Box<dyn GraphKernel + Send + Sync>;

impl KernelFile {
    /// Parse a kernel TOML of any method, once: its `method` key picks the method, whose serde
    /// reader checks every key (refusing unknown ones, naming those that exist) and every value.
    pub fn from_toml(text: &str) -> Result<Self> {
        let table = parse_table(text)?;
        Ok(match method_of(&table)? {
            "shortest_path" => KernelFile::ShortestPath(SpConfig::from_table(table)?),
            "graphlets" => KernelFile::Graphlets(GraphletConfig::from_table(table)?),
            _ => KernelFile::Marginalized(MgkConfig::from_table(table)?),
        })
    }

    /// "marginalized", "shortest_path" or "graphlets".
    pub fn method(&self) -> &'static str {
        match self {
            KernelFile::Marginalized(_) => "marginalized",
            KernelFile::ShortestPath(_) => "shortest_path",
            KernelFile::Graphlets(_) => "graphlets",
        }
    }

    /// Run on `backend`. The marginalized kernel's precision is `precision`, or when `None` f32
    /// where a GPU will be used and f64 on the CPU (the other methods are exact: no precision).
    pub fn set_backend(&mut self, backend: Backend, precision: Option<Precision>) {
        match self {
            KernelFile::Marginalized(cfg) => cfg.set_backend(backend, precision),
            KernelFile::ShortestPath(cfg) => cfg.backend = backend,
            KernelFile::Graphlets(cfg) => cfg.backend = backend,
        }
    }

    /// The backend the file (or [`set_backend`](Self::set_backend)) asks for.
    pub fn backend(&self) -> Backend {
        match self {
            KernelFile::Marginalized(cfg) => cfg.backend,
            KernelFile::ShortestPath(cfg) => cfg.backend,
            KernelFile::Graphlets(cfg) => cfg.backend,
        }
    }

    /// The kernel, with `control`'s progress and cancellation hooks.
    pub fn build(self, control: RunControl) -> Result<DynKernel> {
        Ok(match self {
            KernelFile::Marginalized(cfg) => Box::new(MarginalizedGraphKernel::new(cfg)?.with_control(control)),
            KernelFile::ShortestPath(cfg) => Box::new(ShortestPathKernel::new(cfg)?.with_control(control)),
            KernelFile::Graphlets(cfg) => Box::new(GraphletKernel::new(cfg)?.with_control(control)),
        })
    }

    /// The base kernels of the file on named features, node terms first (graphlets: none).
    pub fn feature_terms(&self) -> Vec<FeatureTerm> {
        match self {
            KernelFile::Marginalized(c) => [terms("node", &c.node), terms("edge", &c.edge)].concat(),
            KernelFile::ShortestPath(c) => terms("node", &c.node),
            KernelFile::Graphlets(_) => Vec::new(),
        }
    }

    /// Checks the file against the features of its inputs (`inputs`: where each set of kinds was
    /// read — a file, a graph — and its kinds): a base kernel other than a Kronecker delta or a
    /// constant on a feature holding strings, and a marginalized kernel comparing no feature of
    /// graphs that have some (without `features = "none"`), are refused: both compute numbers
    /// without meaning and say nothing. The shortest-path kernel without node tables is GraKeL's
    /// unlabeled form, and graphlets are structure by definition: neither is refused.
    pub fn check_features<'a>(&self, inputs: impl IntoIterator<Item = (String, &'a FeatureKinds)>) -> Result<()> {
        let inputs: Vec<(String, &FeatureKinds)> = inputs.into_iter().collect();
        for t in self.feature_terms().iter().filter(|t| !t.labels_ok) {
            if let Some((source, _)) = inputs.iter().find(|(_, k)| k.0.get(&t.feature) == Some(&true)) {
                return Err(OctileError::MeaninglessKernel(format!(
                    "{} holds strings (labels, e.g. in {source}); {} would compare their arbitrary codes as numbers: use kronecker_delta for labels",
                    t.feature, t.kernel
                )));
            }
        }
        if let KernelFile::Marginalized(c) = self
            && c.node.is_empty()
            && c.edge.is_empty()
            && !c.structure_only
        {
            let present: std::collections::BTreeSet<&str> = inputs.iter().flat_map(|(_, k)| k.0.keys().map(String::as_str)).collect();
            if !present.is_empty() {
                return Err(OctileError::MeaninglessKernel(format!(
                    "the kernel compares no node or edge feature, but the graphs have {}; name the features to compare ([node.NAME] / [edge.NAME] tables), or write features = \"none\" in the kernel file to compare structure only",
                    present.into_iter().collect::<Vec<_>>().join(", ")
                )));
            }
        }
        Ok(())
    }

    /// The method's settings for a run summary (`"method"` and what decides its values).
    pub fn describe(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            KernelFile::Marginalized(cfg) => {
                json!({"method": "marginalized", "precision": format!("{:?}", cfg.precision).to_lowercase(), "q": cfg.q, "reorder": format!("{:?}", cfg.reorder).to_lowercase()})
            }
            KernelFile::ShortestPath(cfg) => json!({"method": "shortest_path", "path_length": format!("{:?}", cfg.path_length)}),
            KernelFile::Graphlets(cfg) => {
                let (kernel, gamma) = match cfg.kernel {
                    VectorKernel::Linear => ("linear", None),
                    VectorKernel::Rbf { gamma } => ("rbf", Some(gamma)),
                };
                let histogram = cfg.features == FeatureForm::Histogram;
                json!({"method": "graphlets", "features": format!("{:?}", cfg.features).to_lowercase(), "counts": format!("{:?}", cfg.counts).to_lowercase(), "orbits": cfg.orbits, "scale": format!("{:?}", cfg.scale).to_lowercase(), "kernel": kernel, "gamma": gamma, "bins": histogram.then_some(cfg.bins)})
            }
        }
    }
}

/// `side`'s terms as [`FeatureTerm`]s.
fn terms(side: &str, t: &[FeatureKernel]) -> Vec<FeatureTerm> {
    t.iter()
        .map(|f| {
            let (kernel, labels_ok) = match f.kernel {
                BaseKernelConfig::KroneckerDelta { .. } => ("kronecker_delta", true),
                BaseKernelConfig::Constant { .. } => ("constant", true),
                BaseKernelConfig::SquareExponential { .. } => ("square_exponential", false),
            };
            FeatureTerm { feature: format!("{side} {}", f.feature), kernel, labels_ok }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_is_parsed_by_its_own_reader_and_described() {
        for (text, method) in [
            ("q = 0.1\n[node.label]\nkernel = \"kronecker_delta\"\nh = 0.5\n", "marginalized"),
            ("method = \"shortest_path\"\n", "shortest_path"),
            ("method = \"graphlets\"\nkernel = \"rbf\"\ngamma = 0.5\n", "graphlets"),
        ] {
            let mut f = KernelFile::from_toml(text).unwrap();
            assert_eq!(f.method(), method);
            assert_eq!(f.describe()["method"], method);
            f.set_backend(Backend::Cpu, None);
            assert_eq!(f.backend(), Backend::Cpu);
            let k = f.build(RunControl::default()).unwrap();
            assert_eq!(k.backend_name(), "cpu");
        }
        // the CPU's default precision is f64; an explicit one is kept
        let mut f = KernelFile::from_toml("q = 0.1").unwrap();
        f.set_backend(Backend::Cpu, None);
        assert!(matches!(&f, KernelFile::Marginalized(c) if c.precision == Precision::F64));
        f.set_backend(Backend::Cpu, Some(Precision::F32));
        assert!(matches!(&f, KernelFile::Marginalized(c) if c.precision == Precision::F32));
        // the method readers' errors come through
        let e = KernelFile::from_toml("method = \"walks\"").unwrap_err().to_string();
        assert!(e.contains("method must be"), "{e}");
        let e = KernelFile::from_toml("method = \"graphlets\"\nbins = 4\n").unwrap_err().to_string();
        assert!(e.contains("bins"), "{e}");
    }

    #[test]
    fn serde_errors_name_the_key_and_what_exists() {
        let err = |t: &str| KernelFile::from_toml(t).unwrap_err().to_string();
        for (text, want) in [
            ("qq = 0.1\n", "unknown key 'qq'; known keys: method, q, p"),
            ("q = \"x\"\n", "q: invalid type: string \"x\""),
            ("[node.label]\nkernel = \"kronecker_delta\"\nhh = 0.5\n", "[node.label]: unknown key 'hh'; known keys: h, weight"),
            ("[node.label]\nkernel = \"cosine\"\n", "[node.label]: unknown kernel 'cosine'; known: constant, kronecker_delta, square_exponential"),
            ("[node.label]\nkernel = \"kronecker_delta\"\n", "[node.label]: missing h"),
            ("[node.label]\nh = 0.5\n", "[node.label]: missing kernel"),
            ("[edge.length]\nkernel = \"square_exponential\"\nlength_scale = \"long\"\n", "[edge.length]: invalid type: string \"long\", expected f64"),
            ("max_iterations = 0\n", "max_iterations must be a positive integer"),
            ("dense_walk = \"zigzag\"\n", "dense_walk must be \"shared\" or \"blocked\""),
            ("[gpu]\nscratch = 1\n", "unknown key 'scratch'"),
            ("method = \"shortest_path\"\nq = 0.1\n", "unknown key 'q'; known keys: method, node, node_combine, path_length"),
            ("method = \"shortest_path\"\n[path_length]\nkernel = \"kronecker_delta\"\n", "[path_length]: missing h"),
            ("method = \"graphlets\"\ngama = 1\n", "unknown key 'gama'"),
        ] {
            let e = err(text);
            assert!(e.contains(want), "{text:?}: got {e:?}, want {want:?}");
        }
    }

    #[test]
    fn every_example_kernel_file_reads() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let text = std::fs::read_to_string(&path).unwrap();
                KernelFile::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                n += 1;
            }
        }
        assert!(n >= 3, "only {n} example kernel files in {}", dir.display());
    }
}

//! Kernel configuration: base kernels per named feature, q, p, solver tolerances, backend.
//!
//! The TOML form (`kernel.toml`):
//! ```toml
//! q = 0.05                 # stopping probability, in (0, 1)
//! p = 1.0                  # starting probability (uniform), > 0
//! rtol = 1e-10             # optional: stop when ‖r‖ ≤ rtol·‖b‖ (default depends on precision)
//! max_iterations = 10000   # optional
//! solver = "auto"          # optional: GPU f32 solver: "auto" (default: resident solver for pairs
//!                          #   that fit in shared memory, tile solver for the rest) or "tiles"
//! node_combine = "product" # optional: "product" (tensor product, default) or "additive"
//! edge_combine = "product"
//! reorder = "pbr"         # optional: node order for packing: "pbr" (default), "metis", "rcm", "none"
//! primitive = "adaptive"   # optional: tile-pair primitive: "adaptive" (default: tuned profile),
//!                          #   "dense-dense", "dense-sparse", "sparse-dense", "sparse-sparse"
//! profile = "my.json"      # optional: tuning profile file written by `octile tune`
//! tile_storage = "compact" # optional: "compact" (default) or "dense" (ablation only)
//! skip_empty_tiles = true  # optional: false stores all ⌈n/8⌉² tiles (ablation only)
//! dense_walk = "shared"    # optional: how D and R walk B: "shared" (shared tiling, default) or
//!                          #   "blocked" (tiling-blocking: B's row in registers; see README)
//! blocks_per_pair = "auto" # optional: GPU blocks per pair: "auto" (default), 1, or N ≥ 2 (teams)
//! features = "none"        # optional, only without [node.*] / [edge.*] tables: compare structure
//!                          #   only; without it such a file on graphs with features is refused
//! [node.label]             # one table per node feature
//! kernel = "kronecker_delta"
//! h = 0.5
//! [edge.length]            # one table per edge feature
//! kernel = "square_exponential"
//! length_scale = 1.0
//! ```
//! `kernel = "constant"` takes `c`; every table may take `weight` (additive combinations).
use crate::backend::{Backend, Precision};
use crate::error::{OctileError, Result};
use crate::reorder::Reordering;
use octile_types::GatheredKernel;
use octile_types::kernel_spec::{BaseKernel, Combine, KernelSpec, MAX_TERMS};
use octile_types::mgk::primitives::Primitive;
use std::path::PathBuf;

/// Which tile-pair primitive the XMV uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PrimitiveChoice {
    /// Per tile pair, from the tuning profile of the device and precision (see `profile`).
    #[default]
    Adaptive,
    /// Always this one.
    Fixed(Primitive),
}

impl PrimitiveChoice {
    /// Parse "adaptive", "dense-dense", "dense-sparse", "sparse-dense", "sparse-sparse".
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "adaptive" => PrimitiveChoice::Adaptive,
            "dense-dense" => PrimitiveChoice::Fixed(Primitive::DenseDense),
            "dense-sparse" => PrimitiveChoice::Fixed(Primitive::DenseSparse),
            "sparse-dense" => PrimitiveChoice::Fixed(Primitive::SparseDense),
            "sparse-sparse" => PrimitiveChoice::Fixed(Primitive::SparseSparse),
            _ => return None,
        })
    }
    /// The name `parse` accepts.
    pub fn name(self) -> &'static str {
        match self {
            PrimitiveChoice::Adaptive => "adaptive",
            PrimitiveChoice::Fixed(p) => primitive_name(p),
        }
    }
}

/// How the primitives that walk tile B dense (`D` dense×dense, `R` sparse×dense) read B: the
/// paper's *shared tiling* (every operand from shared memory; the default, measured faster inside
/// this solver) or its *tiling-blocking* (B's row and κe's features staged once more, in registers:
/// `octile_types::mgk::blocked`). Sparse walks of B are the same in both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DenseWalk {
    /// Shared tiling (default).
    #[default]
    SharedTiling,
    /// Tiling-blocking (register-blocked rows of B). Used when κe is a product of base kernels
    /// reading at most two distinct edge features; otherwise the run falls back to shared tiling
    /// and its summary says so.
    TilingBlocking,
}

impl DenseWalk {
    /// Parse "shared" or "blocked".
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "shared" => Some(DenseWalk::SharedTiling),
            "blocked" => Some(DenseWalk::TilingBlocking),
            _ => None,
        }
    }
    /// The name `parse` accepts.
    pub fn name(self) -> &'static str {
        match self {
            DenseWalk::SharedTiling => "shared",
            DenseWalk::TilingBlocking => "blocked",
        }
    }
}

/// "dense-dense", "dense-sparse", "sparse-dense" or "sparse-sparse".
pub fn primitive_name(p: Primitive) -> &'static str {
    match p {
        Primitive::DenseDense => "dense-dense",
        Primitive::DenseSparse => "dense-sparse",
        Primitive::SparseDense => "sparse-dense",
        Primitive::SparseSparse => "sparse-sparse",
    }
}

/// How octiles are stored and multiplied. The defaults are the fast choices; the others exist to
/// measure what each technique gains (the ablation benchmark) and to test every path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileOptions {
    /// Tile-pair primitive.
    pub primitive: PrimitiveChoice,
    /// Tuning profile file (`octile tune` output); `None`: `$OCTILE_PROFILE`, then the user
    /// profile store, then the profiles shipped with octile.
    pub profile: Option<PathBuf>,
    /// Compact nonzeros (true, default) or all 64 entries per octile.
    pub compact: bool,
    /// Store only non-empty octiles (true, default) or every tile of the ⌈n/8⌉² grid.
    pub skip_empty: bool,
    /// GPU blocks that solve one pair together: 0 (default) = automatic (one block per pair for
    /// small graphs, teams of blocks for large ones, see `mgk::gpu::batch::team_blocks_for`), 1 = always
    /// one block per pair, N ≥ 2 = every pair by a team of N blocks.
    pub blocks_per_pair: u32,
    /// How `D` and `R` walk tile B (shared tiling by default).
    pub dense_walk: DenseWalk,
}

/// Largest `blocks_per_pair` accepted (TOML and `--blocks-per-pair`).
pub const MAX_BLOCKS_PER_PAIR: u32 = 65536;

impl Default for TileOptions {
    fn default() -> Self {
        TileOptions {
            primitive: PrimitiveChoice::Adaptive,
            profile: None,
            compact: true,
            skip_empty: true,
            blocks_per_pair: 0,
            dense_walk: DenseWalk::SharedTiling,
        }
    }
}

/// A base kernel with its hyperparameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BaseKernelConfig {
    /// κ = c.
    Constant {
        /// The constant.
        c: f64,
    },
    /// κ = 1 if equal, else h.
    KroneckerDelta {
        /// Value for unequal labels.
        h: f64,
    },
    /// κ = exp(−(a−b)²/(2ℓ²)).
    SquareExponential {
        /// ℓ.
        length_scale: f64,
    },
}

/// A base kernel on one named feature.
#[derive(Clone, Debug, PartialEq)]
pub struct FeatureKernel {
    /// Feature name.
    pub feature: String,
    /// The kernel.
    pub kernel: BaseKernelConfig,
    /// Weight in an additive combination.
    pub weight: f64,
}

/// Solver parameters (the Params of the Params / Info / Error triple).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverParams {
    /// Stop when ‖r‖ ≤ rtol·‖b‖ (the true residual, with f64 sums, for both precisions).
    /// `None`: 1e-12 for f64, 1e-6 for f32 (GraphDot's accuracy: Gram entries within ~1e-7 of
    /// the f64 solution).
    pub rtol: Option<f64>,
    /// Iteration limit per pair.
    pub max_iterations: u32,
    /// GPU, f32: solve each pair whose product system fits in shared memory with the resident
    /// solver (`octile_types::mgk::resident`), the rest — and any pair it leaves above rtol — with
    /// the tile solver (`true`, TOML `solver = "auto"`); or every pair with the tile solver
    /// (`solver = "tiles"`).
    pub resident: bool,
}

impl Default for SolverParams {
    fn default() -> Self {
        SolverParams { rtol: None, max_iterations: 20_000, resident: true }
    }
}

impl SolverParams {
    /// The tolerance in effect for a precision.
    pub fn rtol_for(&self, precision: Precision) -> f64 {
        self.rtol.unwrap_or(match precision {
            Precision::F64 => 1e-12,
            Precision::F32 => 1e-6,
        })
    }
}

/// Everything that defines a marginalized graph kernel computation.
#[derive(Clone, Debug, PartialEq)]
pub struct MgkConfig {
    /// Stopping probability q ∈ (0, 1).
    pub q: f64,
    /// Starting probability p > 0 (uniform).
    pub p: f64,
    /// κv terms.
    pub node: Vec<FeatureKernel>,
    /// How κv terms combine.
    pub node_combine: Combine,
    /// κe terms.
    pub edge: Vec<FeatureKernel>,
    /// How κe terms combine.
    pub edge_combine: Combine,
    /// Tolerances.
    pub solver: SolverParams,
    /// Hardware.
    pub backend: Backend,
    /// Precision.
    pub precision: Precision,
    /// Node order used for packing (fewer, denser octiles); kernel values do not depend on it.
    pub reorder: Reordering,
    /// Octile storage and tile-pair primitives; kernel values do not depend on them.
    pub tiles: TileOptions,
    /// Tuning of the GPU solvers (launch shapes, batch budget); kernel values do not depend on them.
    pub gpu: crate::mgk::gpu::options::GpuTuning,
    /// The file said `features = "none"`: no node or edge term on purpose, the graphs' features
    /// ignored (without it, a kernel of no term on graphs with features is refused, see
    /// [`crate::kernels::KernelFile::check_features`]).
    pub structure_only: bool,
}

impl Default for MgkConfig {
    fn default() -> Self {
        MgkConfig {
            q: 0.05,
            p: 1.0,
            node: Vec::new(),
            node_combine: Combine::Product,
            edge: Vec::new(),
            edge_combine: Combine::Product,
            solver: SolverParams::default(),
            backend: Backend::Auto,
            precision: Precision::F64,
            reorder: Reordering::default(),
            tiles: TileOptions::default(),
            gpu: Default::default(),
            structure_only: false,
        }
    }
}

/// The paper's synthetic-set kernel: κv = KroneckerDelta(0.5) on `label`, κe =
/// SquareExponential(1.0) on `length`, with stopping probability `q`.
pub fn synthetic_kernel(q: f64) -> MgkConfig {
    MgkConfig {
        q,
        node: vec![FeatureKernel { feature: "label".into(), kernel: BaseKernelConfig::KroneckerDelta { h: 0.5 }, weight: 1.0 }],
        edge: vec![FeatureKernel { feature: "length".into(), kernel: BaseKernelConfig::SquareExponential { length_scale: 1.0 }, weight: 1.0 }],
        ..MgkConfig::default()
    }
}

/// κv and κe resolved to feature positions: what the packer and the solvers use.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedKernel {
    /// κv over packed node feature rows.
    pub node_spec: KernelSpec,
    /// κe over packed edge feature rows.
    pub edge_spec: KernelSpec,
    /// Node features packed, in row order.
    pub node_features: Vec<String>,
    /// Edge features packed, in row order.
    pub edge_features: Vec<String>,
    /// Node features read by a Kronecker delta (must be exact integers).
    pub categorical_node: Vec<bool>,
    /// Edge features read by a Kronecker delta.
    pub categorical_edge: Vec<bool>,
}

/// The smallest stopping probability q a kernel may have. The product system M = D×V×⁻¹ − A×⊙E×
/// has a condition of about 1/q, and the f64 solution's rounding error grows as ε/q: measured on
/// `examples/tiny.jsonl` (a graph against itself, K ≈ 2/q + 1) 8e-8 relative at q = 1e-10, 10 % at
/// 1e-15 and 55 % at 1e-16 (exit 0: values that looked like results), and from 1e-17 on "did not
/// converge after 0 iterations". At 1e-9 the error stays near 1e-8, inside the 1e-6 within which
/// octile's values agree with GraphDot's and the dense reference.
pub const MIN_Q: f64 = 1e-9;

impl MgkConfig {
    /// Run on `backend` in `precision`; `None`: f32 where a GPU will be used (`Cuda`, or `Auto`
    /// with a usable GPU), f64 on the CPU.
    pub fn set_backend(&mut self, backend: Backend, precision: Option<Precision>) {
        self.backend = backend;
        let gpu = backend != Backend::Cpu && crate::gpu::device().is_ok();
        self.precision = precision.unwrap_or(if gpu { Precision::F32 } else { Precision::F64 });
    }

    /// Check every hyperparameter; an error names the first bad one.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(OctileError::InvalidConfig(m));
        if !(self.q >= MIN_Q && self.q < 1.0) {
            // why the bound is where it is, for a q below it; a q of 1 or more, or not a number, is
            // no stopping probability at all
            let why = if self.q < MIN_Q {
                format!(": below {MIN_Q:e} the product system's condition (about 1/q) puts f64 rounding above the 1e-6 the values are held to")
            } else {
                " (the stopping probability of each step of the walks)".to_string()
            };
            return bad(format!(
                "q = {} must be in [{MIN_Q:e}, 1){why}",
                if self.q != 0.0 && self.q.abs() < 1e-3 { format!("{:e}", self.q) } else { self.q.to_string() }
            ));
        }
        if !(self.p.is_finite() && self.p > 0.0) {
            return bad(format!("p = {} must be finite and > 0", self.p));
        }
        if let Some(r) = self.solver.rtol
            && !(r.is_finite() && r > 0.0 && r < 1.0)
        {
            return bad(format!("rtol = {r} must be in (0, 1)"));
        }
        if self.solver.max_iterations == 0 {
            return bad("max_iterations must be ≥ 1".into());
        }
        for (kind, terms, strict, combine) in [("node", &self.node, true, self.node_combine), ("edge", &self.edge, false, self.edge_combine)] {
            if terms.len() > MAX_TERMS {
                return bad(format!("{kind} kernel has {} terms; at most {MAX_TERMS}", terms.len()));
            }
            if terms.is_empty() && combine == Combine::Additive {
                // an empty sum is κ ≡ 0 (every K 0 or a division by 0), where the empty product,
                // the default, is κ ≡ 1
                return bad(format!(
                    "{kind}_combine = \"additive\" with no {kind} kernel: a sum of no terms is 0; give a [{kind}.FEATURE] kernel, or leave {kind}_combine out (the product of no terms is 1)"
                ));
            }
            for t in terms {
                let b = to_base(t, 0);
                if !b.is_valid(strict) {
                    let range = match t.kernel {
                        BaseKernelConfig::Constant { .. } | BaseKernelConfig::KroneckerDelta { .. } if strict => "(0, 1]",
                        BaseKernelConfig::Constant { .. } | BaseKernelConfig::KroneckerDelta { .. } => "[0, 1]",
                        BaseKernelConfig::SquareExponential { .. } => "(length_scale > 0 with 1/(2ℓ²) finite: ℓ ≥ 1e-154)",
                    };
                    return bad(format!("{kind} kernel on '{}': {:?} out of range {range}", t.feature, t.kernel));
                }
                if !(t.weight.is_finite() && t.weight > 0.0) {
                    return bad(format!("{kind} kernel on '{}': weight {} must be > 0", t.feature, t.weight));
                }
            }
        }
        Ok(())
    }

    /// Map feature names to packed positions.
    pub fn resolve(&self) -> Result<ResolvedKernel> {
        self.validate()?;
        let (node_spec, node_features, categorical_node) = resolve_terms(&self.node, self.node_combine);
        let (edge_spec, edge_features, categorical_edge) = resolve_terms(&self.edge, self.edge_combine);
        Ok(ResolvedKernel { node_spec, edge_spec, node_features, edge_features, categorical_node, categorical_edge })
    }

    /// Parse the TOML form (see the module docs).
    pub fn from_toml(text: &str) -> Result<Self> {
        Self::from_table(crate::toml_file::parse_table(text)?)
    }

    /// Read a parsed kernel TOML (serde: every key checked, an unknown one refused naming those
    /// that exist), then validate every value.
    pub fn from_table(table: toml::Table) -> Result<Self> {
        let bad = |m: String| OctileError::InvalidConfig(m);
        let file: MgkFile = crate::toml_file::read_table(table, "")?;
        let mut cfg = MgkConfig { gpu: file.gpu, ..MgkConfig::default() };
        if let Some(m) = &file.method
            && m != "marginalized"
        {
            return Err(bad(format!("method \"{m}\" is not the marginalized kernel's (its TOML needs the shortest-path kernel's reader)")));
        }
        cfg.q = file.q.unwrap_or(cfg.q);
        cfg.p = file.p.unwrap_or(cfg.p);
        cfg.solver.rtol = file.rtol;
        if let Some(i) = file.max_iterations {
            cfg.solver.max_iterations = u32::try_from(i).ok().filter(|&i| i > 0).ok_or_else(|| bad("max_iterations must be a positive integer".into()))?;
        }
        if let Some(v) = file.solver {
            cfg.solver.resident = match v.as_str() {
                "auto" => true,
                "tiles" => false,
                _ => return Err(bad(format!("solver must be \"auto\" or \"tiles\", got \"{v}\""))),
            }
        }
        if let Some(v) = file.reorder {
            cfg.reorder = match v.as_str() {
                "none" | "natural" => Reordering::Natural,
                "rcm" => Reordering::Rcm,
                "pbr" => Reordering::Pbr,
                "metis" => Reordering::Metis,
                _ => return Err(bad(format!("reorder must be \"pbr\", \"metis\", \"rcm\" or \"none\", got \"{v}\""))),
            }
        }
        if let Some(v) = file.primitive {
            cfg.tiles.primitive = PrimitiveChoice::parse(&v).ok_or_else(|| {
                bad(format!("primitive must be \"adaptive\", \"dense-dense\", \"dense-sparse\", \"sparse-dense\" or \"sparse-sparse\", got \"{v}\""))
            })?
        }
        cfg.tiles.profile = file.profile;
        if let Some(v) = file.tile_storage {
            cfg.tiles.compact = match v.as_str() {
                "compact" => true,
                "dense" => false,
                _ => return Err(bad(format!("tile_storage must be \"compact\" or \"dense\", got \"{v}\""))),
            }
        }
        if let Some(v) = file.blocks_per_pair {
            cfg.tiles.blocks_per_pair = match (v.as_str(), v.as_integer()) {
                (Some("auto"), _) => 0,
                (_, Some(n)) if (1..=MAX_BLOCKS_PER_PAIR as i64).contains(&n) => n as u32,
                _ => return Err(bad(format!("blocks_per_pair must be \"auto\" or an integer in 1..={MAX_BLOCKS_PER_PAIR}, got {v}"))),
            }
        }
        cfg.tiles.skip_empty = file.skip_empty_tiles.unwrap_or(true);
        if let Some(v) = file.dense_walk {
            cfg.tiles.dense_walk = DenseWalk::parse(&v).ok_or_else(|| bad(format!("dense_walk must be \"shared\" or \"blocked\", got \"{v}\"")))?
        }
        if let Some(v) = file.node_combine {
            cfg.node_combine = combine_named(&v)?;
        }
        if let Some(v) = file.edge_combine {
            cfg.edge_combine = combine_named(&v)?;
        }
        cfg.node = terms_of("node", file.node)?;
        cfg.edge = terms_of("edge", file.edge)?;
        cfg.structure_only = structure_only(file.features.as_deref(), &cfg)?;
        cfg.validate()?;
        Ok(cfg)
    }
}

/// The marginalized kernel's TOML as serde reads it (names and types of the keys); the values are
/// checked by [`MgkConfig::from_table`].
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct MgkFile {
    method: Option<String>,
    q: Option<f64>,
    p: Option<f64>,
    rtol: Option<f64>,
    max_iterations: Option<i64>,
    solver: Option<String>,
    node_combine: Option<String>,
    edge_combine: Option<String>,
    #[serde(default)]
    node: toml::Table,
    #[serde(default)]
    edge: toml::Table,
    reorder: Option<String>,
    primitive: Option<String>,
    profile: Option<PathBuf>,
    tile_storage: Option<String>,
    skip_empty_tiles: Option<bool>,
    blocks_per_pair: Option<toml::Value>,
    dense_walk: Option<String>,
    #[serde(default)]
    gpu: crate::mgk::gpu::options::GpuTuning,
    features: Option<String>,
}

/// `features = "none"`: the opt-in to a kernel of no node or edge term (random walks compared by
/// structure alone) on graphs that have features; with terms it would contradict them.
fn structure_only(features: Option<&str>, cfg: &MgkConfig) -> Result<bool> {
    match features {
        None => Ok(false),
        Some("none") if cfg.node.is_empty() && cfg.edge.is_empty() => Ok(true),
        Some("none") => {
            Err(OctileError::InvalidConfig("features = \"none\" (compare no feature) but the file has [node.*] or [edge.*] tables; keep one of the two".into()))
        }
        Some(v) => Err(OctileError::InvalidConfig(format!("features must be \"none\" (compare structure only) when given, got \"{v}\""))),
    }
}

/// One `[node.FEATURE]` / `[edge.FEATURE]` table, tagged by its `kernel`.
#[derive(serde::Deserialize)]
#[serde(tag = "kernel", rename_all = "snake_case", deny_unknown_fields)]
enum TermFile {
    Constant {
        c: f64,
        #[serde(default = "unit_weight")]
        weight: f64,
    },
    KroneckerDelta {
        h: f64,
        #[serde(default = "unit_weight")]
        weight: f64,
    },
    SquareExponential {
        length_scale: f64,
        #[serde(default = "unit_weight")]
        weight: f64,
    },
}

fn unit_weight() -> f64 {
    1.0
}

/// The per-feature tables of `[node]` or `[edge]`, in the file's order of features.
pub(crate) fn terms_of(kind: &str, tables: toml::Table) -> Result<Vec<FeatureKernel>> {
    let mut terms = Vec::with_capacity(tables.len());
    for (feature, spec) in tables {
        if !spec.is_table() {
            return Err(OctileError::InvalidConfig(format!("[{kind}.{feature}] must be a table")));
        }
        let term: TermFile = crate::toml_file::read_value(spec, &format!("[{kind}.{feature}]: "))?;
        let (kernel, weight) = match term {
            TermFile::Constant { c, weight } => (BaseKernelConfig::Constant { c }, weight),
            TermFile::KroneckerDelta { h, weight } => (BaseKernelConfig::KroneckerDelta { h }, weight),
            TermFile::SquareExponential { length_scale, weight } => (BaseKernelConfig::SquareExponential { length_scale }, weight),
        };
        terms.push(FeatureKernel { feature, kernel, weight });
    }
    Ok(terms)
}

/// "product" or "additive".
pub(crate) fn combine_named(v: &str) -> Result<Combine> {
    match v {
        "product" => Ok(Combine::Product),
        "additive" => Ok(Combine::Additive),
        _ => Err(OctileError::InvalidConfig(format!("combine must be \"product\" or \"additive\", got \"{v}\""))),
    }
}

fn to_base(t: &FeatureKernel, feature: u32) -> BaseKernel {
    let mut b = match t.kernel {
        BaseKernelConfig::Constant { c } => BaseKernel { feature, ..BaseKernel::constant(c) },
        BaseKernelConfig::KroneckerDelta { h } => BaseKernel::kronecker_delta(feature, h),
        BaseKernelConfig::SquareExponential { length_scale } => BaseKernel::square_exponential(feature, length_scale),
    };
    b.weight = t.weight;
    b
}

pub(crate) fn resolve_terms(terms: &[FeatureKernel], combine: Combine) -> (KernelSpec, Vec<String>, Vec<bool>) {
    let mut spec = KernelSpec::unit();
    spec.combine = combine as u32;
    spec.n_terms = terms.len() as u32;
    let mut names: Vec<String> = Vec::new();
    let mut categorical: Vec<bool> = Vec::new();
    let total_weight: f64 = terms.iter().map(|t| t.weight).sum();
    for (k, t) in terms.iter().enumerate() {
        let pos = match names.iter().position(|n| *n == t.feature) {
            Some(p) => p,
            None => {
                names.push(t.feature.clone());
                categorical.push(false);
                names.len() - 1
            }
        };
        if matches!(t.kernel, BaseKernelConfig::KroneckerDelta { .. }) {
            categorical[pos] = true;
        }
        let mut b = to_base(t, pos as u32);
        b.weight = if combine == Combine::Additive { t.weight / total_weight } else { 1.0 };
        spec.terms[k] = b;
    }
    (spec, names, categorical)
}

/// κe gathered for the dense walks `walk` selects: [`GatheredKernel::of`] for tiling-blocking
/// (usable when κe allows it), marked unusable (shared tiling) otherwise.
pub fn gathered(edge: &KernelSpec, walk: DenseWalk) -> GatheredKernel {
    let mut g = GatheredKernel::of(edge);
    if walk != DenseWalk::TilingBlocking {
        g.usable = 0;
    }
    g
}

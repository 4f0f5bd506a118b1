//! # octile — graph kernels on GPUs and all CPU cores
//!
//! Three methods: the shortest-path kernel ([`sp`]), the fast graphlet transform and a graphlet
//! kernel on it ([`graphlets`]), and the marginalized graph kernel (MGK): K(G, G') = Σ p_i p'_i' x_ii' where
//! (D×V×⁻¹ − A×⊙E×) x = D×·1 is solved by Jacobi-preconditioned conjugate gradient without forming
//! the product matrix: its matrix-vector product is computed on the fly from 8×8 tiles ("octiles")
//! of each graph. This is GraphDot's definition; the paper's equation (15), with stopping vector
//! q× = q⊗q', equals q²·K.
//!
//! ```no_run
//! use octile::{GraphKernel, MarginalizedGraphKernel, generators::nws_set, mgk::config::synthetic_kernel};
//! let graphs = nws_set(16, 42);
//! let kernel = MarginalizedGraphKernel::new(synthetic_kernel(0.05)).unwrap();
//! let k = kernel.gram_normalized(&graphs).unwrap();
//! assert!((k.get(3, 3) - 1.0).abs() < 1e-12);
//! ```
//!
//! Layout (`docs/ARCHITECTURE.md` has the data flow and how to add a method):
//! - shared by every method: [`graph`] and the readers in [`io`], [`generators`], node orders in
//!   [`reorder`], [`backend`] choices, memory checks in [`memory`], the GPU runtime [`gpu`], the Gram driver [`gram`]
//!   ([`GraphKernel`], [`Gram`], [`RunControl`]), and the base modules [`error`], [`matrix`] (the
//!   [`Gram`] type), [`report`] (typed run reports) and [`phases`] (per-thread phase marks),
//!   which import nothing else of the crate;
//! - one module tree per method: [`mgk`], [`sp`] (shortest paths), [`graphlets`] (the fast graphlet
//!   transform); [`kernels`] builds any of them from a kernel TOML (the CLI and the Python package);
//! - [`selftest`]: the GPU self-test of the device helpers (tests only).
pub mod backend;
pub mod checksum;
pub mod error;
pub mod generators;
pub mod gpu;
pub mod gram;
pub mod graph;
pub mod graphlets;
pub mod io;
pub mod kernels;
pub mod matrix;
pub mod memory;
pub mod mgk;
pub mod parallel;
pub mod phases;
pub mod reorder;
pub mod report;
pub mod selftest;
pub mod sp;
pub mod stderr_log;
pub mod toml_file;

pub use backend::{Backend, Precision};
pub use error::{OctileError, Result};
pub use gram::{Evaluation, Gradient, Gram, GraphKernel, Known, PairInfo, RunControl};
pub use graph::Graph;
pub use graphlets::kernel::GraphletKernel;
pub use graphlets::kernel_config::GraphletConfig;
pub use mgk::config::{MgkConfig, SolverParams};
pub use mgk::{MarginalizedGraphKernel, NodalMatrix};
pub use reorder::Reordering;
pub use sp::ShortestPathKernel;
pub use sp::config::SpConfig;

//! # octile — marginalized graph kernels on GPUs and all CPU cores
//!
//! K(G, G') = Σ p_i p'_i' x_ii' where (D×V×⁻¹ − A×⊙E×) x = D×·1 is solved by Jacobi-preconditioned
//! conjugate gradient without forming the product matrix: its matrix-vector product is computed on
//! the fly from 8×8 tiles ("octiles") of each graph. This is GraphDot's definition; the paper's
//! equation (15), with stopping vector q× = q⊗q', equals q²·K.
//!
//! ```no_run
//! use octile::{MarginalizedGraphKernel, config::synthetic_kernel, generators::nws_set};
//! let graphs = nws_set(16, 42);
//! let kernel = MarginalizedGraphKernel::new(synthetic_kernel(0.05)).unwrap();
//! let k = kernel.gram_normalized(&graphs).unwrap();
//! assert!((k.get(3, 3) - 1.0).abs() < 1e-12);
//! ```
pub mod config;
pub mod cpu;
pub mod error;
pub mod generators;
pub mod gpu;
pub mod graph;
pub mod io;
pub mod pack;
pub mod profile;
pub mod reference;
pub mod reorder;
pub mod solver;
pub mod tiles;
pub mod tune;

pub use config::{Backend, KernelConfig, Precision, SolverParams};
pub use error::{OctileError, Result};
pub use graph::Graph;
pub use reorder::Reordering;
pub use solver::{Gram, MarginalizedGraphKernel, NodalMatrix, PairInfo, RunControl};

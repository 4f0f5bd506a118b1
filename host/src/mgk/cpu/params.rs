//! The CPU solver's parameters (their own module: the tile path in `cpu` and the product form in
//! `cpu::product` both read them, and neither imports the other's internals through them).
use octile_types::{GatheredKernel, KernelSpec, PrimitiveMap};

/// Kernel and tolerances for `solve_pair`.
pub struct CpuParams<'a> {
    /// κv.
    pub node: &'a KernelSpec,
    /// κe.
    pub edge: &'a KernelSpec,
    /// Relative residual tolerance.
    pub rtol: f64,
    /// Iteration limit.
    pub max_iterations: u32,
    /// Tile-pair primitive by nonzero counts.
    pub primitives: &'a PrimitiveMap,
    /// κe gathered for the register-blocked dense walks (`GatheredKernel::of(edge)`; `usable = 0`
    /// turns them off).
    pub dense: GatheredKernel,
    /// Split each XMV over the cores (output tile rows in parallel): for runs with fewer pairs
    /// than cores, where parallelism over pairs alone would leave cores idle (large graphs).
    pub parallel_xmv: bool,
    /// f64 solves of pairs whose product matrix fits `product::PRODUCT_MAX_BYTES` build it once
    /// and stream it (`product`, the default: `solver = "auto"`), instead of the tile path's
    /// on-the-fly XMV (`solver = "tiles"`).
    pub product_form: bool,
}

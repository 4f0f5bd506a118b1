//! Which hardware a computation runs on and in which floating-point precision: choices every
//! method shares.

/// Which hardware to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// The GPU when one is usable, else the CPU.
    #[default]
    Auto,
    /// All CPU cores.
    Cpu,
    /// The GPU; an error when there is none.
    Cuda,
}

/// Floating-point precision of the solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// Mixed: f32 graph data and inner PCG (f64 reductions), refined to the f64 tolerance with
    /// residuals computed in f64 (GPU default).
    F32,
    /// f64 throughout.
    #[default]
    F64,
}

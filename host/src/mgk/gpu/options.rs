//! Tuning options of the MGK's GPU solvers: how work is cut into launches and batches. Kernel
//! values do not depend on them (beyond the last bits of f32 sums); the defaults are the measured
//! best, the others exist for ablations and tuning runs. They are options of the API, reachable
//! from the kernel configuration (`MgkConfig::gpu`); the CLI also sets them from the
//! environment variables each field names (see `bin/octile/common.rs`).
//!
//! In a kernel TOML (every key optional):
//! ```toml
//! [gpu]
//! scratch_bytes = 8589934592   # the tile solver's scratch budget per batch
//! [gpu.resident]
//! product = true               # the product form for Kronecker-delta κe with unit weights
//! split = true                 # block teams walk long rows of the second graph in pieces
//! rows_per_thread = 4          # product rows per thread a team aims for
//! product_warps_per_sm = 16    # warps per SM the product-form teams aim to keep busy
//! fill = 2112                  # fewest pairs of a launch shape before it joins the next (default 16 per SM)
//! fused_in_slice = true        # gradients: the fused solve's vectors in shared memory where they fit
//! ```
use serde::{Deserialize, Serialize};

/// The resident solver's knobs (`mgk::gpu::resident`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResidentOptions {
    /// Solve pairs with a Kronecker-delta κe and unit weights in product form (default `true`;
    /// the CLI's `OCTILE_RESIDENT_PRODUCT=0` turns it off).
    pub product: bool,
    /// Block teams walk the second graph's long rows in pieces (default `true`;
    /// `OCTILE_RESIDENT_SPLIT=0` turns it off).
    pub split: bool,
    /// Product rows per thread an on-the-fly team aims for (default 4; `OCTILE_RESIDENT_ROWS`).
    pub rows_per_thread: usize,
    /// Warps per SM a product-form team aims to keep busy, the latency-hiding target (default 16;
    /// `OCTILE_PRODUCT_WARPS_PER_SM`).
    pub product_warps_per_sm: usize,
    /// Fewest pairs a launch shape needs before it gets a launch of its own; a shape with fewer
    /// joins the next larger slice of the same team kind. `None` (default): 16 per SM
    /// (`OCTILE_RESIDENT_FILL`).
    pub fill: Option<usize>,
    /// Gradients: keep all of the fused primal and adjoint solve's vectors in the team's slice where
    /// they fit (default `true`); `false` keeps only p there and the others in global scratch
    /// (`OCTILE_FUSED_IN_SLICE=0`), smaller slices and more pairs per SM.
    pub fused_in_slice: bool,
    /// Pairs whose slice exceeds shared memory run the same solver with a team of blocks per pair
    /// and the vectors in global memory (default `true`); `false` leaves them to the tile solver
    /// (`OCTILE_RESIDENT_GRID=0`).
    pub grid: bool,
}

impl Default for ResidentOptions {
    fn default() -> Self {
        ResidentOptions { product: true, split: true, rows_per_thread: 4, product_warps_per_sm: 16, fill: None, fused_in_slice: true, grid: true }
    }
}

/// Tuning of the MGK's GPU solvers (`MgkConfig::gpu`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GpuTuning {
    /// The resident solver.
    pub resident: ResidentOptions,
    /// Scratch budget of the tile solver's batches and of the resident solver's grid launches, in bytes. `None` (default): 60% of the free
    /// GPU memory, at most 16 GiB (the CLI's `OCTILE_GPU_SCRATCH_BYTES`).
    pub scratch_bytes: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_optional_and_unknown_keys_are_refused() {
        let t: GpuTuning = toml::from_str("scratch_bytes = 1000000\n[resident]\nproduct = false\nfill = 64\n").unwrap();
        assert_eq!(t, GpuTuning { scratch_bytes: Some(1_000_000), resident: ResidentOptions { product: false, fill: Some(64), ..ResidentOptions::default() } });
        assert_eq!(toml::from_str::<GpuTuning>("").unwrap(), GpuTuning::default());
        let e = toml::from_str::<GpuTuning>("[resident]\nrows = 8\n").unwrap_err().to_string();
        assert!(e.contains("rows") && e.contains("rows_per_thread"), "{e}");
    }
}

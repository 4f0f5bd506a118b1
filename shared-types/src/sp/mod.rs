//! The shortest-path kernel's host/device boundary (`../shared/papers/shortest-path-kernel-gpu-slides.txt`).
//!
//! ```text
//! K_sp(G, G′) = Σ_{(u,v) of G} Σ_{(u′,v′) of G′} κv(u, u′) · κℓ(d_uv, d′_u′v′) · κv(v, v′)
//! ```
//! over ordered node pairs u ≠ v with a finite shortest-path length d. Each graph's paths are the
//! slides' SP_S / SP_E / SP_W arrays, one run per graph, and its node feature rows:
//!
//! ```text
//! SpGraph { path_offset, n_paths, node_offset, n_nodes }
//!   sp_s[path_offset .. + n_paths]   u32  source node (local index)
//!   sp_e[path_offset .. + n_paths]   u32  end node
//!   sp_w[path_offset .. + n_paths]   f64  length
//!   nodes[node_offset · stride ..]   f64  the node kernel's feature rows
//! ```
//! Why structure of arrays: the threads of a warp read consecutive paths of one graph, so each of
//! the three loads is one coalesced transaction.

use crate::kernel_spec::KernelSpec;
use crate::real::Real;

/// Where one graph's paths and nodes lie.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpGraph {
    /// First path in the path arrays.
    pub path_offset: u32,
    /// Ordered pairs u ≠ v with a finite distance.
    pub n_paths: u32,
    /// First node row.
    pub node_offset: u32,
    /// Nodes.
    pub n_nodes: u32,
}

/// The base kernel on path lengths, κℓ.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LengthKernelKind {
    /// 1 if d == d′, else h (`param` = h; GraKeL's case: h = 0).
    KroneckerDelta = 0,
    /// exp(−(d − d′)² / (2ℓ²)) (`param` = −1/(2ℓ²)).
    SquareExponential = 1,
    /// max(0, c − |d − d′|) (`param` = c), the Brownian bridge kernel of the SP-kernel papers.
    BrownianBridge = 2,
}

/// κℓ with its parameter.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LengthKernel {
    /// [`LengthKernelKind`] as `u32`.
    pub kind: u32,
    /// Padding.
    pub _pad: u32,
    /// h, −1/(2ℓ²) or c (see [`LengthKernelKind`]).
    pub param: f64,
}

impl LengthKernel {
    /// 1 if equal, else h.
    pub const fn kronecker_delta(h: f64) -> Self {
        LengthKernel { kind: LengthKernelKind::KroneckerDelta as u32, _pad: 0, param: h }
    }
    /// exp(−(d − d′)²/(2ℓ²)).
    pub fn square_exponential(length_scale: f64) -> Self {
        LengthKernel { kind: LengthKernelKind::SquareExponential as u32, _pad: 0, param: -0.5 / (length_scale * length_scale) }
    }
    /// max(0, c − |d − d′|).
    pub const fn brownian_bridge(c: f64) -> Self {
        LengthKernel { kind: LengthKernelKind::BrownianBridge as u32, _pad: 0, param: c }
    }
    /// κℓ(a, b).
    #[inline(always)]
    pub fn eval<T: Real>(&self, a: T, b: T) -> T {
        let d = a - b;
        if self.kind == LengthKernelKind::KroneckerDelta as u32 {
            if d == T::from_f64(0.0) { T::from_f64(1.0) } else { T::from_f64(self.param) }
        } else if self.kind == LengthKernelKind::SquareExponential as u32 {
            (T::from_f64(self.param) * d * d).exp()
        } else {
            let ad = if d < T::from_f64(0.0) { T::from_f64(0.0) - d } else { d };
            let v = T::from_f64(self.param) - ad;
            if v > T::from_f64(0.0) { v } else { T::from_f64(0.0) }
        }
    }
}

/// Parameters of one general-path launch (read through a pointer in global memory).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpParams {
    /// κv.
    pub node_kernel: KernelSpec,
    /// κℓ.
    pub length: LengthKernel,
    /// Jobs (graph pairs) of the launch.
    pub n_jobs: u32,
    /// f64 values per node row.
    pub node_stride: u32,
}

/// Threads of a general-path block (one block per graph pair at a time; the block reductions of
/// the solver block, `names::BLOCK_WARPS` warps).
pub const SP_BLOCK_THREADS: u32 = crate::names::BLOCK_WARPS * 32;
/// κv entries a general-path block tables in dynamic shared memory (n·n′ up to this: 32 KiB of f64).
pub const SP_TABLE_ENTRIES: usize = 4096;

/// Entry: the all-pairs-of-paths sum for a list of graph pairs, f64.
pub const SP_GENERAL_F64: &str = "sp_general_f64";
/// Entry: the histogram dot products (delta kernels everywhere) for a list of graph pairs.
pub const SP_HISTOGRAM_DOT: &str = "sp_histogram_dot";

/// One graph's histogram run: sorted u64 keys and their counts.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpHistogram {
    /// First entry.
    pub offset: u32,
    /// Distinct keys.
    pub len: u32,
}

const _: () = assert!(core::mem::size_of::<SpGraph>() == 16 && core::mem::align_of::<SpGraph>() == 4);
const _: () = assert!(core::mem::size_of::<LengthKernel>() == 16 && core::mem::align_of::<LengthKernel>() == 8);
const _: () = assert!(core::mem::size_of::<SpParams>() == 264 + 16 + 8 && core::mem::align_of::<SpParams>() == 8);
const _: () = assert!(core::mem::size_of::<SpHistogram>() == 8);

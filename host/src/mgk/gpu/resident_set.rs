//! A graph set in the resident solver's word layout ([`ResidentSet`], built by
//! `super::resident::pack_resident`) and the same set uploaded ([`DeviceResident`]): what the
//! resident launches in shared memory (`super::resident`) and in global memory (`super::grid`) read.
use crate::backend::Precision;
use crate::error::Result;
use crate::gpu::GpuDevice;
use cudarc::driver::CudaSlice;
use octile_types::mgk::layout::{NODE_FEATURES, NZ_FEATURES};
use octile_types::mgk::resident::{PRODUCT_MAX_ENTRIES, PRODUCT_MAX_UNKNOWNS, RESIDENT_NODE_EXTRA, product_slice_words, slice_words};
use octile_types::{ResidentGraph, ResidentParams};

/// A graph set in the resident layout (f32 values stored as their bits, or f64 values as two words
/// each, low word first: `precision`).
#[derive(Clone, Debug, PartialEq)]
pub struct ResidentSet {
    /// The values' precision (f32: one word each, f64: two: [`ResidentSet::real_words`]).
    pub precision: Precision,
    /// One per graph.
    pub graphs: Vec<ResidentGraph>,
    /// The graphs' runs.
    pub words: Vec<u32>,
    /// Values per node row.
    pub node_stride: usize,
    /// Values per nonzero row.
    pub nz_stride: usize,
    /// Per graph: every edge weight is exactly 1 (the product form's condition).
    pub unit_weights: Vec<bool>,
}

impl ResidentSet {
    /// Graph g's (nodes, nonzeros, pieces).
    pub fn size(&self, g: u32) -> (usize, usize, usize) {
        let d = &self.graphs[g as usize];
        (d.n_nodes as usize, d.nnz as usize, d.n_pieces as usize)
    }
    /// Whether `other` has this set's shapes: precision, strides, and per graph its nodes,
    /// nonzeros, pieces and unit-weight flag (what a plan reads; offsets and words aside).
    pub fn same_shapes(&self, other: &ResidentSet) -> bool {
        let size = |d: &ResidentGraph| (d.n_nodes, d.nnz, d.n_pieces);
        (self.precision, self.node_stride, self.nz_stride) == (other.precision, other.node_stride, other.nz_stride)
            && self.unit_weights == other.unit_weights
            && self.graphs.iter().map(size).eq(other.graphs.iter().map(size))
    }
    /// Words of one value.
    pub fn real_words(&self) -> usize {
        real_words(self.precision)
    }
    /// Slice words of pair (a, b).
    pub fn slice_words(&self, a: u32, b: u32) -> usize {
        slice_words(self.size(a), self.size(b), self.node_stride, self.nz_stride, self.real_words())
    }
    /// What a launch's `params` say of this set's rows that the set does not hold, if anything:
    /// other strides, or a kernel term reading a feature past the node rows' `[ρ, d, p,
    /// features…]` or the nonzero rows' `[weight, features…]` (the checks of every resident
    /// launch, in shared and in global memory).
    pub fn layout_mismatch(&self, params: &ResidentParams) -> Option<String> {
        if params.node_stride as usize != self.node_stride
            || params.nz_stride as usize != self.nz_stride
            || self.nz_stride < NZ_FEATURES
            || self.node_stride < NODE_FEATURES + RESIDENT_NODE_EXTRA
        {
            return Some("strides of params and the resident set differ".into());
        }
        let widths = [(&params.node_kernel, self.node_stride - NODE_FEATURES - RESIDENT_NODE_EXTRA), (&params.edge_kernel, self.nz_stride - NZ_FEATURES)];
        widths
            .into_iter()
            .any(|(spec, width)| spec.terms().iter().any(|t| t.kind != 0 && t.feature as usize >= width))
            .then(|| "kernel feature index outside the packed feature rows".into())
    }
    /// Slice words of pair (a, b) in product form, if it can take it: both graphs' weights are
    /// 1, n·n′ ≤ `PRODUCT_MAX_UNKNOWNS` and nnz·nnz′ < `PRODUCT_MAX_ENTRIES` (what the rows'
    /// spans hold). (κe's shape is the caller's part.)
    pub fn product_words(&self, a: u32, b: u32) -> Option<usize> {
        let (sa, sb) = (self.size(a), self.size(b));
        (self.unit_weights[a as usize] && self.unit_weights[b as usize] && sa.0 * sb.0 <= PRODUCT_MAX_UNKNOWNS && sa.1 * sb.1 < PRODUCT_MAX_ENTRIES)
            .then(|| product_slice_words((sa.0, sa.1), (sb.0, sb.1), self.real_words()))
    }
}

/// Words of one value of `precision` in the resident layout.
pub fn real_words(precision: Precision) -> usize {
    match precision {
        Precision::F32 => 1,
        Precision::F64 => 2,
    }
}

/// A resident set on the device.
pub struct DeviceResident {
    pub(super) host: ResidentSet,
    graphs: CudaSlice<ResidentGraph>,
    words: CudaSlice<u32>,
}

impl DeviceResident {
    /// The set on the host.
    pub fn host(&self) -> &ResidentSet {
        &self.host
    }
    /// The graphs' descriptors on the device.
    pub fn graphs(&self) -> &CudaSlice<ResidentGraph> {
        &self.graphs
    }
    /// The graphs' runs on the device.
    pub fn words(&self) -> &CudaSlice<u32> {
        &self.words
    }
}

/// Upload a resident set.
pub fn upload_resident(dev: &GpuDevice, set: ResidentSet) -> Result<DeviceResident> {
    let words = dev.stream.clone_htod(if set.words.is_empty() { &[0u32][..] } else { &set.words })?;
    let pad = [ResidentGraph::default()];
    let graphs = dev.stream.clone_htod(if set.graphs.is_empty() { &pad[..] } else { &set.graphs })?;
    Ok(DeviceResident { host: set, graphs, words })
}

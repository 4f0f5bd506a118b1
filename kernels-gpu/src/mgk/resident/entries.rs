//! The resident kernel entries, declared by macro per precision and κe form.
use super::edge::{General, OneTerm, kdelta, sqexp};
use super::gradient::{gradient_all, gradient_all_product};
use super::jobs::{Jobs, solve_all};
use super::product_jobs::product_launch;
use super::real::ex2;
use super::teams::{block_team, warp_team};
use octile_types::mgk::gradient::GradientParams;
use octile_types::mgk::layout::NZ_FEATURES;
use octile_types::mgk::resident::RESIDENT_VECTORS;
use octile_types::{Combine, PairJob, PairStatus, ResidentGraph, ResidentParams};
/// The team of an entry kind: `warp` (one warp per pair, in a block of warps whose slices are
/// `slice_words` each) or `block` (one block per pair).
macro_rules! team {
    (warp, $p:expr) => {
        warp_team($p.slice_words)
    };
    (block, $p:expr) => {
        block_team()
    };
}

/// Defines the product-form entries of one precision: one warp per pair and one block per pair.
macro_rules! product_entries {
    ($t:ty, $(#[$wdoc:meta])* $warp:ident, $(#[$bdoc:meta])* $block:ident) => {
        product_entries!(@entry $t,
            $(#[$wdoc])*
            ///
            /// # Safety
            /// As [`MgkResidentWarpGeneral`], with `product_slice_words(..)` ≤ `params.slice_words`,
            /// n1·n2 ≤ `PRODUCT_MAX_UNKNOWNS` and nnz1·nnz2 < `PRODUCT_MAX_ENTRIES` for every job (a
            /// job past these reports NOT_PLANNED), and every edge weight 1 (host-checked; other
            /// weights would be ignored).
            $warp, warp);
        product_entries!(@entry $t,
            $(#[$bdoc])*
            ///
            /// # Safety
            /// As the warp entry, but launched with 32·2^k ≤ `RESIDENT_BLOCK_THREADS` threads
            /// and `RESIDENT_BLOCK_HEADER_BYTES` + `slice_words`·4 bytes of dynamic shared memory.
            $block, block);
    };
    (@entry $t:ty, $(#[$doc:meta])* $name:ident, $kind:ident) => {
        $(#[$doc])*
        #[unsafe(export_name = octile_types::entry_name!($name))]
        #[allow(non_snake_case)]
        pub unsafe extern "ptx-kernel" fn $name(
            params: *const ResidentParams,
            graphs: *const ResidentGraph,
            words: *const u32,
            jobs: *const PairJob,
            status: *mut PairStatus,
            counter: *mut u32,
        ) {
            // SAFETY: `params` points at one ResidentParams in global memory (see the resident
            // entries); forwarded launch contract (slices, or header and slice, then the solve's).
            unsafe { product_launch::<$t, _>(&mut team!($kind, *params), &*params, Jobs { graphs, words, jobs, status, counter }) }
        }
    };
}

product_entries!(
    f32,
    /// Resident solver in product form, one warp per pair: κe one Kronecker-delta term (host:
    /// `EdgeShape::of`) and every edge weight of both graphs 1.
    MgkResidentWarpProduct,
    /// Resident solver in product form, one block per pair (as [`MgkResidentWarpProduct`]; for
    /// pairs whose slice leaves room for few pairs per SM, so that more warps share the work).
    MgkResidentBlockProduct
);
product_entries!(
    f64,
    /// [`MgkResidentWarpProduct`] in f64.
    MgkResidentWarpProductF64,
    /// [`MgkResidentBlockProduct`] in f64.
    MgkResidentBlockProductF64
);

/// Defines a warp-team and a block-team gradient entry: `|p, gp, team| body`, called with the
/// launch's [`Jobs`], `grad` and `scratch`, runs one team's jobs. Both expand the one `@entry` arm,
/// which owns the argument list every gradient entry shares.
macro_rules! gradient_entries {
    ($(#[$wdoc:meta])* $warp:ident, $(#[$bdoc:meta])* $block:ident, |$p:ident, $gp:ident, $team:ident| $body:expr) => {
        gradient_entries!(@entry
            $(#[$wdoc])*
            ///
            /// # Safety
            /// As the solver entry of the same form, with `gparams` pointing at one `GradientParams`,
            /// `grad` holding `n_jobs · n_hyper` f64 and `scratch` `slice_words` f32 per team of the
            /// grid (where each team keeps its primal x).
            $warp, warp, |$p, $gp, $team| $body);
        gradient_entries!(@entry
            $(#[$bdoc])*
            ///
            /// # Safety
            /// As the warp entry, launched as the block entries.
            $block, block, |$p, $gp, $team| $body);
    };
    (@entry $(#[$doc:meta])* $name:ident, $kind:ident, |$p:ident, $gp:ident, $team:ident| $body:expr) => {
        $(#[$doc])*
        #[unsafe(export_name = octile_types::entry_name!($name))]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $name(
            params: *const ResidentParams,
            graphs: *const ResidentGraph,
            words: *const u32,
            jobs: *const PairJob,
            status: *mut PairStatus,
            counter: *mut u32,
            gparams: *const GradientParams,
            grad: *mut f64,
            scratch: *mut f32,
        ) {
            // SAFETY: both parameter blocks are in global memory (read through the pointers).
            let ($p, $gp): (&ResidentParams, &GradientParams) = unsafe { (&*params, &*gparams) };
            let $team = &mut unsafe { team!($kind, $p) };
            // SAFETY: forwarded launch contract.
            unsafe { $body(Jobs { graphs, words, jobs, status, counter }, grad, scratch) }
        }
    };
}

gradient_entries!(
    /// Resident hyperparameter gradient, one warp per pair, any κe ([`gradient_all`]).
    MgkResidentWarpGradient,
    /// Resident hyperparameter gradient, one block per pair, any κe.
    MgkResidentBlockGradient,
    |p, gp, team| #[inline(always)] |js, out, sc| {
        let e = General { spec: &p.edge_kernel, features: p.nz_stride as usize - NZ_FEATURES };
        gradient_all(team, p, gp, &e, None::<&General>, js, out, sc)
    }
);
gradient_entries!(
    /// Resident hyperparameter gradient, one warp per pair, κe one square exponential.
    MgkResidentWarpGradientSqexp,
    /// Resident hyperparameter gradient, one block per pair, κe one square exponential.
    MgkResidentBlockGradientSqexp,
    |p, gp, team| #[inline(always)] |js, out, sc| {
        let t = &p.edge_kernel.terms[0];
        let c2 = (t.coef * core::f64::consts::LOG2_E) as f32;
        let e = sqexp::<f32>(p);
        // ∂κe/∂ℓ = (a − b)²/ℓ³ · κe (BaseKernel::eval_d), times the term's weight where κe is a sum
        let scale = (if p.edge_kernel.combine == Combine::Additive as u32 { t.weight } else { 1.0 } / (t.param * t.param * t.param)) as f32;
        let de = OneTerm { f: t.feature as usize, k: move |a: f32, b: f32| (a - b) * (a - b) * scale * ex2(c2 * (a - b) * (a - b)) };
        gradient_all(team, p, gp, &e, Some(&de), js, out, sc)
    }
);
gradient_entries!(
    /// Resident hyperparameter gradient, one warp per pair, κe one Kronecker delta.
    MgkResidentWarpGradientKdelta,
    /// Resident hyperparameter gradient, one block per pair, κe one Kronecker delta.
    MgkResidentBlockGradientKdelta,
    |p, gp, team| #[inline(always)] |js, out, sc| {
        let t = &p.edge_kernel.terms[0];
        let e = kdelta::<f32>(p);
        // ∂κe/∂h = 1 − δ (BaseKernel::eval_d), times the term's weight where κe is a sum
        let wt = (if p.edge_kernel.combine == Combine::Additive as u32 { t.weight } else { 1.0 }) as f32;
        let de = OneTerm { f: t.feature as usize, k: move |a: f32, b: f32| if a == b { 0.0 } else { wt } };
        gradient_all(team, p, gp, &e, Some(&de), js, out, sc)
    }
);
gradient_entries!(
    /// Resident hyperparameter gradient in product form, one warp per pair ([`gradient_all_product`]).
    MgkResidentWarpGradientProduct,
    /// Resident hyperparameter gradient in product form, one block per pair.
    MgkResidentBlockGradientProduct,
    |p, gp, team| #[inline(always)] |js, out, sc| {
        let term = &p.edge_kernel.terms[0];
        gradient_all_product(team, p, gp, term.feature as usize, term.param as f32, js, out, sc)
    }
);

/// Defines a warp-team, a block-team and a split block-team entry for one κe evaluator, each by
/// the one `@entry` arm.
macro_rules! resident_entries {
    ($t:ty, $(#[$wdoc:meta])* $warp:ident, $(#[$bdoc:meta])* $block:ident, $(#[$sdoc:meta])* $split:ident, |$p:ident| $edge:expr) => {
        resident_entries!(@entry $t,
            $(#[$wdoc])*
            ///
            /// # Safety
            /// `params` points at the launch's parameters in global memory. Launched with 32·w threads (w ≤ `RESIDENT_MAX_WARPS_PER_BLOCK`) and w·`slice_words`·4
            /// bytes of dynamic shared memory; `graphs`/`words` in the resident layout with every run
            /// inside `words`; every job's graphs exist and its `slice_words(..)` ≤ `params.slice_words`;
            /// `status` holds `n_jobs` entries; `*counter == 0`.
            $warp, warp, false, |$p| $edge);
        resident_entries!(@entry $t,
            $(#[$bdoc])*
            ///
            /// # Safety
            /// As the warp entry, but launched with 32·2^k ≤ `RESIDENT_BLOCK_THREADS` threads and
            /// `RESIDENT_BLOCK_HEADER_BYTES` + `slice_words`·4 bytes of dynamic shared memory.
            $block, block, false, |$p| $edge);
        resident_entries!(@entry $t,
            $(#[$sdoc])*
            ///
            /// # Safety
            /// As the block entry; the second graph's pieces (`PIECE_NONZEROS`) are read where it has any.
            $split, block, true, |$p| $edge);
    };
    (@entry $t:ty, $(#[$doc:meta])* $name:ident, $kind:ident, $split:literal, |$p:ident| $edge:expr) => {
        $(#[$doc])*
        #[unsafe(export_name = octile_types::entry_name!($name))]
        #[allow(non_snake_case)]
        pub unsafe extern "ptx-kernel" fn $name(params: *const ResidentParams, graphs: *const ResidentGraph, words: *const u32, jobs: *const PairJob, status: *mut PairStatus, counter: *mut u32) {
            // SAFETY: `params` points at one ResidentParams in global memory (read through the
            // pointer: a by-value struct parameter would be copied to each thread's stack).
            let $p: &ResidentParams = unsafe { &*params };
            // SAFETY: forwarded launch contract (slices, or header and slice, then the solve's).
            unsafe { solve_all::<$t, _, _, $split>(&mut team!($kind, $p), $p, &$edge, Jobs { graphs, words, jobs, status, counter }) }
        }
    };
}

resident_entries!(
    f32,
    /// Resident solver, one warp per pair, any κe.
    MgkResidentWarpGeneral,
    /// Resident solver, one block per pair, any κe.
    MgkResidentBlockGeneral,
    /// Resident solver, one block per pair, any κe, long rows of G′ split into pieces.
    MgkResidentBlockGeneralSplit,
    |params| General { spec: &params.edge_kernel, features: params.nz_stride as usize - NZ_FEATURES }
);
resident_entries!(
    f32,
    /// Resident solver, one warp per pair, κe one square exponential (host: `EdgeShape::of`).
    MgkResidentWarpSqexp,
    /// Resident solver, one block per pair, κe one square exponential.
    MgkResidentBlockSqexp,
    /// Resident solver, one block per pair, one square exponential, long rows of G′ split into pieces.
    MgkResidentBlockSqexpSplit,
    |params| sqexp::<f32>(params)
);
resident_entries!(
    f32,
    /// Resident solver, one warp per pair, κe one Kronecker delta (host: `EdgeShape::of`).
    MgkResidentWarpKdelta,
    /// Resident solver, one block per pair, κe one Kronecker delta.
    MgkResidentBlockKdelta,
    /// Resident solver, one block per pair, one Kronecker delta, long rows of G′ split into pieces.
    MgkResidentBlockKdeltaSplit,
    |params| kdelta::<f32>(params)
);
resident_entries!(
    f64,
    /// [`MgkResidentWarpGeneral`] in f64.
    MgkResidentWarpGeneralF64,
    /// [`MgkResidentBlockGeneral`] in f64.
    MgkResidentBlockGeneralF64,
    /// [`MgkResidentBlockGeneralSplit`] in f64.
    MgkResidentBlockGeneralSplitF64,
    |params| General { spec: &params.edge_kernel, features: params.nz_stride as usize - NZ_FEATURES }
);
resident_entries!(
    f64,
    /// [`MgkResidentWarpSqexp`] in f64.
    MgkResidentWarpSqexpF64,
    /// [`MgkResidentBlockSqexp`] in f64.
    MgkResidentBlockSqexpF64,
    /// [`MgkResidentBlockSqexpSplit`] in f64.
    MgkResidentBlockSqexpSplitF64,
    |params| sqexp::<f64>(params)
);
resident_entries!(
    f64,
    /// [`MgkResidentWarpKdelta`] in f64.
    MgkResidentWarpKdeltaF64,
    /// [`MgkResidentBlockKdelta`] in f64.
    MgkResidentBlockKdeltaF64,
    /// [`MgkResidentBlockKdeltaSplit`] in f64.
    MgkResidentBlockKdeltaSplitF64,
    |params| kdelta::<f64>(params)
);

const _: () = assert!(RESIDENT_VECTORS == 5);

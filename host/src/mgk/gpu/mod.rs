//! The MGK solver on the GPU runtime ([`crate::gpu`]): [`launch`] holds every `unsafe` launch of
//! the solver entries behind a safe function that checks the contract first; [`batch`] splits pair
//! lists into batches under a memory budget, picks the entry (adaptive, sparse-only, tiling-
//! blocking, teams) and streams the batches; [`gradient`] streams pairs through the gradient entries; [`resident`] is the resident solver (pairs whose whole
//! product system fits in shared memory), tried first for f32 Gram matrices, and [`grid`] its
//! launches for pairs too large for shared memory, both over [`resident_set`] (the set in its
//! word layout, on the host and uploaded); [`options`] holds
//! their tuning knobs ([`options::GpuTuning`], `MgkConfig::gpu`).
pub mod batch;
pub mod gradient;
pub mod grid;
pub mod launch;
pub mod options;
pub mod resident;
pub mod resident_launch;
pub mod resident_set;

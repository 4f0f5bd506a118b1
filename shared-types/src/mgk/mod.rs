//! The marginalized graph kernel's side of the boundary: the octile format of a packed graph set
//! ([`layout`]), the tiled layout of product-graph vectors ([`tiling`]), the `#[repr(C)]` launch
//! parameters, jobs and results ([`params`]), the tile-pair XMV primitives and the map choosing
//! between them ([`primitives`]; the tiling-blocking dense walks in [`blocked`]), the math of the
//! hyperparameter gradients ([`gradient`], κv's table for them: [`node_table`]) and the PTX entry
//! names ([`names`]).
//!
//! Imports run one way: `params` → `primitives` → `blocked` → `layout`, `tiling`.
pub mod blocked;
pub mod gradient;
pub mod layout;
pub mod names;
pub mod node_table;
pub mod params;
pub mod primitives;
pub mod resident;
pub mod tiling;

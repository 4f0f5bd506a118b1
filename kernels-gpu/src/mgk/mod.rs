//! The marginalized graph kernel on the device: the PCG solver entries and body ([`solver`]), the
//! staging of octiles and p blocks into shared memory ([`stage`]), and teams of blocks that solve
//! one pair together ([`team`]); the resident solver for pairs whose whole product system fits in
//! shared memory ([`resident`]). [`tune`] holds the tile-pair microbenchmark behind `octile tune`;
//! the solver never imports it.
pub mod resident;
pub mod solver;
pub mod stage;
pub mod team;
pub mod tune;

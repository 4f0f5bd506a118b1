//! `octile gram --backend cpu` with the marginalized kernel, through the library calls the CLI
//! makes: a kernel TOML (empty: the CLI's default kernel), `%%`, the graphs X as a file's text,
//! optionally `%%` and the graphs Y (K(X, Y)). A first line `#! smi normalize f32 skip` picks the
//! graphs' format (json default, smi, csv, sdf, pdb) and the flags. At most 4 graphs of at most
//! 16 nodes and 48 edges are solved (larger inputs are dropped after reading); iterations are
//! capped at 1000 (a pair past it is a typed NoConvergence). Every value of an Ok matrix must be
//! finite.
#![no_main]
use libfuzzer_sys::fuzz_target;
use octile_fuzz::{Caps, Method, gram};

fuzz_target!(init: octile_fuzz::init_config(), |data: &[u8]| {
    gram(data, Method::Marginalized, &Caps { graphs: 4, nodes: 16, edges: 48 });
});

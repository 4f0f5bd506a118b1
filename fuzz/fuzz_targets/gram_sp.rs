//! `octile gram --backend cpu` with the shortest-path kernel (`method = "shortest_path"`), through
//! the library calls the CLI makes; input as for `gram_mgk` (kernel TOML, `%%`, graphs X, optional
//! `%%` graphs Y; first line `#! smi normalize skip`). At most 6 graphs of at most 32 nodes and
//! 96 edges. Every value of an Ok matrix must be finite.
#![no_main]
use libfuzzer_sys::fuzz_target;
use octile_fuzz::{Caps, Method, gram};

fuzz_target!(init: octile_fuzz::init_config(), |data: &[u8]| {
    gram(data, Method::ShortestPath, &Caps { graphs: 6, nodes: 32, edges: 96 });
});

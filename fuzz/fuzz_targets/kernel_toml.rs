//! The marginalized kernel's TOML (`MgkConfig::from_toml`, what `--kernel` reads), with the
//! CLI's dispatch (`method_of`) and the shortest-path reader on the same text. A configuration
//! that parses must resolve, build a CPU kernel, find its tile-pair map, and its base kernels
//! must be finite and within [0, 1] on any finite features (κ(a, a) = 1 for deltas and square
//! exponentials).
#![no_main]
use libfuzzer_sys::fuzz_target;
use octile::mgk::config::{BaseKernelConfig, gathered};
use octile::mgk::profile::{EdgeCost, resolve};
use octile::{Backend, MarginalizedGraphKernel, MgkConfig};

const VALUES: [f64; 7] = [0.0, 1.0, -1.0, 0.5, 3.0, 1e8, -1e300];

fuzz_target!(init: octile_fuzz::init_config(), |data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = octile::toml_file::parse_table(text).and_then(|t| octile::toml_file::method_of(&t)).map_err(|e| e.to_string());
    let _ = octile::SpConfig::from_toml(text).map_err(|e| e.to_string());
    let cfg = match MgkConfig::from_toml(text) {
        Ok(c) => c,
        Err(e) => {
            let msg = e.to_string();
            if octile_fuzz::verbose() {
                eprintln!("refused: {msg}");
            }
            return;
        }
    };
    if octile_fuzz::verbose() {
        eprintln!("parsed: {cfg:?}");
    }
    cfg.validate().expect("from_toml returned a configuration that does not validate");
    let r = cfg.resolve().expect("a validated configuration does not resolve");
    assert_eq!(r.node_spec.n_terms as usize, cfg.node.len());
    assert_eq!(r.edge_spec.n_terms as usize, cfg.edge.len());
    assert_eq!(r.node_features.len(), r.categorical_node.len());
    for (spec, n) in [(&r.node_spec, r.node_features.len()), (&r.edge_spec, r.edge_features.len())] {
        for &a in &VALUES {
            for &b in &VALUES {
                let (ra, rb) = (vec![a; n.max(1)], vec![b; n.max(1)]);
                let k: f64 = spec.eval(&ra, &rb);
                assert!(k.is_finite() && (0.0..=1.0 + 1e-12).contains(&k), "κ({a}, {b}) = {k} for {spec:?}");
            }
            let ra = vec![a; n.max(1)];
            let same: f64 = spec.eval(&ra, &ra);
            let all_matching = cfg.node.iter().chain(&cfg.edge).all(|t| !matches!(t.kernel, BaseKernelConfig::Constant { .. }));
            if all_matching && spec.n_terms > 0 {
                assert!((same - 1.0).abs() < 1e-9, "κ({a}, {a}) = {same} for {spec:?}");
            }
        }
    }
    let _ = gathered(&r.edge_spec, cfg.tiles.dense_walk);
    let cost = EdgeCost::of(&r.edge_spec);
    let mut tiles = cfg.tiles.clone();
    tiles.profile = None; // a path in the fuzz input is not read (profile_json fuzzes profile files)
    for precision in ["f32", "f64"] {
        resolve(&tiles, "cpu", "fuzz CPU", std::env::consts::ARCH, precision, cost).expect("no profile named: the shipped one or the built-in rule");
    }
    let mut cpu = cfg.clone();
    cpu.backend = Backend::Cpu;
    cpu.tiles.profile = None;
    if let Err(e) = MarginalizedGraphKernel::new(cpu) {
        panic!("a validated configuration was refused on the CPU: {e}");
    }
});

//! The shortest-path kernel's TOML (`SpConfig::from_toml`; the CLI reads it when `method =
//! "shortest_path"`), with the marginalized reader and `method_of` on the same text. A
//! configuration that parses must validate, build a CPU kernel, and its κv and κℓ must be finite on
//! finite inputs (κv ≥ 0, κℓ within [0, max(1, c)]).
#![no_main]
use libfuzzer_sys::fuzz_target;
use octile::sp::config::LengthKernelConfig;
use octile::{Backend, ShortestPathKernel, SpConfig};

const VALUES: [f64; 7] = [0.0, 1.0, -1.0, 0.5, 3.0, 1e8, -1e300];
const LENGTHS: [f64; 6] = [0.0, 1.0, 2.0, 7.0, 0.25, 1e6];

fuzz_target!(init: octile_fuzz::init_config(), |data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = octile::toml_file::parse_table(text).and_then(|t| octile::toml_file::method_of(&t)).map_err(|e| e.to_string());
    let _ = octile::MgkConfig::from_toml(text).map_err(|e| e.to_string());
    let cfg = match SpConfig::from_toml(text) {
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
    let (spec, names) = cfg.node_spec();
    assert_eq!(spec.n_terms as usize, cfg.node.len());
    let n = names.len().max(1);
    for &a in &VALUES {
        for &b in &VALUES {
            // (a constant may exceed 1 here: c > 0 is all the SP kernel asks)
            let k: f64 = spec.eval(&vec![a; n], &vec![b; n]);
            assert!(k.is_finite() && k >= 0.0, "κv({a}, {b}) = {k} for {spec:?}");
        }
    }
    let length = cfg.path_length.kernel();
    let top = match cfg.path_length {
        LengthKernelConfig::BrownianBridge { c } => c.max(1.0),
        _ => 1.0,
    };
    for &a in &LENGTHS {
        for &b in &LENGTHS {
            let k: f64 = length.eval(a, b);
            assert!(k.is_finite() && (0.0..=top).contains(&k), "κℓ({a}, {b}) = {k} for {:?}", cfg.path_length);
        }
    }
    let _ = cfg.is_histogram();
    let mut cpu = cfg.clone();
    cpu.backend = Backend::Cpu;
    if let Err(e) = ShortestPathKernel::new(cpu) {
        panic!("a validated configuration was refused on the CPU: {e}");
    }
});

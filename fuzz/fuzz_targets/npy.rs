//! The `.npy` reader (`npy::read_matrix`, what `octile gram --resume` reads an interrupted run's
//! partial matrix and mask with). A matrix that reads must hold rows × cols values, and one of
//! float64 must read back the same after `npy_bytes` (what the CLI writes).
#![no_main]
use libfuzzer_sys::fuzz_target;
use octile::io::npy::{npy_bytes, read_matrix};

fuzz_target!(init: octile_fuzz::init_config(), |data: &[u8]| {
    let path = octile_fuzz::write("input.npy", data);
    let m = match read_matrix(&path) {
        Ok(m) => m,
        Err(e) => {
            let msg = e.to_string();
            if octile_fuzz::verbose() {
                eprintln!("refused: {msg}");
            }
            return;
        }
    };
    assert_eq!(m.values.len(), m.rows * m.cols, "values for shape ({}, {})", m.rows, m.cols);
    let again = octile_fuzz::write("again.npy", &npy_bytes(&m.values, m.rows, m.cols));
    let back = read_matrix(&again).expect("the writer's own file reads");
    assert_eq!((back.rows, back.cols), (m.rows, m.cols));
    assert!(back.values.iter().zip(&m.values).all(|(a, b)| a.to_bits() == b.to_bits()), "values change through write and read");
});

//! The .csv reader through `octile::io::read_with` (what `octile gram` calls): CSV with a smiles column (smiles::read_csv).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: octile_fuzz::init_config(), |data: &[u8]| {
    let path = octile_fuzz::write("input.csv", data);
    octile_fuzz::read_checked(&path, None, octile::io::pdb::DEFAULT_CUTOFF);
});

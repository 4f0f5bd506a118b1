//! The .smi reader through `octile::io::read_with` (what `octile gram` calls): SMILES, one molecule per line (smiles::read_smi, the purr parser).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: octile_fuzz::init_config(), |data: &[u8]| {
    let path = octile_fuzz::write("input.smi", data);
    octile_fuzz::read_checked(&path, None, octile::io::pdb::DEFAULT_CUTOFF);
});

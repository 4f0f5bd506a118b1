//! The TU dataset folder reader (`tu::read`, through `read_with` on a folder). The input's parts,
//! cut at lines `%%`, become the folder's files in this order: `DS_A.txt`,
//! `DS_graph_indicator.txt`, `DS_node_labels.txt`, `DS_edge_labels.txt`, `DS_graph_labels.txt`;
//! a part that is not there is a file that is not there.
#![no_main]
use libfuzzer_sys::fuzz_target;

const FILES: [&str; 5] = ["DS_A.txt", "DS_graph_indicator.txt", "DS_node_labels.txt", "DS_edge_labels.txt", "DS_graph_labels.txt"];

fuzz_target!(init: octile_fuzz::init_config(), |data: &[u8]| {
    let dir = octile_fuzz::scratch().join("tu");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, part) in FILES.iter().zip(octile_fuzz::sections(data)) {
        std::fs::write(dir.join(name), part).unwrap();
    }
    octile_fuzz::read_checked(&dir, None, octile::io::pdb::DEFAULT_CUTOFF);
    octile_fuzz::read_checked(&dir, Some(octile::io::Format::Tu), octile::io::pdb::DEFAULT_CUTOFF);
});

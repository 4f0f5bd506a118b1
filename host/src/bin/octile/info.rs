//! `octile info`: which devices and backends are available, and why not if not.
use anyhow::Result;

pub fn info() -> Result<()> {
    println!("octile {}", env!("CARGO_PKG_VERSION"));
    println!("cpu backend: available, {} threads", rayon::current_num_threads());
    println!("embedded PTX: built for {} ({} bytes)", octile::gpu::PTX_ARCH, octile::gpu::PTX.len());
    match octile::gpu::device() {
        Ok(d) => println!("cuda backend: available: {}", d.describe()),
        Err(why) => println!("cuda backend: unavailable: {why}"),
    }
    Ok(())
}

//! The embedded PTX and the device intrinsics.
use octile::gpu::pinned::Direction;
use octile_tests::gpu_or_skip;
use octile_types::Kernel;
use octile_types::names::{SMOKE_BLOCK_THREADS, SMOKE_WORDS_PER_THREAD};

#[test]
fn ptx_declares_every_kernel_for_the_configured_sm() {
    let ptx = octile::gpu::PTX;
    for k in Kernel::ALL {
        let name = k.name();
        assert!(ptx.contains(&format!(".entry {name}(")), "PTX lacks kernel {name}");
    }
    let target = format!(".target {}", octile::gpu::PTX_ARCH);
    assert!(ptx.lines().any(|l| l.trim() == target), "PTX is not built for {}", octile::gpu::PTX_ARCH);
    // `.extern .shared` is the launch's dynamic shared memory; any other extern is unresolved
    assert!(!ptx.lines().any(|l| l.contains(".extern") && !l.contains(".extern .shared")), "PTX has unresolved .extern symbols");
    // every entry carries exactly the launch bounds declared for it (host/build.rs writes them)
    for k in Kernel::ALL {
        let d = k.decl();
        let head = format!(".visible .entry {}(", d.name);
        let start = ptx.find(&head).expect("entry present");
        let after = &ptx[start + ptx[start..].find(')').expect("parameter list") + 1..];
        let directives: Vec<&str> =
            after.lines().skip(1).take_while(|l| l.starts_with(".max") || l.starts_with(".min")).map(|l| l.split("//").next().unwrap_or("").trim()).collect();
        let mut want = Vec::new();
        if d.bounds.max_threads > 0 {
            want.push(format!(".maxntid {}, 1, 1", d.bounds.max_threads));
            assert_eq!(d.threads.max(), d.bounds.max_threads, "{k:?}: .maxntid is not the most threads it is launched with");
        }
        if d.bounds.min_blocks_per_sm > 0 {
            want.push(format!(".minnctapersm {}", d.bounds.min_blocks_per_sm));
        }
        if d.bounds.max_registers > 0 {
            want.push(format!(".maxnreg {}", d.bounds.max_registers));
        }
        assert_eq!(directives, want, "launch bounds of {name} in the PTX, expected {want:?}", name = d.name);
    }
}

#[test]
fn gpu_intrinsics_smoke() {
    if !gpu_or_skip("gpu_intrinsics_smoke") {
        return;
    }
    let dev = octile::gpu::device().unwrap();
    let blocks = 3u32;
    let out = octile::selftest::smoke(&dev, blocks).expect("smoke launch");
    let threads = (blocks * SMOKE_BLOCK_THREADS) as usize;
    let mut olds: Vec<u32> = Vec::with_capacity(threads);
    for t in 0..threads {
        let w = &out.words[t * SMOKE_WORDS_PER_THREAD..(t + 1) * SMOKE_WORDS_PER_THREAD];
        let tid = t % SMOKE_BLOCK_THREADS as usize;
        let lane = (tid % 32) as u32;
        let expect_down = if lane < 31 { 3 * (lane + 1) } else { 3 * lane };
        let expect_fns = [4u32, 5, 6, 7, 12, 13, 14, 15][(lane % 8) as usize];
        let expected = [lane, (tid / 32) as u32, expect_down, 496, 0xAAAA_AAAA, 0b111, expect_fns];
        for (k, (&got, &want)) in w.iter().zip(&expected).enumerate() {
            assert_eq!(got, want, "thread {t} word {k}: actual {got:#x}, expected {want:#x}");
        }
        olds.push(w[7]);
    }
    olds.sort_unstable();
    assert!(olds.iter().enumerate().all(|(k, &v)| v == k as u32), "atomic_add_u32 old values are not a permutation of 0..{threads}");
    assert_eq!(out.counter, threads as u32, "counter");
    assert!((out.acc_f32 - threads as f32).abs() == 0.0, "f32 atomics: actual {}, expected {threads}", out.acc_f32);
    assert!((out.acc_f64 - 0.5 * threads as f64).abs() == 0.0, "f64 atomics: actual {}, expected {}", out.acc_f64, 0.5 * threads as f64);
    let n = SMOKE_BLOCK_THREADS as f64;
    for b in 0..blocks as usize {
        assert!((out.block_sums[2 * b] - n * (n - 1.0) / 2.0).abs() == 0.0, "block {b} sum of tid: {}", out.block_sums[2 * b]);
        assert!((out.block_sums[2 * b + 1] - n).abs() == 0.0, "block {b} count: {}", out.block_sums[2 * b + 1]);
    }
    println!("PASS gpu_intrinsics_smoke on {}", dev.describe());
}

/// The pinned pool: values survive a round trip through the GPU from a lent buffer into another
/// (pinned and heap-backed sizes alike), a returned pinned buffer is lent again rather than
/// pinned anew, and a view past a buffer's end is an error, not a panic.
#[test]
fn pinned_pool_round_trip_and_reuse() {
    if !gpu_or_skip("pinned_pool_round_trip_and_reuse") {
        return;
    }
    let dev = octile::gpu::device().unwrap();
    for n in [3usize, 1000, (3 << 20) / 8 + 5] {
        let mut up = dev.pinned.take(n * 8, Direction::Up, &dev.stream).unwrap();
        let src = up.view_mut::<u64>(n).unwrap();
        for (i, v) in src.iter_mut().enumerate() {
            *v = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        let on_gpu = dev.stream.clone_htod(&*src).unwrap();
        up.record().unwrap();
        let mut down = dev.pinned.take(n * 8, Direction::Down, &dev.stream).unwrap();
        dev.stream.memcpy_dtoh(&on_gpu, down.view_mut::<u64>(n).unwrap()).unwrap();
        down.record().unwrap();
        down.wait().unwrap();
        let back = down.view_mut::<u64>(n).unwrap();
        for (i, &v) in back.iter().enumerate() {
            let want = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            assert_eq!(v, want, "n {n}, index {i}: actual {v:#x}, expected {want:#x}");
        }
        assert!(down.view_mut::<u64>(usize::MAX / 4).is_err(), "n {n}: a view past the end must be refused");
    }
    // a pinned buffer given back is lent again: the same memory (a size no earlier buffer has,
    // so this is the one buffer of the pool that fits)
    let first = {
        let mut a = dev.pinned.take(9 << 20, Direction::Up, &dev.stream).unwrap();
        a.view_mut::<u8>(1).unwrap().as_ptr() as usize
    };
    let mut b = dev.pinned.take(9 << 20, Direction::Up, &dev.stream).unwrap();
    assert_eq!(b.view_mut::<u8>(1).unwrap().as_ptr() as usize, first, "a returned buffer of the right size was not reused");
}

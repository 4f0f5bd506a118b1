#!/usr/bin/env bash
# Rebuild the carry of p1.sh / p2.sh on a fresh checkout (~15 min on 2 cores): .carry/s39 and .carry/sets.tar.xz.
# Run from the repository root on main with a clean tree; needs scripts/setup, scripts/fetch-datasets and
# benches/peers/graphdot/setup.sh done (.peers/). It builds
#   base.cubin   main's kernels (the landed ones)
#   the patch    results/session39-gradient-paired-walk.patch applied: the bundle (scripts/gpu-bundle, "n")
#   octile-old   the patch with the any-κe block gradient at 512 threads and 128 registers ("o")
#   patch.cubin  session 38's patch as written (range2 its own walk): results/session38-gradient-paired-walk.patch
# and leaves the working tree with session 39's patch applied.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -z "$(git status --porcelain -- host kernels-gpu shared-types scripts)" ] || { echo "make-carry: the code is not clean" >&2; exit 1; }
mkdir -p .carry/s39/peers/sets /tmp/mc
cubin() { ls -t target/release/build/octile-*/out/octile_kernels.cubin | head -1; }
cargo build --release && cp "$(cubin)" /tmp/mc/base.cubin
git apply results/session38-gradient-paired-walk.patch
cargo build --release && cp "$(cubin)" /tmp/mc/patch.cubin
git apply -R results/session38-gradient-paired-walk.patch
git apply results/session39-gradient-paired-walk.patch
# "o": the entry's old bounds, the rest of the patch as it is
python3 - <<'PY'
p = 'shared-types/src/entries.rs'
s = open(p).read()
new = """        threads: Threads::UpTo(RESIDENT_GRADIENT_GENERAL_THREADS),
        bounds: LaunchBounds::threads(RESIDENT_GRADIENT_GENERAL_THREADS).with_registers(136),"""
old = """        threads: Threads::UpTo(RESIDENT_BLOCK_THREADS),
        bounds: RESIDENT_BLOCK_BOUNDS.with_registers(128),"""
assert s.count(new) == 1
open(p, 'w').write(s.replace(new, old))
PY
cargo build --release && cp target/release/octile /tmp/mc/octile-old
git checkout shared-types/src/entries.rs && git apply --include=shared-types/src/entries.rs results/session39-gradient-paired-walk.patch
scripts/gpu-bundle
for f in base.cubin patch.cubin octile-old; do xz -T2 -c /tmp/mc/$f > .carry/s39/$f.xz; done
(cd .bundle && tar -cf - tests/gradient tests/resident tests/gpu_smoke tests/gpu_sanitize tests/tiles octile wheels repo run-gpu-tests.sh | xz -T2 --lzma2=preset=6,dict=256MiB) > .carry/s39/bundle.tar.xz
cp -r .peers/wheels .peers/prebuilt .carry/s39/peers/ && cp -r .peers/sets/freesolv .carry/s39/peers/sets/
tar -C .peers/sets -cf - --exclude=./freesolv . | xz -T2 -6 > .carry/sets.tar.xz
du -sh .carry/s39/* .carry/sets.tar.xz

#!/usr/bin/env bash
# session 29, call 5: the GPU tests of v3's release test binaries (OCTILE_REQUIRE_GPU=1), memcheck of a MUTAG gram with v3
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets
xz -dc .carry/s29/octile-base.xz > $B/oct; chmod +x $B/oct; xz -dc .carry/s29/v3.cubin.xz > $B/v3.cubin
xz -dc .carry/s29/tests-v3.tar.xz | tar -xf - -C $B
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$PWD
for t in resident gradient gpu_smoke reference; do
  timeout 110 $B/t/$t --test-threads=2 > /tmp/t_$t.log 2>&1; echo "test $t rc=$? $(grep -E '^test result' /tmp/t_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|SKIP' /tmp/t_$t.log | head -5
done
OCTILE_PTX_FILE=$B/v3.cubin timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/oct gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/ms.npy --quiet --gradient > /tmp/ms2.log 2>&1; echo "memcheck mutag --gradient (v3) rc=$? $(grep -E 'ERROR SUMMARY' /tmp/ms2.log)"
OCTILE_PTX_FILE=$B/v3.cubin timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/oct gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/ms.npy --quiet > /tmp/ms3.log 2>&1; echo "memcheck mutag (v3) rc=$? $(grep -E 'ERROR SUMMARY' /tmp/ms3.log)"

#!/usr/bin/env bash
# session 31 (the device refused 12 times; ~7 min of device time left): 72c04b4's bundle with the split module's kernels
# (cubin dac5e0d03bfcfef3): the test binaries that run the resident entries (resident, gradient, gpu_smoke, gpu_sanitize,
# reference), memcheck and racecheck of gpu_sanitize, then the gradient's in-memory cost (oct_grad.py)
set -u
B=/tmp/b; O=${OUT:-/tmp/out}; mkdir -p $B $O /tmp/sets
xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets
xz -dc .carry/bundle.tar.xz | tar -xf - -C $B
xz -dc .carry/s31/split.cubin.xz > $B/split.cubin; export OCTILE_PTX_FILE=$B/split.cubin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$B/repo
for t in resident gradient gpu_smoke gpu_sanitize reference; do
  timeout 150 $B/tests/$t --test-threads=2 > $O/t_$t.log 2>&1; echo "test $t rc=$? $(grep -E '^test result' $O/t_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|SKIP' $O/t_$t.log | head -5
done
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 $B/tests/gpu_sanitize --test-threads=1 > $O/$tool.log 2>&1; echo "$tool gpu_sanitize rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/$tool.log | tr '\n' ' ')"
done
unset OCTILE_REQUIRE_GPU
mkdir -p /tmp/py && python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/py $B/wheels/octile-*.whl
CALLS=4 PYTHONPATH=/tmp/py timeout 100 python3 benches/peers/graphdot/oct_grad.py $S $O/grad chembl nws mutag --no-fd 2>&1 | grep -v -i warn | tail -12

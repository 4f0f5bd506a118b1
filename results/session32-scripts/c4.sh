#!/usr/bin/env bash
# session 32, call 4 (c3 cut down for ~400 s of device time): GPU tests with C's kernels (HEAD's split kernels with the
# spill-free bounds; every entry the split reordered is byte-identical in C), memcheck; c2's timings base / B / C in the
# time left (LIMIT seconds in all), then the gradient's in-memory cost if any time remains
set -u
T0=$(date +%s); L=${LIMIT:-400}
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/bundle.tar.xz | tar -xf - -C $B
xz -dc .carry/s32/C.cubin.xz > $B/C.cubin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
(
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$B/repo OCTILE_PTX_FILE=$B/C.cubin
for t in resident gradient tiles gpu_sanitize gpu_smoke; do
  timeout 100 $B/tests/$t --test-threads=4 > $O/t_C_$t.log 2>&1; echo "test C $t rc=$? $(grep -E '^test result' $O/t_C_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|SKIP' $O/t_C_$t.log | head -5
done
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/tests/gpu_sanitize --test-threads=1 > $O/memcheck_C.log 2>&1; echo "memcheck C gpu_sanitize rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck_C.log | tr '\n' ' ')"
)
echo "tests took $(( $(date +%s) - T0 )) s"
left=$(( L - 40 - ($(date +%s) - T0) ))
[ $left -gt 30 ] && timeout $left bash results/session32-scripts/c2.sh --no-tests
echo "timings done at $(( $(date +%s) - T0 )) s"
left=$(( L - 10 - ($(date +%s) - T0) ))
if [ $left -gt 40 ]; then
  mkdir -p /tmp/py && python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/py $B/wheels/octile-*.whl
  CALLS=5 PYTHONPATH=/tmp/py timeout $left python3 benches/peers/graphdot/oct_grad.py $S $O/grad chembl nws mutag --no-fd 2>&1 | grep -v -i warn | tail -12
fi

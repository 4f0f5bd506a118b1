#!/usr/bin/env bash
# session 32, call 3 (one call for what c1 + c2 asked, the device budget shrinking with refusals): the GPU tests of the
# resident/gradient/tile entries with C's kernels (C = HEAD's split kernels, dac5e0d0, with the tile solver's entries at
# `.maxnreg 255` and the resident warp gradient entries at `.maxnreg 144`: every entry the split reordered is byte-identical
# in C), memcheck of gpu_sanitize; then c2's timings (base / B / C, alternating) in the time left
set -u
T0=$(date +%s)
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/bundle.tar.xz | tar -xf - -C $B
xz -dc .carry/s32/C.cubin.xz > $B/C.cubin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
(
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$B/repo OCTILE_PTX_FILE=$B/C.cubin
for t in resident gradient reference tiles gpu_smoke gpu_sanitize; do
  timeout 150 $B/tests/$t --test-threads=2 > $O/t_C_$t.log 2>&1; echo "test C $t rc=$? $(grep -E '^test result' $O/t_C_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|SKIP' $O/t_C_$t.log | head -5
done
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 $B/tests/gpu_sanitize --test-threads=1 > $O/memcheck_C.log 2>&1; echo "memcheck C gpu_sanitize rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck_C.log | tr '\n' ' ')"
)
echo "tests took $(( $(date +%s) - T0 )) s"
# the gradient's in-memory cost (Python, warm calls, no files written; the bundle's wheel, kernels 900bf298 = HEAD's code before the split's reordering)
mkdir -p /tmp/py && python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/py $B/wheels/octile-*.whl
CALLS=5 PYTHONPATH=/tmp/py timeout 150 python3 benches/peers/graphdot/oct_grad.py $S $O/grad chembl nws mutag ba --no-fd 2>&1 | grep -v -i warn | tail -20
echo "oct_grad done at $(( $(date +%s) - T0 )) s"
left=$(( ${LIMIT:-585} - ($(date +%s) - T0) ))
[ $left -gt 60 ] && timeout $left bash results/session32-scripts/c2.sh --no-tests

#!/usr/bin/env bash
# session 34, one call, most important first: this session's gradient and resident test binaries on the GPU
# (OCTILE_REQUIRE_GPU=1), p2.sh's A/B (HEAD's octile vs this session's, no Nsight Compute), then the whole GPU
# test bundle of this session's build (.carry/s34/bundle-v2.tar.xz) in the time left
set -u
T0=$(date +%s); O=${OUT:-/tmp/out}; mkdir -p $O/tests; B=/tmp/bb; mkdir -p $B
xz -dc .carry/s34/bundle-v2.tar.xz | tar -xf - -C $B
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for t in gradient resident; do
  s=$(date +%s)
  (cd $B && OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$B/repo timeout 150 tests/$t --test-threads=1 --nocapture > $O/first-$t.txt 2>&1); rc=$?
  echo "first: $t rc=$rc ($(( $(date +%s) - s )) s): $(grep -E '^test result' $O/first-$t.txt)"; grep -E "^test |GPU " $O/first-$t.txt | head -12
done
NCU= LIMIT=${LIMIT:-80} ROUNDS=${ROUNDS:-3} OUT=$O bash results/session34-scripts/p2.sh
left=$(( ${BUDGET:-570} - ($(date +%s) - T0) ))
echo "tests with $left s left"
cd $B && STEP_TIMEOUT=${STEP:-200} LOG_DIR=$O/tests timeout $left bash run-gpu-tests.sh 2>&1 | tail -45
echo "call took $(( $(date +%s) - T0 )) s"

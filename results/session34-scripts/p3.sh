#!/usr/bin/env bash
# session 34, one call: p2.sh's A/B (HEAD's octile vs this session's, no Nsight Compute), then the whole GPU
# test bundle of this session's build (.carry/s34/bundle-v2.tar.xz: every test binary with OCTILE_REQUIRE_GPU=1,
# memcheck and racecheck, demo, Python)
set -u
T0=$(date +%s); O=${OUT:-/tmp/out}; mkdir -p $O/tests
NCU= LIMIT=${LIMIT:-90} ROUNDS=${ROUNDS:-3} OUT=$O bash results/session34-scripts/p2.sh
B=/tmp/bb; mkdir -p $B; xz -dc .carry/s34/bundle-v2.tar.xz | tar -xf - -C $B
cd $B && STEP_TIMEOUT=${STEP:-200} LOG_DIR=$O/tests timeout $(( 570 - ($(date +%s) - T0) )) bash run-gpu-tests.sh 2>&1 | tail -45
echo "call took $(( $(date +%s) - T0 )) s"

#!/usr/bin/env bash
# For the next session's device calls: HEAD's GPU test bundle (.carry/s36/bundle.tar.xz, built from this session's
# last commit by scripts/gpu-bundle: tests/, octile, wheels/, repo/, run-gpu-tests.sh) — the whole GPU test suite,
# then GraphDot 0.8.1 side by side (the README's tables: run 28) and the gradient comparison. One part per call:
#   PART=tests    (~450 s)  every test binary with OCTILE_REQUIRE_GPU=1, memcheck, racecheck, demo, Python
#   PART=compare  (~300 s)  benches/peers/graphdot/compare.sh on six sets (CSETS to choose)
#   PART=gradient (~280 s)  benches/peers/graphdot/gradient.sh (eval_gradient, FreeSolv GPR)
# usage there: mkdir -p $OUT && OUT=$OUT PART=tests bash results/session36-scripts/p5.sh
# carry: [".carry/s36/bundle.tar.xz", ".carry/sets.tar.xz", ".peers"] (compare and gradient need .peers' wheels and sets).
# The bundle: `scripts/gpu-bundle`, then `tar -cf - tests octile wheels repo run-gpu-tests.sh` in .bundle/ through
# `xz -T1 --lzma2=preset=6,dict=768MiB` (the test binaries share most of their bytes: a dictionary larger than one
# binary finds them; xz -6's 8 MiB dictionary gave 80 MB, past the 64 MiB a call may carry)
set -u
T0=$(date +%s); O=${OUT:-/tmp/out}; B=/tmp/bb; mkdir -p $O $B /tmp/sets
[ -x $B/octile ] || xz -dc .carry/s36/bundle.tar.xz | tar -xf - -C $B
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
case ${PART:-tests} in
  tests)
    (cd $B && STEP_TIMEOUT=${STEP:-200} LOG_DIR=$O/tests timeout ${BUDGET:-540} bash run-gpu-tests.sh 2>&1 | tail -45) ;;
  compare)
    [ -f /tmp/sets/chembl.jsonl ] || xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets
    OUT=$O/compare OCTILE_RUNS=5 SETS="${CSETS:-nws:3 nws_smallq:3 ba:3 mutag:3 chembl:3 proteins:1}" SETS_DIR=/tmp/sets \
      PEER_WHEELS=.peers/wheels PEER_PREBUILT=.peers/prebuilt OCT=$B/octile timeout ${BUDGET:-540} bash benches/peers/graphdot/compare.sh 2>&1 | tail -25 ;;
  gradient)
    [ -f /tmp/sets/chembl.jsonl ] || xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets
    OUT=$O/gradient OCT_WHEEL=$B/wheels SETS_DIR=/tmp/sets FREESOLV_DIR=.peers/sets/freesolv PEER_WHEELS=.peers/wheels \
      PEER_PREBUILT=.peers/prebuilt timeout ${BUDGET:-540} bash benches/peers/graphdot/gradient.sh 2>&1 | tail -40 ;;
esac
echo "call took $(( $(date +%s) - T0 )) s"

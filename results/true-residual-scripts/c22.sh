#!/usr/bin/env bash
# session 26, call 2: the reference test (every solver path against the dense f64 solve, 520 random pairs) of base
# (ab0ff6c) and of scaled, each failure in full
set -u
B=/tmp/b; mkdir -p $B; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/tests-base.tar.xz | tar -xf - -C $B; xz -dc .carry/tests-s26.tar.xz | tar -xf - -C $B
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$PWD
timeout 200 $B/tb/reference --test-threads=2 > $O/reference-base.log 2>&1; echo "base reference rc=$?"; grep -E "^test |test result" $O/reference-base.log
grep -E "pairs failed|seed .*:" $O/reference-base.log | head -20
timeout 200 $B/t/reference random_pairs --test-threads=1 > $O/reference-scaled.log 2>&1; echo "scaled reference rc=$?"; grep -E "^test |test result" $O/reference-scaled.log
grep -E "pairs failed|seed .*:" $O/reference-scaled.log | head -20

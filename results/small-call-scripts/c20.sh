#!/usr/bin/env bash
# session 25, call 11 (review): the GPU tests resident, gradient, gpu_threads of the reviewed code
set -u
B=/tmp/b; mkdir -p $B; xz -dc .carry/tests-review.tar.xz | tar -xf - -C $B
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$PWD
for t in resident gradient gpu_threads; do
  timeout 120 $B/t/$t --test-threads=1 > /tmp/t_$t.log 2>&1; echo "test $t rc=$? $(grep -E '^test result' /tmp/t_$t.log | tr '\n' ' ')"; grep -E '^test |FAILED|panicked|SKIP' /tmp/t_$t.log | head -8
done

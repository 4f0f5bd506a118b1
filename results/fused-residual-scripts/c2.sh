#!/usr/bin/env bash
# session 27, call 2: the GPU tests of new (the fused gradient's true residual in f64; the true residual's rows by
# pieces in split launches, plain and fused), memcheck and racecheck of the split tests
set -u
B=/tmp/b; mkdir -p $B; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/s27/new.tar.xz | tar -xf - -C $B
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$PWD
for t in reference $(ls $B/t | grep -v reference); do
  timeout 200 $B/t/$t --test-threads=1 > $O/t_$t.log 2>&1; echo "test $t rc=$? $(grep -E '^test result' $O/t_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|SKIP|pairs failed|seed .*:' $O/t_$t.log | head -6
done
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 $B/t/resident --test-threads=1 > $O/ms_resident.log 2>&1; echo "memcheck resident rc=$? $(grep -E 'ERROR SUMMARY|test result' $O/ms_resident.log | tr '\n' ' ')"
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/t/resident walk_hub_rows --test-threads=1 > $O/rc_hub.log 2>&1; echo "racecheck resident walk_hub_rows rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|test result' $O/rc_hub.log | tr '\n' ' ')"
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/t/resident specialized_edge --test-threads=1 > $O/rc_spec.log 2>&1; echo "racecheck resident specialized_edge rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|test result' $O/rc_spec.log | tr '\n' ' ')"

#!/usr/bin/env bash
# session 25, call 9: GraphDot 0.8.1 vs octile (HEAD = s25f) side by side on the peer kit's sets; memcheck of the
# stream-pool test alone
set -u
B=/tmp/b; mkdir -p $B; xz -dc .carry/octile-s25f.xz > $B/octile; chmod +x $B/octile; [ -x $B/t/gpu_threads ] || { mkdir -p $B/t; xz -dc .carry/gpu_threads.xz > $B/t/gpu_threads; chmod +x $B/t/gpu_threads; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
OCTILE_RUNS=5 SETS="nws:3 nws_smallq:3 ba:3 mutag:3 chembl:3 proteins:1" SETS_DIR=.peers/sets PEER_WHEELS=.peers/wheels PEER_PREBUILT=.peers/prebuilt OCT=$B/octile OUT=${OUT:-/tmp/out} timeout 480 bash benches/peers/graphdot/compare.sh 2>&1 | tail -40
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 /tmp/b/t/gpu_threads a_call_borrows --test-threads=1 > /tmp/ms1.log 2>&1; echo "memcheck gpu_threads a_call_borrows rc=$? $(grep -E 'ERROR SUMMARY|test result' /tmp/ms1.log | tr '\n' ' ')"

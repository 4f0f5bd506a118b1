#!/usr/bin/env bash
# session 33: the whole GPU test bundle (every test binary with OCTILE_REQUIRE_GPU=1, memcheck and racecheck, demo, Python) of the bundle's build; CUBIN=name runs it with .carry/s33/NAME.cubin.xz's kernels (OCTILE_PTX_FILE)
set -u
B=/tmp/bb; mkdir -p $B; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/bundle.tar.xz | tar -xf - -C $B
if [ -n "${CUBIN:-}" ]; then xz -dc .carry/s33/$CUBIN.cubin.xz > $B/k.cubin; export OCTILE_PTX_FILE=$B/k.cubin; echo "kernels: $CUBIN"; fi
cd $B && STEP_TIMEOUT=240 LOG_DIR=$O bash run-gpu-tests.sh 2>&1 | tail -60

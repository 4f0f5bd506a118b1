#!/usr/bin/env bash
# session 32, call 1: the whole GPU bundle (72c04b4's build, host code = HEAD's) with the split module's kernels
# (cubin dac5e0d03bfcfef3 = HEAD's embedded kernels), then, in the time left, the gradient's in-memory cost (oct_grad.py)
set -u
T0=$(date +%s)
CUBIN=split bash results/session31-scripts/c2.sh
echo "bundle took $(( $(date +%s) - T0 )) s"
B=/tmp/bb; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $S; xz -dc .carry/sets.tar.xz | tar -xf - -C $S
export OCTILE_PTX_FILE=$B/k.cubin
left=$(( 570 - ($(date +%s) - T0) ))
if [ $left -gt 60 ]; then
  mkdir -p /tmp/py && python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/py $B/wheels/octile-*.whl
  CALLS=5 PYTHONPATH=/tmp/py timeout $left python3 benches/peers/graphdot/oct_grad.py $S $O/grad chembl nws mutag ba --no-fd 2>&1 | grep -v -i warn | tail -20
fi

#!/usr/bin/env bash
# session 31, one call for everything (the device was refused 11 times): 72c04b4's bundle with the split module's kernels
# 1. the gradient's in-memory cost (oct_grad.py, Python warm calls, no files) and the CLI's timeline (compute vs writes)
# 2. the whole GPU test bundle (tests, memcheck, racecheck, demo, Python)
set -u
B=/tmp/b; O=${OUT:-/tmp/out}; mkdir -p $B $O /tmp/sets
xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets
xz -dc .carry/bundle.tar.xz | tar -xf - -C $B
# the kernels of the resident module split (cubin dac5e0d03bfcfef3, host code as 72c04b4's) for everything below
xz -dc .carry/s31/split.cubin.xz > $B/split.cubin; export OCTILE_PTX_FILE=$B/split.cubin; echo "kernels: split cubin dac5e0d03bfcfef3"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
{
mkdir -p /tmp/py && python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/py $B/wheels/octile-*.whl
CALLS=5 PYTHONPATH=/tmp/py timeout 150 python3 benches/peers/graphdot/oct_grad.py $S $O/grad chembl nws mutag --no-fd 2>&1 | grep -v -i warn
for r in 1; do for g in "" --gradient; do
  $B/octile gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/k.npy --quiet $g
  python3 -c "import json; s=json.load(open('/tmp/k.json')); t=s.get('timeline',{}); print('cli chembl$g', '$r', s['seconds'], [x[5:9] for x in t.get('tiles',[])][:6], len(t.get('tiles',[])), 'tiles')"
done; done
} > $O/part1.log 2>&1
cat $O/part1.log | tail -30
cd $B && STEP_TIMEOUT=120 LOG_DIR=$O bash run-gpu-tests.sh > $O/tests.log 2>&1; echo "tests rc=$?"
sed -n '/==== summary/,$p' $O/tests.log

#!/usr/bin/env bash
# session 25, call 6: ChEMBL's gradient call against its plain call under the planner's existing knobs: product-form
# teams' warps-per-SM target (OCTILE_PRODUCT_WARPS_PER_SM, default 16) and the fused vectors in shared memory or not
# (OCTILE_FUSED_IN_SLICE, default 1); values against the default's
set -u
B=/tmp/b; mkdir -p $B; S=.peers/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/octile-s25e.xz > $B/oct; chmod +x $B/oct
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local tag=$1; shift
  env "$@" $B/oct gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/g_$tag.npy --quiet --gradient || echo "FAIL $tag"
  python3 -c "import json; s=json.load(open('/tmp/g_$tag.json')); print('g $tag %.4f' % s['seconds'])"; }
{
for r in 1 2 3; do
  $B/oct gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/p.npy --quiet; python3 -c "import json; s=json.load(open('/tmp/p.json')); print('plain %.4f' % s['seconds'])"
  run def
  for w in 8 12 24 32; do run w$w OCTILE_PRODUCT_WARPS_PER_SM=$w; done
  run f0 OCTILE_FUSED_IN_SLICE=0
  for w in 8 32; do run f0w$w OCTILE_FUSED_IN_SLICE=0 OCTILE_PRODUCT_WARPS_PER_SM=$w; done
done
} > $O/c16.log 2>&1
grep -v -E "^(g |plain )" $O/c16.log
echo "median plain $(grep -E '^plain ' $O/c16.log | awk '{print $2}' | sort -n | sed -n 2p)"
for t in def w8 w12 w24 w32 f0 f0w8 f0w32; do echo "median g $t $(grep -E "^g $t " $O/c16.log | awk '{print $3}' | sort -n | sed -n 2p)"; done
python3 - <<'PY'
import numpy as np
b=np.load('/tmp/g_def.npy'); gb=np.load('/tmp/g_def.grad.npy')
for t in ("w8","w12","w24","w32","f0","f0w8","f0w32"):
    a=np.load(f'/tmp/g_{t}.npy'); ga=np.load(f'/tmp/g_{t}.grad.npy')
    print(t, "K max rel %.2e" % float((abs(a-b)/abs(b)).max()), "dK max diff / max|dK| %.2e" % float(abs(ga-gb).max()/abs(gb).max()))
PY

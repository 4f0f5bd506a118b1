#!/usr/bin/env bash
# session 32, call 6 (the warm machine's last ~250 s): base vs C on the sqexp gradients (NWS, BA: the warp gradient
# sqexp entry), values; then the gradient's in-memory cost (oct_grad.py, warm Python calls, the bundle's wheel)
set -u
T0=$(date +%s); L=${LIMIT:-200}
B=/tmp/b; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
[ -x $B/octile ] || { mkdir -p $B; xz -dc .carry/bundle.tar.xz | tar -xf - -C $B; }
[ -f $S/chembl.jsonl ] || { mkdir -p $S; xz -dc .carry/sets.tar.xz | tar -xf - -C $S; }
[ -f $B/C.cubin ] || { xz -dc .carry/s31/split.cubin.xz > $B/base.cubin; xz -dc .carry/s32/C.cubin.xz > $B/C.cubin; }
run() { local v=$1 s=$2 tag=$3; shift 3
  OCTILE_PTX_FILE=$B/$v.cubin timeout 30 $B/octile gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"; }
for r in 1 2 3; do for v in base C; do run $v nws _g --gradient; run $v ba _g --gradient; done; done 2>&1 | tee $O/c6.log | grep -v -E "^(base|C) "
python3 -c "
import numpy as np
for s in ['nws', 'ba']:
    b=np.load(f'/tmp/k_{s}_base_g.npy'); a=np.load(f'/tmp/k_{s}_C_g.npy'); gb=np.load(f'/tmp/k_{s}_base_g.grad.npy'); ga=np.load(f'/tmp/k_{s}_C_g.grad.npy')
    print(s, 'C vs base: K bit-identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()), '; dK bit-identical', int((ga==gb).sum()), 'of', ga.size, 'max abs %.2e of max %.2e' % (float(abs(ga-gb).max()), float(abs(gb).max())))"
for s in nws_g ba_g; do for v in base C; do echo "median $v $s $(grep -E "^$v $s " $O/c6.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/c6.log) runs)"; done; done
echo "at $(( $(date +%s) - T0 )) s"
left=$(( L - 5 - ($(date +%s) - T0) ))
mkdir -p /tmp/py && python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/py $B/wheels/octile-*.whl
CALLS=5 PYTHONPATH=/tmp/py timeout $left python3 benches/peers/graphdot/oct_grad.py $S $O/grad chembl nws mutag --no-fd 2>&1 | grep -v -i warn | tail -14

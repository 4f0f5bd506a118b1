#!/usr/bin/env bash
# session 32, call 5 (~250 s of device time left): c4 cut down — three GPU test binaries with C's kernels, then c2's
# decisive timings (base / B / C alternating: MUTAG and NWS on the tile solver, MUTAG's f64 gradient, ChEMBL's and
# MUTAG's gradients) with value checks, rounds while LIMIT allows
set -u
T0=$(date +%s); L=${LIMIT:-230}
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/bundle.tar.xz | tar -xf - -C $B octile tests/resident tests/gradient tests/gpu_sanitize repo 2>/dev/null || xz -dc .carry/bundle.tar.xz | tar -xf - -C $B
xz -dc .carry/s31/split.cubin.xz > $B/base.cubin; for v in B C; do xz -dc .carry/s32/$v.cubin.xz > $B/$v.cubin; done
for s in mutag nws; do { echo 'solver = "tiles"'; cat $S/$s.toml; } > $S/${s}_t.toml; cp $S/$s.jsonl $S/${s}_t.jsonl; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
(
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$B/repo OCTILE_PTX_FILE=$B/C.cubin
for t in resident gradient gpu_sanitize; do
  timeout 80 $B/tests/$t --test-threads=4 > $O/t_C_$t.log 2>&1; echo "test C $t rc=$? $(grep -E '^test result' $O/t_C_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|SKIP' $O/t_C_$t.log | head -5
done
)
echo "tests took $(( $(date +%s) - T0 )) s"
V="base B C"
run() { local v=$1 s=$2 tag=$3; shift 3
  OCTILE_PTX_FILE=$B/$v.cubin timeout 30 $B/octile gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"; }
cmpv() { python3 -c "
import numpy as np, os
b=np.load('/tmp/k_$1_base$2.npy')
for v in ['B', 'C']:
    a=np.load(f'/tmp/k_$1_{v}$2.npy'); print('$1$2', v, 'vs base: bit-identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()))
    g1, g2 = '/tmp/k_$1_base$2.grad.npy', f'/tmp/k_$1_{v}$2.grad.npy'
    if os.path.exists(g1):
        gb=np.load(g1); ga=np.load(g2); print('$1$2', v, 'gradient: bit-identical', int((ga==gb).sum()), 'of', ga.size, 'max abs %.2e of max %.2e' % (float(abs(ga-gb).max()), float(abs(gb).max())))"; }
r=0
while [ $(( $(date +%s) - T0 )) -lt $(( L - 25 )) ] && [ $r -lt 5 ]; do r=$((r+1))
  for v in $V; do run $v mutag_t ""; run $v nws_t ""; run $v mutag _g64 --gradient --precision f64; run $v chembl _g --gradient; run $v mutag _g --gradient; done
  [ $r = 1 ] && for x in "mutag_t x" "nws_t x" "mutag _g64" "chembl _g" "mutag _g"; do set -- $x; [ "$2" = x ] && cmpv $1 "" || cmpv $1 $2; done
done 2>&1 | tee $O/c5.log | grep -v -E "^(base|B|C) "
for s in mutag_t nws_t mutag_g64 chembl_g mutag_g; do for v in $V; do echo "median $v $s $(grep -E "^$v $s " $O/c5.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/c5.log) runs)"; done; done

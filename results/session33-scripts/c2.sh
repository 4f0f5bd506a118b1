#!/usr/bin/env bash
# session 33, call 2: the tile solver's params as a shared reference (new = .carry/s33/bundle-new.tar.xz, this session's
# build) against HEAD's binary (old = .carry/bundle.tar.xz's octile): A/B rounds on the tile solver's sets (MUTAG and NWS
# with solver = "tiles", MUTAG's and NWS's f64 gradients), values compared; then new's whole GPU test bundle
set -u
T0=$(date +%s); L=${LIMIT:-150}
O=${OUT:-/tmp/out}; mkdir -p $O /tmp/sets /tmp/bo /tmp/bn; S=/tmp/sets
xz -dc .carry/sets.tar.xz | tar -xf - -C $S
xz -dc .carry/bundle.tar.xz | tar -xf - -C /tmp/bo octile
xz -dc .carry/s33/bundle-new.tar.xz | tar -xf - -C /tmp/bn
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for s in mutag nws; do { echo 'solver = "tiles"'; cat $S/$s.toml; } > $S/${s}_t.toml; cp $S/$s.jsonl $S/${s}_t.jsonl; done
run() { local v=$1 s=$2 tag=$3; shift 3
  timeout 40 /tmp/b$v/octile gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"; }
cmpv() { python3 -c "
import numpy as np, os
b=np.load('/tmp/k_$1_o$2.npy'); a=np.load('/tmp/k_$1_n$2.npy')
print('$1$2 new vs old: bit-identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()))
g1, g2 = '/tmp/k_$1_o$2.grad.npy', '/tmp/k_$1_n$2.grad.npy'
if os.path.exists(g1):
    gb=np.load(g1); ga=np.load(g2); print('$1$2 new vs old gradient: bit-identical', int((ga==gb).sum()), 'of', ga.size, 'max abs %.2e of max %.2e' % (float(abs(ga-gb).max()), float(abs(gb).max())))"; }
r=0
while [ $(( $(date +%s) - T0 )) -lt $(( L - 30 )) ] && [ $r -lt 5 ]; do r=$((r+1))
  for v in o n; do run $v mutag_t ""; run $v nws_t ""; run $v mutag _g64 --gradient --precision f64; run $v nws _g64 --gradient --precision f64; run $v mutag _64 --precision f64; done
  [ $r = 1 ] && for x in "mutag_t x" "nws_t x" "mutag _g64" "nws _g64" "mutag _64"; do set -- $x; [ "$2" = x ] && cmpv $1 "" || cmpv $1 $2; done
done 2>&1 | tee $O/ab.log | grep -v -E "^(o|n) "
for s in mutag_t nws_t mutag_g64 nws_g64 mutag_64; do for v in o n; do echo "median $v $s $(grep -E "^$v $s " $O/ab.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/ab.log) runs)"; done; done
echo "A/B took $(( $(date +%s) - T0 )) s"
cd /tmp/bn && STEP_TIMEOUT=${STEP:-150} LOG_DIR=$O/tests bash run-gpu-tests.sh 2>&1 | tail -42
echo "call took $(( $(date +%s) - T0 )) s"

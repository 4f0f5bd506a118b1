#!/usr/bin/env bash
# session 25, call 3: ablations of the warp entries' block size (OCTILE_WARPS_PER_BLOCK) and the launch order
# (OCTILE_LARGEST_FIRST) against the defaults (s25c = s25b + the two knobs, defaults unchanged) and old (4b79f33)
set -u
B=/tmp/b; mkdir -p $B; S=.peers/sets; O=${OUT:-/tmp/out}; mkdir -p $O
for v in old s25c; do xz -dc .carry/octile-$v.xz > $B/octile-$v; chmod +x $B/octile-$v; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
# variant name -> binary + environment
var() { case $1 in
  old) echo "old";; def) echo "s25c";; w1) echo "s25c OCTILE_WARPS_PER_BLOCK=1";; w2) echo "s25c OCTILE_WARPS_PER_BLOCK=2";;
  w4) echo "s25c OCTILE_WARPS_PER_BLOCK=4";; lf) echo "s25c OCTILE_LARGEST_FIRST=1";; w2lf) echo "s25c OCTILE_WARPS_PER_BLOCK=2 OCTILE_LARGEST_FIRST=1";;
  w1lf) echo "s25c OCTILE_WARPS_PER_BLOCK=1 OCTILE_LARGEST_FIRST=1";; esac; }
run() { local v=$1 s=$2; shift 2; set -- $(var $v) "$@"; local bin=$1; shift
  env "$@" $B/octile-$bin gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v.npy --quiet || echo "FAIL $v $s rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v.json')); print(f\"$v $s {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"
  cp /tmp/k_${s}_$v.json $O/sum_${s}_$v.$RANDOM.json 2>/dev/null; }
cmp() { python3 -c "
import numpy as np; b=np.load('/tmp/k_$1_old.npy'); a=np.load('/tmp/k_$1_$2.npy')
print('$1 $2 vs old: bit-identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()))"; }
VS="old def w1 w2 w4 lf w2lf w1lf"
{
for r in 1 2 3 4 5 6 7; do for v in $VS; do run $v mutag; done; done
for r in 1 2 3; do for v in $VS; do run $v chembl; run $v nws; done; done
for v in $VS; do cmp mutag $v; cmp chembl $v; cmp nws $v; done
} > $O/c13.log 2>&1
grep -v -E "^[a-z0-9]+ (mutag|chembl|nws) [0-9.]+ it" $O/c13.log
for s in mutag chembl nws; do for v in $VS; do echo "median $s $v $(grep -E "^$v $s " $O/c13.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/c13.log) runs)"; done; done
for v in def w1 w2 lf w2lf; do echo "== mutag -v $v"; set -- $(var $v); bin=$1; shift; env "$@" $B/octile-$bin -v gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/v.npy --quiet 2>&1 | grep -E "resident: launch|all launches" ; done
echo "== mutag -v chembl def (first launches)"; $B/octile-s25c -v gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/v.npy --quiet 2>&1 | grep -E "resident: launch" | head -12

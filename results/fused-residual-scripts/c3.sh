#!/usr/bin/env bash
# session 27, call 3: old (a51c991's kernels) vs new (this session's) through OCTILE_PTX_FILE, one binary, alternating;
# mid (call 1's kernels: the fused residual in f64, rows whole) for BA's gradient; BA at q = 0.0005 (values); GraphDot
# 0.8.1 side by side with new (run 23)
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/s27/new.tar.xz | tar -xf - -C $B; for v in old mid new; do xz -dc .carry/s27/$v.cubin.xz > $B/$v.cubin; done
sed 's/^q = .*/q = 0.0005/' $S/ba.toml > $S/ba_q.toml; cp $S/ba.jsonl $S/ba_q.jsonl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local v=$1 s=$2 tag=$3; shift 3
  OCTILE_PTX_FILE=$B/$v.cubin $B/octile-new gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']} nc {len(s['non_converged'])}\")"; }
{
for r in 1 2 3; do for v in old new; do for s in ba chembl nws nws_smallq; do run $v $s ""; run $v $s _g --gradient; done; done; run mid ba _g --gradient; done
for r in 1 2 3 4 5; do for v in old new; do run $v mutag ""; done; done
for v in old new; do run $v proteins ""; run $v ba_q ""; run $v ba_q _g --gradient; done
} > $O/times.log 2>&1
grep -v -E "^(old|mid|new) " $O/times.log
for s in ba ba_g chembl chembl_g nws nws_g nws_smallq nws_smallq_g mutag proteins ba_q ba_q_g; do for v in old mid new; do c=$(grep -cE "^$v $s " $O/times.log); [ $c -gt 0 ] && echo "median $v $s $(grep -E "^$v $s " $O/times.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($c runs) $(grep -E "^$v $s " $O/times.log | head -1 | cut -d' ' -f4-)"; done; done
for st in ba: ba_g:g chembl: chembl_g:g nws: mutag: proteins: ba_q: ba_q_g:g; do s=${st%%:*}; g=${st##*:}; python3 -c "
import numpy as np, os; b=np.load('/tmp/k_${s}_old.npy'); a=np.load('/tmp/k_${s}_new.npy')
m='$s new vs old: K identical %d of %d max rel %.2e' % (int((a==b).sum()), a.size, float((abs(a-b)/abs(b)).max()))
if '$g':
  gb=np.load('/tmp/k_${s}_old.grad.npy'); ga=np.load('/tmp/k_${s}_new.grad.npy'); m+=' | dK max abs/max %.2e' % float(abs(ga-gb).max()/abs(gb).max())
print(m)"; done
OUT=$O/compare OCTILE_RUNS=5 SETS="nws:3 nws_smallq:3 ba:3 mutag:3 chembl:3 proteins:1" SETS_DIR=.peers/sets PEER_WHEELS=.peers/wheels PEER_PREBUILT=.peers/prebuilt OCT=$B/octile-new bash benches/peers/graphdot/compare.sh > $O/compare.log 2>&1; echo "compare rc=$?"; tail -22 $O/compare.log

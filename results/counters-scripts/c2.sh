#!/usr/bin/env bash
# session 29, call 2: base (HEAD 30d5921) vs xb (the product form's gradient keeps x beside the slice): times alternating
# (one process a run, the summary's seconds), values compared; then the call-1 profile
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
for v in base xb; do xz -dc .carry/s29/octile-$v.xz > $B/octile-$v; chmod +x $B/octile-$v; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local v=$1 s=$2 tag=$3; shift 3
  $B/octile-$v gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"; }
cmp() { python3 -c "
import numpy as np, os; b=np.load('/tmp/k_$1_base$2.npy'); a=np.load('/tmp/k_$1_xb$2.npy')
print('$1$2 xb vs base: bit-identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()))
g1, g2 = '/tmp/k_$1_base$2.grad.npy', '/tmp/k_$1_xb$2.grad.npy'
if os.path.exists(g1):
    b=np.load(g1); a=np.load(g2); print('$1$2 gradient: bit-identical', int((a==b).sum()), 'of', a.size, 'max diff / max|dK| %.2e' % float(abs(a-b).max()/abs(b).max()))"; }
{
for r in 1 2 3 4; do for v in base xb; do run $v chembl _g --gradient; done; done
for r in 1 2 3; do for v in base xb; do run $v chembl "" ; run $v mutag _g --gradient; run $v nws _g --gradient; run $v ba _g --gradient; done; done
for x in "chembl _g" "chembl" "mutag _g" "nws _g" "ba _g"; do cmp $x; done
} > $O/c2.log 2>&1
grep -v -E "^(base|xb) " $O/c2.log
for s in chembl_g chembl mutag_g nws_g ba_g; do for v in base xb; do echo "median $v $s $(grep -E "^$v $s " $O/c2.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/c2.log) runs)"; done; done
for g in "" --gradient; do for v in base xb; do
  echo "== -v chembl ${g:-plain} $v"
  $B/octile-$v -v gram $S/chembl.jsonl --kernel $S/chembl.toml --out /tmp/c.npy --quiet --tiles-in-flight 1 $g 2>&1 | grep -E "resident: launch" > /tmp/v.log
  python3 - /tmp/v.log <<'PY'
import re,sys,collections
tot=collections.defaultdict(lambda:[0,0.0]); all_=0.0
for l in open(sys.argv[1]):
    m=re.search(r"launch (.*?), slice (\d+) words, (\d+) pairs, grid (\d+): ([0-9.]+) ms",l)
    if not m: continue
    k=m.group(1)+" slice "+m.group(2); tot[k][0]+=int(m.group(3)); tot[k][1]+=float(m.group(5)); all_+=float(m.group(5))
for k,(n,t) in sorted(tot.items(), key=lambda x:-x[1][1])[:10]: print(f"  {k}: {n} pairs {t:.2f} ms ({t/n*1e3:.2f} us/pair)")
print(f"  all launches (synchronized) {all_:.1f} ms")
PY
done; done
xz -dc .carry/s29/tests-xb.tar.xz | tar -xf - -C $B
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$PWD
for t in gradient resident gpu_smoke; do
  timeout 120 $B/t/$t --test-threads=1 > /tmp/t_$t.log 2>&1; echo "test $t rc=$? $(grep -E '^test result' /tmp/t_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|SKIP' /tmp/t_$t.log | head -5
done
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 $B/t/gradient --test-threads=1 > /tmp/ms1.log 2>&1; echo "memcheck gradient rc=$? $(grep -E 'ERROR SUMMARY|test result' /tmp/ms1.log | tr '\n' ' ')"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/octile-xb gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/ms.npy --quiet --gradient > /tmp/ms2.log 2>&1; echo "memcheck mutag gradient gram rc=$? $(grep -E 'ERROR SUMMARY' /tmp/ms2.log)"

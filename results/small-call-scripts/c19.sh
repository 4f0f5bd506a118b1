#!/usr/bin/env bash
# session 25, call 10: s25f (the landed code before) vs s25g (the jobs built on the planning thread beside the packing), alternating; GPU tests resident, gradient, gpu_threads of s25g
# packed) — MUTAG alternating (timelines), the other sets' values and times; the GPU tests of HEAD
# (OCTILE_REQUIRE_GPU=1) and compute-sanitizer memcheck on the stream-pool test and a MUTAG gram
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
for v in s25f s25g; do xz -dc .carry/octile-$v.xz > $B/octile-$v; chmod +x $B/octile-$v; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local v=$1 s=$2 tag=$3; shift 3
  $B/octile-$v gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"
  cp /tmp/k_${s}_$v$tag.json $O/sum_${s}_$v$tag.$RANDOM.json 2>/dev/null; }
cmp() { python3 -c "
import numpy as np, os; b=np.load('/tmp/k_$1_s25f$2.npy'); a=np.load('/tmp/k_$1_s25g$2.npy')
print('$1$2 s25g vs s25f: bit-identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()))
g1, g2 = '/tmp/k_$1_s25f$2.grad.npy', '/tmp/k_$1_s25g$2.grad.npy'
if os.path.exists(g1):
    b=np.load(g1); a=np.load(g2); print('$1$2 gradient: bit-identical', int((a==b).sum()), 'of', a.size, 'max diff / max|dK| %.2e' % float(abs(a-b).max()/abs(b).max()))"; }
{
for r in 1 2 3 4 5 6 7 8 9; do for v in s25f s25g; do run $v mutag ""; done; done; cmp mutag ""
for r in 1 2; do for v in s25f s25g; do for s in chembl nws nws_smallq ba proteins; do run $v $s ""; done; run $v chembl _g --gradient; run $v mutag _g --gradient; run $v mutag _64 --precision f64; done; done
for s in chembl nws nws_smallq ba proteins; do cmp $s ""; done; cmp chembl _g; cmp mutag _g; cmp mutag _64
} > $O/c17.log 2>&1
grep -v -E "^(s25f|s25g) " $O/c17.log
for s in mutag chembl nws nws_smallq ba proteins chembl_g mutag_g mutag_64; do for v in s25f s25g; do echo "median $v $s $(grep -E "^$v $s " $O/c17.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/c17.log) runs)"; done; done
for v in s25f s25g; do echo "== timeline mutag $v"; python3 scripts/timeline $O/sum_mutag_$v.*.json; done
xz -dc .carry/tests-s25g.tar.xz | tar -xf - -C $B
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$PWD
for t in resident gradient gpu_threads; do
  timeout 120 $B/t/$t --test-threads=1 > /tmp/t_$t.log 2>&1; echo "test $t rc=$? $(grep -E '^test result' /tmp/t_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|SKIP' /tmp/t_$t.log | head -5
done
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 $B/t/resident --test-threads=1 > /tmp/ms1.log 2>&1; echo "memcheck resident rc=$? $(grep -E 'ERROR SUMMARY|test result' /tmp/ms1.log | tr '\n' ' ')"

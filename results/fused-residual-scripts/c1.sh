#!/usr/bin/env bash
# session 27, call 1: the fused gradient solve's true residual in f64 (new) against the landed kernels (old, a51c991's
# cubin through OCTILE_PTX_FILE, same binary): the GPU tests of new (the new reference test among them), the new
# reference test against old's kernels, memcheck, `octile gram --gradient` times alternating, values
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/s27/new.tar.xz | tar -xf - -C $B; for v in old new; do xz -dc .carry/s27/$v.cubin.xz > $B/$v.cubin; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$PWD
echo "== new reference test against old kernels"
OCTILE_PTX_FILE=$B/old.cubin timeout 200 $B/t/reference gradient_calls_k --test-threads=1 > $O/t_reference_old.log 2>&1; echo "old reference gradient_calls_k rc=$?"; grep -E 'test result|pairs failed|seed .*:' $O/t_reference_old.log | head -12
echo "== GPU tests of new"
for t in $(ls $B/t); do
  timeout 200 $B/t/$t --test-threads=1 > $O/t_$t.log 2>&1; echo "test $t rc=$? $(grep -E '^test result' $O/t_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|SKIP|pairs failed|seed .*:' $O/t_$t.log | head -6
done
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 $B/t/gradient every_backend --test-threads=1 > $O/ms_gradient.log 2>&1; echo "memcheck gradient every_backend rc=$? $(grep -E 'ERROR SUMMARY|test result' $O/ms_gradient.log | tr '\n' ' ')"
echo "== times"
run() { local v=$1 s=$2 tag=$3; shift 3
  OCTILE_PTX_FILE=$B/$v.cubin $B/octile-new gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']} nc {len(s['non_converged'])}\")"; }
{
for r in 1 2 3 4 5; do for v in old new; do run $v chembl _g --gradient; run $v chembl ""; done; done
for r in 1 2 3; do for v in old new; do for s in nws nws_smallq ba mutag; do run $v $s _g --gradient; done; done; done
} > $O/times.log 2>&1
grep -v -E "^(old|new) " $O/times.log
for s in chembl_g chembl nws_g nws_smallq_g ba_g mutag_g; do for v in old new; do echo "median $v $s $(grep -E "^$v $s " $O/times.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/times.log) runs) $(grep -E "^$v $s " $O/times.log | head -1 | cut -d' ' -f4-)"; done; done
for s in chembl nws nws_smallq ba mutag; do python3 -c "
import numpy as np; b=np.load('/tmp/k_${s}_old_g.npy'); a=np.load('/tmp/k_${s}_new_g.npy'); gb=np.load('/tmp/k_${s}_old_g.grad.npy'); ga=np.load('/tmp/k_${s}_new_g.grad.npy')
print('$s gradient call new vs old: K identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()), '| dK identical', int((ga==gb).sum()), 'of', ga.size, 'max abs/max %.2e' % float(abs(ga-gb).max()/abs(gb).max()))"; done

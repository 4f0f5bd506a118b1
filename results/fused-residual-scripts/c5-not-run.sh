#!/usr/bin/env bash
# session 27, call 5: the fused solve's x beside the slice (OCTILE_FUSED_X_BESIDE=1, the build's default) against all
# fused vectors in the slice (=0, the same kernels) and against the landed kernels (base: 1d794ae's cubin through
# OCTILE_PTX_FILE, =0), one binary, alternating; values; GPU tests of the build (gradient, resident, the
# reference test's gradient call), memcheck
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
xz -dc .carry/s27/xb.tar.xz | tar -xf - -C $B; xz -dc .carry/s27/new.cubin.xz > $B/landed.cubin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local v=$1 s=$2 tag=$3; shift 3; local e="OCTILE_FUSED_X_BESIDE=0"; [ $v = on ] && e="OCTILE_FUSED_X_BESIDE=1"; [ $v = base ] && e="$e OCTILE_PTX_FILE=$B/landed.cubin"
  env $e $B/octile-xb gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']} nc {len(s['non_converged'])}\")"; }
{
for r in 1 2 3 4 5; do for v in base off on; do run $v chembl _g --gradient; done; done
for r in 1 2 3; do for v in base off on; do run $v chembl ""; for s in nws ba mutag nws_smallq; do run $v $s _g --gradient; done; done; done
} > $O/times.log 2>&1
grep -v -E "^(on|off|base) " $O/times.log
for s in chembl_g chembl nws_g ba_g mutag_g nws_smallq_g; do for v in base off on; do c=$(grep -cE "^$v $s " $O/times.log); echo "median $v $s $(grep -E "^$v $s " $O/times.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($c) $(grep -E "^$v $s " $O/times.log | awk '{print $3}' | tr '\n' ' ')"; done; done
for s in chembl nws ba mutag nws_smallq; do python3 -c "
import numpy as np; b=np.load('/tmp/k_${s}_off_g.npy'); a=np.load('/tmp/k_${s}_on_g.npy'); gb=np.load('/tmp/k_${s}_off_g.grad.npy'); ga=np.load('/tmp/k_${s}_on_g.grad.npy')
print('$s gradient call on vs off: K identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()), '| dK identical', int((ga==gb).sum()), 'of', ga.size, 'max abs/max %.2e' % float(abs(ga-gb).max()/abs(gb).max()))"; done
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$PWD
for t in gradient resident; do timeout 120 $B/t/$t --test-threads=1 > $O/t_$t.log 2>&1; echo "test $t rc=$? $(grep -E '^test result' $O/t_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|SKIP|failed:' $O/t_$t.log | head -6; done
timeout 150 $B/t/reference gradient_calls_k --test-threads=1 > $O/t_reference.log 2>&1; echo "test reference gradient_calls_k rc=$? $(grep -E '^test result' $O/t_reference.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|pairs failed|seed .*:' $O/t_reference.log | head -6
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 $B/t/gradient every_backend --test-threads=1 > $O/ms_gradient.log 2>&1; echo "memcheck gradient every_backend rc=$? $(grep -E 'ERROR SUMMARY|test result' $O/ms_gradient.log | tr '\n' ' ')"

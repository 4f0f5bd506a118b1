#!/usr/bin/env bash
# session 26, call 4: base (ab0ff6c) vs comp (the true residual's rows as compensated f32 sums of exact products) — times alternating, values,
# iterations; GraphDot 0.8.1 side by side with comp (run 22); the GPU tests of comp (reference among them); memcheck
set -u
B=/tmp/b; mkdir -p $B /tmp/sets; xz -dc .carry/sets.tar.xz | tar -xf - -C /tmp/sets; S=/tmp/sets; O=${OUT:-/tmp/out}; mkdir -p $O
for v in base comp; do xz -dc .carry/octile-$v.xz > $B/octile-$v; chmod +x $B/octile-$v; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
run() { local v=$1 s=$2 tag=$3; shift 3
  $B/octile-$v gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']} nc {len(s['non_converged'])}\")"; }
cmp() { python3 -c "
import numpy as np; b=np.load('/tmp/k_$1_base$2.npy'); a=np.load('/tmp/k_$1_comp$2.npy')
print('$1$2 comp vs base: bit-identical', int((a==b).sum()), 'of', a.size, 'max rel %.2e' % float((abs(a-b)/abs(b)).max()))"; }
{
for r in 1 2 3 4 5; do for v in base comp; do run $v mutag ""; done; done
for r in 1 2 3; do for v in base comp; do for s in chembl nws ba; do run $v $s ""; done; done; done
for r in 1 2; do for v in base comp; do run $v proteins ""; run $v nws_smallq ""; done; done
for s in mutag chembl nws nws_smallq ba proteins; do cmp $s ""; done
} > $O/c24.log 2>&1
grep -v -E "^(base|comp) " $O/c24.log
for s in mutag chembl nws nws_smallq ba proteins; do for v in base comp; do echo "median $v $s $(grep -E "^$v $s " $O/c24.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s " $O/c24.log) runs) $(grep -E "^$v $s " $O/c24.log | head -1 | cut -d' ' -f4-)"; done; done
OUT=$O/compare OCTILE_RUNS=5 SETS="nws:3 nws_smallq:3 ba:3 mutag:3 chembl:3 proteins:1" SETS_DIR=.peers/sets PEER_WHEELS=.peers/wheels PEER_PREBUILT=.peers/prebuilt OCT=$B/octile-comp bash benches/peers/graphdot/compare.sh > $O/compare.log 2>&1; echo "compare rc=$?"; tail -22 $O/compare.log
xz -dc .carry/tests-comp.tar.xz | tar -xf - -C $B
export OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$PWD
for t in $(ls $B/t); do
  timeout 150 $B/t/$t --test-threads=1 > $O/t_$t.log 2>&1; echo "test $t rc=$? $(grep -E '^test result' $O/t_$t.log | tr '\n' ' ')"; grep -E 'FAILED|panicked|SKIP|pairs failed|seed .*:' $O/t_$t.log | head -6
done
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 $B/t/resident --test-threads=1 > /tmp/ms1.log 2>&1; echo "memcheck resident rc=$? $(grep -E 'ERROR SUMMARY|test result' /tmp/ms1.log | tr '\n' ' ')"

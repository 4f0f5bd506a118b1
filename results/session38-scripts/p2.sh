#!/usr/bin/env bash
# session 38, the final code on one GPU. Parts (PART="tests cap compare gradient", any order):
#   tests     test binaries of the bundle (.carry/s38f/bundle.tar.xz, scripts/gpu-bundle) with OCTILE_REQUIRE_GPU=1
#             (TESTS: which; default the ones that run the changed entries and plans), then compute-sanitizer
#             memcheck of the gradient tests the changed entries run (MEMCHECK_FILTER)
#   cap       the any-κe block gradient at 256 threads and 136 registers (new) against 512 threads and 128
#             registers (old: .carry/s38/octile.xz, call 1's binary, the same kernels otherwise): NWS's graphs with a
#             second edge feature (κe of two terms: the interpreter's entries), --gradient; BA --gradient (a
#             one-term entry, unchanged: the runs' spread); alternating, medians, values new vs old
#   compare   GraphDot side by side (benches/peers/graphdot/compare.sh), the README's tables
#   gradient  GraphDot's eval_gradient side by side, FreeSolv GPR (benches/peers/graphdot/gradient.sh)
# usage there: OUT=$OUT PART="tests cap" bash results/session38-scripts/p2.sh
# carry: [".carry/s38f", ".carry/s38", ".carry/sets.tar.xz", ".peers"]
set -u
T0=$(date +%s); O=${OUT:-/tmp/out}; B=/tmp/bb; S=/tmp/sets; mkdir -p $O $B $S /tmp/bo
[ -x $B/octile ] || xz -dc .carry/s38f/bundle.tar.xz | tar -xf - -C $B
[ -f $S/chembl.jsonl ] || xz -dc .carry/sets.tar.xz | tar -xf - -C $S
[ -x /tmp/bo/octile ] || { xz -dc .carry/s38/octile.xz > /tmp/bo/octile && chmod +x /tmp/bo/octile; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for p in ${PART:-tests cap}; do case $p in
  tests)
    mkdir -p $O/tests
    for t in ${TESTS:-gradient resident gpu_smoke gpu_sanitize tiles gpu_batching weight_scale}; do
      t1=$(date +%s)
      (cd $B && OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$B/repo timeout ${STEP:-200} tests/$t --test-threads=1 > $O/tests/$t.txt 2>&1); rc=$?
      echo "---- $t rc=$rc ($(( $(date +%s) - t1 )) s)"; grep -E "^test |test result|SKIP|panicked|failed" $O/tests/$t.txt | head -30
    done
    t1=$(date +%s)
    (cd $B && OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$B/repo timeout ${STEP:-200} compute-sanitizer --tool memcheck --error-exitcode 1 tests/gradient --test-threads=1 ${MEMCHECK_FILTER:-every_kernel_form} > $O/tests/memcheck-gradient.txt 2>&1); rc=$?
    echo "---- memcheck gradient ${MEMCHECK_FILTER:-every_kernel_form} rc=$rc ($(( $(date +%s) - t1 )) s)"; grep -E "^test |test result|ERROR SUMMARY" $O/tests/memcheck-gradient.txt | head ;;
  cap)
    python3 - <<'PY'
import json
# NWS's graphs with a second edge feature: κe of two terms (length: square exponential, kind: Kronecker delta)
out = open('/tmp/sets/nws_gen.jsonl', 'w')
for line in open('/tmp/sets/nws.jsonl'):
    g = json.loads(line)
    for l in g['links']:
        l['kind'] = int(l['length'] * 10) % 3
    out.write(json.dumps(g, separators=(',', ':')) + '\n')
open('/tmp/sets/nws_gen.toml', 'w').write(open('/tmp/sets/nws.toml').read() + '[edge.kind]\nkernel = "kronecker_delta"\nh = 0.5\n')
PY
    run() { local v=$1 s=$2 tag=$3; shift 3
      local X=$B/octile; [ $v = o ] && X=/tmp/bo/octile
      timeout 60 $X gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
      python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"; }
    cmpv() { python3 -c "
import numpy as np
b=np.load('/tmp/k_$1_o$2.npy'); a=np.load('/tmp/k_$1_n$2.npy'); gb=np.load('/tmp/k_$1_o$2.grad.npy'); ga=np.load('/tmp/k_$1_n$2.grad.npy')
print('$1$2 new vs old: K max rel %.2e; dK max abs / max per hyperparameter: ' % float((abs(a-b)/abs(b)).max()) + ', '.join('%.2e' % float(abs(ga[..., h]-gb[..., h]).max() / abs(gb[..., h]).max()) for h in range(gb.shape[-1])))"; }
    CASES="nws_gen:_g:--gradient ba:_g:--gradient"
    # the CPU's f64 gradient of nws_gen's first 24 graphs: both against it
    $B/octile gram $S/nws_gen.jsonl --kernel $S/nws_gen.toml --rows 0:24 --cols 0:24 --gradient --backend cpu --out /tmp/cpu24.npy --quiet
    for v in o n; do X=$B/octile; [ $v = o ] && X=/tmp/bo/octile; $X gram $S/nws_gen.jsonl --kernel $S/nws_gen.toml --rows 0:24 --cols 0:24 --gradient --out /tmp/g24$v.npy --quiet; done
    python3 -c "
import numpy as np
k0=np.load('/tmp/cpu24.npy'); g0=np.load('/tmp/cpu24.grad.npy')
for v in 'on':
    k=np.load(f'/tmp/g24{v}.npy'); g=np.load(f'/tmp/g24{v}.grad.npy')
    print(f'nws_gen 24x24 {v} vs cpu f64: K max rel %.2e; dK max abs / max per hyperparameter: ' % float((abs(k-k0)/abs(k0)).max()) + ', '.join('%.2e' % float(abs(g[..., h]-g0[..., h]).max() / abs(g0[..., h]).max()) for h in range(g0.shape[-1])))"
    r=0
    while [ $(( $(date +%s) - T0 )) -lt ${LIMIT:-500} ] && [ $r -lt ${ROUNDS:-3} ]; do r=$((r+1))
      for v in o n; do for c in $CASES; do IFS=: read s tag args <<< "$c"; run $v $s "$tag" $args; done; done
      if [ $r = 1 ]; then for c in $CASES; do IFS=: read s tag args <<< "$c"; cmpv $s "$tag"; done; fi
    done 2>&1 | tee $O/cap.log | grep -v -E "^(o|n) "
    for c in $CASES; do IFS=: read s tag args <<< "$c"; for v in o n; do echo "median $v $s$tag $(grep -E "^$v $s$tag " $O/cap.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s$tag " $O/cap.log) runs)"; done; done ;;
  compare)
    OUT=$O/compare OCTILE_RUNS=5 SETS="${CSETS:-nws:3 nws_smallq:3 ba:3 mutag:3 chembl:3 proteins:1}" SETS_DIR=$S \
      PEER_WHEELS=.peers/wheels PEER_PREBUILT=.peers/prebuilt OCT=$B/octile timeout ${BUDGET:-560} bash benches/peers/graphdot/compare.sh 2>&1 | tail -25 ;;
  gradient)
    OUT=$O/gradient OCT_WHEEL=$B/wheels SETS_DIR=$S FREESOLV_DIR=.peers/sets/freesolv PEER_WHEELS=.peers/wheels \
      PEER_PREBUILT=.peers/prebuilt timeout ${BUDGET:-540} bash benches/peers/graphdot/gradient.sh 2>&1 | tail -40 ;;
esac; done
echo "call took $(( $(date +%s) - T0 )) s"

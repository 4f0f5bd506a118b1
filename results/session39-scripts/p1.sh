#!/usr/bin/env bash
# session 39: every GPU step of the gradient's paired fused walk and the 256-thread any-κe block
# gradient in one call (results/session39.md). Carry [".carry/s39", ".carry/sets.tar.xz"]:
#   bundle.tar.xz   scripts/gpu-bundle of the working tree (the change: "n"), the test binaries it runs
#   base.cubin.xz   the landed kernels (HEAD 94a4849), loaded by OCTILE_PTX_FILE into n's binary ("b")
#   patch.cubin.xz  session 38's patch as written (range2 its own walk, before one paired walk
#                   generic over the column), loaded the same way ("p")
#   octile-old.xz   n with the any-κe block gradient at 512 threads and 128 registers ("o")
#   peers/          GraphDot's wheels, the prebuilt pycuda, FreeSolv
#   1 tests     test binaries that run the changed entries and plans, OCTILE_REQUIRE_GPU=1
#   2 ab        b / p / n kernels alternating on --gradient (BA, NWS, NWS small q, ChEMBL, MUTAG), b / n on
#               the plain calls (the same kernels both sides: the runs' spread); values; ChEMBL f64 vs f32
#   3 cap       o vs n: NWS's graphs with a second edge feature (κe of two terms), --gradient; vs CPU f64
#   4 memcheck  the gradient tests' kernel forms
#   5 compare   GraphDot side by side (benches/peers/graphdot/compare.sh), the README's tables
#   6 gradient  GraphDot's eval_gradient side by side, FreeSolv GPR (benches/peers/graphdot/gradient.sh)
set -u
T0=$(date +%s); O=${OUT:-/tmp/out}; B=/tmp/bb; S=/tmp/sets; mkdir -p $O $B $S /tmp/bo
exec > >(tee $O/summary.txt) 2>&1
left() { echo $(( ${TOTAL:-570} - ($(date +%s) - T0) )); }
xz -dc .carry/s39/bundle.tar.xz | tar -xf - -C $B
xz -dc .carry/sets.tar.xz | tar -xf - -C $S
xz -dc .carry/s39/octile-old.xz > /tmp/bo/octile && chmod +x /tmp/bo/octile
xz -dc .carry/s39/base.cubin.xz > /tmp/bo/base.cubin
xz -dc .carry/s39/patch.cubin.xz > /tmp/bo/patch.cubin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "unpacked in $(( $(date +%s) - T0 )) s"
# ---- 1 tests
mkdir -p $O/tests
for t in ${TESTS:-gradient resident gpu_smoke gpu_sanitize tiles}; do
  t1=$(date +%s)
  (cd $B && OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$B/repo timeout 120 tests/$t --test-threads=1 > $O/tests/$t.txt 2>&1); rc=$?
  echo "---- $t rc=$rc ($(( $(date +%s) - t1 )) s)"; grep -E "^test |test result|SKIP|panicked|failed" $O/tests/$t.txt | head -30
done
# ---- shared by 2 and 3
run() { local v=$1 s=$2 tag=$3; shift 3
  local X=$B/octile; unset OCTILE_PTX_FILE
  [ $v = b ] && export OCTILE_PTX_FILE=/tmp/bo/base.cubin
  [ $v = p ] && export OCTILE_PTX_FILE=/tmp/bo/patch.cubin
  [ $v = o ] && X=/tmp/bo/octile
  timeout 60 $X gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
  unset OCTILE_PTX_FILE
  python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"; }
cmpv() { python3 -c "
import numpy as np, os
b=np.load('/tmp/k_$1_$3$2.npy'); a=np.load('/tmp/k_$1_n$2.npy')
line='$1$2 n vs $3: K max rel %.2e' % float((abs(a-b)/abs(b)).max())
g1, g2 = '/tmp/k_$1_$3$2.grad.npy', '/tmp/k_$1_n$2.grad.npy'
if os.path.exists(g1):
    gb=np.load(g1); ga=np.load(g2)
    line += '; dK max abs / max per hyperparameter: ' + ', '.join('%.2e' % float(abs(ga[..., h]-gb[..., h]).max() / abs(gb[..., h]).max()) for h in range(gb.shape[-1]))
print(line)"; }
medians() { local log=$1 cases=$2 vs=$3; for c in $cases; do IFS=: read s tag args <<< "$c"; for v in $vs; do echo "median $v $s$tag $(grep -E "^$v $s$tag " $log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s$tag " $log) runs)"; done; done; }
# ---- 2 ab: base vs patch vs new kernels on the gradient, base vs new on the plain calls
CASES="ba:_g:--gradient nws:_g:--gradient nws_smallq:_g:--gradient chembl:_g:--gradient mutag:_g:--gradient"
CASESP="ba:: nws:: chembl:: mutag::"
r=0
while [ $(left) -gt ${AB_UNTIL:-$(( ${TOTAL:-570} - 210 ))} ] && [ $r -lt ${AB_ROUNDS:-3} ]; do r=$((r+1))
  for v in b p n; do for c in $CASES; do IFS=: read s tag args <<< "$c"; run $v $s "$tag" $args; done; done
  for v in b n; do for c in $CASESP; do IFS=: read s tag args <<< "$c"; run $v $s "$tag" $args; done; done
  if [ $r = 1 ]; then for c in $CASES; do IFS=: read s tag args <<< "$c"; cmpv $s "$tag" b; cmpv $s "$tag" p; done; for c in $CASESP; do IFS=: read s tag args <<< "$c"; cmpv $s "$tag" b; done; fi
done 2>&1 | tee $O/ab.log | grep -v -E "^(b|p|n) "
medians $O/ab.log "$CASES" "b p n"
medians $O/ab.log "$CASESP" "b n"
# GPU f64 against f32 on ChEMBL (issue 33: ≤ 3×), two runs each
for k in 1 2; do run n chembl _f64 --precision f64; run n chembl "" ; done 2>&1 | tee $O/f64.log
echo "ab done at $(( $(date +%s) - T0 )) s"
# ---- 3 cap: old vs new on κe of two terms
python3 - <<'PY'
import json
out = open('/tmp/sets/nws_gen.jsonl', 'w')
for line in open('/tmp/sets/nws.jsonl'):
    g = json.loads(line)
    for l in g['links']:
        l['kind'] = int(l['length'] * 10) % 3
    out.write(json.dumps(g, separators=(',', ':')) + '\n')
open('/tmp/sets/nws_gen.toml', 'w').write(open('/tmp/sets/nws.toml').read() + '[edge.kind]\nkernel = "kronecker_delta"\nh = 0.5\n')
PY
$B/octile gram $S/nws_gen.jsonl --kernel $S/nws_gen.toml --rows 0:24 --cols 0:24 --gradient --backend cpu --out /tmp/cpu24.npy --quiet
for v in o n; do X=$B/octile; [ $v = o ] && X=/tmp/bo/octile; $X gram $S/nws_gen.jsonl --kernel $S/nws_gen.toml --rows 0:24 --cols 0:24 --gradient --out /tmp/g24$v.npy --quiet; done
python3 -c "
import numpy as np
k0=np.load('/tmp/cpu24.npy'); g0=np.load('/tmp/cpu24.grad.npy')
for v in 'on':
    k=np.load(f'/tmp/g24{v}.npy'); g=np.load(f'/tmp/g24{v}.grad.npy')
    print(f'nws_gen rows 0:24 --gradient {v} vs cpu f64: K max rel %.2e; dK max abs / max per hyperparameter: ' % float((abs(k-k0)/abs(k0)).max()) + ', '.join('%.2e' % float(abs(g[..., h]-g0[..., h]).max() / abs(g0[..., h]).max()) for h in range(g0.shape[-1])))"
CASES2="nws_gen:_g:--gradient"
r=0
while [ $(left) -gt ${CAP_UNTIL:-$(( ${TOTAL:-570} - 240 ))} ] && [ $r -lt ${AB_ROUNDS:-3} ]; do r=$((r+1))
  for v in o n; do for c in $CASES2; do IFS=: read s tag args <<< "$c"; run $v $s "$tag" $args; done; done
  if [ $r = 1 ]; then cmpv nws_gen _g o; fi
done 2>&1 | tee $O/cap.log | grep -v -E "^(o|n) "
medians $O/cap.log "$CASES2" "o n"
echo "cap done at $(( $(date +%s) - T0 )) s"
# ---- memcheck of the gradient tests' kernel forms
t1=$(date +%s)
[ $(left) -gt 110 ] && (cd $B && OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$B/repo timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 tests/gradient --test-threads=1 every_kernel_form > $O/tests/memcheck-gradient.txt 2>&1); rc=$?
echo "---- memcheck gradient every_kernel_form rc=$rc ($(( $(date +%s) - t1 )) s)"; grep -E "^test |test result|ERROR SUMMARY" $O/tests/memcheck-gradient.txt | head
# ---- 4 compare, 5 gradient (GraphDot 0.8.1)
P=.carry/s39/peers
[ $(left) -gt 100 ] && OUT=$O/compare OCTILE_RUNS=5 SETS="nws:3 nws_smallq:3 ba:3 mutag:3 chembl:3 proteins:1" SETS_DIR=$S \
  PEER_WHEELS=$P/wheels PEER_PREBUILT=$P/prebuilt OCT=$B/octile timeout $(( $(left) - 10 )) bash benches/peers/graphdot/compare.sh 2>&1 | tail -12
echo "compare done at $(( $(date +%s) - T0 )) s"
[ $(left) -gt 110 ] && OUT=$O/gradient OCT_WHEEL=$B/wheels SETS_DIR=$S FREESOLV_DIR=$P/sets/freesolv PEER_WHEELS=$P/wheels \
  PEER_PREBUILT=$P/prebuilt timeout $(( $(left) - 5 )) bash benches/peers/graphdot/gradient.sh 2>&1 | tail -30
echo "call took $(( $(date +%s) - T0 )) s"

#!/usr/bin/env bash
# session 37: d in two words (ρ first in each resident node row) on the GPU. One part per call:
#   PART=tests  (~450 s)  this session's GPU test bundle (.carry/s37/bundle.tar.xz): every test binary with
#                         OCTILE_REQUIRE_GPU=1, memcheck, racecheck, demo, Python
#   PART=ab     (~300 s)  structure-only values at q = 0.0005 (MUTAG and NWS graphs, features = "none"): old
#                         (HEAD before: .carry/s37/octile-old.xz) and new f32, new f64 on the GPU, each against
#                         the CPU f64; then old vs new timing, alternating, median of ROUNDS (plain and --gradient)
#                         (SO_SETS="so_unit so_weighted" SO_ONLY=1: cycles, paths, stars, trees of .carry/s37/so/ only)
#   PART=compare          GraphDot side by side (benches/peers/graphdot/compare.sh), the README's tables
#   PART=gradient         GraphDot's eval_gradient side by side, FreeSolv GPR (benches/peers/graphdot/gradient.sh)
# usage there: mkdir -p $OUT && OUT=$OUT PART=tests bash results/session37-scripts/p1.sh
# carry: [".carry/s37", ".carry/sets.tar.xz", ".peers"]
set -u
T0=$(date +%s); O=${OUT:-/tmp/out}; B=/tmp/bb; S=/tmp/sets; mkdir -p $O $B $S /tmp/bo
[ -x $B/octile ] || xz -dc .carry/s37/bundle.tar.xz | tar -xf - -C $B
[ -f $S/chembl.jsonl ] || xz -dc .carry/sets.tar.xz | tar -xf - -C $S
[ -x /tmp/bo/octile ] || { xz -dc .carry/s37/octile-old.xz > /tmp/bo/octile && chmod +x /tmp/bo/octile; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
case ${PART:-tests} in
  tests)
    mkdir -p $O/tests; (cd $B && STEP_TIMEOUT=${STEP:-200} LOG_DIR=$O/tests timeout ${BUDGET:-560} bash run-gpu-tests.sh 2>&1 | tail -45) ;;
  ab)
    printf 'q = 0.0005\nfeatures = "none"\n' > /tmp/so.toml
    cp .carry/s37/so/*.jsonl $S/ 2>/dev/null
    for s in ${SO_SETS:-mutag nws}; do
      $B/octile gram $S/$s.jsonl --kernel /tmp/so.toml --out /tmp/so_${s}_cpu.npy --backend cpu --quiet || echo "FAIL cpu $s"
      $B/octile gram $S/$s.jsonl --kernel /tmp/so.toml --out /tmp/so_${s}_new64.npy --precision f64 --quiet || echo "FAIL new f64 $s"
      $B/octile gram $S/$s.jsonl --kernel /tmp/so.toml --out /tmp/so_${s}_new32.npy --quiet || echo "FAIL new f32 $s"
      /tmp/bo/octile gram $S/$s.jsonl --kernel /tmp/so.toml --out /tmp/so_${s}_old32.npy --quiet || echo "FAIL old f32 $s"
      python3 - $s <<'PY'
import numpy as np, sys
s = sys.argv[1]; ref = np.load(f"/tmp/so_{s}_cpu.npy")
for v in ["new64", "new32", "old32"]:
    a = np.load(f"/tmp/so_{s}_{v}.npy"); rel = abs(a - ref) / abs(ref); i = np.unravel_index(rel.argmax(), rel.shape)
    print(f"structure-only q=0.0005 {s} {v} vs cpu f64: max rel {rel.max():.3e} at {i} ({a[i]:.12e} vs {ref[i]:.12e}), median {np.median(rel):.3e}")
PY
    done
    [ -n "${SO_ONLY:-}" ] && { echo "call took $(( $(date +%s) - T0 )) s"; exit 0; }
    run() { local v=$1 s=$2 tag=$3; shift 3
      local X=$B/octile; [ $v = o ] && X=/tmp/bo/octile
      timeout 60 $X gram $S/$s.jsonl --kernel $S/$s.toml --out /tmp/k_${s}_$v$tag.npy --quiet "$@" || echo "FAIL $v $s$tag rc=$?"
      python3 -c "import json; s=json.load(open('/tmp/k_${s}_$v$tag.json')); print(f\"$v $s$tag {s['seconds']:.4f} it {s['iterations']['median']} nc {len(s['non_converged'])}\")"; }
    cmpv() { python3 -c "
import numpy as np, os
b=np.load('/tmp/k_$1_o$2.npy'); a=np.load('/tmp/k_$1_n$2.npy')
print('$1$2 new vs old: max rel %.2e' % float((abs(a-b)/abs(b)).max()))
g1, g2 = '/tmp/k_$1_o$2.grad.npy', '/tmp/k_$1_n$2.grad.npy'
if os.path.exists(g1):
    gb=np.load(g1); ga=np.load(g2); print('$1$2 new vs old gradient: max abs %.2e of max %.2e' % (float(abs(ga-gb).max()), float(abs(gb).max())))"; }
    CASES=${CASES:-"ba:: ba:_g:--gradient chembl:: chembl:_g:--gradient nws:: nws_smallq:: mutag:: mutag:_g:--gradient proteins::"}
    r=0
    while [ $(( $(date +%s) - T0 )) -lt $(( ${LIMIT:-420} - 40 )) ] && [ $r -lt ${ROUNDS:-3} ]; do r=$((r+1))
      for v in o n; do for c in $CASES; do IFS=: read s tag args <<< "$c"; run $v $s "$tag" $args; done; done
      if [ $r = 1 ]; then for c in $CASES; do IFS=: read s tag args <<< "$c"; cmpv $s "$tag"; done; fi
    done 2>&1 | tee $O/ab.log | grep -v -E "^(o|n) "
    for c in $CASES; do IFS=: read s tag args <<< "$c"; for v in o n; do echo "median $v $s$tag $(grep -E "^$v $s$tag " $O/ab.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ($(grep -cE "^$v $s$tag " $O/ab.log) runs)"; done; done ;;
  compare)
    OUT=$O/compare OCTILE_RUNS=5 SETS="${CSETS:-nws:3 nws_smallq:3 ba:3 mutag:3 chembl:3 proteins:1}" SETS_DIR=$S \
      PEER_WHEELS=.peers/wheels PEER_PREBUILT=.peers/prebuilt OCT=$B/octile timeout ${BUDGET:-560} bash benches/peers/graphdot/compare.sh 2>&1 | tail -25 ;;
  sog)   # structure-only at q = 0.0005 with --gradient: K and ∂K/∂(p, q) of old and new f32 against the CPU f64
    printf 'q = 0.0005\nfeatures = "none"\n' > /tmp/so.toml
    for s in so_unit so_weighted; do
      $B/octile gram .carry/s37/so/$s.jsonl --kernel /tmp/so.toml --out /tmp/sog_${s}_cpu.npy --backend cpu --gradient --quiet || echo "FAIL cpu $s"
      $B/octile gram .carry/s37/so/$s.jsonl --kernel /tmp/so.toml --out /tmp/sog_${s}_new32.npy --gradient --quiet || echo "FAIL new $s"
      /tmp/bo/octile gram .carry/s37/so/$s.jsonl --kernel /tmp/so.toml --out /tmp/sog_${s}_old32.npy --gradient --quiet || echo "FAIL old $s"
      python3 - $s <<'PY'
import numpy as np, sys
s = sys.argv[1]; k0 = np.load(f"/tmp/sog_{s}_cpu.npy"); g0 = np.load(f"/tmp/sog_{s}_cpu.grad.npy")
for v in ["new32", "old32"]:
    k = np.load(f"/tmp/sog_{s}_{v}.npy"); g = np.load(f"/tmp/sog_{s}_{v}.grad.npy")
    rel = abs(k - k0) / abs(k0); i = np.unravel_index(rel.argmax(), rel.shape)
    gd = [float(abs(g[..., h] - g0[..., h]).max() / abs(g0[..., h]).max()) for h in range(g0.shape[-1])]
    print(f"structure-only q=0.0005 --gradient {s} {v} vs cpu f64: K max rel {rel.max():.3e} at {i} ({k[i]:.12e} vs {k0[i]:.12e}); dK max abs / max per hyperparameter (p, q): " + ", ".join(f"{x:.3e}" for x in gd))
PY
    done ;;
  gradient)
    OUT=$O/gradient OCT_WHEEL=$B/wheels SETS_DIR=$S FREESOLV_DIR=.peers/sets/freesolv PEER_WHEELS=.peers/wheels \
      PEER_PREBUILT=.peers/prebuilt timeout ${BUDGET:-540} bash benches/peers/graphdot/gradient.sh 2>&1 | tail -40 ;;
esac
echo "call took $(( $(date +%s) - T0 )) s"

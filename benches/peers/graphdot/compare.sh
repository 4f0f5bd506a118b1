#!/usr/bin/env bash
# octile and GraphDot 0.8.1 side by side on one GPU, in one run, on the same node-link sets;
# prints a table of times and ratios and the largest relative difference between the two Gram matrices.
#
# On the GPU machine, from the project root (setup here: benches/peers/graphdot/setup.sh, see README.md
# beside this file):
#   SETS_DIR=.peers/sets PEER_WHEELS=.peers/wheels PEER_PREBUILT=.peers/prebuilt OCT=.bundle/octile \
#     bash benches/peers/graphdot/compare.sh
# SETS="nws:3 ba:3 ..." (NAME:WARM = GraphDot warm calls after its call 1; NAME.jsonl + NAME.spec.json +
# NAME.toml in SETS_DIR, as make_sets.py writes them); OCTILE_RUNS=3 (octile: one process per run, the
# minimum of the in-process Gram times is quoted); OCTILE_ARGS (extra `octile gram` flags).
set -uo pipefail
KIT=${KIT:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
KIT=$(cd "$KIT" && pwd); D=$(cd "${SETS_DIR:?set SETS_DIR}" && pwd); OCT=$(readlink -f "${OCT:?set OCT to the octile binary}")
SETS=${SETS:-"nws:3 nws_smallq:3 ba:3 mutag:3"}
OUT=${OUT:-/tmp/compare_out}; W=/tmp/compare_work; mkdir -p "$OUT" "$W"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# ---- octile: one process per run
for s in $SETS; do
  n=${s%%:*}
  for r in $(seq 1 "${OCTILE_RUNS:-3}"); do
    t0=$(date +%s.%N)
    timeout 600 "$OCT" gram "$D/$n.jsonl" --kernel "$D/$n.toml" --out "$W/oc_$n.npy" --quiet ${OCTILE_ARGS:-} \
      || echo "octile $n run $r FAILED rc=$?"
    t1=$(date +%s.%N)
    python3 -c "import json; s=json.load(open('$W/oc_$n.json')); print('octile $n run $r: process %.3f s, gram %.3f s, %s %s, iterations %s, non-converged %d' % ($t1-$t0, s['seconds'], s['backend'], s['precision'], s['iterations'], len(s['non_converged'])))"
    cp "$W/oc_$n.json" "$W/oc_${n}_run$r.json"
  done
done
# ---- GraphDot 0.8.1 + pycuda (prebuilt wheel for CPython 3.12, else built from the sdist)
P=${PEER_WHEELS:-$KIT/wheels}; T=/tmp/gd; mkdir -p $T
export CUDA_ROOT=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --target $T \
  $P/pytools-*.whl $P/platformdirs-*.whl $P/mako-*.whl $P/siphash24-*.whl || exit 1
PC=$(ls ${PEER_PREBUILT:-$KIT/prebuilt}/pycuda-*-cp312-*.whl 2>/dev/null | head -1)
if [ -z "$PC" ] || [ "$(python3 -c 'import sys; print(sys.version_info[:2] == (3, 12))')" != True ]; then
  B=/tmp/gd_build; rm -rf $B; mkdir -p $B/src $B/dist
  tar -xzf $P/pycuda-2026.1.tar.gz -C $B/src; SRC=$B/src/pycuda-2026.1
  printf "CUDA_ROOT = '/usr/local/cuda'\nCUDA_ENABLE_CURAND = False\nCUDA_ENABLE_GL = False\nUSE_SHIPPED_BOOST = True\nCXXFLAGS = ['-g0']\n" > $SRC/siteconf.py
  (cd $SRC && python3 $KIT/build_pycuda.py $B/dist $(nproc)) > $B/build.log 2>&1 || { tail -20 $B/build.log; exit 1; }
  PC=$(ls $B/dist/pycuda-*.whl | head -1)
fi
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --target $T "$PC" || exit 1
tar -xzf $P/graphdot-0.8.1.tar.gz -C $T --strip-components=1 graphdot-0.8.1/graphdot || exit 1
export PYTHONPATH="$T:$KIT/shims" PYCUDA_CACHE_DIR=/tmp/pycuda-cache; mkdir -p $PYCUDA_CACHE_DIR
python3 "$KIT/gd_sets.py" "$D" "$W" $SETS 2>&1 | grep -v -i warn
# ---- table
SETS_DIR_ABS=$D python3 - "$W" $SETS <<'PY' | tee "$OUT/compare.md"
import glob, json, os, sys, numpy as np
w = sys.argv[1]; gd = json.load(open(f"{w}/gd_summary.json"))
# the GPU's FP32 rate in multiply-adds per second: SMs x 128 FP32 lanes x clock
try:
    import cupy as cp
    a = cp.cuda.Device().attributes
    fma_per_s = a["MultiProcessorCount"] * 128 * a["ClockRate"] * 1e3
except Exception:
    fma_per_s = float("nan")
# multiply-adds the solve needs / FP32 rate: per CG iteration and pair, nnz(A)·nnz(A') for the
# off-diagonal XMV and 6·n·n' for the diagonal, two dot products and three vector updates
def essential_s(n, iters):
    nodes, nnz = [], []
    for line in open(f"{os.environ['SETS_DIR_ABS']}/{n}.jsonl"):
        g = json.loads(line); nodes.append(len(g["nodes"])); nnz.append(sum(1 if l["source"] == l["target"] else 2 for l in g["links"]))
    a, b = np.array(nnz, float), np.array(nodes, float)
    tri = lambda v: (v.sum() ** 2 + (v * v).sum()) / 2   # sum over pairs i <= j of v_i v_j
    return (tri(a) + 6 * tri(b)) * iters / fma_per_s
print(f"GPU FP32 rate: {fma_per_s / 1e12:.2f} T multiply-adds/s")
print("| set | pairs | octile gram (min of runs) | GraphDot call 1 | GraphDot warm (median) | octile speed-up vs warm | vs call 1 | max rel diff | essential work (median iterations) | octile share of essential |")
print("|---|---|---|---|---|---|---|---|---|---|")
for s in sys.argv[2:]:
    n = s.split(":")[0]
    runs = [json.load(open(f))["seconds"] for f in sorted(glob.glob(f"{w}/oc_{n}_run*.json"))]
    if n not in gd or not runs:
        print(f"| {n} | missing | | | | | | |"); continue
    g = gd[n]; K = np.load(f"{w}/oc_{n}.npy"); R = np.load(f"{w}/gd_{n}.npy")
    R = np.triu(R) + np.triu(R, 1).T
    rel = float(np.max(np.abs(K - R) / np.abs(R)))
    oc = min(runs); warm = g["warm_median_s"] or g["call1_s"]
    it = json.load(open(f"{w}/oc_{n}.json"))["iterations"]["median"]
    ess = essential_s(n, it)
    print(f"| {n} | {g['pairs']} | {oc:.3f} s | {g['call1_s']:.3f} s | {warm:.3f} s | {warm / oc:.2f}x | {g['call1_s'] / oc:.2f}x | {rel:.1e} | {ess * 1e3:.2f} ms ({it}) | {100 * ess / oc:.1f} % |")
PY
cp "$W/gd_summary.json" "$OUT/" 2>/dev/null

#!/usr/bin/env bash
# Hyperparameter gradients side by side, in one GPU run: GraphDot 0.8.1's eval_gradient (gd_grad.py) and
# octile's (oct_grad.py) on the node-link sets, then Gaussian-process regression of FreeSolv with GraphDot's
# own GaussianProcessRegressor (gd_gpr.py) and with octile's kernel inside scikit-learn's
# (python/examples/gpr_freesolv.py), fixed and fitted hyperparameters; prints two Markdown tables
# (grad_compare.py) and leaves them in $OUT/gradient.md.
#
# On the GPU machine, from the project root, carrying .peers/ (benches/peers/graphdot/setup.sh) and octile's
# Python wheel (see OCT_WHEEL):
#   SETS_DIR=.peers/sets PEER_WHEELS=.peers/wheels PEER_PREBUILT=.peers/prebuilt bash benches/peers/graphdot/gradient.sh
# SETS="nws ba mutag chembl" (NAME.jsonl + NAME.spec.json in SETS_DIR, as make_sets.py writes them);
# FREESOLV_DIR (default $SETS_DIR/freesolv: freesolv_set.py's output); OCT_WHEEL: octile's wheel, or a
# folder holding it (default: the first of .whl/, .carry/, .carry/wheels/, .bundle/wheels/ holding one, else
# the wheels of .carry/bundle.tar.xz; build one with `cd python && ../.venv/bin/maturin build --release -o ../.whl`);
# OCT_BACKEND=cuda (octile's backend for both); OUT=/tmp/gradient_out; SKIP_GD=1 / SKIP_OCT=1 skip a side;
# GPR_ARGS (extra gpr_freesolv.py flags, e.g. --limit 60). A CPU-only smoke test of octile's side:
#   SKIP_GD=1 OCT_BACKEND=cpu SETS=mutag GPR_ARGS='--limit 60' SETS_DIR=... FREESOLV_DIR=... bash gradient.sh
set -uo pipefail
KIT=${KIT:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
KIT=$(cd "$KIT" && pwd); D=$(cd "${SETS_DIR:?set SETS_DIR}" && pwd)
FS=$(cd "${FREESOLV_DIR:-$D/freesolv}" && pwd) || { echo "no FreeSolv set (FREESOLV_DIR; freesolv_set.py writes it)"; exit 1; }
REPO=$(cd "$KIT/../../.." && pwd)
GPR=${GPR_EXAMPLE:-$REPO/python/examples/gpr_freesolv.py}
SETS=${SETS:-"nws ba mutag chembl"}
OUT=${OUT:-/tmp/gradient_out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# ---- octile's Python package from its wheel (abi3), beside the image's numpy, networkx, scikit-learn
OW=${OCT_WHEEL:-}
if [ -z "$OW" ]; then
  for c in "$REPO/.whl" "$REPO/.carry" "$REPO/.carry/wheels" "$REPO/.bundle/wheels"; do ls "$c"/octile-*.whl >/dev/null 2>&1 && { OW=$c; break; }; done
fi
if [ -z "$OW" ] && [ -f "$REPO/.carry/bundle.tar.xz" ]; then
  mkdir -p /tmp/oct_bundle && tar -xJf "$REPO/.carry/bundle.tar.xz" -C /tmp/oct_bundle --wildcards './wheels/octile-*' && OW=/tmp/oct_bundle/wheels
fi
[ -d "$OW" ] && OW=$(ls -t "$OW"/octile-*.whl | head -1)
[ -f "$OW" ] || { echo "no octile wheel (OCT_WHEEL; scripts/gpu-bundle builds one)"; exit 1; }
O=/tmp/oct_py; rm -rf $O
python3 -m pip install -q --no-index --no-deps --no-compile --target $O "$OW" || exit 1
echo "octile wheel: $(basename "$OW"); $(PYTHONPATH=$O python3 -c 'import octile, sklearn, numpy; print("octile", octile.__version__, "GPU", octile.gpu_available(), "scikit-learn", sklearn.__version__, "numpy", numpy.__version__)')"
# ---- GraphDot 0.8.1 + pycuda, as compare.sh installs them (prebuilt pycuda for CPython 3.12, else built)
P=${PEER_WHEELS:-$KIT/wheels}; T=/tmp/gd; mkdir -p $T
export CUDA_ROOT=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
if [ "${SKIP_GD:-0}" != 1 ]; then
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
fi
export PYCUDA_CACHE_DIR=/tmp/pycuda-cache; mkdir -p $PYCUDA_CACHE_DIR
gd() { PYTHONPATH="$T:$KIT/shims" timeout 600 python3 "$@" 2>&1 | grep -v -i warn; }
oc() { PYTHONPATH="$O" timeout 600 python3 "$@" 2>&1; }
# ---- gradients: plain vs eval_gradient=True calls on the sets
[ "${SKIP_GD:-0}" = 1 ] || gd "$KIT/gd_grad.py" "$D" "$OUT" $SETS || echo "gd_grad.py FAILED"
[ "${SKIP_OCT:-0}" = 1 ] || oc "$KIT/oct_grad.py" "$D" "$OUT" $SETS --backend "${OCT_BACKEND:-cuda}" || echo "oct_grad.py FAILED"
# ---- Gaussian-process regression of FreeSolv, fixed and fitted hyperparameters
[ "${SKIP_GD:-0}" = 1 ] || gd "$KIT/gd_gpr.py" "$FS" "$OUT" || echo "gd_gpr.py FAILED"
[ "${SKIP_OCT:-0}" = 1 ] || oc "$GPR" "$FS" "$OUT" "${OCT_BACKEND:-cuda}" --also-tol 1e-5 ${GPR_ARGS:-} || echo "gpr_freesolv.py FAILED"
# ---- tables
echo
python3 "$KIT/grad_compare.py" "$OUT" | tee "$OUT/gradient.md"

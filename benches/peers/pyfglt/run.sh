#!/usr/bin/env bash
# On the GPU machine, from the repository root (after pack.sh here):
#   bash benches/peers/pyfglt/run.sh OUT [bench.py options, e.g. --graphs delaunay,road]
# Installs the carried wheels (.peers/pyfglt/wheels, or PYFGLT_CARRY=DIR) with pip, offline, into
# /tmp/pyfglt-site on PYTHONPATH (not a new venv: python3 there is itself the image's venv, whose
# numpy, scipy, pandas and networkx a new venv would not see), unpacks octile, and runs bench.py;
# writes OUT/pyfglt-bench.md, OUT/pyfglt-bench.json and OUT/bench.log.
set -uo pipefail
OUT=${1:?usage: run.sh OUT [bench.py options]}; shift
KIT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CARRY=${PYFGLT_CARRY:-.peers/pyfglt}
SITE=/tmp/pyfglt-site BIN=/tmp/pyfglt-bin
mkdir -p "$OUT" "$SITE" "$BIN"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --find-links "$CARRY/wheels" --target "$SITE" pyfglt==0.3.0 typeguard || exit 1
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
if ! python3 -c "import pyfglt.fglt" 2>/dev/null; then
  # a machine without pyfglt's other dependencies: the wheels of fetch-wheels.sh --all
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$CARRY"/wheels/*.whl || exit 1
fi
python3 -c "import pyfglt.fglt, scipy, numpy; print('pyfglt', pyfglt.fglt.__file__, 'scipy', scipy.__version__, 'numpy', numpy.__version__)" || exit 1
if [ -f "$CARRY/octile.xz" ]; then
  python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" "$CARRY/octile.xz" "$BIN/octile"
  chmod +x "$BIN/octile"; cp "$CARRY/COMMIT" "$BIN/" 2>/dev/null
  OCT=${OCT:-$BIN/octile}
fi
OCT=${OCT:-target/release/octile}
"$OCT" info || true
python3 "$KIT/bench.py" --octile "$OCT" --out "$OUT" --budget "${BUDGET:-540}" "$@" 2>&1 | tee "$OUT/bench.log"
exit "${PIPESTATUS[0]}"

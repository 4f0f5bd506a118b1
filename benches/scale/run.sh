#!/usr/bin/env bash
# The scale benchmark on the device (one GPU; benches/scale/scale.py says what it measures).
# Carries: the octile CLI (OCT), the octile wheel and Dask's wheels (WHEELS: a folder of .whl, e.g.
# `pip download "dask[array]==2026.8.0" "distributed==2026.8.0" --only-binary=:all: --python-version 3.12
# --platform manylinux2014_x86_64 -d .carry/wheels`: pinned together, as scripts/test-python does —
# unpinned, a dask release without its distributed yet makes pip pick a distributed that does not
# import), and data/ (scripts/fetch-datasets chembl nci).
# Usage: OCT=/tmp/quick/octile WHEELS=.carry/wheels OUT=$OUT/scale bash benches/scale/run.sh
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OCT=${OCT:-octile}
WHEELS=${WHEELS:-$REPO/.carry/wheels}
OUT=${OUT:-/tmp/scale}
T=/tmp/scale-py
mkdir -p "$OUT" "$T"
# numpy is the device's own; everything else from the carried wheels, without an index
python3 -m pip install -q --no-index --no-deps --no-compile --target $T $(ls "$WHEELS"/*.whl | grep -v '/numpy-') || exit 1
PYTHONPATH=$T python3 -c 'import octile, dask, distributed, numpy; print("octile", octile.__version__, octile.gpu_available(), "dask", dask.__version__, "numpy", numpy.__version__)'
PYTHONPATH=$T python3 "$REPO/benches/scale/scale.py" --octile "$OCT" --data "${DATA:-$REPO/data}" --out "$OUT" "$@"
PYTHONPATH=$T python3 "$REPO/benches/scale/report.py" "$OUT/scale.json" | tee "$OUT/scale.md"

#!/usr/bin/env bash
# Runs inside .bundle/ on a GPU machine: every test binary with OCTILE_REQUIRE_GPU=1 (a missing GPU
# fails instead of skipping), compute-sanitizer memcheck and racecheck on the GPU test binaries,
# and `octile demo`; prints one summary line per step and exits non-zero if any failed.
# Logs go to $LOG_DIR (default: the bundle folder); each step is limited to $STEP_TIMEOUT seconds.
set -u
cd "$(dirname "$0")"
LOG_DIR=${LOG_DIR:-.}
STEP_TIMEOUT=${STEP_TIMEOUT:-300}
export OCTILE_REQUIRE_GPU=1
export OCTILE_REPO=$PWD/repo   # data/MUTAG and tests/fixtures for the tests that read the checkout
# pyfglt for the graphlet tests: the bundle's wheels, installed offline beside the image's python3
if [ -d wheels ] && python3 -m pip install -q --no-index --no-deps --no-compile --find-links wheels --target "$PWD/pysite" pyfglt==0.3.0 typeguard >/dev/null 2>&1; then
  export PYTHONPATH=$PWD/pysite${PYTHONPATH:+:$PYTHONPATH} OCTILE_PYTHON=$(command -v python3)
fi
declare -a summary
fail=0
step() { # name, command...
  local name=$1; shift
  local t0=$(date +%s.%N)
  local log="$LOG_DIR/log-$name.txt"
  if timeout "$STEP_TIMEOUT" "$@" > "$log" 2>&1; then r=PASS; else r="FAIL(rc=$?)"; fail=1; fi
  local dt=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')" 2>/dev/null || echo "?")
  summary+=("$r  $name  (${dt}s)")
  echo "---- $name: $r"; grep -E "^test |SKIP|PASS|FAIL|ERROR|q=|panicked|mismatch|pairs|iterations|ERROR SUMMARY|RACECHECK SUMMARY|error" "$log" | grep -v "GPU NVIDIA" | head -40
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
for t in tests/*; do
  step "$(basename "$t")" "$t" --test-threads=1 --nocapture
done
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    for t in gpu_smoke gpu_sanitize primitives; do
      step "$tool-$t" compute-sanitizer --tool "$tool" --error-exitcode 1 "tests/$t" --test-threads=1
    done
  done
else
  summary+=("SKIP compute-sanitizer (not on PATH)")
fi
[ -x ./octile ] && step demo ./octile demo
# the Python package: its wheel and pytest beside the image's python3 (numpy, networkx, scikit-learn
# there), the whole pytest suite (test_gpu.py: the package's GPU matrix = the CLI's), and its
# overhead over the CLI on ChEMBL (repo/data/chembl_drugs.csv: gpu-bundle copies it when fetched)
if ls wheels/octile-*.whl >/dev/null 2>&1 && python3 -m pip install -q --no-index --no-deps --no-compile --find-links wheels --target "$PWD/pysite" octile pytest pluggy iniconfig packaging pygments >/dev/null 2>&1; then
  export PYTHONPATH=$PWD/pysite${PYTHONPATH:+:$PYTHONPATH}
  step python env OCTILE_CLI="$PWD/octile" python3 -m pytest -q -rs -s -p no:cacheprovider repo/python/tests
  [ -f repo/data/chembl_drugs.csv ] && step python-overhead python3 repo/benches/python/overhead.py --cli ./octile --data repo/data/chembl_drugs.csv --out "$LOG_DIR/python-overhead"
else
  summary+=("SKIP python (no octile wheel in wheels/, or pip could not install it)")
fi
echo "==================== summary"
printf '%s\n' "${summary[@]}"
exit $fail

#!/usr/bin/env bash
# Runs inside .bundle/ on a GPU machine (bundle built with --with-data): `octile gram` of this
# bundle's binary against another one (OLD=path, e.g. a build of an earlier commit) on the
# synthetic sets, the molecule sets and whole protein chains, alternating the two binaries, REPS
# times each (default 3; ONLY="ba nws" limits the sets); then, with SWEEP=1, team sizes (--blocks-per-pair) on protein chains.
# One line per run: label, pairs, seconds, pairs/s, the solver entry used; with OLD, after each set's
# first repeat, one line comparing the two Gram matrices (entries bit-identical, largest relative
# difference, index of the largest).
set -u
cd "$(dirname "$0")"
LOG_DIR=${LOG_DIR:-.}
REPS=${REPS:-3}
mapfile -t chains < <(ls -S data/proteins/*.pdb.gz | tac)   # smallest first
one() { # label, binary, kernel, extra args and inputs...
  local label=$1 bin=$2 k=$3; shift 3
  local out="$LOG_DIR/c-$label.npy"
  if timeout 150 "$bin" gram "$@" --kernel "$k" --out "$out" --quiet > "$LOG_DIR/c-$label.log" 2>&1; then
    python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:24s} {s['pairs']:8d} pairs {s['seconds']:8.3f} s {s['pairs_per_second']:12.1f} pairs/s  {s['primitives'].split('GPU solver entry: ')[-1]}\")" "${out%.npy}.json" "$label"
  else
    echo "$label: rc=$? $(tail -2 "$LOG_DIR/c-$label.log")"
  fi
  [ -n "${OLD:-}" ] || rm -f "$out"
}
same() { # name: the Gram matrices of <name>-new and <name>-old
  python3 - "$LOG_DIR/c-$1-new.npy" "$LOG_DIR/c-$1-old.npy" "$1" <<'PY'
import sys, numpy as np
try:
    a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
except OSError as e:
    print(f"values {sys.argv[3]}: missing ({e})"); sys.exit(0)
if a.shape != b.shape:
    print(f"values {sys.argv[3]}: SHAPES DIFFER {a.shape} vs {b.shape}"); sys.exit(0)
rel = np.abs(a - b) / np.maximum(np.abs(b), 1e-300)
k = np.unravel_index(int(np.argmax(rel)), rel.shape)
print(f"values {sys.argv[3]:8s}: {a.size} entries, {int(np.sum(a == b))} bit-identical, max rel diff {rel.max():.2e} at {tuple(int(i) for i in k)} (new {a[k]!r}, old {b[k]!r})")
PY
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
sets=(
  "ba|examples/synthetic.toml|ba:48:7"
  "nws|examples/synthetic.toml|nws:160:7"
  "mutag|examples/tu-labels.toml|data/MUTAG"
  "chembl|examples/molecules.toml|data/chembl_drugs.csv"
  "prot2|examples/proteins.toml|${chains[0]} ${chains[1]}"
  "prot5|examples/proteins.toml|${chains[*]:0:5}"
  "nws64|examples/synthetic.toml|--precision f64 nws:160:7"
  "between|examples/molecules.toml|--normalize data/chembl_drugs.csv --against data/nci200.smi --skip-invalid"
)
for r in $(seq 1 "$REPS"); do
  for s in "${sets[@]}"; do
    IFS='|' read -r name k inputs <<< "$s"
    [[ -z "${ONLY:-}" || " $ONLY " == *" $name "* ]] || continue
    # shellcheck disable=SC2086
    one "$name-new" ./octile "$k" $inputs
    # shellcheck disable=SC2086
    [ -n "${OLD:-}" ] && one "$name-old" "$OLD" "$k" $inputs
    [ -n "${OLD:-}" ] && [ "$r" = 1 ] && same "$name"
  done
done
[ "${SWEEP:-0}" = 1 ] || exit 0
for b in 55 110 220 440; do one "prot2-team$b" ./octile examples/proteins.toml --blocks-per-pair "$b" "${chains[0]}" "${chains[1]}"; done
for b in 22 44 88; do one "prot5-team$b" ./octile examples/proteins.toml --blocks-per-pair "$b" "${chains[@]:0:5}"; done

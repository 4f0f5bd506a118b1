#!/usr/bin/env bash
# Runs inside .bundle/ on a GPU machine (bundle built with --with-data): `octile gram` of this
# bundle's binary against another one (OLD=path, e.g. a build of an earlier commit) on the
# synthetic sets, the molecule sets and whole protein chains, alternating the two binaries, REPS
# times each (default 3; ONLY="ba nws" limits the sets); then, with SWEEP=1, team sizes (--blocks-per-pair) on protein chains.
# One line per run: label, pairs, seconds, pairs/s, the solver entry used.
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
  rm -f "$out"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
sets=(
  "ba|examples/synthetic.toml|ba:48:7"
  "nws|examples/synthetic.toml|nws:160:7"
  "mutag|examples/tu-labels.toml|data/MUTAG"
  "chembl|examples/molecules.toml|data/chembl_drugs.csv"
  "prot2|examples/proteins.toml|${chains[0]} ${chains[1]}"
  "prot5|examples/proteins.toml|${chains[*]:0:5}"
)
for r in $(seq 1 "$REPS"); do
  for s in "${sets[@]}"; do
    IFS='|' read -r name k inputs <<< "$s"
    [[ -z "${ONLY:-}" || " $ONLY " == *" $name "* ]] || continue
    # shellcheck disable=SC2086
    one "$name-new" ./octile "$k" $inputs
    # shellcheck disable=SC2086
    [ -n "${OLD:-}" ] && one "$name-old" "$OLD" "$k" $inputs
  done
done
[ "${SWEEP:-0}" = 1 ] || exit 0
for b in 55 110 220 440; do one "prot2-team$b" ./octile examples/proteins.toml --blocks-per-pair "$b" "${chains[0]}" "${chains[1]}"; done
for b in 22 44 88; do one "prot5-team$b" ./octile examples/proteins.toml --blocks-per-pair "$b" "${chains[@]:0:5}"; done

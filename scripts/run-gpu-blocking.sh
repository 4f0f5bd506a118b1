#!/usr/bin/env bash
# Runs inside .bundle/ on a GPU machine (bundle built with --with-data): the two dense walks of
# tile B — shared tiling (default) and tiling-blocking (`--dense-walk blocked`, the entries
# mgk_solve_blocked_* / mgk_solve_team_blocked_*) — same binary, same profile, alternating, REPS
# times each (default 3), on the sets whose maps pick D or R for some tile pairs (BA ×48, whole
# protein chains) and one whose map never does (NWS ×160: sparse-only entry, a control).
# With TUNE=1 first `octile tune --dense-walk blocked` on this GPU (f32 and f64, written to
# $LOG_DIR/blocked-profiles.json with the winner tables in blocked-tune.txt), and the blocked runs
# use that profile (else the shipped one for their walk). With ptx-blocked-N.ptx.xz files in the
# bundle (BLOCKED_BOUNDS="2 4" scripts/gpu-bundle writes them: the same PTX with `.minnctapersm N`
# on the blocked entries), also the blocked walks under those occupancy bounds (OCTILE_PTX_FILE).
# ONLY="ba prot2" limits the sets. One line per run: label, pairs, seconds, pairs/s, walks and entry.
set -u
cd "$(dirname "$0")"
LOG_DIR=${LOG_DIR:-.}
REPS=${REPS:-3}
mapfile -t chains < <(ls -S data/proteins/*.pdb.gz | tac)   # smallest first
variants=()
for f in ptx-blocked-*.ptx.xz; do
  [ -e "$f" ] || continue
  n=${f#ptx-blocked-}; n=${n%.ptx.xz}
  python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" "$f" "$LOG_DIR/ptx-blocked-$n.ptx" && variants+=("$n")
done
one() { # label, kernel, extra args and inputs...
  local label=$1 k=$2; shift 2
  local out="$LOG_DIR/w-$label.npy"
  if timeout 150 ./octile gram "$@" --kernel "$k" --out "$out" --quiet > "$LOG_DIR/w-$label.log" 2>&1; then
    python3 -c "import json,sys; s=json.load(open(sys.argv[1])); p=s['primitives']; m=p.split(';')[0].split('[')[-1]; e=p.split('GPU solver entry: ')[-1]; print(f\"{sys.argv[2]:26s} {s['pairs']:8d} pairs {s['seconds']:8.3f} s {s['pairs_per_second']:11.1f} pairs/s  [{m[:60]} | {e}\")" "${out%.npy}.json" "$label"
  else
    echo "$label: rc=$? $(tail -2 "$LOG_DIR/w-$label.log")"
  fi
  rm -f "$out"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
blocked_profile=()
if [ "${TUNE:-0}" = 1 ]; then
  ./octile tune --backend cuda --precision both --dense-walk blocked --out "$LOG_DIR/blocked-profiles.json" --svg "$LOG_DIR/blocked-tune.svg" > "$LOG_DIR/blocked-tune.txt" 2>&1 || { echo "tune failed"; tail -5 "$LOG_DIR/blocked-tune.txt"; exit 1; }
  grep '^tuned' "$LOG_DIR/blocked-tune.txt"
  blocked_profile=(--profile "$LOG_DIR/blocked-profiles.json")
fi
sets=(
  "ba|examples/synthetic.toml|ba:48:7"
  "nws|examples/synthetic.toml|nws:160:7"
  "prot2|examples/proteins.toml|${chains[0]} ${chains[1]}"
  "prot5|examples/proteins.toml|${chains[*]:0:5}"
  "chembl|examples/molecules.toml|data/chembl_drugs.csv"
)
for r in $(seq 1 "$REPS"); do
  for s in "${sets[@]}"; do
    IFS='|' read -r name k inputs <<< "$s"
    [[ -z "${ONLY:-}" || " $ONLY " == *" $name "* ]] || continue
    # shellcheck disable=SC2086
    one "$name-shared" "$k" --dense-walk shared $inputs
    # shellcheck disable=SC2086
    one "$name-blocked" "$k" --dense-walk blocked "${blocked_profile[@]}" $inputs
    for n in "${variants[@]}"; do
      # shellcheck disable=SC2086
      OCTILE_PTX_FILE="$LOG_DIR/ptx-blocked-$n.ptx" one "$name-blocked-min$n" "$k" --dense-walk blocked "${blocked_profile[@]}" $inputs
    done
  done
done

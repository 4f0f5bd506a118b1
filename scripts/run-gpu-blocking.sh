#!/usr/bin/env bash
# Runs inside .bundle/ on a GPU machine (bundle built with --with-data): the register-blocked dense
# walks against the shared-tiling ones (`register_blocking = false`), same binary, same profile, on
# the sets whose maps pick D or R for some tiles (BA, whole protein chains) and one that never does
# (NWS: sparse-only entry, a control). With OLD=path-to-an-older-octile also that binary. Each run
# REPS times (default 3); one line per run: seconds, pairs/s, the walks and the entry used.
set -u
cd "$(dirname "$0")"
LOG_DIR=${LOG_DIR:-.}
REPS=${REPS:-3}
mapfile -t chains < <(ls -S data/proteins/*.pdb.gz | tac)   # smallest first
with_blocking() { # base toml, value -> path
  local f="$LOG_DIR/k-$(basename "$1" .toml)-rb$2.toml"
  python3 - "$1" "$f" "$2" <<'PY'
import sys; base=open(sys.argv[1]).read(); i=base.index('[')
open(sys.argv[2],'w').write(base[:i]+f'register_blocking = {sys.argv[3]}\n'+base[i:])
PY
  echo "$f"
}
run() { # label, binary, kernel, inputs...
  local label=$1 bin=$2 k=$3; shift 3
  for r in $(seq 1 "$REPS"); do
    local out="$LOG_DIR/b-$label-$r.npy"
    if timeout 120 "$bin" gram "$@" --kernel "$k" --out "$out" --quiet > "$LOG_DIR/b-$label-$r.log" 2>&1; then
      python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:26s} {s['pairs']:6d} pairs {s['seconds']:8.3f} s {s['pairs_per_second']:11.1f} pairs/s  {s['primitives'].split('; ',1)[-1][:150]}\")" "${out%.npy}.json" "$label"
    else
      echo "$label: rc=$? $(tail -2 "$LOG_DIR/b-$label-$r.log")"
    fi
  done
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
for set in "ba ba:48:7 examples/synthetic.toml" "nws nws:160:7 examples/synthetic.toml" "prot2 ${chains[0]} ${chains[1]} examples/proteins.toml" "prot5 ${chains[*]:0:5} examples/proteins.toml"; do
  read -r -a w <<< "$set"; name=${w[0]}; k=${w[-1]}; inputs=("${w[@]:1:${#w[@]}-2}")
  run "$name-blocked" ./octile "$(with_blocking "$k" true)" "${inputs[@]}"
  run "$name-shared" ./octile "$(with_blocking "$k" false)" "${inputs[@]}"
  [ -n "${OLD:-}" ] && run "$name-old" "$OLD" "$k" "${inputs[@]}"
done

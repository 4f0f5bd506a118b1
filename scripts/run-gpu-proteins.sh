#!/usr/bin/env bash
# Runs inside .bundle/ on a GPU machine (bundle built with --with-data): whole protein chains at
# 5 Å through `octile gram`, one block per pair vs teams of blocks per pair, and each ablation step
# on the two smallest chains. One line per run: pairs, seconds, pairs/s, the solver entry used.
# Each run is limited to $RUN_TIMEOUT seconds (default 150); logs and .npy/.json go to $LOG_DIR.
set -u
cd "$(dirname "$0")"
LOG_DIR=${LOG_DIR:-.}
RUN_TIMEOUT=${RUN_TIMEOUT:-150}
mapfile -t chains < <(ls -S data/proteins/*.pdb.gz | tac)   # smallest first
two=("${chains[@]:0:2}")
kernel() { # name, extra TOML lines -> path
  local f="$LOG_DIR/k-$1.toml"; cp examples/proteins.toml "$f"; printf '%s\n' "${@:2}" > "$f.extra"
  python3 - "$f" <<'PY'
import sys; p=sys.argv[1]; base=open(p).read(); extra=open(p+'.extra').read()
i=base.index('['); open(p,'w').write(base[:i]+extra+base[i:])
PY
  echo "$f"
}
run() { # label, kernel, blocks, inputs...
  local label=$1 k=$2 b=$3; shift 3
  local out="$LOG_DIR/p-$label.npy"
  if timeout "$RUN_TIMEOUT" ./octile gram "$@" --kernel "$k" --blocks-per-pair "$b" --out "$out" --quiet > "$LOG_DIR/p-$label.log" 2>&1; then
    python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:28s} {s['graphs']:3d} graphs {s['pairs']:4d} pairs {s['seconds']:9.3f} s {s['pairs_per_second']:10.2f} pairs/s  it {s['iterations']['median']}  {s['primitives'].split('GPU solver entry: ')[-1]}\")" "${out%.npy}.json" "$label"
  else
    echo "$label: rc=$? (timeout ${RUN_TIMEOUT}s or error): $(tail -2 "$LOG_DIR/p-$label.log")"
  fi
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
base=$(kernel compact)
run two-1block "$base" 1 "${two[@]}"
run two-auto "$base" auto "${two[@]}"
run sixteen-auto "$base" auto "${chains[@]:0:16}"
[ "${STEPS:-1}" = 1 ] || exit 0
run two-dense "$(kernel dense 'reorder = "none"' 'primitive = "dense-dense"' 'tile_storage = "dense"' 'skip_empty_tiles = false')" auto "${two[@]}"
run two-sparse "$(kernel sparse 'reorder = "none"' 'primitive = "dense-dense"' 'tile_storage = "dense"')" auto "${two[@]}"
run two-reorder "$(kernel reorder 'primitive = "dense-dense"' 'tile_storage = "dense"')" auto "${two[@]}"
run two-adaptive "$(kernel adaptive 'tile_storage = "dense"')" auto "${two[@]}"

#!/usr/bin/env bash
# Runs inside .bundle/ on a GPU machine: `octile tune` on this GPU (writes $LOG_DIR/profiles.json
# and the winner-map SVGs; SKIP_TUNE=1 to use the shipped profile), then the criterion benches with
# that profile: the ablation (tables to $LOG_DIR/ablation.md/.json), the synthetic throughput and the
# tile-pair primitive microbenchmark.
# Extra arguments go to criterion (e.g. a filter).
set -u
cd "$(dirname "$0")"
LOG_DIR=${LOG_DIR:-.}
export OCTILE_BENCH_OUT=$LOG_DIR OCTILE_DATA=${OCTILE_DATA:-data}
if [ "${SKIP_TUNE:-0}" != 1 ]; then
  echo "==== octile tune"
  ./octile tune --backend cuda --out "$LOG_DIR/profiles.json" --svg "$LOG_DIR/octile-tune.svg" || exit 1
  export OCTILE_PROFILE="$LOG_DIR/profiles.json"
fi
for b in ${BENCHES:-bench-ablation bench-synthetic bench-primitives}; do
  echo "==== $b"
  "./$b" --bench "$@"
done

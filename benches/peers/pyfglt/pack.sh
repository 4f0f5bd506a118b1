#!/usr/bin/env bash
# Packs what the pyfglt benchmark needs on a GPU machine (no Rust, no internet there) into the
# git-ignored .peers/pyfglt/: the release `octile` binary (stripped, xz), the commit it was built
# from, and the wheels (fetch-wheels.sh, when not there yet). Checks that it fits in a device
# call's 64 MiB carry. Then: run(command="bash benches/peers/pyfglt/run.sh $OUT", carry=[".peers/pyfglt"]).
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=.peers/pyfglt; mkdir -p "$D"
[ -n "$(ls "$D"/wheels/pyfglt-0.3.0-cp312-*.whl 2>/dev/null)" ] || bash benches/peers/pyfglt/fetch-wheels.sh "$D/wheels"
cargo build --release --bin octile
strip -o "$D/octile" target/release/octile
xz -T0 -6 -f "$D/octile"
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- host shared-types kernels-gpu || echo '+uncommitted changes')" > "$D/COMMIT"
du -ab "$D" | sort -n | tail -8
total=$(du -sb "$D" | cut -f1)
echo "carry $D: $((total / 1024)) KiB of 65536"
[ "$total" -lt $((60 * 1024 * 1024)) ] || { echo "pack: $D is over 60 MiB" >&2; exit 1; }

#!/usr/bin/env bash
# session 37, after the block fix (1b62532, 52864a6): the tiles test binary on the GPU (OCTILE_REQUIRE_GPU=1: the
# new blocks_across_the_diagonal test on every target), then the CLI on MUTAG: blocks across the diagonal at tile
# sizes 1, 4 and 100 against the whole matrix (pairs and values), raw and normalized.
# carry: [".carry/s37b", ".carry/sets.tar.xz"]
set -u
T0=$(date +%s); O=${OUT:-/tmp/out}; S=/tmp/sets; mkdir -p $O $S /tmp/b2
[ -f $S/mutag.jsonl ] || xz -dc .carry/sets.tar.xz | tar -xf - -C $S
for f in tiles octile; do xz -dc .carry/s37b/$f.xz > /tmp/b2/$f && chmod +x /tmp/b2/$f; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$PWD timeout 240 /tmp/b2/tiles --test-threads=1 2>&1 | grep -E "^test |test result|SKIP|panicked" | head -30
X=/tmp/b2/octile
for norm in "" "--normalize"; do
  $X gram $S/mutag.jsonl --kernel $S/mutag.toml --out /tmp/full.npy --quiet $norm || echo "FAIL full"
  for ts in 1 4 100; do
    $X gram $S/mutag.jsonl --kernel $S/mutag.toml --rows 0:120 --cols 60:188 --tile-size $ts --out /tmp/blk$ts.npy --quiet $norm || echo "FAIL block $ts"
    python3 - $ts "$norm" <<'PY'
import json, sys, numpy as np
ts, norm = sys.argv[1], sys.argv[2]
full = np.load("/tmp/full.npy")[0:120, 60:188]; b = np.load(f"/tmp/blk{ts}.npy"); s = json.load(open(f"/tmp/blk{ts}.json"))
rel = abs(b - full) / abs(full).clip(1e-300); i = np.unravel_index(rel.argmax(), rel.shape)
print(f"block 0:120 x 60:188 {norm or 'raw'} tile {ts}: pairs {s['pairs']} (unordered pairs 120*128 - 60*59/2 = {120*128 - 60*59//2}), device {s.get('device','')[:28]}, max rel vs whole {rel.max():.2e} at {i}")
PY
  done
done
echo "call took $(( $(date +%s) - T0 )) s"

#!/usr/bin/env bash
# session 37 (not run: too little device time left to start a machine): the gradient test binary of
# results/session37-gradient-edge-row-cleanup.patch with gradient_all's edge_row through the general interpreter only (its
# specialized branch could not run: that hyperparameter is folded) and the product form's one EdgeParam predicate
# (sass-diff: only the four sqexp/kdelta gradient entries differ). carry: [".carry/s37c"]
set -u
T0=$(date +%s); mkdir -p /tmp/b3
xz -dc .carry/s37c/gradient.xz > /tmp/b3/gradient && chmod +x /tmp/b3/gradient
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OCTILE_REQUIRE_GPU=1 OCTILE_REPO=$PWD timeout 150 /tmp/b3/gradient --test-threads=1 2>&1 | grep -E "^test |test result|SKIP|panicked|failed" | head -30
echo "call took $(( $(date +%s) - T0 )) s"

#!/usr/bin/env bash
# Runs inside .bundle/ on a GPU machine: the criterion benches (CPU and GPU groups).
set -u
cd "$(dirname "$0")"
for b in bench-*; do
  echo "==== $b"
  "./$b" --bench "$@"
done

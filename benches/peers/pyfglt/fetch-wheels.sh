#!/usr/bin/env bash
# Downloads pyfglt 0.3.0 and typeguard (the one dependency the GPU machines' image lacks: it has
# numpy, scipy, pandas, networkx and typing-extensions) as CPython 3.12 manylinux wheels into DIR
# (default: .peers/pyfglt/wheels). With --all, also pyfglt's other dependencies (numpy, scipy,
# pandas, networkx, typing-extensions: ~70 MiB, more than a device call carries beside octile),
# for a machine that lacks them. Run where PyPI is reachable; the GPU machine gets DIR carried.
set -euo pipefail
cd "$(dirname "$0")/../../.."
DIR=${1:-.peers/pyfglt/wheels}; mkdir -p "$DIR"
want=(pyfglt==0.3.0 typeguard==4.6.0)
[ "${2:-}" = --all ] && want+=(numpy scipy pandas networkx typing-extensions python-dateutil six tzdata)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$DIR" "${want[@]}"
ls -la "$DIR"; du -sh "$DIR"

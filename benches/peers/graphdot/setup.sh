#!/usr/bin/env bash
# Prepare a GraphDot side-by-side run on this (development) machine, into the git-ignored .peers/:
# GraphDot's and pycuda's sources and the wheels they need (PyPI), a prebuilt pycuda wheel if the
# workplace has one (../shared/peers/graphdot/prebuilt; else compare.sh builds pycuda on the GPU
# machine, ~25 s), and the node-link sets with their kernel specs and octile TOMLs (make_sets.py;
# ChEMBL needs RDKit, installed into .venv), and FreeSolv for the gradient/GPR run (freesolv_set.py into
# .peers/sets/freesolv; data/freesolv.csv from scripts/fetch-datasets freesolv). Needs scripts/setup and
# scripts/fetch-datasets first. The kit's scripts themselves are not copied: the GPU machine runs them
# from benches/peers/graphdot/ of the working tree it gets.
set -euo pipefail
cd "$(dirname "$0")/../../.."
kit=benches/peers/graphdot
mkdir -p .peers
[ -d .peers/wheels ] || bash $kit/fetch-wheels.sh .peers/wheels
if [ -d ../shared/peers/graphdot/prebuilt ]; then mkdir -p .peers/prebuilt && cp ../shared/peers/graphdot/prebuilt/*.whl .peers/prebuilt/; fi
.venv/bin/python -c "import rdkit" 2>/dev/null || .venv/bin/pip install -q rdkit
[ -d data/proteins ] && [ -f data/chembl_drugs.csv ] || scripts/fetch-datasets chembl proteins
.venv/bin/python $kit/make_sets.py .peers/sets --mutag data/MUTAG --chembl data/chembl_drugs.csv --proteins data/proteins
[ -f data/freesolv.csv ] || scripts/fetch-datasets freesolv
mkdir -p .peers/sets/freesolv && .venv/bin/python $kit/freesolv_set.py data/freesolv.csv .peers/sets/freesolv
ls -la .peers/sets .peers/sets/freesolv

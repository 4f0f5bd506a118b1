#!/usr/bin/env bash
# Runs inside .bundle/ on a GPU machine: `octile gram` on the real datasets carried in
# .bundle/data (see scripts/gpu-bundle --with-data), printing each JSON summary.
set -u
cd "$(dirname "$0")"
O=${LOG_DIR:-.}
run() { # name, args...
  local name=$1; shift
  if timeout "${STEP_TIMEOUT:-300}" ./octile gram "$@" --out "$O/$name.npy" --quiet; then
    python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print('$name', s['graphs'], 'graphs', s['pairs'], 'pairs', round(s['seconds'],3), 's', round(s['pairs_per_second']), 'pairs/s', s['backend'], s['precision'], 'iterations', s['iterations'], 'non-converged', len(s['non_converged']))" "$O/$name.json"
  else
    echo "$name: FAILED"
  fi
  rm -f "$O/$name.npy"
}
run mutag data/MUTAG --kernel examples/tu-labels.toml
run chembl data/chembl_drugs.csv --kernel examples/molecules.toml
run nci data/first_5K.smi --kernel examples/molecules.toml --skip-invalid
prot=(data/proteins/*.pdb.gz)
run proteins-pair "${prot[0]}" --against "${prot[1]}" --kernel examples/proteins.toml

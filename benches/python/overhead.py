"""The Python package's overhead over the CLI, on one machine in one run: the same kernel TOML on
the same molecules (ChEMBL's approved drugs by default), `octile gram` R times (its in-process
`seconds`: the Gram computation after reading and setup) against the package's call R times (wall
time of `kernel(graphs)`: conversion into the library, the computation, the numpy matrix), after one
warm-up call each (the first call in a process starts CUDA). Checks both matrices are equal.

    python benches/python/overhead.py --cli target/release/octile --data data/chembl_drugs.csv --out DIR
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import octile
from octile import KroneckerDelta, MarginalizedGraphKernel, TensorProduct


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default="target/release/octile")
    ap.add_argument("--data", default="data/chembl_drugs.csv")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--normalized", action="store_true")
    ap.add_argument("--out", default="python-overhead")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    # the molecules kernel (examples/molecules.toml)
    kernel = MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.3), aromatic=KroneckerDelta(0.7), charge=KroneckerDelta(0.8)),
                                     TensorProduct(order=KroneckerDelta(0.5)), q=0.05, backend=a.backend, normalized=a.normalized, progress=False)
    work = tempfile.mkdtemp()
    toml = os.path.join(work, "kernel.toml")
    open(toml, "w").write(kernel.to_toml())
    cli_seconds, cli_wall = [], []
    for r in range(a.repeat + 1):
        out = os.path.join(work, "K.npy")
        cmd = [a.cli, "gram", a.data, "--kernel", toml, "--backend", a.backend, "--out", out, "--quiet"] + (["--normalize"] if a.normalized else [])
        t = time.perf_counter()
        subprocess.run(cmd, check=True)
        wall = time.perf_counter() - t
        s = json.load(open(os.path.join(work, "K.json")))
        if r > 0:
            cli_seconds.append(s["seconds"])
            cli_wall.append(wall)
    k_cli = np.load(out)
    t = time.perf_counter()
    graphs = octile.read(a.data)
    read_seconds = time.perf_counter() - t
    t = time.perf_counter()
    k_py = kernel(graphs)  # warm-up: starts CUDA, loads the kernels
    first = time.perf_counter() - t
    py_wall, py_inner = [], []
    for _ in range(a.repeat):
        t = time.perf_counter()
        k_py = kernel(graphs)
        py_wall.append(time.perf_counter() - t)
        py_inner.append(kernel.last_run_["seconds"])
    diff = np.abs(k_py - k_cli)
    rel = float(np.max(diff / np.maximum(np.abs(k_cli), 1e-300)))
    cli_med, py_med = statistics.median(cli_seconds), statistics.median(py_wall)
    r = {
        "data": a.data, "graphs": len(graphs), "pairs": kernel.last_run_["pairs"], "device": kernel.device_, "backend": kernel.last_run_["backend"],
        "precision": "default (f32 on a GPU, f64 on the CPU)", "normalized": a.normalized,
        "cli_seconds_median": cli_med, "cli_seconds_all": cli_seconds, "cli_process_wall_all": cli_wall,
        "python_call_seconds_median": py_med, "python_call_seconds_all": py_wall, "python_library_seconds_all": py_inner,
        "python_first_call_seconds": first, "python_read_seconds": read_seconds,
        "overhead_percent": 100.0 * (py_med / cli_med - 1.0),
        "equal_bitwise": bool(np.array_equal(k_py, k_cli)), "max_relative_difference": rel,
    }
    json.dump(r, open(os.path.join(a.out, "python-overhead.json"), "w"), indent=2)
    line = (f"{len(graphs)} graphs, {r['pairs']} pairs on {r['device']}: CLI in-process {cli_med:.3f} s (median of {a.repeat}), "
            f"Python call {py_med:.3f} s (median of {a.repeat}; library {statistics.median(py_inner):.3f} s) -> overhead {r['overhead_percent']:+.1f} %; "
            f"first Python call {first:.3f} s; matrices {'equal bit for bit' if r['equal_bitwise'] else f'differ by up to {rel:.2e} relative'}")
    print(line)
    open(os.path.join(a.out, "python-overhead.md"), "w").write(line + "\n")
    return 0 if r["equal_bitwise"] or rel < 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())

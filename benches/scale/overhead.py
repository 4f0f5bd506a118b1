"""Where the Dask path's time goes (scale issue): the tiles of `octile.dask.gram` run one after the
other through the native call in one process (no Dask), each tile's wall time against the
solver's own seconds, and the process's minor page faults — once as a plain process, once with the
allocator settings Dask's nanny gives its workers (MALLOC_TRIM_THRESHOLD_=65536) — beside
`kernel(X)` in one call. Prints one JSON line per configuration.

Usage: python3 overhead.py --data DIR [--set nci5k] [--tile-size 2048] [--backend cuda]
(run once as is and once with MALLOC_TRIM_THRESHOLD_=65536 in the environment: the variable is read
when the process starts).
"""
import argparse
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale import load_graphs, molecule_kernel  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--set", default="nci5k")
    ap.add_argument("--tile-size", type=int, default=2048)
    ap.add_argument("--backend", default="cuda")
    args = ap.parse_args()
    import octile

    graphs = load_graphs(args.set, args.data)
    k = molecule_kernel(args.backend)
    k(graphs[:50])
    native = k._native()
    bounds = octile._octile.tile_bands([g.n_nodes for g in graphs], args.tile_size)
    tiles = [(i, j) for i in range(len(bounds) - 1) for j in range(i, len(bounds) - 1)]
    rows = []
    t_all = time.perf_counter()
    for i, j in tiles:
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t = time.perf_counter()
        kt, _, _, info = native.tile(graphs, None, (bounds[i], bounds[i + 1]), (bounds[j], bounds[j + 1]))
        wall = time.perf_counter() - t
        rows.append(dict(tile=[i, j], pairs=int(kt.size), wall_s=round(wall, 4), solver_s=round(info["seconds"], 4),
                         minflt=resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0))
    tiles_s = time.perf_counter() - t_all
    t = time.perf_counter()
    k(graphs)
    whole = time.perf_counter() - t
    out = dict(set=args.set, graphs=len(graphs), malloc_trim=os.environ.get("MALLOC_TRIM_THRESHOLD_"), tiles=len(tiles), tiles_s=round(tiles_s, 3),
               tiles_solver_s=round(sum(r["solver_s"] for r in rows), 3), tiles_outside_solver_s=round(sum(r["wall_s"] - r["solver_s"] for r in rows), 3),
               minflt=sum(r["minflt"] for r in rows), whole_call_s=round(whole, 3), per_tile=rows)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()

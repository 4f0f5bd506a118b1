#!/usr/bin/env python3
"""The structure-only sets of session 37 (`.carry/s37/so/`): C6, C5, P9, a 12-node star and random trees of 14, 23,
31 and 40 nodes, once with unit weights (so_unit.jsonl) and once with weights uniform in [0.5, 2] (so_weighted.jsonl),
seeded. Kernel: `q = 0.0005` and `features = "none"` (so.toml).   usage: so_sets.py OUT_DIR"""
import json, os, random, sys

out = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out, exist_ok=True)
random.seed(37)


def graph(n, edges, weighted):
    links = [dict(source=u, target=v, **({"weight": round(random.uniform(0.5, 2.0), 6)} if weighted else {})) for u, v in edges]
    return {"directed": False, "multigraph": False, "graph": {}, "nodes": [{"id": i} for i in range(n)], "links": links}


cycle = lambda n: [(i, (i + 1) % n) for i in range(n)]
path = lambda n: [(i - 1, i) for i in range(1, n)]
star = lambda n: [(0, i) for i in range(1, n)]
for weighted, name in [(False, "so_unit"), (True, "so_weighted")]:
    gs = [graph(6, cycle(6), weighted), graph(5, cycle(5), weighted), graph(9, path(9), weighted), graph(12, star(12), weighted)]
    for n in [14, 23, 31, 40]:
        gs.append(graph(n, [(random.randrange(i), i) for i in range(1, n)], weighted))
    with open(os.path.join(out, f"{name}.jsonl"), "w") as f:
        for g in gs:
            f.write(json.dumps(g) + "\n")
with open(os.path.join(out, "so.toml"), "w") as f:
    f.write('q = 0.0005\nfeatures = "none"\n')

#!/usr/bin/env python3
"""Synthetic sets of the shortest-path slides' sizes (../shared/papers/shortest-path-kernel-gpu-slides.txt),
seeded, as node-link JSONL (nodes carry "label", 4 values; edges under "links"), for sp_compare.py:
  n60        500 graphs of 60 nodes, G(n, 0.4) (the slides' 60-nodes set: 706 edges on average)
  m1, m3, m5 500 graphs each, the slides' mixes: 10- and 60-node G(n, 0.4) graphs, 24 / 50 / 74 % of
             them of 60 nodes (means 22 / 35 / 47 nodes and ~190 / 360 / 530 edges, as the slides' M1, M3, M5)
  enzymes    600 graphs like ENZYMES: 2–126 nodes (mean ~33), ~3.7 edges per node, 3 labels, connected

usage: make_sp_sets.py OUTDIR"""
import json, os, random, sys

def gnp(rng, n, p, labels):
    edges = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < p]
    return n, edges, [rng.randrange(labels) for _ in range(n)]

def enzyme_like(rng):
    n = max(2, min(126, int(rng.lognormvariate(3.35, 0.55))))
    edges = {(rng.randrange(v), v) for v in range(1, n)}  # a random tree: connected
    while len(edges) < min(n * (n - 1) // 2, int(3.7 * n)):
        i, j = rng.randrange(n), rng.randrange(n)
        if i != j:
            edges.add((min(i, j), max(i, j)))
    return n, sorted(edges), [rng.randrange(3) for _ in range(n)]

def write(path, graphs):
    with open(path, "w") as f:
        for n, edges, lab in graphs:
            f.write(json.dumps({"directed": False, "multigraph": False, "graph": {},
                                "nodes": [{"id": i, "label": lab[i]} for i in range(n)],
                                "links": [{"source": i, "target": j} for i, j in edges]}) + "\n")
    print(f"{path}: {len(graphs)} graphs, {sum(g[0] for g in graphs) / len(graphs):.1f} nodes and "
          f"{sum(len(g[1]) for g in graphs) / len(graphs):.1f} edges on average")

out = sys.argv[1]; os.makedirs(out, exist_ok=True)
rng = random.Random(13)
write(f"{out}/n60.jsonl", [gnp(rng, 60, 0.4, 4) for _ in range(500)])
for name, big in [("m1", 0.24), ("m3", 0.5), ("m5", 0.74)]:
    write(f"{out}/{name}.jsonl", [gnp(rng, 60 if rng.random() < big else 10, 0.4, 4) for _ in range(500)])
write(f"{out}/enzymes.jsonl", [enzyme_like(rng) for _ in range(600)])

#!/usr/bin/env python3
"""octile's shortest-path kernel and GraKeL 0.1.11's ShortestPath side by side, one machine, one run:
the same graphs (read here, independently of octile's readers), GraKeL's fit_transform time (min of
REPEATS) against octile `gram` on the GPU and on the CPU (min of REPEATS processes, in-process Gram
time from its JSON summary), and whether the matrices are equal (exact integers).

usage: sp_compare.py OCTILE NAME=SET[:LABEL] ...   (SET: a TU folder, or a node-link .jsonl whose
       nodes carry LABEL, default "label"); env REPEATS=3, BACKENDS="cuda cpu", OUT=folder for the table (compare.md)
needs: grakel==0.1.11 importable (numpy, scipy, scikit-learn)."""
import json, os, subprocess, sys, tempfile, time
from collections import defaultdict
import numpy as np
from grakel.kernels import ShortestPath

def load(path, key):
    """GraKeL inputs [adjacency dict, node labels] and the node labels' TOML feature name."""
    if os.path.isdir(path):
        n = os.path.basename(os.path.normpath(path))
        ind = [int(l) for l in open(f"{path}/{n}_graph_indicator.txt") if l.strip()]
        lab = [int(l) for l in open(f"{path}/{n}_node_labels.txt") if l.strip()]
        ng = max(ind); adj = [defaultdict(dict) for _ in range(ng)]; nl = [dict() for _ in range(ng)]
        for v, (g, l) in enumerate(zip(ind, lab), start=1):
            nl[g - 1][v] = l; adj[g - 1][v]
        for line in open(f"{path}/{n}_A.txt"):
            if line.strip():
                a, b = (int(x) for x in line.split(",")); adj[ind[a - 1] - 1][a][b] = 1; adj[ind[b - 1] - 1][b][a] = 1
        return [[{u: dict(nb) for u, nb in adj[g].items()}, nl[g]] for g in range(ng)], "label"
    X = []
    for line in open(path):
        g = json.loads(line); ids = {nd["id"]: t for t, nd in enumerate(g["nodes"])}
        adj = {t: {} for t in ids.values()}
        for e in g["links"]:
            u, v = ids[e["source"]], ids[e["target"]]
            if u != v:
                adj[u][v] = 1; adj[v][u] = 1
        X.append([adj, {ids[nd["id"]]: nd[key] for nd in g["nodes"]}])
    return X, key

def main():
    oct_bin, sets = sys.argv[1], sys.argv[2:]
    reps = int(os.environ.get("REPEATS", "3")); out = os.environ.get("OUT", ".")
    rows = ["| set | graphs | GraKeL | octile GPU | octile CPU | GPU vs GraKeL | CPU vs GraKeL | equal |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for spec in sets:
        name, rest = spec.split("=", 1)
        path, key = (rest.rsplit(":", 1) + ["label"])[:2] if ":" in rest else (rest, "label")
        X, feat = load(path, key)
        tg = []
        for _ in range(reps):
            t = time.perf_counter(); K = ShortestPath(with_labels=True, normalize=False).fit_transform(X); tg.append(time.perf_counter() - t)
        w = tempfile.mkdtemp()
        toml = f'method = "shortest_path"\n[node.{feat}]\nkernel = "kronecker_delta"\nh = 0.0\n[path_length]\nkernel = "kronecker_delta"\nh = 0.0\n'
        open(f"{w}/sp.toml", "w").write(toml)
        res = {}
        for backend in os.environ.get("BACKENDS", "cuda cpu").split():
            ts = []
            for _ in range(reps):
                subprocess.run([oct_bin, "gram", path, "--kernel", f"{w}/sp.toml", "--backend", backend, "--out", f"{w}/K_{backend}.npy", "--quiet"], check=True)
                ts.append(json.load(open(f"{w}/K_{backend}.json"))["seconds"])
            res[backend] = (min(ts), np.load(f"{w}/K_{backend}.npy"))
        eq = all(np.array_equal(res[b][1], np.asarray(K, dtype=float)) for b in res)
        g = min(tg); gpu, cpu = res.get("cuda", (float("nan"),))[0], res.get("cpu", (float("nan"),))[0]
        print(f"{name}: GraKeL {g:.3f} s, octile GPU {gpu * 1e3:.2f} ms, CPU {cpu * 1e3:.2f} ms, equal {eq}", flush=True)
        rows.append(f"| {name} | {len(X)} | {g:.3f} s | {gpu * 1e3:.2f} ms | {cpu * 1e3:.2f} ms | {g / gpu:.0f}x | {g / cpu:.0f}x | {'yes' if eq else 'NO'} |")
    print("\n".join(rows))
    open(f"{out}/compare.md", "w").write("\n".join(rows) + "\n")

main()

#!/usr/bin/env python3
"""The CPU backend against the machine's own multiply-add rate and against GraKeL (issue 34).

  1. The machine's f64 multiply-add rate: numpy's dgemm (4096², best of 3) on all threads and on one.
  2. `octile demo --backend cpu` (the paper's 160 NWS graphs, 12,880 pairs) on all threads and with
     `--threads 1`: seconds (median of --repeats), pairs/s, and the essential work the demo prints
     (Σ iterations × (nnz·nnz′ + 6·n·n′), host/src/mgk/essential.rs) as a share of the dgemm rate.
  3. 80 MUTAG graphs: `octile gram --backend cpu` (f64, examples/tu-labels.toml) against GraKeL
     0.1.11's exact `RandomWalkLabeled` (fit_transform, the same graphs) in the same run.
Writes OUT/cpu.json and prints a markdown table.
usage: bench.py --octile target/release/octile --mutag data/MUTAG --out results/cpu [--repeats 3]
"""
import argparse, json, os, platform, re, statistics, subprocess, sys, tempfile, time

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--octile", required=True)
ap.add_argument("--mutag", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--repeats", type=int, default=3)
ap.add_argument("--mutag-graphs", type=int, default=80)
ap.add_argument("--threads", type=int, nargs="*", default=None, help="thread counts for the demo (default: all and 1)")
ap.add_argument("--skip-grakel", action="store_true")
ap.add_argument("--examples", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../examples"),
                help="the repository's examples/ (kernel files); default: beside this script's checkout")
ap.add_argument("--tiles-baseline", action="store_true",
                help="also time the demo's matrix on the tile path (solver = \"tiles\": κe on the fly, the code before the product form), once, all threads")
a = ap.parse_args()
os.makedirs(a.out, exist_ok=True)
cores = os.cpu_count()
threads = a.threads or [cores, 1]
res = {"machine": {"cpu": platform.processor() or platform.machine(), "cores": cores}}
try:
    res["machine"]["model"] = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
except Exception:
    pass


def dgemm_rate(nthreads):
    """Best-of-3 multiply-adds/s of a 4096² dgemm with nthreads BLAS threads (a subprocess: the
    BLAS thread count is fixed at import)."""
    code = ("import numpy as np, time\nn=4096\na=np.random.rand(n,n); b=np.random.rand(n,n); a@b\n"
            "best=min((lambda t0: (a@b, time.perf_counter()-t0)[1])(time.perf_counter()) for _ in range(3))\nprint(n**3/best)")
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(nthreads), OMP_NUM_THREADS=str(nthreads), MKL_NUM_THREADS=str(nthreads))
    return float(subprocess.check_output([sys.executable, "-c", code], env=env))


def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return p.stdout, wall


# 1. the machine's rate
res["dgemm"] = {str(t): dgemm_rate(t) for t in sorted(set(threads))}
print("dgemm multiply-adds/s:", {k: f"{v / 1e9:.1f} G" for k, v in res["dgemm"].items()}, flush=True)

# 2. the demo
res["demo"] = {}
for t in threads:
    runs = []
    for _ in range(a.repeats):
        out, wall = run([a.octile, "--threads", str(t), "demo", "--backend", "cpu"])
        m = re.search(r"pairs solved: (\d+) in ([\d.]+) s", out)
        e = re.search(r"essential work: ([\d.e+-]+) multiply-adds", out)
        it = re.search(r"CG iterations min/median/max: (\d+)/(\d+)/(\d+)", out)
        runs.append({"pairs": int(m.group(1)), "seconds": float(m.group(2)), "wall_s": wall, "essential": float(e.group(1)),
                     "iterations": [int(x) for x in it.groups()]})
    s = statistics.median(r["seconds"] for r in runs)
    ess = runs[0]["essential"]
    rate = res["dgemm"][str(t)]
    res["demo"][str(t)] = {"runs": runs, "seconds_median": s, "pairs_per_s": runs[0]["pairs"] / s, "essential_multiply_adds": ess,
                           "essential_s": ess / rate, "share": ess / rate / s}
    print(f"demo, {t} thread(s): {s:.3f} s (median of {a.repeats}), {runs[0]['pairs'] / s:.0f} pairs/s, "
          f"essential {ess:.3e} multiply-adds = {ess / rate:.3f} s at dgemm's rate: share {100 * ess / rate / s:.1f} %", flush=True)
if str(cores) in res["demo"] and "1" in res["demo"] and cores > 1:
    res["demo_speedup_all_vs_one"] = res["demo"]["1"]["seconds_median"] / res["demo"][str(cores)]["seconds_median"]
    print(f"demo: {cores} threads = {res['demo_speedup_all_vs_one']:.2f}x one thread")

# 2b. the same matrix on the tile path (what the demo ran before the product form), in the same run
if a.tiles_baseline:
    tmpk = tempfile.mkdtemp()
    kernel_tiles = os.path.join(a.examples, "synthetic.toml")
    open(f"{tmpk}/tiles.toml", "w").write('solver = "tiles"\n' + open(kernel_tiles).read())
    out, wall = run([a.octile, "gram", "nws:160:2020", "--kernel", f"{tmpk}/tiles.toml", "--normalize", "--backend", "cpu", "--out", f"{tmpk}/K.npy", "--quiet"])
    secs = json.load(open(f"{tmpk}/K.json"))["seconds"]
    res["demo_tiles"] = {"threads": cores, "seconds": secs}
    fast = res["demo"][str(cores)]["seconds_median"]
    print(f"demo matrix on the tile path, {cores} threads: {secs:.2f} s: the product form is {secs / fast:.1f}x faster", flush=True)

# 3. MUTAG: the same graphs to both, as node-link JSONL (octile) and GraKeL's (edges, node labels, edge labels)
d = a.mutag
A = np.loadtxt(f"{d}/MUTAG_A.txt", delimiter=",", dtype=int)
gi = np.loadtxt(f"{d}/MUTAG_graph_indicator.txt", dtype=int)
nl = np.loadtxt(f"{d}/MUTAG_node_labels.txt", dtype=int)
el = np.loadtxt(f"{d}/MUTAG_edge_labels.txt", dtype=int)
graphs = []
for g in range(1, a.mutag_graphs + 1):
    ids = np.nonzero(gi == g)[0]
    base = int(ids[0])
    nodes = {int(i - base): int(nl[i]) for i in ids}
    edges = {}
    for (u, v), lab in zip(A - 1, el):
        if gi[u] == g:
            edges[(min(u, v) - base, max(u, v) - base)] = int(lab)
    graphs.append((nodes, edges))
tmp = tempfile.mkdtemp()
with open(f"{tmp}/mutag.jsonl", "w") as f:
    for nodes, edges in graphs:
        f.write(json.dumps({"directed": False, "multigraph": False, "graph": {}, "nodes": [{"id": i, "label": l} for i, l in nodes.items()],
                            "links": [{"source": int(u), "target": int(v), "label": l} for (u, v), l in edges.items()]}) + "\n")
kernel = os.path.join(a.examples, "tu-labels.toml")
oc = []
for _ in range(a.repeats):
    run([a.octile, "gram", f"{tmp}/mutag.jsonl", "--kernel", kernel, "--backend", "cpu", "--out", f"{tmp}/K.npy", "--quiet"])
    oc.append(json.load(open(f"{tmp}/K.json"))["seconds"])
summ = json.load(open(f"{tmp}/K.json"))
res["mutag"] = {"graphs": len(graphs), "pairs": len(graphs) * (len(graphs) + 1) // 2, "octile_seconds": oc, "octile_median_s": statistics.median(oc),
                "octile_iterations": summ.get("iterations")}
print(f"MUTAG ({len(graphs)} graphs): octile gram CPU {statistics.median(oc):.4f} s (median of {a.repeats})", flush=True)
if not a.skip_grakel:
    import grakel
    from grakel.kernels import RandomWalkLabeled
    G = []
    for nodes, edges in graphs:
        E = {}
        for (u, v), l in edges.items():
            E[(u, v)] = l
            E[(v, u)] = l
        G.append(grakel.Graph(list(E.keys()), node_labels=nodes, edge_labels=E))
    t0 = time.perf_counter()
    Kg = RandomWalkLabeled(normalize=False, lamda=0.01, method_type="baseline").fit_transform(G)
    gk = time.perf_counter() - t0
    res["mutag"].update({"grakel_version": grakel.__version__, "grakel_seconds": gk, "speedup": gk / statistics.median(oc),
                         "grakel_finite": bool(np.isfinite(Kg).all())})
    print(f"MUTAG: GraKeL {grakel.__version__} RandomWalkLabeled (exact, method_type=baseline) {gk:.2f} s: octile {gk / statistics.median(oc):.0f}x", flush=True)
json.dump(res, open(f"{a.out}/cpu.json", "w"), indent=1)
print(f"wrote {a.out}/cpu.json")

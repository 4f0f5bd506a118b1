#!/usr/bin/env python3
"""A/B of octile binaries on the device, alternating within one call (what run 28 of results/scale used).

Usage, from the repository root on the GPU machine:
  python3 benches/scale/ab.py OUT RUNS name=path.xz[+VAR=value...][+--flag=value...] [...]
Each binary is an xz-compressed `octile` (carried in a git-ignored folder), run with the environment variables
and `gram` flags after its path (e.g. `big=.carry/e7/octile.xz+--tile-size=864`). Environment:
  SETS  the GraphDot kit's node-link sets in .peers/sets (default "mutag nws nws_smallq chembl ba"), on GPU 0
  MOL   molecule sets: nci (data/first_5K.smi), ch (data/chembl_drugs.csv), mix (both + 13,074 generated)
  DEVS  the --devices values each MOL set runs with (default "0 0,1")
Each (set, devices) runs every binary RUNS times, alternating; prints the summary's seconds (median, min, all) and
whether each binary's matrix equals the first binary's bit for bit; OUT/ab.txt gets the same lines, OUT/<name>_<set>.json
the last run's summary (with its timeline and phase marks: benches/scale/phases.py prints them)."""
import json, os, subprocess, sys, statistics as st, numpy as np
OUT, RUNS = sys.argv[1], int(sys.argv[2]); os.makedirs(OUT, exist_ok=True); os.makedirs("/tmp/ab", exist_ok=True)
bins, envs, flags = {}, {}, {}
for nb in sys.argv[3:]:
    n, p = nb.split("=", 1); p, *kv = p.split("+"); bins[n] = f"/tmp/ab/{n}"
    envs[n] = {**os.environ, **dict(x.split("=", 1) for x in kv if not x.startswith("--"))}
    flags[n] = [a for x in kv if x.startswith("--") for a in x.split("=", 1)]
    os.system(f"xz -dc {p} > {bins[n]} && chmod +x {bins[n]}")
D = ".peers/sets"
jobs = [(s, "0", [f"{D}/{s}.jsonl", "--kernel", f"{D}/{s}.toml"]) for s in os.environ.get("SETS", "mutag nws nws_smallq chembl ba").split()]
MOL = {"nci": ["data/first_5K.smi"], "ch": ["data/chembl_drugs.csv"], "mix": ["data/first_5K.smi", "data/chembl_drugs.csv", "molecules:13074:7"]}
for m in os.environ.get("MOL", "nci ch").split():
    for d in os.environ.get("DEVS", "0 0,1").split():
        jobs.append((f"{m}_g{len(d.split(','))}", d, [*MOL[m], "--kernel", "examples/molecules.toml"]))
log = open(f"{OUT}/ab.txt", "a")
for name, devs, args in jobs:
    t = {n: [] for n in bins}
    for r in range(RUNS):
        for n, b in bins.items():
            o = f"/tmp/ab/{n}_{name}.npy"
            p = subprocess.run([b, "--devices", devs, "gram", *args, *flags[n], "--out", o, "--quiet"], capture_output=True, text=True, env=envs[n])
            if p.returncode != 0:
                print(name, n, "rc", p.returncode, p.stderr[-400:], file=log); continue
            s = json.load(open(o[:-4] + ".json")); t[n].append(s["seconds"])
            if r == RUNS - 1: os.system(f"cp {o[:-4]}.json {OUT}/{n}_{name}.json")
    first = list(bins)[0]; a = np.load(f"/tmp/ab/{first}_{name}.npy")
    parts = []
    for n in bins:
        v = t[n]; eq = bool((np.load(f"/tmp/ab/{n}_{name}.npy").view(np.uint64) == a.view(np.uint64)).all()) if v else None
        parts.append(f"{n}: med {st.median(v) if v else float('nan'):.4f} min {min(v) if v else float('nan'):.4f} {[round(x,4) for x in v]} bit={eq}")
    line = f"{name} | " + " | ".join(parts); print(line); print(line, file=log); log.flush()

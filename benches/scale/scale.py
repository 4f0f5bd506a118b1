"""The scale benchmark (one device call, one GPU): Gram matrices of 1k, 5k and 20k molecule graphs
streamed to disk tile by tile by `octile gram`, against the same matrix held in memory (one tile:
what `octile gram` did before it streamed), and the Dask path (`octile.dask.gram` on a LocalCluster
with one GPU worker, and two workers sharing the GPU) against one Python process — pairs/s, wall
time, peak resident memory, and every matrix compared bit for bit. Writes scale.json and scale.md.

Sets (molecules, the kernel of examples/molecules.toml):
  mol1k   1,000 molecule-like graphs (octile's seeded generator)
  nci5k   NCI's first_5K.smi (4,991 molecules, the rdkit wheel)
  mix20k  NCI + ChEMBL's approved drugs (1,935) + 13,074 generated: 20,000 graphs, 2·10⁸ pairs

Usage: python3 scale.py --octile PATH --data DIR --out DIR [--sets mol1k,nci5k,mix20k] [--dask-sets nci5k,mix20k]
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
KERNEL = os.path.join(REPO, "examples", "molecules.toml")
# runs of each CLI mode and Python scenario (SCALE_REPEATS, default 1): the median's row is kept,
# every run's seconds beside it
REPEATS = max(int(os.environ.get("SCALE_REPEATS", "1")), 1)


def inputs(name, data):
    return {
        "tiny": ["molecules:60:7"],
        "chembl": [os.path.join(data, "chembl_drugs.csv")],
        "mol1k": ["molecules:1000:7"],
        "nci5k": [os.path.join(data, "first_5K.smi")],
        "mix20k": [os.path.join(data, "first_5K.smi"), os.path.join(data, "chembl_drugs.csv"), "molecules:13074:7"],
    }[name]


def load_graphs(name, data):
    """The graphs of set `name` in the order `octile gram` reads its inputs."""
    import octile

    graphs = []
    for inp in inputs(name, data):
        if inp.startswith("molecules:"):
            _, n, seed = inp.split(":")
            graphs += octile.generate("molecules", int(n), int(seed))
        else:
            graphs += octile.read(inp)
    return graphs


def molecule_kernel(backend):
    """The marginalized kernel of examples/molecules.toml, as Python builds it."""
    from octile import KroneckerDelta, MarginalizedGraphKernel, TensorProduct

    return MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.3), aromatic=KroneckerDelta(0.7), charge=KroneckerDelta(0.8)),
                                   TensorProduct(order=KroneckerDelta(0.5)), q=0.05, backend=backend, progress=False)


def measured(cmd, env=None):
    """Run `cmd` in a wrapper process: exit code, wall seconds and the child's peak resident memory."""
    wrap = ("import json, resource, subprocess, sys, time; t = time.time(); r = subprocess.run(sys.argv[1:]); "
            "print(json.dumps({'rc': r.returncode, 'wall_s': time.time() - t, "
            "'peak_rss_bytes': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))")
    out = subprocess.run([sys.executable, "-c", wrap, *cmd], capture_output=True, text=True, env=env)
    if out.returncode != 0 or not out.stdout.strip():
        raise RuntimeError(f"{cmd}: {out.stderr[-2000:]}")
    lines = out.stdout.strip().splitlines()
    r = json.loads(lines[-1])
    r["stderr"] = out.stderr[-2000:]
    r["stdout"] = lines[:-1]
    return r


def same(a_path, b_path):
    """Whether two float64 .npy files hold the same bits (compared in row blocks, memory-mapped);
    else how many entries differ and by how much (relative)."""
    import numpy as np

    a, b = np.load(a_path, mmap_mode="r"), np.load(b_path, mmap_mode="r")
    if a.shape != b.shape:
        return False, f"shapes {a.shape} vs {b.shape}"
    n_diff, worst, first = 0, 0.0, None
    for r in range(0, a.shape[0], 1024):
        x, y = np.asarray(a[r:r + 1024]), np.asarray(b[r:r + 1024])
        d = x.view(np.uint64) != y.view(np.uint64)
        if d.any():
            n_diff += int(d.sum())
            rel = np.abs(x - y) / np.maximum(np.abs(y), 1e-300)
            worst = max(worst, float(rel[d].max()))
            if first is None:
                i = np.argwhere(d)[0]
                first = (r + int(i[0]), int(i[1]))
    if n_diff == 0:
        return True, "bit for bit"
    return False, f"{n_diff} of {a.size} entries differ in the last bits, max relative difference {worst:.1e} (first at {first})"


# -- Python scenarios (each in its own process, so its peak memory is its own) -------------------
def scenario(args):
    import numpy as np
    import octile
    import octile.dask

    graphs = load_graphs(args.set, args.data)
    k = molecule_kernel(args.backend)
    k(graphs[:50])  # the GPU's start-up (context, kernels) outside the timing
    if args.scenario in ("inproc", "inproc2"):  # inproc2: OCTILE_DEVICES=0,1 (set by the caller)
        t = time.perf_counter()
        K = k(graphs)
        secs = time.perf_counter() - t
    else:
        from distributed import Client, LocalCluster

        sc = args.scenario
        workers = int("".join(c for c in sc if c.isdigit()))
        if sc.startswith("cuda"):
            # dask_cuda: one worker process per GPU, each seeing its own GPU as device 0
            from dask_cuda import LocalCUDACluster

            # SCALE_THREADS_PER_WORKER=N: N tiles in flight per GPU (their host work beside the others' launches)
            threads = int(os.environ.get("SCALE_THREADS_PER_WORKER", "1"))
            cluster = LocalCUDACluster(n_workers=workers, CUDA_VISIBLE_DEVICES=",".join(map(str, range(workers))), threads_per_worker=threads,
                                       dashboard_address=None)
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        with cluster, Client(cluster) as client:
            warm = graphs[:50]
            # each worker's GPU start-up and the cluster's first transfers outside the timing,
            # through octile.dask as a user's first call (its first tile sizes the worker's pool)
            t = time.perf_counter()
            octile.dask.gather(octile.dask.gram(k, warm, tile_size=10))
            warm_s = time.perf_counter() - t
            extra = {"workers": {w: str(d) for w, d in client.run(lambda: (os.environ.get("CUDA_VISIBLE_DEVICES"), k.device_)).items()},
                     "first_call_on_the_cluster_s": round(warm_s, 3)}
            runs = []
            for _ in range(REPEATS):
                t = time.perf_counter()
                if sc == "dask1zarr":
                    # the workers write the tiles to disk themselves (nothing gathered in the client)
                    import zarr

                    store = args.save + ".zarr"
                    octile.dask.gram(k, graphs).rechunk(2048).to_zarr(store, overwrite=True)
                    secs = time.perf_counter() - t
                    K = zarr.open(store)[:]
                    __import__("shutil").rmtree(store)
                    runs.append((secs, {}))
                    continue
                from distributed import get_task_stream

                run = {}
                wall0 = time.time()  # the workers' task stream is in wall-clock seconds (one host)
                with get_task_stream() as ts:
                    # SCALE_DASK_TILE_SIZE=N: tiles of N graphs (default: octile.dask.default_tile_size)
                    size = int(os.environ["SCALE_DASK_TILE_SIZE"]) if os.environ.get("SCALE_DASK_TILE_SIZE") else None
                    lazy = octile.dask.gram(k, graphs, tile_size=size)  # sends the graphs to the workers
                    run["graphs_sent_s"] = round(time.perf_counter() - t, 3)
                    if sc.endswith("compute"):
                        K = lazy.compute()  # joined on a worker, then sent whole
                    else:
                        # tile by tile as they finish; when each was in K (the client's side)
                        filled = []
                        K = octile.dask.gather(lazy, progress=lambda done, total: filled.append(time.perf_counter() - t))
                        run["filled_s"] = {"first": round(filled[0], 3), "last": round(filled[-1], 3)} if filled else {}
                secs = time.perf_counter() - t
                # where the time went: the workers' task time by kind (the tiles, the transposes of
                # .compute(), the diagonals, ...; "octile-" is every key's prefix)
                # and per worker: tiles computed, the first one's start and the last one's end,
                # seconds after the call began (what the GPUs did between the graphs' sending and
                # the gather)
                spent, per = {}, {}
                for task in ts.data:
                    key = str(task["key"]).replace("octile-", "")  # every key starts "octile-"
                    kind = next((w for w in ("tile", "diag", "gram", "gradient") if w in key), "other")
                    for ss in task["startstops"]:
                        name = f"{kind}:{ss['action']}"
                        spent[name] = spent.get(name, 0.0) + ss["stop"] - ss["start"]
                        if name == "tile:compute":
                            w = per.setdefault(str(task.get("worker", "?")), [0, float("inf"), 0.0])
                            w[0] += 1
                            w[1] = min(w[1], ss["start"] - wall0)
                            w[2] = max(w[2], ss["stop"] - wall0)
                run["task_seconds"] = {k_: round(v, 3) for k_, v in sorted(spent.items())}
                run["tiles_by_worker"] = {w: {"tiles": v[0], "first_start_s": round(v[1], 3), "last_stop_s": round(v[2], 3)} for w, v in per.items()}
                runs.append((secs, run))
            secs, run = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
            extra.update(run)
            extra["seconds_all"] = [round(r[0], 3) for r in runs]
    np.save(args.save, K)
    n = len(graphs)
    print(json.dumps({"graphs": n, "pairs": n * (n + 1) // 2, "seconds": secs, **locals().get("extra", {})}))


def split_over_two_gpus(args, name, out, work):
    """`octile gram` on two GPUs as a user runs it (block flags, one process per GPU through
    CUDA_VISIBLE_DEVICES): GPU 0 computes rows 0:h of the upper triangle (the square K[0:h, 0:h],
    then K[0:h, h:n]), GPU 1 the square K[h:n, h:n], h cut at equal cost (Σ nᵢ·nⱼ over the pairs);
    the blocks are then put together in one .npy (not timed). Wall time of the slower GPU."""
    import numpy as np

    graphs = load_graphs(name, args.data)
    nodes = np.array([g.n_nodes for g in graphs], dtype=float)
    n = len(graphs)
    total = nodes.sum()
    # cost of the upper triangle's rows i: nᵢ·(Σ_{j≥i} nⱼ); GPU 0 takes rows 0:h
    tail = np.cumsum(nodes[::-1])[::-1]
    row_cost = nodes * tail
    h = int(np.searchsorted(np.cumsum(row_cost), row_cost.sum() / 2)) + 1
    base = [args.octile, "gram", *inputs(name, args.data), "--kernel", KERNEL, "--backend", args.backend, "--quiet"]
    parts = {"a": (["--rows", f"0:{h}", "--cols", f"0:{h}"], "0"), "b": (["--rows", f"0:{h}", "--cols", f"{h}:{n}"], "0"),
             "c": (["--rows", f"{h}:{n}", "--cols", f"{h}:{n}"], "1")}
    paths = {p: os.path.join(work, f"{name}-gpus2-{p}.npy") for p in parts}
    script = {"0": " && ".join(" ".join([*base, *parts[p][0], "--out", paths[p]]) for p in ("a", "b")),
              "1": " ".join([*base, *parts["c"][0], "--out", paths["c"]])}
    t = time.time()
    procs = {gpu: subprocess.Popen(["bash", "-c", cmd], env={**os.environ, "CUDA_VISIBLE_DEVICES": gpu}, stderr=subprocess.PIPE, text=True)
             for gpu, cmd in script.items()}
    done = {}
    while len(done) < len(procs):
        for gpu, p in procs.items():
            if gpu not in done and p.poll() is not None:
                done[gpu] = dict(rc=p.returncode, wall_s=time.time() - t, stderr=p.stderr.read()[-1500:])
        time.sleep(0.01)
    wall = max(d["wall_s"] for d in done.values())
    if any(d["rc"] != 0 for d in done.values()):
        return dict(set=name, mode="gpus2", rc=[d["rc"] for d in done.values()], stderr=[d["stderr"] for d in done.values()])
    summaries = {p: json.load(open(paths[p][:-4] + ".json")) for p in parts}
    K = np.lib.format.open_memmap(out, mode="w+", dtype=np.float64, shape=(n, n))
    a, b, c = (np.load(paths[p], mmap_mode="r") for p in ("a", "b", "c"))
    K[:h, :h] = a
    K[:h, h:] = b
    K[h:, :h] = np.asarray(b).T
    K[h:, h:] = c
    K.flush()
    del K, a, b, c
    for p in paths.values():
        os.remove(p)
        os.remove(p[:-4] + ".json")
    pairs = n * (n + 1) // 2
    return dict(set=name, mode="gpus2", graphs=n, pairs=pairs, seconds=wall, pairs_per_second=pairs / wall, tiles=sum(s["tiles"] for s in summaries.values()),
                tile_size=summaries["a"]["tile_size"], iterations=None, wall_s=wall, peak_rss_bytes=0, matrix_bytes=n * n * 8, split_row=h,
                gpu_wall_s={g: round(d["wall_s"], 3) for g, d in done.items()}, devices=[s["device"] for s in summaries.values()],
                details="two processes, CUDA_VISIBLE_DEVICES 0 and 1")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--octile", default="octile")
    ap.add_argument("--data", default=os.path.join(REPO, "data"))
    ap.add_argument("--out", default="/tmp/scale")
    ap.add_argument("--sets", default="mol1k,nci5k,mix20k")
    ap.add_argument("--dask-sets", default="nci5k,mix20k")
    ap.add_argument("--cli-modes", default="streamed,in-memory")
    ap.add_argument("--scenarios", default="", help="Python scenarios: inproc; daskN (a LocalCluster of N workers, gather), daskNcompute (.compute()), "
                    "dask1zarr, cudaN (dask_cuda's LocalCUDACluster on N GPUs, gather) (default by set)")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--scenario")
    ap.add_argument("--set")
    ap.add_argument("--save")
    args = ap.parse_args()
    if args.scenario:
        return scenario(args)
    os.makedirs(args.out, exist_ok=True)
    work = os.environ.get("SCALE_WORK", "/tmp/scale-work")
    os.makedirs(work, exist_ok=True)
    try:
        device = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        device = "no GPU (nvidia-smi not found)"
    results = {"cli": [], "python": [], "device": device, "backend": args.backend}

    def save():
        with open(os.path.join(args.out, "scale.json"), "w") as f:
            json.dump(results, f, indent=1)

    for name in args.sets.split(","):
        if not name:
            continue
        files = {}
        for mode in args.cli_modes.split(","):
            out = os.path.join(work, f"{name}-{mode}.npy")
            if mode == "gpus2":
                row = split_over_two_gpus(args, name, out, work)
                print(json.dumps(row), flush=True)
                results["cli"].append(row)
                if "pairs" in row:
                    files[mode] = out
                save()
                continue
            pre = []
            if mode == "devices2":
                pre = ["--devices", "0,1"]  # one process, whole tiles to each GPU
            if mode == "in-memory":
                extra = ["--tile-size", "1000000"]
            elif mode.startswith("tile="):
                extra = ["--tile-size", mode[5:]]
            else:
                extra = ["--tile-size", os.environ["SCALE_TILE"]] if "SCALE_TILE" in os.environ else []
            runs = []
            for _ in range(REPEATS):
                r = measured([args.octile, *pre, "gram", *inputs(name, args.data), "--kernel", KERNEL, "--backend", args.backend, "--out", out, "--quiet", *extra])
                if r["rc"] != 0:
                    break
                runs.append((json.load(open(out[:-4] + ".json")), r))
            if r["rc"] != 0:
                r.update(set=name, mode=mode)
                results["cli"].append(r)
                save()
                continue
            # the median run of REPEATS (each a process of its own), every run's seconds beside it
            s, r = sorted(runs, key=lambda sr: sr[0]["seconds"])[len(runs) // 2]
            row = dict(set=name, mode=mode, graphs=s["graphs"], pairs=s["pairs"], seconds=s["seconds"], pairs_per_second=s["pairs_per_second"],
                       tiles=s["tiles"], tile_size=s["tile_size"], iterations=s["iterations"], wall_s=r["wall_s"], peak_rss_bytes=r["peak_rss_bytes"],
                       matrix_bytes=s["graphs"] ** 2 * 8, details=s["details"], seconds_all=[round(x["seconds"], 3) for x, _ in runs],
                       timeline=s.get("timeline"))
            print(json.dumps(row), flush=True)
            results["cli"].append(row)
            files[mode] = out
            save()
        for mode in [m for m in files if m != "streamed"]:
            if "streamed" in files:
                ok, why = same(files["streamed"], files[mode])
                results.setdefault("cli_equal", {})[f"{name} streamed vs {mode}"] = why if ok else f"DIFFERENT: {why}"
                print(name, "streamed vs", mode, why, flush=True)
            os.remove(files[mode])
        if "streamed" in files:
            results.setdefault("_files", {})[name] = files["streamed"]
        save()
    for name in args.dask_sets.split(","):
        if not name:
            continue
        saved = {}
        for sc in args.scenarios.split(",") if args.scenarios else (("inproc", "dask1", "dask2") if name != "mix20k" else ("inproc", "dask1")):
            path = os.path.join(work, f"{name}-{sc}.npy")
            env = {**os.environ, "OCTILE_DEVICES": "0,1"} if sc == "inproc2" else None
            r = measured([sys.executable, os.path.abspath(__file__), "--scenario", sc, "--set", name, "--data", args.data, "--save", path, "--backend", args.backend], env=env)
            if r["rc"] != 0:
                results["python"].append(dict(set=name, scenario=sc, error=r["stderr"]))
                print(name, sc, "failed:", r["stderr"], flush=True)
                save()
                continue
            inner = json.loads([l for l in r["stdout"] if l.startswith("{")][-1])
            row = dict(set=name, scenario=sc, wall_s=r["wall_s"], peak_rss_bytes=r["peak_rss_bytes"], **inner,
                       pairs_per_second=inner["pairs"] / inner["seconds"])
            print(json.dumps(row), flush=True)
            results["python"].append(row)
            saved[sc] = path
            save()
        for sc, path in saved.items():
            ref = results.get("_files", {}).get(name)
            if ref:
                ok, why = same(path, ref)
                results.setdefault("python_equal", {})[f"{name} {sc} vs CLI streamed"] = why if ok else f"DIFFERENT: {why}"
                print(name, sc, "vs CLI streamed:", why, flush=True)
        for sc in saved:
            if sc != "inproc" and "inproc" in saved:
                ok, why = same(saved[sc], saved["inproc"])
                results.setdefault("python_equal", {})[f"{name} {sc} vs one process"] = why if ok else f"DIFFERENT: {why}"
        for p in saved.values():
            os.remove(p)
        save()
    save()


if __name__ == "__main__":
    main()

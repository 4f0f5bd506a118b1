"""scale.json (benches/scale/scale.py) as Markdown tables: the CLI streamed vs in memory, the Dask
path vs one process, the bit-for-bit checks, and the extrapolation to 10⁵ graphs."""
import json
import sys


def gib(b):
    return f"{b / 2**30:.2f} GiB"


def main(path):
    r = json.load(open(path))
    print(f"device: {r.get('device', '?')}\n")
    print("| set | graphs | pairs | output | tiles | seconds | pairs/s | peak RSS | matrix |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    rate = {}
    for c in r["cli"]:
        if "pairs" not in c:
            print(f"| {c['set']} | | | {c['mode']} | | failed (exit {c.get('rc')}) | | | |")
            continue
        rate[(c["set"], c["mode"])] = c["pairs_per_second"]
        print(f"| {c['set']} | {c['graphs']:,} | {c['pairs']:,} | {c['mode']} | {c['tiles']} | {c['seconds']:.2f} | {c['pairs_per_second'] / 1e6:.2f} M | "
              f"{gib(c['peak_rss_bytes'])} | {gib(c['matrix_bytes'])} |")
    print()
    for name in sorted({s for s, _ in rate}):
        if (name, "streamed") in rate and (name, "in-memory") in rate:
            print(f"- {name}: streamed / in-memory pairs/s = {rate[(name, 'streamed')] / rate[(name, 'in-memory')]:.3f}")
        wall = {c["mode"]: c["wall_s"] for c in r["cli"] if c.get("set") == name and "wall_s" in c}
        secs = {c["mode"]: c["seconds"] for c in r["cli"] if c.get("set") == name and "seconds" in c}
        if "streamed" in secs and "devices2" in secs:
            print(f"- {name}: `--devices 0,1` (one process) {secs['devices2']:.2f} s vs one GPU {secs['streamed']:.2f} s (in-process): "
                  f"{secs['streamed'] / secs['devices2']:.2f}×; process wall {wall['devices2']:.2f} s vs {wall['streamed']:.2f} s: {wall['streamed'] / wall['devices2']:.2f}×")
        if "streamed" in wall and "gpus2" in wall:
            print(f"- {name}: two GPUs (two processes, wall {wall['gpus2']:.2f} s) vs one GPU streamed (process wall {wall['streamed']:.2f} s): "
                  f"{wall['streamed'] / wall['gpus2']:.2f}×")
    for c in r["cli"]:
        if len(c.get("seconds_all", [])) > 1:
            print(f"- {c['set']} {c['mode']}: median of {len(c['seconds_all'])} runs, seconds {c['seconds_all']}")
        tl = c.get("timeline") or {}
        if tl.get("tiles"):
            # columns: r0, r1, c0, c1, device, start, computed, handed, written
            tiles = tl["tiles"]
            per = {}
            for t in tiles:
                per.setdefault(t[4], []).append(t)
            busy = ", ".join(f"GPU {d}: {len(ts)} tiles, last computed at {max(t[6] for t in ts):.2f} s" for d, ts in sorted(per.items()))
            print(f"- {c['set']} {c['mode']} timeline: {busy}; writer busy {sum(t[8] - t[7] for t in tiles):.2f} s, "
                  f"tiles waiting for it {sum(t[7] - t[6] for t in tiles):.2f} s in all, last written at {max(t[8] for t in tiles):.2f} s")
    for c in r["cli"]:
        if c.get("mode") == "gpus2" and "gpu_wall_s" in c:
            print(f"- {c['set']} gpus2: split at row {c['split_row']}, wall per GPU {c['gpu_wall_s']}, devices {c['devices']}")
    for k, v in r.get("cli_equal", {}).items():
        print(f"- {k}: {v}")
    if r.get("python"):
        print("\n| set | Python | graphs | seconds | pairs/s | vs one process | peak RSS (client) |")
        print("|---|---|---:|---:|---:|---:|---:|")
        one = {p["set"]: p["seconds"] for p in r["python"] if p.get("scenario") == "inproc" and "seconds" in p}
        label = {"inproc": "one process, kernel(X)", "dask1": "Dask, 1 GPU worker, gather", "dask2": "Dask, 2 workers on the GPU, gather",
                 "dask1compute": "Dask, 1 GPU worker, .compute()", "dask1zarr": "Dask, 1 GPU worker, to_zarr",
                 "cuda1": "dask_cuda LocalCUDACluster, 1 GPU, gather", "cuda2": "dask_cuda LocalCUDACluster, 2 GPUs, gather",
                 "inproc2": "one process, kernel(X), OCTILE_DEVICES=0,1"}
        for p in r["python"]:
            if "seconds" not in p:
                print(f"| {p['set']} | {label.get(p['scenario'])} | | failed | | | |")
                continue
            rel = f"{p['seconds'] / one[p['set']]:.3f}×" if p["set"] in one else ""
            print(f"| {p['set']} | {label.get(p['scenario'])} | {p['graphs']:,} | {p['seconds']:.2f} | {p['pairs_per_second'] / 1e6:.2f} M | {rel} | {gib(p['peak_rss_bytes'])} |")
        print()
        for p in r["python"]:
            if p.get("task_seconds"):
                sent = f", graphs sent in {p['graphs_sent_s']:.2f} s" if "graphs_sent_s" in p else ""
                sent += f" (the cluster's first call, 50 graphs, before the timing: {p['first_call_on_the_cluster_s']:.2f} s)" if "first_call_on_the_cluster_s" in p else ""
                runs = f" (median of {len(p['seconds_all'])} runs: {p['seconds_all']})" if len(p.get("seconds_all", [])) > 1 else ""
                print(f"- {p['set']} {p['scenario']}: worker task seconds {p['task_seconds']} of {p['seconds']:.2f} s{runs}{sent}")
                for w, v in sorted(p.get("tiles_by_worker", {}).items()):
                    print(f"  - {w}: {v['tiles']} tiles, first started at {v['first_start_s']:.3f} s, last ended at {v['last_stop_s']:.3f} s (the call: {p['seconds']:.3f} s)")
                if p.get("filled_s"):
                    print(f"  - client: first tile in the matrix at {p['filled_s']['first']:.3f} s, last at {p['filled_s']['last']:.3f} s")
        secs = {(p["set"], p["scenario"]): p["seconds"] for p in r["python"] if "seconds" in p}
        for (name, sc), t in sorted(secs.items()):
            if sc == "inproc2" and (name, "inproc") in secs:
                print(f"- {name}: kernel(X) on 2 GPUs (OCTILE_DEVICES=0,1) = {secs[(name, 'inproc')] / t:.2f}× on 1 GPU")
            if sc == "cuda2" and (name, "cuda1") in secs:
                print(f"- {name}: dask_cuda 2 GPUs = {secs[(name, 'cuda1')] / t:.2f}× 1 GPU (Dask), {secs.get((name, 'inproc'), float('nan')) / t:.2f}× one process on 1 GPU")
        for p in r["python"]:
            if p.get("workers"):
                print(f"- {p['set']} {p['scenario']}: workers {p['workers']}")
        for k, v in r.get("python_equal", {}).items():
            print(f"- {k}: {v}")
    big = [c for c in r["cli"] if c.get("mode") == "streamed" and "pairs" in c]
    if big:
        c = max(big, key=lambda c: c["graphs"])
        pairs = 10**5 * (10**5 + 1) // 2
        hours = pairs / c["pairs_per_second"] / 3600
        print(f"\n10⁵ graphs ({pairs:.2e} pairs) at the {c['set']} rate ({c['pairs_per_second'] / 1e6:.2f} M pairs/s): "
              f"{hours:.2f} h on 1 GPU, {hours / 8 * 60:.1f} min on 8 (tiles are independent; the matrix, {gib(10**10 * 8)}, streams to disk).")


if __name__ == "__main__":
    main(sys.argv[1])

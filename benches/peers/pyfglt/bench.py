#!/usr/bin/env python3
"""octile's graphlet transform (GPU and CPU) against pyfglt 0.3.0 on generated stand-ins for the
paper's graphs (../shared/papers/graphlet-transform-cuda.txt, Table 2), in one run on one machine.

For each graph: `octile generate SPEC --out G.mtx`; `octile graphlets G.mtx --backend cuda|cpu
--repeat R` (its JSON summary: `seconds` = the whole transform with transfers, `kernel_seconds` =
the kernels alone, medians of R runs); pyfglt in a child process (scipy.io.mmread -> CSC ->
`pyfglt._fglt_c.count`, the C++ counting that `pyfglt.fglt.compute(A, raw=True)` calls, timed
alone, median of its repeats under a time cap); then octile's net (and raw) frequencies against
pyfglt's, element by element and exactly. Writes OUT/pyfglt-bench.md and OUT/pyfglt-bench.json.

    python3 bench.py --octile target/release/octile --out OUT            # the full stand-ins
    python3 bench.py --octile target/release/octile --out OUT --small --backends cpu   # a test here

Internal: `bench.py --pyfglt-worker G.mtx PREFIX --repeat R --cap S` runs pyfglt once per repeat
and writes PREFIX.net.npy, PREFIX.raw.npy, PREFIX.json.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

# name, generator spec, what it stands in for, the paper's CUDA total for sigma0-sigma4 (ms) or None
GRAPHS = {
    "delaunay": ("gen:delaunay:4194304:1", "delaunay_n22 (4.2 M nodes, 12.6 M edges)", 97.0),
    "road": ("gen:road:8000000:1", "road_usa / great-britain_osm (planar, ~2.5 average degree)", 96.0),
    "ba": ("gen:ba:1250000:8:1", "BA hubs, 10 M edges", None),
    # R-MAT's hubs make 4-node counting superlinear: at ~10 M edges (scale 20, edge factor 10:
    # 9.98 M edges) octile's CPU, pyfglt and octile's GPU each took over 90 s on the H100 machine's
    # 16 cores; scale 18 (1.97 M edges, largest degree 15,946) takes octile's CPU ~ 55 s on 2 cores
    "rmat": ("gen:rmat:18:8:1", "Graph500 R-MAT, heavy hubs (scale 18)", None),
}
SMALL = {
    "delaunay": ("gen:delaunay:65536:1", "delaunay 2^16", None),
    "road": ("gen:road:100000:1", "road 100 k", None),
    "ba": ("gen:ba:20000:8:1", "BA 20 k, m = 8", None),
    "rmat": ("gen:rmat:14:10:1", "R-MAT scale 14", None),
}
PAPER_NOTE = ("paper: CUDA total (allocation, copies, 5 frequencies sigma0-sigma4) on SuiteSparse's "
              "delaunay_n22 (97 ms) and great-britain_osm (96 ms, 7.7 M nodes, 8 M edges; the road column's reference)")


def log(msg):
    print(msg, flush=True)


# Runs argv[2:] and writes its peak RSS (KiB) to argv[1]. A process started straight from this one
# would report this one's peak instead when larger (Linux keeps the parent's high-water mark across
# fork and exec), and this one holds the big comparison arrays: a small Python in between.
PEAK_WRAPPER = ("import resource, subprocess, sys; rc = subprocess.call(sys.argv[2:]); "
                "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(rc)")
DEADLINE = [float("inf")]   # time.monotonic() past which no process may run (--budget)


def run_measured(cmd, timeout, gpu_poll=False):
    """Runs cmd (killed after `timeout` s or at the --budget deadline); returns (rc, seconds, peak
    host RSS bytes of that process or None, peak GPU MiB used or None, output tail)."""
    timeout = min(timeout, DEADLINE[0] - time.monotonic())
    if timeout < 5:
        return -9, 0.0, None, None, "skipped: the --budget is spent"
    poll = GpuPoll() if gpu_poll else None
    peak_file = f"/tmp/pyfglt-bench-peak-{os.getpid()}"
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", PEAK_WRAPPER, peak_file, *cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    out_lines = []
    reader = threading.Thread(target=lambda: out_lines.extend(p.stdout), daemon=True)
    reader.start()
    try:
        rc = p.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)   # the wrapper's own session: it and the command
        p.wait()
        rc = -9
        out_lines.append(f"\nkilled after {timeout:.0f} s")
    reader.join(5)
    wall = time.perf_counter() - t0
    gpu = poll.stop() if poll else None
    try:
        rss = int(open(peak_file).read()) * 1024
        os.remove(peak_file)
    except (OSError, ValueError):
        rss = None
    return rc, wall, rss, gpu, "".join(out_lines)[-2000:]


class GpuPoll:
    """The GPU memory in use, sampled by nvidia-smi every 20 ms while a command runs: its peak
    above the level before the command."""

    def __init__(self):
        self.samples, self.proc = [], None
        if shutil.which("nvidia-smi") is None:
            return
        self.base = gpu_used_mib()
        self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-lms", "20"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.samples.append(float(line.split(",")[0]))
            except ValueError:
                pass

    def stop(self):
        if self.proc is None:
            return None
        self.proc.terminate()
        self.proc.wait()
        self.thread.join(2)
        if not self.samples or self.base is None:
            return None
        return max(self.samples) - self.base


def gpu_used_mib():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=30).stdout
        return float(out.split()[0])
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return None


def compare(actual, expected, limit=5):
    """Element-wise exact comparison: mismatch count and the first few (node, orbit, actual, expected)."""
    if actual.shape != expected.shape:
        return {"match": False, "mismatches": None, "why": f"shape {actual.shape} != expected {expected.shape}"}
    diff = actual != expected
    k = int(diff.sum())
    first = []
    if k:
        for flat in np.flatnonzero(diff)[:limit]:
            i, j = divmod(int(flat), actual.shape[1])
            first.append({"node": i, "orbit": j, "actual": int(actual[i, j]), "expected": int(expected[i, j])})
    return {"match": k == 0, "mismatches": k, "first": first}


def octile_transform(args, mtx, work, name, backend, raw):
    """One `octile graphlets` process: its summary plus the process's peak RSS and GPU memory."""
    suffix = f"{backend}{'_raw' if raw else ''}"
    out = os.path.join(work, f"{name}.{suffix}.npy")
    repeat = 1 if raw else args.repeat if backend == "cuda" else args.cpu_repeat
    cmd = [args.octile, "graphlets", mtx, "--out", out, "--backend", backend, "--repeat", str(repeat), "--quiet"]
    if raw:
        cmd.append("--raw")
    rc, wall, rss, gpu, tail = run_measured(cmd, args.timeout, gpu_poll=backend == "cuda")
    if rc != 0:
        log(f"  octile {suffix}: FAILED rc={rc}: {tail.strip()[-600:]}")
        return {"ok": False, "rc": rc, "error": tail.strip()[-600:]}
    s = json.load(open(out[:-4] + ".json"))
    # a GPU memory figure of octile's own, if its summary has one (else nvidia-smi's samples)
    own = {k: v for k, v in s.items() if "gpu" in k.lower() and any(w in k.lower() for w in ("byte", "mem"))}
    r = {"ok": True, "npy": out, "process_seconds": wall, "host_peak_bytes": rss, "gpu_peak_mib": gpu, "summary_gpu_memory": own, "summary": s}
    log(f"  octile {suffix}: {s['seconds'] * 1e3:.1f} ms (kernels {s['kernel_seconds'] * 1e3:.1f} ms), runs {[round(x * 1e3, 1) for x in s['seconds_all']]} ms, "
        f"process {wall:.1f} s, host peak {fmt(rss and rss / 2**20, '.0f')} MiB" + (f", GPU peak {gpu:.0f} MiB" if gpu is not None else "")
        + ("; phases (median ms): " + ", ".join(f"{k} {v * 1e3:.1f}" for k, v in s["phase_seconds"].items()) if s.get("phase_seconds") else ""))
    return r


def pyfglt_transform(args, mtx, work, name):
    prefix = os.path.join(work, f"{name}.pyfglt")
    cmd = [sys.executable, os.path.abspath(__file__), "--pyfglt-worker", mtx, prefix, "--repeat", str(args.pyfglt_repeat), "--cap", str(args.pyfglt_cap)]
    rc, wall, rss, _, tail = run_measured(cmd, args.pyfglt_timeout)
    if rc != 0:
        why = "timed out" if rc < 0 else f"rc={rc}"
        log(f"  pyfglt: FAILED ({why}, limit {args.pyfglt_timeout} s): {tail.strip()[-600:]}")
        return {"ok": False, "rc": rc, "error": tail.strip()[-600:]}
    s = json.load(open(prefix + ".json"))
    log(f"  pyfglt: {s['seconds']:.3f} s (median of {len(s['seconds_all'])}: {[round(x, 3) for x in s['seconds_all']]}), read {s['read_seconds']:.1f} s, host peak {fmt(rss and rss / 2**20, '.0f')} MiB")
    return {"ok": True, "net": prefix + ".net.npy", "raw": prefix + ".raw.npy", "process_seconds": wall, "host_peak_bytes": rss, "summary": s}


def pyfglt_worker(mtx, prefix, repeat, cap):
    """In a child process: scipy.io.mmread -> CSC (int values 0/1, symmetric) -> pyfglt's C++ count."""
    import scipy.io
    import scipy.sparse as sp
    from pyfglt import _fglt_c
    import pyfglt
    t = time.perf_counter()
    try:
        m = scipy.io.mmread(mtx, spmatrix=True)   # scipy >= 1.15 warns without it
    except TypeError:
        m = scipy.io.mmread(mtx)
    a = sp.csc_matrix(m)
    a.data[:] = 1
    a.sort_indices()
    read = time.perf_counter() - t
    times, f = [], None
    for r in range(repeat):
        t = time.perf_counter()
        f = _fglt_c.count(a)          # (raw, net), each 16 x n, as pyfglt.fglt.compute calls it
        times.append(time.perf_counter() - t)
        if sum(times) + times[-1] > cap:   # the next repeat would pass the cap
            break
    raw, net = (np.ascontiguousarray(x.astype(np.int64).T) for x in f)
    np.save(prefix + ".net.npy", net)
    np.save(prefix + ".raw.npy", raw)
    json.dump({"seconds": statistics.median(times), "seconds_all": times, "read_seconds": read, "n": a.shape[0], "nnz": int(a.nnz),
               "pyfglt": getattr(pyfglt, "__version__", "0.3.0"), "threads": os.cpu_count()}, open(prefix + ".json", "w"))


def one_graph(args, name, spec, label, paper_ms, work):
    log(f"== {name}: {spec} ({label})")
    mtx = os.path.join(work, f"{name}.mtx")
    gen_json = os.path.join(work, f"{name}.gen.json")
    rc, wall, _, _, tail = run_measured([args.octile, "generate", spec, "--out", mtx, "--summary", gen_json], args.timeout)
    if os.path.exists(mtx) and rc != 0:
        os.remove(mtx)
    if rc != 0:
        log(f"  generate FAILED rc={rc}: {tail.strip()[-600:]}")
        return {"graph": name, "spec": spec, "stands_for": label, "error": f"generate failed: {tail.strip()[-300:]}"}
    g = json.load(open(gen_json))
    log(f"  generated {g['n_nodes']} nodes, {g['n_edges']} edges in {g['generate_seconds']:.2f} s (process {wall:.1f} s, .mtx {os.path.getsize(mtx) / 2**20:.0f} MiB)")
    row = {"graph": name, "spec": spec, "stands_for": label, "paper_ms": paper_ms, "n": g["n_nodes"], "m": g["n_edges"], "generate_seconds": g["generate_seconds"], "octile": {}, "checks": {}}
    for b in args.backends:
        row["octile"][b] = octile_transform(args, mtx, work, name, b, raw=False)
    ok_backends = [b for b in args.backends if row["octile"][b]["ok"]]
    if ok_backends:
        row["octile"]["raw"] = octile_transform(args, mtx, work, name, ok_backends[0], raw=True)
        row["octile"]["raw"]["backend"] = ok_backends[0]
        row["max_degree"] = row["octile"][ok_backends[0]]["summary"].get("max_degree")
    if not args.no_pyfglt:
        row["pyfglt"] = pyfglt_transform(args, mtx, work, name)
        if row["pyfglt"]["ok"]:
            net = np.load(row["pyfglt"]["net"])
            for b in ok_backends:
                row["checks"][f"{b} net"] = compare(np.load(row["octile"][b]["npy"]), net)
            if ok_backends and row["octile"]["raw"]["ok"]:
                row["checks"][f"{ok_backends[0]} raw"] = compare(np.load(row["octile"]["raw"]["npy"]), np.load(row["pyfglt"]["raw"]))
            for k, c in row["checks"].items():
                log(f"  octile {k} vs pyfglt: " + ("equal, every element" if c["match"] else f"{c['mismatches']} MISMATCHES {c.get('why', '')} first {c.get('first')}"))
    if not args.keep:
        for f in os.listdir(work):
            if f.startswith(name + "."):
                os.remove(os.path.join(work, f))
    return row


def fmt(v, spec, unit=""):
    return "—" if v is None else f"{v:{spec}}{unit}"


def table(rows, backends):
    head = ["graph", "stands for", "n", "m", "max deg", "octile GPU ms (transfers)", "octile GPU kernels ms", "octile CPU s", "pyfglt s",
            "GPU vs pyfglt", "GPU kernels vs pyfglt", "CPU vs pyfglt", "paper ms (σ0–σ4)", "GPU peak MiB", "host peak MiB octile GPU / CPU / pyfglt", "equal to pyfglt"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['graph']} | {r['stands_for']} | " + " | ".join(["—"] * (len(head) - 3)) + f" | {r['error'][:80]} |")
            continue
        oc = r["octile"]
        val = lambda b, k: oc[b]["summary"][k] if b in oc and oc[b]["ok"] else None
        gpu, gpuk, cpu = val("cuda", "seconds"), val("cuda", "kernel_seconds"), val("cpu", "seconds")
        py = r["pyfglt"]["summary"]["seconds"] if r.get("pyfglt", {}).get("ok") else None
        ratio = lambda a, b: None if a is None or b is None or b <= 0 else a / b
        mib = lambda b: None if b is None else b / 2**20
        host = " / ".join(fmt(mib(x), ".0f") for x in [oc.get("cuda", {}).get("host_peak_bytes"), oc.get("cpu", {}).get("host_peak_bytes"), r.get("pyfglt", {}).get("host_peak_bytes")])
        gpu_mem = oc["cuda"].get("gpu_peak_mib") if "cuda" in oc and oc["cuda"]["ok"] else None
        if gpu_mem is None and "cuda" in oc and oc["cuda"]["ok"]:
            own = [v for k, v in oc["cuda"]["summary_gpu_memory"].items() if "byte" in k.lower() and isinstance(v, (int, float))]
            gpu_mem = max(own) / 2**20 if own else None
        checks = r["checks"]
        if not checks:
            match = "not compared"
        elif all(c["match"] for c in checks.values()):
            match = "yes (" + ", ".join(checks) + ")"
        else:
            match = "NO: " + ", ".join(f"{k} {c['mismatches']} differ" for k, c in checks.items() if not c["match"])
        failed = [f"octile {b}" for b in backends if b in oc and not oc[b]["ok"]] + (["pyfglt"] if not r.get("pyfglt", {"ok": True})["ok"] else [])
        if failed:
            match += "; failed or killed: " + ", ".join(failed)
        lines.append(" | ".join([
            f"| {r['graph']}", r["stands_for"], f"{r['n']:,}", f"{r['m']:,}", fmt(r.get("max_degree"), ","),
            fmt(None if gpu is None else gpu * 1e3, ".1f"), fmt(None if gpuk is None else gpuk * 1e3, ".1f"), fmt(cpu, ".3f"), fmt(py, ".3f"),
            fmt(ratio(py, gpu), ".1f", "×"), fmt(ratio(py, gpuk), ".1f", "×"), fmt(ratio(py, cpu), ".2f", "×"),
            fmt(r["paper_ms"], ".0f"), fmt(gpu_mem, ".0f"), host, match]) + " |")
    return "\n".join(lines)


def report(rows, info, args):
    """Writes OUT/pyfglt-bench.md and .json; returns the Markdown."""
    text = (f"octile vs pyfglt 0.3.0 (16 net frequencies per node; pyfglt: C++ counting alone, one thread: its binding passes np = 1; octile CPU: all {info['cpus']} cores)\n"
            f"machine: {info.get('gpu', 'no GPU')}; {info.get('cpu_model', '?')} × {info['cpus']}; octile {info.get('octile_commit', '?')}\n\n"
            f"{table(rows, args.backends)}\n\nGPU ms: median `seconds` of {args.repeat} transforms in one process (upload, kernels, download; "
            f"the graph read from .mtx before); kernels: `kernel_seconds`. CPU s: median of {args.cpu_repeat}. pyfglt s: median of up to "
            f"{args.pyfglt_repeat} counts (fewer past {args.pyfglt_cap:.0f} s). Speed-ups are pyfglt's time over octile's. "
            f"Peak host memory: each process's maximum RSS (the octile processes read the .mtx; pyfglt's holds scipy's CSC). {PAPER_NOTE}.\n")
    open(os.path.join(args.out, "pyfglt-bench.md"), "w").write(text)
    json.dump({"machine": info, "args": {k: v for k, v in vars(args).items() if k != "pyfglt_worker"}, "graphs": rows},
              open(os.path.join(args.out, "pyfglt-bench.json"), "w"), indent=1, default=str)
    return text


def machine():
    m = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    try:
        m["cpu_model"] = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    if shutil.which("nvidia-smi"):
        m["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pyfglt-worker", nargs=2, metavar=("MTX", "PREFIX"), help=argparse.SUPPRESS)
    ap.add_argument("--cap", type=float, default=30.0, help=argparse.SUPPRESS)
    ap.add_argument("--octile", default="target/release/octile", help="the octile binary")
    ap.add_argument("--out", default="pyfglt-bench", help="folder for pyfglt-bench.md / .json")
    ap.add_argument("--work", default="/tmp/pyfglt-work", help="folder for the .mtx and .npy files (large: ~1 GiB per graph)")
    ap.add_argument("--small", action="store_true", help="small stand-ins (delaunay 2^16, road 100 k, BA 20 k, R-MAT 14) for a test")
    ap.add_argument("--graphs", default="delaunay,road,ba,rmat", help="which graphs, comma-separated (default: all four)")
    ap.add_argument("--backends", default="cuda,cpu", help="octile backends, comma-separated: cuda, cpu")
    ap.add_argument("--repeat", type=int, default=5, help="octile GPU transforms per process (the median is quoted)")
    ap.add_argument("--cpu-repeat", type=int, default=3, help="octile CPU transforms per process (the median is quoted)")
    ap.add_argument("--pyfglt-repeat", type=int, default=3, help="pyfglt counts at most (the median is quoted)")
    ap.add_argument("--pyfglt-cap", type=float, default=30.0, help="no further pyfglt repeat once its runs passed this many seconds")
    ap.add_argument("--pyfglt-timeout", type=float, default=180.0, help="kill pyfglt after this many seconds")
    ap.add_argument("--timeout", type=float, default=180.0, help="kill an octile process after this many seconds")
    ap.add_argument("--budget", type=float, default=float("inf"), help="seconds for the whole run: processes are killed or skipped past it (run.sh: 540)")
    ap.add_argument("--no-pyfglt", action="store_true", help="octile alone (no comparison)")
    ap.add_argument("--keep", action="store_true", help="keep the .mtx and .npy files in --work")
    args = ap.parse_args()
    if args.pyfglt_worker:
        pyfglt_worker(*args.pyfglt_worker, args.repeat, args.cap)
        return
    DEADLINE[0] = time.monotonic() + args.budget
    args.backends = [b for b in args.backends.split(",") if b]
    args.octile = os.path.abspath(args.octile)
    for d in (args.out, args.work):
        os.makedirs(d, exist_ok=True)
    graphs = SMALL if args.small else GRAPHS
    names = [g for g in args.graphs.split(",") if g]
    unknown = [g for g in names if g not in graphs]
    if unknown:
        sys.exit(f"unknown graph(s) {unknown}; use {','.join(graphs)}")
    info = machine()
    info["octile"] = args.octile
    commit_file = os.path.join(os.path.dirname(args.octile), "COMMIT")
    if os.path.exists(commit_file):
        info["octile_commit"] = open(commit_file).read().strip()
    else:
        git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
        info["octile_commit"] = git.stdout.strip() + " (checkout; the binary may differ)" if git.returncode == 0 else "?"
    log(json.dumps(info))
    rows = []
    for g in names:   # the table is rewritten after each graph: a run cut short keeps what it measured
        rows.append(one_graph(args, g, *graphs[g], args.work))
        text = report(rows, info, args)
    log("\n" + text)
    bad = [r["graph"] for r in rows if "error" in r or any(not c["match"] for c in r["checks"].values())]
    if bad:
        log(f"problems: {bad}")
        sys.exit(1)


if __name__ == "__main__":
    main()

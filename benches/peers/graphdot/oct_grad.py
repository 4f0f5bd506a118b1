#!/usr/bin/env python3
"""octile's side of gd_grad.py: on the same node-link sets and the same kernel (unnormalized K(X), the
spec's base kernels, q_bounds=(1e-4, 0.5), p with GraphDot's default bounds (1e-3, 1e3) when octile
lets p vary), CALLS (environment, default 5) plain calls and as many eval_gradient=True calls (warm =
the median of calls 2..CALLS, as gd_grad.py);
the K of the gradient call against the plain K; on mutag, dK against central differences of K in
log-hyperparameter space, and dK saved in GraphDot's convention (d/d raw hyperparameter = octile's
d/d log / value) as OUTDIR/oct_grad_mutag.npy, its columns in GraphDot's order (p, q, node features,
edge features, in the spec's order), named in oct_grad.json.

usage: oct_grad.py SETDIR OUTDIR NAME... [--backend cuda|cpu|auto] [--precision f32|f64] [--no-fd]
  (backend also from $OCT_BACKEND; default cuda; precision default f32)"""
import argparse, json, os, re, sys, time
import numpy as np
import octile
from octile.basekernels import TensorProduct, KroneckerDelta, SquareExponential, Constant

CALLS = max(2, int(os.environ.get("CALLS", "5")))

ap = argparse.ArgumentParser()
ap.add_argument("setdir"); ap.add_argument("out"); ap.add_argument("names", nargs="+")
ap.add_argument("--backend", default=os.environ.get("OCT_BACKEND", "cuda"))
ap.add_argument("--precision", default="f32")
ap.add_argument("--no-fd", action="store_true", help="skip the finite-difference check on mutag")
a = ap.parse_args()
os.makedirs(a.out, exist_ok=True)

# the base kernels and bounds of gd_grad.py
MK = {"kdelta": lambda v: KroneckerDelta(v, h_bounds=(1e-3, 1)),
      "sqexp": lambda v: SquareExponential(v, length_scale_bounds=(1e-2, 1e2)),
      "const": lambda v: Constant(v, c_bounds=(1e-3, 1e3))}
GD_P_BOUNDS = (1e-3, 1e3)  # graphdot.kernel.marginalized.starting_probability.Uniform's default: p is free there


def kernel(spec, p_free=True):
    kw = dict(node_kernel=TensorProduct(**{f: MK[k](v) for f, (k, v) in spec["node"].items()}),
              edge_kernel=TensorProduct(**{f: MK[k](v) for f, (k, v) in spec["edge"].items()}),
              q=spec["q"], q_bounds=(1e-4, 0.5), p=spec.get("p", 1.0), p_bounds=GD_P_BOUNDS if p_free else "fixed",
              backend=a.backend, precision=a.precision, normalized=False)
    try:
        return octile.MarginalizedGraphKernel(**kw, progress=False)
    except TypeError:  # no progress argument
        return octile.MarginalizedGraphKernel(**kw)


def gd_names(spec):
    """GraphDot's gradient columns for gd_grad.py's kernel: every hyperparameter has bounds, so all are
    active, in MarginalizedGraphKernel.hyperparameters order: p, q, then each TensorProduct's terms in
    keyword (= spec) order, one hyperparameter per base kernel."""
    return ["p", "q"] + [f"node.{f}" for f in spec["node"]] + [f"edge.{f}" for f in spec["edge"]]


def to_gd_name(name, spec):
    """octile's hyperparameter name -> GraphDot's column name (None if it cannot be told)."""
    low = name.lower()
    toks = [t for t in re.split(r"[^a-z0-9]+", low) if t]
    if low in ("p", "q") or (toks and toks[-1] in ("p", "q") and "node" not in toks and "edge" not in toks):
        return toks[-1] if toks else low
    if "starting" in toks or "starting_probability" in low:
        return "p"
    if "stopping" in toks or "stopping_probability" in low:
        return "q"
    pos = {part: toks.index(part) for part in ("node", "edge") if part in toks}
    if not pos:
        return None
    part = min(pos, key=pos.get)
    for feat in spec[part]:
        if re.search(r"(^|[^a-z0-9])" + re.escape(feat.lower()) + r"($|[^a-z0-9])", low):
            return f"{part}.{feat}"
    return None


def free_names(k, spec):
    """GraphDot-style names of octile's theta entries, in theta order."""
    hyp = [h for h in k.hyperparameters if not getattr(h, "fixed", False)]
    names = [getattr(h, "name", str(h)) for h in hyp]
    mapped = [to_gd_name(n, spec) for n in names]
    if len(mapped) == len(k.theta) and None not in mapped and len(set(mapped)) == len(mapped):
        return names, mapped
    # fall back on the documented order (p, q, node terms, edge terms; free ones only)
    order = [n for n in gd_names(spec) if n != "p" or len(k.theta) == len(gd_names(spec))]
    print(f"  warning: octile's hyperparameter names {names} do not map onto {gd_names(spec)}; assuming order {order}", flush=True)
    return names, order[:len(k.theta)]


def maxrel(x, ref, floor_frac=1e-6):
    big = np.abs(ref) > floor_frac * np.abs(ref).max()
    return float(np.max(np.abs(x - ref)[big] / np.abs(ref)[big])) if big.any() else 0.0


res = {}
if os.path.exists(f"{a.out}/oct_grad.json"):
    res = json.load(open(f"{a.out}/oct_grad.json"))
for name in a.names:
    spec = json.load(open(f"{a.setdir}/{name}.spec.json"))
    t0 = time.perf_counter()
    X = octile.read(f"{a.setdir}/{name}.jsonl")
    t_read = time.perf_counter() - t0
    n = len(X); pairs = n * (n + 1) // 2
    try:
        k = kernel(spec, p_free=True); p_free = True
    except (ValueError, TypeError) as e:
        print(f"octile {name}: p cannot vary ({e}); p fixed, so no p column", flush=True)
        k = kernel(spec, p_free=False); p_free = False
    t = {}
    for label, kw in (("plain", {}), ("gradient", {"eval_gradient": True})):
        ts = []
        for c in range(CALLS):
            t0 = time.perf_counter()
            r = k(X, **kw)
            ts.append(time.perf_counter() - t0)
        t[label] = ts
        if label == "plain":
            K0 = r
        print(f"octile {name} {label}: calls {', '.join(f'{x:.3f}' for x in ts)} s ({a.backend} {a.precision}, {pairs:,} pairs)", flush=True)
    K, dK = r
    run = getattr(k, "last_run_", None)
    try:
        run = json.loads(json.dumps(run))
    except (TypeError, ValueError):
        run = str(run)
    names, gd_cols = free_names(k, spec)
    raw = np.exp(np.asarray(k.theta, dtype=float))
    plain_w, grad_w = float(np.median(t["plain"][1:])), float(np.median(t["gradient"][1:]))
    k_vs_plain = maxrel(K, K0)
    print(f"octile {name}: dK shape {dK.shape}, dtype {dK.dtype}, warm gradient/plain {grad_w / plain_w:.2f}x, "
          f"hyperparameters {dict(zip(names, np.round(raw, 6).tolist()))} -> GraphDot columns {gd_cols}, "
          f"K of the gradient call vs plain K: max rel diff {k_vs_plain:.1e}; last gradient run: {run}", flush=True)
    entry = dict(graphs=n, pairs=pairs, read_s=t_read, plain_s=t["plain"], gradient_s=t["gradient"],
                 plain_warm_s=plain_w, gradient_warm_s=grad_w, gradient_call1_s=t["gradient"][0],
                 dK_shape=list(dK.shape), theta=[float(v) for v in k.theta], names=names, gd_columns=gd_cols,
                 gd_names=gd_names(spec), p_free=p_free, K_gradient_vs_plain_max_rel=k_vs_plain,
                 backend=a.backend, precision=a.precision, device=getattr(k, "device_", None), gradient_run=run)
    if name == "mutag" or name.startswith("mutag"):
        # GraphDot's convention: d/d(raw hyperparameter) = d/d(log) / value; columns in GraphDot's order
        order = [c for c in gd_names(spec) if c in gd_cols]
        idx = [gd_cols.index(c) for c in order]
        np.save(f"{a.out}/oct_grad_{name}.npy", (dK[:, :, idx] / raw[idx]).astype(np.float64))
        entry["npy_columns"] = order
        if not a.no_fd:
            # central differences of K in log space, one hyperparameter at a time
            h = 1e-3; fd = {}
            theta = np.asarray(k.theta, dtype=float)
            for i, c in enumerate(gd_cols):
                lo, hi = theta.copy(), theta.copy(); lo[i] -= h; hi[i] += h
                D = (k.clone_with_theta(hi)(X) - k.clone_with_theta(lo)(X)) / (2 * h)
                fd[c] = dict(max_rel=maxrel(dK[:, :, i], D, 1e-3), max_abs_over_max=float(np.abs(dK[:, :, i] - D).max() / max(np.abs(D).max(), 1e-300)))
            entry["finite_difference"] = fd
            print(f"octile {name}: dK vs central differences (h = {h} in log space): "
                  + ", ".join(f"{c} max rel {v['max_rel']:.1e} (max abs/max {v['max_abs_over_max']:.1e})" for c, v in fd.items()), flush=True)
    res[name] = entry
    json.dump(res, open(f"{a.out}/oct_grad.json", "w"), indent=1)

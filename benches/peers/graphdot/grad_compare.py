#!/usr/bin/env python3
"""The gradient side by side: OUTDIR/gd_grad.json (gd_grad.py) and OUTDIR/oct_grad.json (oct_grad.py),
and on mutag their dK (gd_grad_mutag.npy: GraphDot's, d/d raw hyperparameter; oct_grad_mutag.npy:
octile's d/d log divided by the value, the same convention) as one Markdown table. Columns matched by
name (oct_grad.json's npy_columns against GraphDot's p, q, node..., edge... order); GraphDot's dK is
symmetrized from its upper triangle as compare.sh does for K.
usage: grad_compare.py OUTDIR"""
import json, os, sys
import numpy as np

out = sys.argv[1]
gd = json.load(open(f"{out}/gd_grad.json")) if os.path.exists(f"{out}/gd_grad.json") else {}
oc = json.load(open(f"{out}/oct_grad.json")) if os.path.exists(f"{out}/oct_grad.json") else {}


def sym(a):
    """both triangles from the upper one, over the first two axes"""
    u = np.triu(np.ones(a.shape[:2], bool))
    u = u.reshape(u.shape + (1,) * (a.ndim - 2))
    return np.where(u, a, np.swapaxes(a, 0, 1))


def dk_diff(name):
    """max relative difference over entries with |dK| > 1e-6 max|dK| (per hyperparameter), max abs diff / max|dK|"""
    fo, fg = f"{out}/oct_grad_{name}.npy", f"{out}/gd_grad_{name}.npy"
    if not (os.path.exists(fo) and os.path.exists(fg)):
        return None
    o, g = np.load(fo), sym(np.load(fg))
    cols = oc[name].get("npy_columns", [])
    gdn = oc[name]["gd_names"]
    if g.shape[2] != len(gdn):
        return f"GraphDot has {g.shape[2]} columns, expected {len(gdn)} ({gdn})"
    rels, abss, per = [], [], []
    for i, c in enumerate(cols):
        a, b = o[:, :, i], g[:, :, gdn.index(c)]
        m = np.abs(b).max()
        big = np.abs(b) > 1e-6 * m
        r = float(np.max(np.abs(a - b)[big] / np.abs(b)[big])) if big.any() else 0.0
        s = float(np.abs(a - b).max() / m) if m > 0 else float(np.abs(a - b).max())
        rels.append(r); abss.append(s); per.append(f"{c} {r:.1e}")
    missing = [c for c in gdn if c not in cols]
    note = f"; not in octile's: {', '.join(missing)}" if missing else ""
    return f"{max(rels):.1e} (abs/max {max(abss):.1e}; {', '.join(per)}{note})"


print("| set | pairs | octile plain | octile gradient | octile gradient/plain | GraphDot plain | GraphDot gradient | GraphDot gradient/plain | speed-up (GraphDot gradient / octile gradient) | dK max rel diff |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for name in list(dict.fromkeys(list(oc) + list(gd))):
    o, g = oc.get(name), gd.get(name)
    pairs = f"{o['pairs']:,}" if o else "?"
    op = f"{o['plain_warm_s']:.3f} s" if o else "missing"
    og = f"{o['gradient_warm_s']:.3f} s" if o else "missing"
    orat = f"{o['gradient_warm_s'] / o['plain_warm_s']:.2f}x" if o else ""
    gp = f"{g['plain_warm_s']:.3f} s" if g else "missing"
    gg = f"{g['gradient_warm_s']:.3f} s" if g else "missing"
    grat = f"{g['gradient_warm_s'] / g['plain_warm_s']:.2f}x" if g else ""
    sp = f"{g['gradient_warm_s'] / o['gradient_warm_s']:.2f}x" if o and g else ""
    d = dk_diff(name) if o and g else None
    print(f"| {name} | {pairs} | {op} | {og} | {orat} | {gp} | {gg} | {grat} | {sp} | {d or ''} |")
for name, o in oc.items():
    extra = []
    if name in gd and gd[name]["dK_shape"][-1] != o["dK_shape"][-1]:
        extra.append(f"dK columns: GraphDot {gd[name]['dK_shape'][-1]} ({', '.join(o['gd_names'])}), octile {o['dK_shape'][-1]} ({', '.join(o['gd_columns'])})")
    if "finite_difference" in o:
        extra.append("octile dK vs central differences: " + ", ".join(f"{c} {v['max_rel']:.1e}" for c, v in o["finite_difference"].items()))
    extra.append(f"octile K of the gradient call vs plain K: {o['K_gradient_vs_plain_max_rel']:.1e}")
    if name in gd:
        gt, ot = np.exp(gd[name]["theta"]), np.exp(o["theta"])
        ot = [float(ot[o["gd_columns"].index(c)]) for c in o["gd_names"] if c in o["gd_columns"]]
        extra.append(f"hyperparameters GraphDot {np.round(gt, 6).tolist()} ({', '.join(o['gd_names'])}), "
                     f"octile {np.round(ot, 6).tolist()} ({', '.join(c for c in o['gd_names'] if c in o['gd_columns'])})")
    print(f"\n{name}: " + "; ".join(extra))

# ---- Gaussian-process regression of FreeSolv: gd_gpr.json (gd_gpr.py) and oct_gpr.json (gpr_freesolv.py)
gg = json.load(open(f"{out}/gd_gpr.json")) if os.path.exists(f"{out}/gd_gpr.json") else {}
og = json.load(open(f"{out}/oct_gpr.json")) if os.path.exists(f"{out}/oct_gpr.json") else {}
if gg or og:
    print("\n| FreeSolv GPR | GraphDot fit | GraphDot MAE (kcal/mol) | GraphDot R² | octile fit | octile MAE (kcal/mol) | octile R² | octile L-BFGS-B evaluations | octile time / GraphDot time |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    labels = [l for l in ("fixed", "fitted") if l in gg or l in og] + [l for l in og if l.startswith("fitted_")]
    for label in labels:
        g, o = gg.get("fitted" if label.startswith("fitted") else label), og.get(label)
        gcols = f"{g['fit_s']:.2f} s | {g['mae']:.3f} | {g['r2']:.3f}" if g else "missing | | "
        ocols = f"{o['fit_s']:.2f} s | {o['mae']:.3f} | {o['r2']:.3f}" if o else "missing | | "
        ev = str(o.get("lbfgsb_evaluations", "")) if o else ""
        ratio = f"{o['fit_s'] / g['fit_s']:.3f} (speed-up {g['fit_s'] / o['fit_s']:.2f}x)" if g and o else ""
        print(f"| {label} | {gcols} | {ocols} | {ev} | {ratio} |")
    print("\nGraphDot's GPR: L-BFGS-B with minimize(tol=1e-5) and p free (zero gradient under normalization); "
          "octile's \"fitted\": scikit-learn's L-BFGS-B defaults, p fixed; \"fitted_tol…\" rows: octile stopping as GraphDot's "
          "(compared with GraphDot's fitted run).")
    for label in labels:
        if label in gg:
            print(f"\nGraphDot {label} hyperparameters (p, q, element, aromatic, charge, order): {np.round(gg[label]['theta'], 4).tolist()}")
        if label in og:
            o = og[label]
            more = f"; L-BFGS-B {o['lbfgsb_iterations']} iterations, {o['lbfgsb_evaluations']} evaluations" if "lbfgsb_evaluations" in o else ""
            print(f"octile {label} hyperparameters: " + ", ".join(f"{n} {v:.4g}" for n, v in o["hyperparameters"].items())
                  + f"; log marginal likelihood {o['log_marginal_likelihood']:.2f}{more}")
    if og:
        print(f"\noctile: train {og.get('train')}, test {og.get('test')}, backend {og.get('backend')}, device {og.get('fitted', og.get('fixed', {})).get('device')}")

"""Gaussian-process regression of FreeSolv hydration free energies on octile's marginalized graph kernel,
with scikit-learn's ``GaussianProcessRegressor`` taking the kernel itself (not a precomputed matrix), so
that it can fit the kernel's hyperparameters by maximizing the log marginal likelihood with octile's
hyperparameter gradients (``kernel(X, eval_gradient=True)``).

The kernel, starting hyperparameters and split are those of GraphDot's own GPR run
(benches/peers/graphdot/gd_gpr.py): the normalized kernel with KroneckerDelta 0.3 / 0.7 / 0.8 on element
/ aromatic / charge, 0.5 on bond order, q = 0.05 (bounds 1e-3..0.5), alpha = 1e-2, normalize_y; a run
with these hyperparameters fixed (optimizer=None) and one fitting them (scikit-learn's L-BFGS-B from the
start point, no restarts; ``--also-tol 1e-5``: a third run stopping as GraphDot's GPR does, scipy's
``minimize(tol=1e-5)``). Prints and writes (OUTDIR/oct_gpr.json) fit seconds, test MAE (kcal/mol), R²,
the hyperparameters (exp(theta)) and the optimizer's iterations and evaluations.

    python python/examples/gpr_freesolv.py SETDIR [OUTDIR] [auto|cpu|cuda] [--limit N] [--precision f32|f64] [--also-tol 1e-5]

SETDIR holds freesolv.jsonl, freesolv.y.npy, freesolv.train.npy, freesolv.test.npy
(benches/peers/graphdot/freesolv_set.py data/freesolv.csv SETDIR; scripts/fetch-datasets freesolv).
Backend also from $OCT_BACKEND (default auto). ``--limit N``: only molecules 0..N-1 (their part of each
split), a quick run on the CPU.
"""
import argparse
import json
import os
import time
import warnings

import numpy as np
import scipy.optimize
from sklearn.gaussian_process import GaussianProcessRegressor

import octile
from octile.basekernels import KroneckerDelta, TensorProduct


def kernel(backend, precision):
    kw = dict(node_kernel=TensorProduct(element=KroneckerDelta(0.3, h_bounds=(1e-3, 1)), aromatic=KroneckerDelta(0.7, h_bounds=(1e-3, 1)),
                                        charge=KroneckerDelta(0.8, h_bounds=(1e-3, 1))),
              edge_kernel=TensorProduct(order=KroneckerDelta(0.5, h_bounds=(1e-3, 1))),
              q=0.05, q_bounds=(1e-3, 0.5), p=1.0, p_bounds="fixed", backend=backend, precision=precision, normalized=True)
    try:
        return octile.MarginalizedGraphKernel(**kw, progress=False)
    except TypeError:  # no progress argument
        return octile.MarginalizedGraphKernel(**kw)


class LBFGSB:
    """scikit-learn's default optimizer ("fmin_l_bfgs_b": scipy's L-BFGS-B with the gradient and the
    kernel's bounds), the same call, keeping the iteration and evaluation counts; ``tol``: scipy's
    ``minimize(tol=...)`` (GraphDot's GPR passes 1e-5), None = scikit-learn's default."""

    def __init__(self, tol=None):
        self.tol = tol
        self.nit = self.nfev = 0

    def __call__(self, obj_func, initial_theta, bounds):
        r = scipy.optimize.minimize(obj_func, initial_theta, method="L-BFGS-B", jac=True, bounds=bounds, tol=self.tol)
        if not r.success:
            warnings.warn(f"L-BFGS-B stopped: {r.message}")
        self.nit += int(r.nit); self.nfev += int(r.nfev)
        return r.x, r.fun


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("setdir")
    ap.add_argument("rest", nargs="*", help="[OUTDIR] [auto|cpu|cuda]")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--precision", default=None, help="f32 (the GPU's default) or f64 (the CPU's)")
    ap.add_argument("--also-tol", type=float, default=None,
                    help="also a fitted run with scipy's minimize(tol=...), GraphDot's stopping rule (its GPR passes tol=1e-5)")
    a = ap.parse_intermixed_args(argv)
    backend = next((r for r in a.rest if r in ("auto", "cpu", "cuda")), os.environ.get("OCT_BACKEND", "auto"))
    outdir = next((r for r in a.rest if r not in ("auto", "cpu", "cuda")), None)
    d = a.setdir
    graphs = octile.read(f"{d}/freesolv.jsonl")
    y = np.load(f"{d}/freesolv.y.npy")
    tr, te = np.load(f"{d}/freesolv.train.npy"), np.load(f"{d}/freesolv.test.npy")
    if a.limit:
        tr, te = tr[tr < a.limit], te[te < a.limit]
    Xtr, Xte = [graphs[i] for i in tr], [graphs[i] for i in te]
    print(f"FreeSolv: {len(graphs)} molecules, train {len(tr)}, test {len(te)}; octile {octile.__version__}, backend {backend}", flush=True)
    res = {"train": len(tr), "test": len(te), "backend": backend, "precision": a.precision}
    runs = [("fixed", None), ("fitted", LBFGSB())] + ([(f"fitted_tol{a.also_tol:g}", LBFGSB(a.also_tol))] if a.also_tol else [])
    for label, opt in runs:
        k = kernel(backend, a.precision)
        gpr = GaussianProcessRegressor(kernel=k, alpha=1e-2, optimizer=opt, n_restarts_optimizer=0, normalize_y=True)
        t0 = time.perf_counter()
        gpr.fit(Xtr, y[tr])
        t_fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        p = gpr.predict(Xte)
        t_pred = time.perf_counter() - t0
        mae = float(np.mean(np.abs(p - y[te])))
        r2 = float(1 - np.sum((p - y[te]) ** 2) / np.sum((y[te] - y[te].mean()) ** 2))
        names = [h.name for h in gpr.kernel_.hyperparameters if not h.fixed]
        hyp = {n: float(v) for n, v in zip(names, np.exp(gpr.kernel_.theta))}
        res[label] = dict(fit_s=t_fit, predict_s=t_pred, mae=mae, r2=r2, hyperparameters=hyp,
                          theta=[float(v) for v in np.exp(gpr.kernel_.theta)],
                          log_marginal_likelihood=float(gpr.log_marginal_likelihood_value_),
                          device=getattr(gpr.kernel_, "device_", None))
        if opt:
            res[label].update(lbfgsb_iterations=opt.nit, lbfgsb_evaluations=opt.nfev)
        more = f", L-BFGS-B {opt.nit} iterations / {opt.nfev} evaluations" if opt else ""
        print(f"octile GPR freesolv {label}: fit {t_fit:.2f} s{more}, test MAE {mae:.3f} kcal/mol, R2 {r2:.3f}, "
              f"log marginal likelihood {gpr.log_marginal_likelihood_value_:.2f}, hyperparameters "
              + ", ".join(f"{n} {v:.4g}" for n, v in hyp.items()), flush=True)
    if outdir:
        os.makedirs(outdir, exist_ok=True)
        json.dump(res, open(f"{outdir}/oct_gpr.json", "w"), indent=1)
    return res


if __name__ == "__main__":
    main()

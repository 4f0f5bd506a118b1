"""Classify MUTAG's 188 molecules (mutagenic or not) with an SVM on octile kernels, GraKeL-style:
``fit_transform`` on the training graphs, ``transform`` on the test graphs, an SVC with
``kernel="precomputed"``; then 10-fold cross-validation on the Gram matrix of all graphs.

    python python/examples/mutag_svc.py [data/MUTAG]      # scripts/setup fetches data/MUTAG
"""
import sys
import time

import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_score, train_test_split
from sklearn.svm import SVC

import octile
from octile import KroneckerDelta, MarginalizedGraphKernel, ShortestPathKernel, TensorProduct


def labels_of(folder):
    """MUTAG's class per graph (TU format: one label per line)."""
    name = folder.rstrip("/").split("/")[-1]
    return np.loadtxt(f"{folder}/{name}_graph_labels.txt", dtype=int)


def holdout(kernel, graphs, y, seed=0):
    """GraKeL-style: the kernel fitted on 80 % of the graphs, the rest compared with them."""
    train, test = train_test_split(np.arange(len(y)), test_size=0.2, stratify=y, random_state=seed)
    k_train = kernel.fit_transform([graphs[i] for i in train])   # K(train, train)
    k_test = kernel.transform([graphs[i] for i in test])         # K(test, train)
    svc = SVC(kernel="precomputed", C=100.0).fit(k_train, y[train])
    return float(np.mean(svc.predict(k_test) == y[test]))


def main(folder="data/MUTAG", folds=10):
    graphs = octile.read(folder)
    y = labels_of(folder)
    kernels = {
        "marginalized": MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(label=KroneckerDelta(0.5)), q=0.05, normalized=True, progress=False),
        "shortest path": ShortestPathKernel(with_labels="label", normalized=True, progress=False),
    }
    results = {}
    for name, kernel in kernels.items():
        t = time.perf_counter()
        held = holdout(kernel, graphs, y)
        # cross-validation on one Gram matrix of all graphs (each fold's entries are sliced out)
        k = kernel(graphs)
        cv = cross_val_score(SVC(kernel="precomputed", C=100.0), k, y, cv=StratifiedKFold(folds, shuffle=True, random_state=0))
        results[name] = float(cv.mean())
        print(f"{name:14s} held-out accuracy {held:.3f}; {folds}-fold accuracy {cv.mean():.3f} ± {cv.std():.3f} ({time.perf_counter() - t:.1f} s, {kernel.device_})")
    return results


if __name__ == "__main__":
    main(*sys.argv[1:2])

"""Predict a molecular property with a Gaussian process on the marginalized graph kernel: RDKit's
Crippen logP of ChEMBL's approved drugs, from their graphs alone (element, aromaticity, charge,
hydrogens; bond orders). The normalized Gram matrix goes to scikit-learn's
``GaussianProcessRegressor`` as a precomputed kernel.

    python python/examples/gpr_molecules.py [data/chembl_drugs.csv] [N]   # needs rdkit
"""
import sys
import time

import numpy as np
from rdkit import Chem, RDLogger
from rdkit.Chem import Crippen
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import Kernel, Hyperparameter

import octile
from octile import KroneckerDelta, MarginalizedGraphKernel, TensorProduct


class Precomputed(Kernel):
    """A fixed Gram matrix as a scikit-learn kernel over row indices (X holds indices)."""

    def __init__(self, gram):
        self.gram = gram

    hyperparameters = []

    def __call__(self, X, Y=None, eval_gradient=False):
        i = X[:, 0].astype(int)
        j = i if Y is None else Y[:, 0].astype(int)
        k = self.gram[np.ix_(i, j)]
        return (k, np.empty(k.shape + (0,))) if eval_gradient else k

    def diag(self, X):
        i = X[:, 0].astype(int)
        return self.gram[i, i]

    def is_stationary(self):
        return False


def main(path="data/chembl_drugs.csv", n=600, seed=0):
    RDLogger.DisableLog("rdApp.*")
    smiles = [line.strip() for line in open(path).read().splitlines()[1:] if line.strip()]
    mols = [(s, Chem.MolFromSmiles(s)) for s in smiles]
    mols = [(s, m) for s, m in mols if m is not None and "." not in s][:n]
    graphs = octile.from_rdkit([m for _, m in mols])
    y = np.array([Crippen.MolLogP(m) for _, m in mols])
    mgk = MarginalizedGraphKernel(
        TensorProduct(element=KroneckerDelta(0.3), aromatic=KroneckerDelta(0.7), charge=KroneckerDelta(0.8), hcount=KroneckerDelta(0.8)),
        TensorProduct(order=KroneckerDelta(0.5)), q=0.05, normalized=True, progress=False)
    t = time.perf_counter()
    gram = mgk(graphs)
    print(f"{len(graphs)} molecules: normalized Gram matrix in {time.perf_counter() - t:.2f} s on {mgk.device_}")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(graphs))
    train, test = order[: 4 * len(order) // 5], order[4 * len(order) // 5:]
    gpr = GaussianProcessRegressor(kernel=Precomputed(gram), alpha=1e-2, normalize_y=True, optimizer=None)
    gpr.fit(train[:, None].astype(float), y[train])
    pred = gpr.predict(test[:, None].astype(float))
    mae = float(np.mean(np.abs(pred - y[test])))
    baseline = float(np.mean(np.abs(y[test] - y[train].mean())))
    print(f"logP on {len(test)} held-out molecules: MAE {mae:.2f} (predicting the mean: {baseline:.2f})")
    return mae, baseline


if __name__ == "__main__":
    main(*(sys.argv[1:2]), *(int(a) for a in sys.argv[2:3]))

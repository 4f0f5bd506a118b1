"""RDKit molecules go through their MOL blocks and octile's SDF reader: the same graphs as from
SMILES (up to node order: equal kernel values)."""
import numpy as np
import pytest

import octile
from octile import KroneckerDelta, MarginalizedGraphKernel, TensorProduct

from conftest import assert_matrix

Chem = pytest.importorskip("rdkit.Chem", reason="RDKit is not installed (pip install rdkit)")

SMILES = ["CCO", "c1ccccc1O", "CC(=O)[O-]", "C1CC1N", "O", "[NH4+]", "CC(C)(C)c1ccc(cc1)C(=O)N", "n1ccccc1", "C[C@H](N)C(=O)O"]


def test_rdkit_molecules_equal_their_smiles_graphs():
    mols = [Chem.MolFromSmiles(s) for s in SMILES]
    from_rdkit = octile.from_rdkit(mols)
    from_smiles = octile.from_smiles(SMILES)
    for a, b, s in zip(from_rdkit, from_smiles, SMILES):
        assert (a.n_nodes, a.n_edges) == (b.n_nodes, b.n_edges), s
        assert a.node_feature_names == b.node_feature_names and a.edge_feature_names == b.edge_feature_names, s
        for f in a.node_feature_names:
            assert sorted(a.node_feature(f)) == sorted(b.node_feature(f)), (s, f)
    k = MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.3), aromatic=KroneckerDelta(0.7), charge=KroneckerDelta(0.8), hcount=KroneckerDelta(0.8)),
                                TensorProduct(order=KroneckerDelta(0.5)), backend="cpu", progress=False)
    assert_matrix(k(mols), k(from_smiles), rtol=1e-10, what="RDKit molecules = SMILES graphs")
    # a mixed list: molecules and octile graphs, in order
    mixed = [mols[0], from_smiles[1], mols[2]]
    assert_matrix(k(mixed), k(from_smiles)[np.ix_([0, 1, 2], [0, 1, 2])], rtol=1e-10, what="mixed list")


def test_a_molecule_rdkit_could_not_parse_is_named():
    with pytest.raises(ValueError, match="molecule 1 is None"):
        octile.from_rdkit([Chem.MolFromSmiles("C"), None])

"""The Python package computes what the CLI computes: same inputs, same kernel TOML, CPU, f64 —
the matrices are equal bit for bit (K(X), normalized, K(X, Y); every method)."""
import json

import networkx as nx
import numpy as np
import pytest

import octile
from octile import Additive, KroneckerDelta, MarginalizedGraphKernel, ShortestPathKernel, GraphletKernel, SquareExponential, TensorProduct

from conftest import assert_matrix

LABEL_LENGTH = dict(node_kernel=TensorProduct(label=KroneckerDelta(0.5)), edge_kernel=TensorProduct(length=SquareExponential(1.0)))
TU = dict(node_kernel=TensorProduct(label=KroneckerDelta(0.5)), edge_kernel=TensorProduct(label=KroneckerDelta(0.5)))


def kernels_for(kind):
    """(name, kernel) pairs for the tiny JSON set (label, length) or MUTAG (label, label)."""
    mgk = LABEL_LENGTH if kind == "tiny" else TU
    yield "marginalized", MarginalizedGraphKernel(**mgk, q=0.05, backend="cpu", precision="f64", progress=False)
    yield "marginalized additive", MarginalizedGraphKernel(Additive(label=KroneckerDelta(0.3)), Additive(**{k: 2.0 * v for k, v in mgk["edge_kernel"].features.items()}), q=0.2, backend="cpu", progress=False)
    yield "shortest path", ShortestPathKernel(with_labels="label", backend="cpu", progress=False)
    yield "shortest path continuous", ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.2)), length_kernel=SquareExponential(1.5), backend="cpu", progress=False)
    yield "graphlets", GraphletKernel(features="histogram", bins=8, scale="log1p", kernel="rbf", gamma=0.1, backend="cpu", progress=False)


def test_every_method_equals_the_cli_bit_for_bit(tiny, run_cli):
    graphs = octile.read(tiny)
    for name, kernel in kernels_for("tiny"):
        expected, summary = run_cli(kernel, [tiny])
        assert summary["backend"] == "cpu"
        assert_matrix(kernel(graphs), expected, what=f"tiny {name} K(X)")
        expected, _ = run_cli(kernel, [tiny], normalized=True)
        assert_matrix(kernel(graphs, normalized=True), expected, what=f"tiny {name} normalized")
        expected, _ = run_cli(kernel, [tiny], against=[tiny], normalized=True)
        assert_matrix(kernel(graphs, graphs, normalized=True), expected, what=f"tiny {name} K(X, Y) normalized")


def test_every_method_equals_the_cli_on_mutag(mutag, run_cli):
    graphs = octile.read(mutag)
    for name, kernel in kernels_for("mutag"):
        if name != "marginalized additive":  # the same code path as "marginalized" (tiny covers it)
            expected, _ = run_cli(kernel, [mutag], normalized=True)
            assert_matrix(kernel(graphs, normalized=True), expected, what=f"MUTAG {name} normalized")


def test_networkx_graphs_equal_the_cli_reading_networkx_json(nx_graphs, run_cli, tmp_path):
    """networkx's own node-link JSON, read by the CLI, against the package's conversion."""
    path = tmp_path / "graphs.jsonl"
    with open(path, "w") as f:
        for g in nx_graphs:
            data = nx.node_link_data(nx.convert_node_labels_to_integers(g), edges="links")
            f.write(json.dumps(data) + "\n")
    for name, kernel in kernels_for("tiny"):
        expected, _ = run_cli(kernel, [path], normalized=True)
        assert_matrix(kernel(nx_graphs, normalized=True), expected, what=f"networkx {name}")
    mgk = next(kernels_for("tiny"))[1]
    expected, _ = run_cli(mgk, [path], against=[path])
    assert_matrix(mgk(nx_graphs[:4], nx_graphs), expected[:4], what="networkx K(X, Y) rows")


def test_smiles_and_read_give_the_cli_graphs(run_cli, tmp_path):
    smiles = ["CCO", "c1ccccc1O", "CC(=O)[O-].[Na+]", "C1CC1N", "O", "[NH4+]", "CC(C)(C)c1ccc(cc1)C(=O)N", "n1ccccc1"]
    path = tmp_path / "mols.smi"
    path.write_text("".join(f"{s} mol{k}\n" for k, s in enumerate(smiles)))
    mgk = MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.3), aromatic=KroneckerDelta(0.7), charge=KroneckerDelta(0.8)), TensorProduct(order=KroneckerDelta(0.5)), backend="cpu", progress=False)
    expected, _ = run_cli(mgk, [path])
    assert_matrix(mgk(octile.from_smiles(smiles)), expected, what="from_smiles")
    assert_matrix(mgk(octile.read(path)), expected, what="read .smi")
    assert_matrix(mgk(str(path)), expected, what="a path as X")

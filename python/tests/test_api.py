"""GraphDot-style calls: K(X), K(X, Y), diag, pairs, normalization, base kernels and their
combinations, edge-case graphs, parameters, progress, backend choice."""
import warnings

import numpy as np
import pytest
from sklearn.base import clone

import octile
from octile import Additive, Constant, KroneckerDelta, MarginalizedGraphKernel, ShortestPathKernel, GraphletKernel, SquareExponential, TensorProduct

from conftest import assert_matrix

NO_GPU = not octile.gpu_available()[0]


def mgk(**kw):
    kw.setdefault("backend", "cpu")
    kw.setdefault("progress", False)
    return MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(length=SquareExponential(1.0)), **kw)


ALL = [mgk, lambda **kw: ShortestPathKernel(with_labels="label", backend="cpu", progress=False, **kw), lambda **kw: GraphletKernel(backend="cpu", progress=False, **kw)]


@pytest.mark.parametrize("make", ALL, ids=["marginalized", "shortest_path", "graphlets"])
def test_gram_diag_blocks_and_normalization_agree(make, nx_graphs):
    k = make()
    K = k(nx_graphs)
    n = len(nx_graphs)
    assert K.shape == (n, n) and K.dtype == np.float64
    assert_matrix(K, K.T, what="K(X) symmetric")
    assert_matrix(k.diag(nx_graphs), np.diag(K), what="diag(X) = the diagonal of K(X)")
    # K(X, Y) is the block of K(X ∪ Y); listed pairs are its entries
    x, y = nx_graphs[:5], nx_graphs[5:]
    assert_matrix(k(x, y), K[:5, 5:], rtol=1e-12, what="K(X, Y) = block of K(X ∪ Y)")
    pairs = [(0, 1), (3, 3), (n - 1, 2)]
    assert_matrix(k.pairs(nx_graphs, pairs), np.array([K[i, j] for i, j in pairs]), what="pairs")
    # normalized: unit diagonal (0 stays 0), K_ij / sqrt(K_ii K_jj)
    d = np.diag(K)
    with np.errstate(invalid="ignore", divide="ignore"):
        expect = np.where(np.outer(d, d) > 0, K / np.sqrt(np.outer(d, d)), 0.0)
    np.fill_diagonal(expect, 1.0)
    assert_matrix(k(nx_graphs, normalized=True), expect, rtol=1e-12, what="normalized K(X)")
    assert_matrix(make(normalized=True)(nx_graphs), expect, rtol=1e-12, what="normalized=True in the constructor")
    assert_matrix(k(x, y, normalized=True), expect[:5, 5:], rtol=1e-12, what="normalized K(X, Y)")


def test_empty_lists_and_one_node_graphs(nx_graphs):
    import networkx as nx

    k = mgk()
    assert k([]).shape == (0, 0)
    assert k(nx_graphs[:3], []).shape == (3, 0)
    assert k([], nx_graphs[:3]).shape == (0, 3)
    assert k.diag([]).shape == (0,)
    one = nx.Graph()
    one.add_node(0, label="C")
    two = nx.Graph()
    two.add_node("x", label="C")
    K = mgk(q=0.25)([one, two])
    # one node each, same label: the walk stops at once with probability q... K = p·p·(1/q)·κv / ... equal entries
    assert K.shape == (2, 2) and np.all(K == K[0, 0]) and K[0, 0] > 0, K


def test_base_kernels_combinations_and_toml():
    w = 2.0 * KroneckerDelta(0.5)
    assert w.weight == 2.0 and repr(w) == "2.0 * KroneckerDelta(h=0.5)"
    assert (KroneckerDelta(0.5) * 3).weight == 3.0
    k = MarginalizedGraphKernel(Additive(label=KroneckerDelta(0.5), charge=2.0 * SquareExponential(0.7)), TensorProduct(**{"bond type": KroneckerDelta(0.2)}), q=0.1, p="uniform")
    text = k.to_toml()
    assert 'node_combine = "additive"' in text and 'edge_combine = "product"' in text
    assert '[node."charge"]\nkernel = "square_exponential"\nlength_scale = 0.7\nweight = 2.0' in text
    assert '[edge."bond type"]' in text and "p = 1.0" in text
    # a bare Constant(1.0) compares nothing: no tables; other bare kernels need a feature name
    assert "[node" not in MarginalizedGraphKernel(Constant(1.0), None).to_toml()
    with pytest.raises(ValueError, match="name the feature"):
        MarginalizedGraphKernel(KroneckerDelta(0.5), None).to_toml()
    with pytest.raises(ValueError, match="expected a base kernel"):
        TensorProduct(label=0.5)


def test_one_term_additive_equals_the_product(nx_graphs):
    a = MarginalizedGraphKernel(Additive(label=KroneckerDelta(0.5)), Additive(length=SquareExponential(1.0)), backend="cpu", progress=False)
    assert_matrix(a(nx_graphs), mgk()(nx_graphs), rtol=1e-12, what="one-term Additive = TensorProduct")


def test_parameters_follow_scikit_learn():
    k = mgk(q=0.1)
    assert k.get_params()["q"] == 0.1
    c = clone(k)
    assert c is not k and c.get_params().keys() == k.get_params().keys() and c.q == 0.1
    assert k.set_params(q=0.3) is k and k.q == 0.3 and "q = 0.3" in k.to_toml()
    with pytest.raises(ValueError, match="has no parameter 'qq'"):
        k.set_params(qq=1)
    assert "MarginalizedGraphKernel(" in repr(k)


def test_progress_reports_every_pair_and_callback_errors_propagate(nx_graphs):
    k = mgk()
    seen = []
    k(nx_graphs, progress=seen.append)
    n = len(nx_graphs)
    assert sum(seen) == n * (n + 1) // 2, seen
    seen.clear()
    k(nx_graphs[:4], nx_graphs, normalized=True, progress=seen.append)
    assert sum(seen) == 4 * n + 4 + n, seen

    def boom(_):
        raise ZeroDivisionError("from the callback")

    with pytest.raises(ZeroDivisionError, match="from the callback"):
        k(nx_graphs, progress=boom)


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU (test_gpu.py covers it)")
def test_without_a_gpu_cuda_warns_and_auto_is_silent(nx_graphs):
    expected = mgk()(nx_graphs)
    with pytest.warns(RuntimeWarning, match="no GPU is usable"):
        got = mgk(backend="cuda")(nx_graphs)
    assert_matrix(got, expected, what="cuda fell back to the CPU")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k = mgk(backend="auto")
        assert_matrix(k(nx_graphs), expected, what="auto on the CPU")
        assert k.device_.startswith("cpu")


def test_graph_objects_expose_what_was_read(tiny):
    g = octile.read(tiny)
    assert len(g) >= 3
    assert g[0].n_nodes == 3 and g[0].n_edges == 2
    assert g[0].node_feature_names == ["label"] and g[0].edge_feature_names == ["length"]
    assert g[0].node_feature("label") == [1.0, 2.0, 1.0]
    assert [e[2] for e in g[0].edges()] == [1.0, 2.0]
    assert g[0].edge_feature("length") == [1.2, 0.7]
    assert "3 nodes" in repr(g[0])
    with pytest.raises(ValueError, match="no node feature 'x'"):
        g[0].node_feature("x")

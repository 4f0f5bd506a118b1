"""Every octile error reaches Python typed and with the library's message."""
import networkx as nx
import numpy as np
import pytest

import octile
from octile import KroneckerDelta, MarginalizedGraphKernel, GraphletKernel, SquareExponential, TensorProduct


def mgk(**kw):
    kw.setdefault("backend", "cpu")
    return MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(length=SquareExponential(1.0)), progress=False, **kw)


def labeled_path(n):
    g = nx.path_graph(n)
    nx.set_node_attributes(g, "C", "label")
    nx.set_edge_attributes(g, 1.0, "length")
    return g


def test_bad_configuration_is_a_value_error_with_the_library_message(tiny):
    with pytest.raises(ValueError, match=r"kernel configuration: q = 1.5 must be in \[1e-9, 1\)"):
        mgk(q=1.5)(octile.read(tiny))
    with pytest.raises(ValueError, match="backend must be one of"):
        mgk(backend="gpu2")
    with pytest.raises(ValueError, match="precision must be"):
        MarginalizedGraphKernel(None, None, precision="f16")
    with pytest.raises(ValueError, match="bins"):
        GraphletKernel(bins=4)(octile.read(tiny))  # bins only with histogram features


def test_file_errors_name_the_file_and_line(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.smi"):
        octile.read(tmp_path / "nope.smi")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"nodes": [{"id": 0}], "links": []}\n{"nodes": [}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2:"):
        octile.read(bad)
    with pytest.warns(UserWarning, match="1 invalid record"):
        assert len(octile.read(bad, skip_invalid=True)) == 1
    with pytest.raises(ValueError, match="unknown format 'xyz'"):
        octile.read(bad, format="xyz")
    with pytest.raises(ValueError, match=r"SMILES 1: bad SMILES 'C\(\(':"):
        octile.from_smiles(["CC", "C(("])


def test_networkx_problems_name_the_graph_and_attribute():
    ok = labeled_path(3)
    missing = labeled_path(4)
    del missing.nodes[2]["label"]
    with pytest.raises(ValueError, match=r"graph 1: node 2 lacks feature 'label'"):
        mgk()([ok, missing])
    weird = labeled_path(2)
    weird.nodes[0]["label"] = [1, 2]
    with pytest.raises(ValueError, match=r"graph 0: node 0: attribute 'label' is \[1, 2\]"):
        mgk()([weird])
    mixed = labeled_path(2)
    mixed.nodes[1]["label"] = 3
    with pytest.raises(ValueError, match="is a number, but earlier values of 'label' are strings"):
        mgk()([ok, mixed])
    with pytest.raises(ValueError, match="graph 0 is directed"):
        mgk()([nx.DiGraph([(0, 1)])])
    with pytest.raises(TypeError, match="graph 1: expected an octile.Graph, a networkx graph or an RDKit molecule, got int"):
        mgk()([ok, 3])
    with pytest.raises(TypeError, match="single graph"):
        mgk()(ok)
    # numpy scalars are numbers
    npg = labeled_path(3)
    nx.set_edge_attributes(npg, np.float32(1.0), "length")
    assert mgk()([npg]).shape == (1, 1)


def test_a_feature_the_graphs_lack_is_named():
    k = MarginalizedGraphKernel(TensorProduct(charge=KroneckerDelta(0.5)), None, backend="cpu", progress=False)
    with pytest.raises(ValueError, match=r"node feature 'charge' is not in graph 0; it has: \[label\]"):
        k([labeled_path(3)])


def test_non_convergence_carries_the_partial_matrix_and_the_failing_pairs(nx_graphs):
    graphs = nx_graphs[-3:]
    k = mgk(max_iterations=1, rtol=1e-14, q=0.01)
    with pytest.raises(octile.NonConvergenceError) as e:
        k(graphs)
    err = e.value
    assert isinstance(err, RuntimeError)
    assert "did not converge" in str(err)
    assert err.partial.shape == (3, 3) and np.all(np.isfinite(err.partial))
    assert err.n_failed >= 1 and len(err.failures) >= err.n_failed
    i, j, iterations, residual = err.failures[0]
    assert 0 <= i < 3 and 0 <= j < 3 and iterations == 1 and residual > 1e-14
    # the converged result is close to what the failing run kept
    good = mgk(q=0.01)(graphs)
    assert good.shape == (3, 3)


def test_ctrl_c_stops_after_a_batch_and_keeps_the_pairs_done(mutag):
    """SIGINT while the library computes (no Python code running): the run stops after the current
    batch and raises octile.Interrupted (a KeyboardInterrupt) with the entries computed."""
    import os
    import signal
    import threading

    graphs = octile.read(mutag)
    k = MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(label=KroneckerDelta(0.5)), backend="cpu", progress=False)
    # Python's own Ctrl-C handler, as in a terminal: a process started in the background by a
    # non-interactive shell (`cmd &`) inherits SIGINT ignored, and Python then installs none
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(octile.Interrupted) as e:
            k(graphs * 3)  # ~160 k pairs: many batches, ~15 s on 2 cores (a late SIGINT on a loaded machine still lands)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    err = e.value
    assert isinstance(err, KeyboardInterrupt)
    n = 3 * len(graphs)
    assert err.partial.shape == (n, n) and err.done.shape == (n, n) and err.done.dtype == bool
    assert 0 < err.n_done < err.n_total == n * (n + 1) // 2, (err.n_done, err.n_total)
    assert np.all(np.isfinite(err.partial[err.done])) and np.all(np.isnan(err.partial[~err.done]))


def test_what_the_review_sweep_found_is_refused_with_a_named_cause():
    import pickle

    # attribute names node-link JSON keeps for itself
    g = labeled_path(3)
    g.nodes[1]["id"] = 7
    with pytest.raises(ValueError, match=r"graph 0: node 1: an attribute named 'id'"):
        mgk()([g])
    g = labeled_path(3)
    g.edges[0, 1]["target"] = 2
    with pytest.raises(ValueError, match=r"graph 0: edge \(0, 1\): an attribute named 'target'"):
        mgk()([g])
    # non-finite values name the node and attribute
    g = labeled_path(3)
    g.edges[1, 2]["length"] = float("nan")
    with pytest.raises(ValueError, match=r"graph 0: edge \(1, 2\): attribute 'length' is nan"):
        mgk()([g])
    with pytest.raises(ValueError, match="multigraph"):
        mgk()([nx.MultiGraph([(0, 1), (0, 1)])])
    # a label that is a string in X and a number in Y
    k = MarginalizedGraphKernel(TensorProduct(x=KroneckerDelta(0.1)), None, backend="cpu", progress=False)
    a, b = nx.path_graph(3), nx.path_graph(3)
    nx.set_node_attributes(a, "a", "x")
    nx.set_node_attributes(b, 0, "x")
    with pytest.raises(ValueError, match=r"node x holds strings in graph 0 but numbers in graph 1 of this call"):
        k([a], [b])
    # a continuous kernel on string labels
    se = MarginalizedGraphKernel(TensorProduct(x=SquareExponential(1.0)), None, backend="cpu", progress=False)
    with pytest.raises(ValueError, match="node x holds strings .* SquareExponential would compare their arbitrary codes"):
        se([a])
    # weights only in Additive; no empty Additive
    with pytest.raises(ValueError, match="weights only apply to the terms of Additive"):
        MarginalizedGraphKernel(TensorProduct(label=2.0 * KroneckerDelta(0.5)), None).to_toml()
    with pytest.raises(ValueError, match="at least one feature"):
        octile.Additive()
    # integers where integers are meant; bools where bools are meant; progress of a known kind
    graphs = [labeled_path(3), labeled_path(4)]
    with pytest.raises(ValueError, match="integer indices"):
        mgk().pairs(graphs, [(0, 1.7)])
    with pytest.raises(ValueError, match="negative index"):
        mgk().pairs(graphs, [(0, -1)])
    with pytest.raises(ValueError, match="max_iterations must be an integer"):
        mgk(max_iterations=1.5)(graphs)
    with pytest.raises(ValueError, match="q must be a number, got None"):
        mgk(q=None)(graphs)
    with pytest.raises(ValueError, match="normalized must be True or False"):
        mgk()(graphs, normalized="False")
    with pytest.raises(ValueError, match="progress must be"):
        mgk()(graphs, progress="yes")
    # graphs and used kernels pickle (joblib, multiprocessing)
    k = mgk()
    K = k(graphs)
    g2 = pickle.loads(pickle.dumps(octile.from_networkx(graphs)))
    k2 = pickle.loads(pickle.dumps(k.fit(graphs)))
    assert np.array_equal(k2(g2), K) and np.array_equal(k2.transform(g2), K)


def test_non_convergence_of_listed_pairs_names_the_pairs(nx_graphs):
    k = mgk(max_iterations=1, rtol=1e-14, q=0.01)
    n = len(nx_graphs)
    listed = [(n - 1, n - 2), (n - 3, n - 1)]
    with pytest.raises(octile.NonConvergenceError) as e:
        k.pairs(nx_graphs, listed)
    assert e.value.partial.shape == (2,)
    assert {(i, j) for i, j, _, _ in e.value.failures} <= set(listed) and e.value.failures


def test_a_kernel_comparing_no_feature_of_labeled_graphs_is_refused():
    # (issue 32) it would compare nothing and say nothing; a constant kernel is the opt-in
    graphs = [labeled_path(3), labeled_path(4)]
    with pytest.raises(ValueError, match=r"the kernel compares no node or edge feature, but the graphs have edge length, node label; give node_kernel"):
        MarginalizedGraphKernel(None, None, backend="cpu", progress=False)(graphs)
    K = MarginalizedGraphKernel(TensorProduct(label=octile.Constant(1.0)), None, backend="cpu", progress=False)(graphs)
    assert np.all(np.isfinite(K)) and K.shape == (2, 2)
    # graphs without features: nothing to compare, nothing refused
    plain = [nx.path_graph(3), nx.path_graph(4)]
    assert MarginalizedGraphKernel(None, None, backend="cpu", progress=False)(plain).shape == (2, 2)


def test_a_node_kernel_underflowing_to_zero_is_named():
    # (issue 32) not "did not converge: 0 iterations": the nodes and values whose kernel is 0
    a, b = nx.path_graph(2), nx.path_graph(2)
    nx.set_node_attributes(a, 1.0, "x")
    nx.set_node_attributes(b, 2000.0, "x")
    k = MarginalizedGraphKernel(TensorProduct(x=SquareExponential(0.001)), None, backend="cpu", progress=False)
    with pytest.raises(octile.NonConvergenceError, match=r"pair \(0, 1\) could not be solved: the node kernel underflowed to zero between node 0 of graph 0 and node 0 of graph 1 \(x 1 and 2000\)"):
        k([a, b])


def test_a_value_underflowing_with_a_tiny_p_is_named():
    # K ∝ p²: p = 1e-170 underflows every K to 0 (its normalized form was an identity matrix);
    # a failure carrying the values, saying why, not a result
    with pytest.raises(octile.NonConvergenceError, match=r"its value underflowed: K shrinks as p² \(p = 1e-170\)") as e:
        mgk(p=1e-170)([labeled_path(3), labeled_path(4)])
    assert e.value.partial.shape == (2, 2)
    K = mgk(p=1e-100)([labeled_path(3), labeled_path(4)])
    K1 = mgk(p=1.0)([labeled_path(3), labeled_path(4)])
    np.testing.assert_allclose(K, K1 * 1e-200, rtol=1e-12)


def test_the_graphs_of_y_are_named_by_their_index_in_y():
    # (py-sweep) K(X, Y): the library numbers the graphs through X then Y ("graph 3" of two lists
    # of two); conversion errors said "graph 1" with no list named
    k = MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), None, backend="cpu", progress=False)
    X, Y = [labeled_path(3), labeled_path(4)], [labeled_path(2), nx.path_graph(3)]
    for kw in ({}, {"normalized": True}):
        with pytest.raises(ValueError, match=r"^node feature 'label' is not in graph 1 of Y; it has: \[\]$"):
            k(X, Y, **kw)
    with pytest.raises(ValueError, match=r"^node feature 'label' is not in graph 1 of Y"):
        MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), None, backend="cpu", progress=False, q_bounds=(0.01, 0.5))(X, Y, eval_gradient=True)
    with pytest.raises(ValueError, match=r"^node feature 'label' is not in graph 1; it has"):
        k(Y, X)  # X's graphs keep their index
    with pytest.raises(ValueError, match=r"^graph 1 of Y is directed"):
        k(X, [labeled_path(2), nx.DiGraph([(0, 1)])])
    lacking = labeled_path(3)
    del lacking.nodes[1]["label"]
    with pytest.raises(ValueError, match=r"^graph 1 of Y: node 1 lacks feature 'label'"):
        k(X, [labeled_path(2), lacking])
    with pytest.raises(TypeError, match=r"^graph 0 of Y: expected an octile.Graph"):
        k(X, [None])
    with pytest.raises(TypeError, match=r"^Y: expected a list of graphs or a path, got int"):
        k(X, 5)


def test_edge_weights_spanning_past_the_product_systems_range_are_named():
    # (py-sweep) weights 1e308 and 1 in one graph: the product system's diagonal underflows and
    # the solver stops at once; it said only "did not converge: 0 iterations, relative residual 1"
    g = labeled_path(3)
    g.edges[0, 1]["weight"] = 1e308
    with pytest.raises(octile.NonConvergenceError, match=r"pair \(0, 0\) could not be solved: node 2 of graph 0 and node 2 of graph 0 have degrees whose product underflows .*their edge weights span 1\.0e308 and 1\.0e308"):
        mgk()([g])
    # a spread the system holds is computed
    g.edges[0, 1]["weight"] = 1e100
    assert np.isfinite(mgk()([g])).all()


def test_python_side_types_are_checked_by_name():
    # (py-sweep) TypeErrors without an index or a cause, bools taken as integers, a q range a fit
    # would leave
    with pytest.raises(TypeError, match=r"SMILES 1: expected a str, got int"):
        octile.from_smiles(["CC", 1])
    with pytest.raises(TypeError, match=r"got bytes \(decode it first\)"):
        octile.from_smiles(b"CC")
    with pytest.raises(ValueError, match=r"first must be a non-negative integer .*, got -1"):
        octile.from_networkx([labeled_path(3)], first=-1)
    with pytest.raises(TypeError, match=r"expected a list of graphs or a path, got NoneType"):
        mgk()(None)
    with pytest.raises(ValueError, match=r"q_bounds \(0.01, 5.0\): the upper bound must be < 1"):
        mgk(q_bounds=(0.01, 5.0))
    graphs = [labeled_path(3), labeled_path(4)]
    with pytest.raises(ValueError, match="max_iterations must be an integer, got True"):
        mgk(max_iterations=True)(graphs)
    with pytest.raises(ValueError, match="bins must be an integer, got True"):
        GraphletKernel(features="histogram", bins=True)(graphs)
    with pytest.raises(ValueError, match="eval_gradient must be True or False, got 'no'"):
        mgk(q_bounds=(0.01, 0.5))(graphs, eval_gradient="no")


def test_a_tile_names_the_graphs_by_their_index_in_x_and_y():
    # (py-sweep) octile.dask's tiles: the library numbered the graphs from the tile's first
    k = mgk()
    X = octile.from_networkx([labeled_path(3), labeled_path(4), nx.path_graph(3)])
    with pytest.raises(ValueError, match=r"^node feature 'label' is not in graph 2; it has: \[\]$"):
        k._native().tile(X, None, (0, 1), (2, 3))
    with pytest.raises(ValueError, match=r"^node feature 'label' is not in graph 2 of Y; it has: \[\]$"):
        k._native().tile(X[:2], X, (1, 2), (2, 3))
    pytest.importorskip("dask")
    from octile import dask as odask

    with pytest.raises(ValueError, match=r"^node feature 'label' is not in graph 2 of Y"):
        odask.gram(k, X[:2], X, tile_size=1).compute(scheduler="sync")
    with pytest.raises(ValueError, match=r"^node feature 'label' is not in graph 2;"):
        odask.gram(k, X, tile_size=1).compute(scheduler="sync")


def test_a_tile_of_k_x_y_may_have_columns_past_x():
    # (py-sweep) Y longer than X: a tile's columns past len(X) were a PanicException ("range end
    # index 3 out of range for slice of length 2"), so octile.dask.gram(k, X, Y) failed
    k = mgk()
    X = octile.from_networkx([labeled_path(3), labeled_path(4)])
    Y = octile.from_networkx([labeled_path(2), labeled_path(3), labeled_path(5)])
    K = k(X, Y)
    tile, _, _, _ = k._native().tile(X, Y, (0, 2), (1, 3))
    np.testing.assert_allclose(tile, K[:, 1:3], rtol=1e-12)
    pytest.importorskip("dask")
    from octile import dask as odask

    np.testing.assert_allclose(odask.gram(k, X, Y, tile_size=1).compute(scheduler="sync"), K, rtol=1e-12)

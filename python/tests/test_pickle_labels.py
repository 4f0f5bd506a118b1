"""String labels keep their meaning across processes (issue 32): graphs and fitted kernels pickled
in one interpreter and used in another (joblib, multiprocessing, dask) compare the same strings as
equal and different strings as different, whatever each process coded first."""
import pickle
import subprocess
import sys
import textwrap

import networkx as nx
import numpy as np
import pytest

import octile
from octile import KroneckerDelta, MarginalizedGraphKernel, TensorProduct

# builds the same graphs in every process: labels drawn from "CNO" on a path, a cycle and a star
GRAPHS = textwrap.dedent(
    """
    import networkx as nx
    from octile import KroneckerDelta, MarginalizedGraphKernel, TensorProduct

    def graphs():
        out = []
        for k, g in enumerate([nx.path_graph(4), nx.cycle_graph(5), nx.star_graph(3), nx.path_graph(2)]):
            for v in g.nodes:
                g.nodes[v]["label"] = "CNO"[(v + k) % 3]
            for u, v in g.edges:
                g.edges[u, v]["bond"] = "single" if (u + v + k) % 2 else "double"
            out.append(g)
        return out

    def uniform(label, n):
        g = nx.path_graph(n)
        nx.set_node_attributes(g, label, "label")
        nx.set_edge_attributes(g, "single", "bond")
        return g

    def kernel():
        return MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.3)), TensorProduct(bond=KroneckerDelta(0.5)), backend="cpu", progress=False)
    """
)


def python(tmp_path, body: str):
    """Runs `body` (after GRAPHS' definitions) in a fresh interpreter in `tmp_path`."""
    r = subprocess.run([sys.executable, "-c", GRAPHS + textwrap.dedent(body)], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def here():
    ns = {}
    exec(GRAPHS, ns)
    return ns


def test_graphs_and_kernels_pickled_in_one_process_give_the_same_matrix_in_another(tmp_path):
    # the writer codes other strings first ("Z", "O", "N", "C"), the reader yet others ("Q", "C"), so
    # codes differ in all three processes
    python(
        tmp_path,
        """
        import pickle, octile
        octile.from_networkx([uniform("Z", 2), uniform("O", 2), uniform("N", 2), uniform("C", 2)])
        xs = octile.from_networkx(graphs())
        pickle.dump(xs, open("graphs.pkl", "wb"))
        pickle.dump(kernel().fit(xs), open("kernel.pkl", "wb"))
        """,
    )
    python(
        tmp_path,
        """
        import pickle, numpy as np, octile
        octile.from_networkx([uniform("Q", 2), uniform("C", 3)])
        xs = pickle.load(open("graphs.pkl", "rb"))
        k = pickle.load(open("kernel.pkl", "rb"))
        np.save("K.npy", kernel()(xs))
        np.save("T.npy", k.transform(octile.from_networkx(graphs())))
        """,
    )
    ns = here()
    expected = ns["kernel"]()(ns["graphs"]())
    assert np.array_equal(np.load(tmp_path / "K.npy"), expected)
    # K(X, Y) is computed pair by pair, K(X) by its upper triangle: compare like with like
    assert np.array_equal(np.load(tmp_path / "T.npy"), ns["kernel"]()(ns["graphs"](), ns["graphs"]()))
    # and the graphs pickle back in this process too
    xs = octile.from_networkx(ns["graphs"]())
    assert np.array_equal(ns["kernel"]()(pickle.loads(pickle.dumps(xs))), expected)


def test_different_strings_whose_per_process_codes_would_collide_stay_different(tmp_path):
    # "C" is the first string of the writer (code 0 there) and "Q" the first of the reader (code 0
    # there): per-process codes in the pickle would make an all-"C" and an all-"Q" graph equal
    python(
        tmp_path,
        """
        import pickle, octile
        pickle.dump(octile.from_networkx([uniform("C", 3)]), open("c.pkl", "wb"))
        """,
    )
    python(
        tmp_path,
        """
        import pickle, numpy as np, octile
        q = octile.from_networkx([uniform("Q", 3)])
        c = pickle.load(open("c.pkl", "rb"))
        np.save("K.npy", kernel()(c + q))
        """,
    )
    ns = here()
    expected = ns["kernel"]()([ns["uniform"]("C", 3), ns["uniform"]("Q", 3)])
    K = np.load(tmp_path / "K.npy")
    assert np.array_equal(K, expected)
    assert K[0, 1] < K[0, 0]  # the labels differ: the node kernel gives h, not 1


def test_a_graph_with_numbers_and_strings_pickles_with_its_numbers_unchanged():
    g = nx.path_graph(3)
    nx.set_node_attributes(g, {0: "a", 1: "b", 2: "a"}, "label")
    nx.set_node_attributes(g, {0: 1.5, 1: -2.0, 2: 7.0}, "charge")
    nx.set_edge_attributes(g, 2, "order")
    (x,) = octile.from_networkx([g])
    (y,) = pickle.loads(pickle.dumps([x]))
    assert y.node_feature("charge") == [1.5, -2.0, 7.0]
    assert y.edge_feature("order") == [2.0, 2.0]
    assert y.node_feature("label") == x.node_feature("label")  # same process: same codes
    labels = y.node_feature("label")
    assert labels[0] == labels[2] != labels[1]


def test_an_older_pickle_whose_labels_are_codes_is_refused():
    import pytest

    with pytest.raises(ValueError, match="not a graph pickled by this version of octile"):
        octile._octile._graph_from_parts((1, ["label"], [0.0], [], [], [], [("node label", True)]))


def test_graph_bytes_round_trip_and_refuse_damaged_data():
    """The list-as-bytes form octile.dask sends to workers: the same graphs back (string and number
    features, weights, an isolated node, a graph without edges), and damaged bytes — cut at every
    position, a changed header or count — a ValueError, never a crash."""
    from conftest import edge_case_graphs

    g = nx.path_graph(3)
    nx.set_node_attributes(g, {0: "C", 1: "N", 2: "C"}, "el")
    nx.set_edge_attributes(g, "single", "bond")
    g.add_node(3, el="O")
    graphs = octile.as_graphs([g]) + octile.as_graphs(edge_case_graphs())
    data = octile._octile._graphs_to_bytes(graphs)
    back = octile._octile._graphs_from_bytes(data)
    assert len(back) == len(graphs)
    for k, (a, b) in enumerate(zip(graphs, back)):
        assert (a.n_nodes, a.edges()) == (b.n_nodes, b.edges()), f"graph {k}"
        for name in a.node_feature_names:
            assert a.node_feature(name) == b.node_feature(name), f"graph {k} node feature {name}"
        for name in a.edge_feature_names:
            assert a.edge_feature(name) == b.edge_feature(name), f"graph {k} edge feature {name}"
    k = MarginalizedGraphKernel(TensorProduct(el=KroneckerDelta(0.3)), TensorProduct(bond=KroneckerDelta(0.5)), backend="cpu", progress=False)
    assert np.array_equal(k(back[:1]), k(graphs[:1]))
    first = octile._octile._graphs_to_bytes(graphs[:1])
    for cut in range(len(first)):
        with pytest.raises(ValueError, match="graph"):
            octile._octile._graphs_from_bytes(first[:cut])
    huge = bytearray(first)
    huge[8:16] = (2**60).to_bytes(8, "little")  # the graph count
    with pytest.raises(ValueError, match="do not fit"):
        octile._octile._graphs_from_bytes(bytes(huge))
    with pytest.raises(ValueError, match="after the last graph"):
        octile._octile._graphs_from_bytes(first + b"\0")

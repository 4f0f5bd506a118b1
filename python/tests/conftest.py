"""Shared fixtures: the repository (OCTILE_REPO on the GPU bundle), the octile CLI (OCTILE_CLI,
else target/release/octile: `cargo build --release --bin octile`), the CLI runner, the two-sided
matrix check, and small graph sets with every edge case."""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import octile

REPO = Path(os.environ.get("OCTILE_REPO", Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture(scope="session")
def mutag(repo):
    path = repo / "data" / "MUTAG"
    if not path.is_dir():
        pytest.fail(f"{path} is missing: run scripts/setup (it fetches MUTAG)")
    return path


@pytest.fixture(scope="session")
def cli(repo):
    exe = Path(os.environ.get("OCTILE_CLI", repo / "target" / "release" / "octile"))
    if not exe.is_file():
        pytest.fail(f"the octile CLI is not at {exe}: run `cargo build --release --bin octile` or set OCTILE_CLI")
    return exe


@pytest.fixture
def run_cli(cli, tmp_path):
    """octile gram on `inputs` with the kernel's TOML; returns the matrix and the JSON summary."""
    counter = iter(range(10**6))

    def run(kernel, inputs, against=None, normalized=False, backend="cpu", extra=()):
        k = next(counter)
        toml = tmp_path / f"kernel{k}.toml"
        toml.write_text(kernel.to_toml())
        out = tmp_path / f"K{k}.npy"
        cmd = [str(cli), "gram", *map(str, inputs), "--kernel", str(toml), "--backend", backend, "--out", str(out), "--quiet", *extra]
        if against:
            cmd += ["--against", *map(str, against)]
        if normalized:
            cmd.append("--normalize")
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"
        return np.load(out), json.loads(out.with_suffix(".json").read_text())

    return run


def assert_matrix(actual, expected, rtol=0.0, what=""):
    """Same shape, and every entry within rtol (relative, two-sided; 0 = bitwise); the first
    failing index, actual and expected are reported."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    if rtol == 0.0:
        bad = ~((actual == expected) | (np.isnan(actual) & np.isnan(expected)))
    else:
        bad = ~(np.abs(actual - expected) <= rtol * np.maximum(np.abs(expected), np.abs(actual)))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        pytest.fail(f"{what}: {int(bad.sum())} entries differ (rtol {rtol}); first at {idx}: actual {actual[idx]!r}, expected {expected[idx]!r}")


def edge_case_graphs():
    """networkx graphs with string labels and float lengths: 1 node, no edges, isolated nodes, a
    self-loop, disconnected parts, very different sizes, tuple node ids, weights."""
    import networkx as nx

    rng = np.random.default_rng(7)
    graphs = []

    def labeled(g):
        for v in g.nodes:
            g.nodes[v]["label"] = "CNO"[int(rng.integers(3))]
        for u, v in g.edges:
            g.edges[u, v]["length"] = float(rng.uniform(0.5, 2.0))
        return g

    one = nx.Graph()
    one.add_node("only")
    graphs.append(labeled(one))
    graphs.append(labeled(nx.empty_graph(3)))                     # no edges
    g = nx.path_graph(4)
    g.add_nodes_from([10, 11])                                     # isolated nodes
    graphs.append(labeled(g))
    g = nx.cycle_graph(5)
    g.add_edge(2, 2)                                               # a self-loop
    graphs.append(labeled(g))
    graphs.append(labeled(nx.disjoint_union(nx.complete_graph(4), nx.star_graph(3))))  # disconnected
    graphs.append(labeled(nx.grid_2d_graph(3, 4)))                 # tuple node ids
    big = labeled(nx.connected_watts_strogatz_graph(120, 4, 0.2, seed=3))
    for u, v in list(big.edges)[:10]:
        big.edges[u, v]["weight"] = 2.5                            # edge weights
    graphs.append(big)
    for seed in range(5):
        graphs.append(labeled(nx.gnp_random_graph(int(rng.integers(2, 30)), 0.2, seed=seed)))
    return graphs


@pytest.fixture(scope="session")
def nx_graphs():
    return edge_case_graphs()


@pytest.fixture(scope="session")
def tiny(repo):
    return repo / "examples" / "tiny.jsonl"


def gpu():
    return octile.gpu_available()

"""On a GPU: the package's call returns the CLI's matrix (same kernel TOML, same default f32
precision), and backend="cuda" runs there without a warning. Without a GPU every test here is an
explicit SKIP."""
import warnings

import pytest

import octile
from octile import KroneckerDelta, MarginalizedGraphKernel, ShortestPathKernel, GraphletKernel, TensorProduct

from conftest import assert_matrix

OK, WHY = octile.gpu_available()
pytestmark = pytest.mark.skipif(not OK, reason=f"SKIP: no GPU ({WHY})")


def kernels():
    yield "marginalized", MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(label=KroneckerDelta(0.5)), q=0.05, backend="cuda", progress=False)
    yield "shortest path", ShortestPathKernel(with_labels="label", backend="cuda", progress=False)
    yield "graphlets", GraphletKernel(backend="cuda", progress=False)


def test_python_on_the_gpu_returns_the_cli_matrix(mutag, run_cli):
    graphs = octile.read(mutag)
    for name, k in kernels():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = k(graphs, normalized=True)
        expected, summary = run_cli(k, [mutag], normalized=True, backend="cuda")
        assert summary["backend"] == "cuda" and k.last_run_["backend"] == "cuda", (summary["backend"], k.last_run_)
        assert_matrix(got, expected, what=f"GPU {name}: Python vs CLI")
        print(f"GPU {name}: Python = CLI bit for bit on MUTAG ({got.shape[0]} graphs, {k.device_})")

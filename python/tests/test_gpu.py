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


@pytest.mark.parametrize("precision", ["f64", None], ids=["f64", "default-f32"])
def test_gradient_on_the_gpu_matches_the_cpu_f64_gradient(mutag, precision):
    """∂K/∂log θ (scikit-learn's eval_gradient) on the GPU against the CPU's f64: the same solution to
    1e-8 in f64; to the f32 solver's accuracy (mixed precision refined to rtol 1e-6) by default."""
    import numpy as np

    graphs = octile.read(mutag)[:24]
    kw = dict(q=0.05, normalized=True, progress=False)
    node, edge = TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(label=KroneckerDelta(0.5))
    gpu = MarginalizedGraphKernel(node, edge, backend="cuda", precision=precision, **kw)
    cpu = MarginalizedGraphKernel(node, edge, backend="cpu", precision="f64", **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        K, dK = gpu(graphs[:16], graphs[16:], eval_gradient=True)
    assert gpu.last_run_["backend"] == "cuda", gpu.last_run_
    K0, dK0 = cpu(graphs[:16], graphs[16:], eval_gradient=True)
    rtol, afrac = (1e-8, 1e-10) if precision == "f64" else (1e-4, 1e-5)
    assert_matrix(K, K0, rtol=max(rtol, 1e-12), what=f"GPU {precision} K")
    for h, name in enumerate(gpu.hyperparameter_names):
        a, e = dK[..., h], dK0[..., h]
        atol = afrac * np.abs(e).max()
        bad = ~(np.abs(a - e) <= rtol * np.maximum(np.abs(a), np.abs(e)) + atol)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            pytest.fail(f"GPU {precision} ∂K/∂log {name}: {int(bad.sum())} entries differ; first at {idx}: actual {a[idx]!r}, expected {e[idx]!r}")
    print(f"GPU {precision}: gradient of {dK.shape} = CPU f64's ({gpu.device_})")

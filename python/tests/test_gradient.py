"""Hyperparameter gradients and scikit-learn's kernel protocol of MarginalizedGraphKernel: ∂K/∂log θ
against central finite differences (CPU, f64) for K(X), K(X, Y), normalized or not, product and
additive combinations of every base kernel; theta / bounds / hyperparameters / clone_with_theta;
fixed hyperparameters dropped; sklearn's Sum / Product around it; a Gaussian process fit that raises
the log marginal likelihood; octile without scikit-learn."""
import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Hyperparameter, Kernel, Product, Sum, WhiteKernel

import octile
from octile import Additive, Constant, KroneckerDelta, MarginalizedGraphKernel, SquareExponential, TensorProduct


def assert_close(actual, expected, rtol, atol, what):
    """Same shape, and |actual − expected| ≤ rtol·max(|actual|, |expected|) + atol everywhere; the
    first failing index, actual and expected are reported."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    bad = ~(np.abs(actual - expected) <= rtol * np.maximum(np.abs(actual), np.abs(expected)) + atol)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        pytest.fail(f"{what}: {int(bad.sum())} of {bad.size} entries differ (rtol {rtol:g}, atol {atol:g}); first at {idx}: actual {actual[idx]!r}, expected {expected[idx]!r}")


def random_graphs(count, seed):
    """Small connected networkx graphs with numeric node features (label: 0–2, charge: a float) and
    edge features (length: a float, order: 1–2)."""
    import networkx as nx

    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        n = int(rng.integers(3, 11))
        g = nx.connected_watts_strogatz_graph(n, 2, 0.3, seed=int(seed * 100 + k)) if n > 3 else nx.path_graph(n)
        if k % 3 == 0:
            g.add_edge(0, n - 1)
        for v in g.nodes:
            g.nodes[v]["label"] = int(rng.integers(3))
            g.nodes[v]["charge"] = float(rng.uniform(-1, 1))
        for u, v in g.edges:
            g.edges[u, v]["length"] = float(rng.uniform(0.5, 2.0))
            g.edges[u, v]["order"] = int(rng.integers(1, 3))
        out.append(g)
    return octile.from_networkx(out)


X = random_graphs(6, 1)
Y = random_graphs(4, 2)


def product_kernel(**kw):
    """Every hyperparameter free: p, q, KroneckerDelta, SquareExponential, Constant (product)."""
    return MarginalizedGraphKernel(
        TensorProduct(label=KroneckerDelta(0.5), charge=SquareExponential(0.8)),
        TensorProduct(length=SquareExponential(1.2), order=Constant(0.7)),
        q=0.08, p=1.3, p_bounds=(0.1, 10.0), backend="cpu", progress=False, **kw)


def additive_kernel(**kw):
    """Additive combinations with free weights (and one fixed)."""
    return MarginalizedGraphKernel(
        Additive(label=KroneckerDelta(0.4, weight_bounds=(0.1, 10)), charge=2.0 * SquareExponential(1.5, weight_bounds=(0.1, 10))),
        Additive(order=0.5 * KroneckerDelta(0.3, weight_bounds=(0.1, 10)), length=SquareExponential(0.9)),
        q=0.1, backend="cpu", progress=False, **kw)


KERNELS = {"product": product_kernel, "additive": additive_kernel}


def finite_difference(kernel, x, y, eps=1e-4, **call):
    """∂K/∂θ_i by central differences in θ = log of the tuned hyperparameters (clone_with_theta)."""
    theta = kernel.theta
    cols = []
    for i in range(len(theta)):
        step = np.zeros_like(theta)
        step[i] = eps
        hi = kernel.clone_with_theta(theta + step)(x, y, **call)
        lo = kernel.clone_with_theta(theta - step)(x, y, **call)
        cols.append((hi - lo) / (2 * eps))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("normalized", [False, True], ids=["plain", "normalized"])
@pytest.mark.parametrize("against", [False, True], ids=["K(X)", "K(X,Y)"])
@pytest.mark.parametrize("name", list(KERNELS))
def test_log_gradient_matches_central_finite_differences(name, against, normalized):
    k = KERNELS[name](normalized=normalized)
    y = Y if against else None
    K, dK = k(X, y, eval_gradient=True)
    assert_close(K, k(X, y), 1e-12, 0.0, f"{name}: K with eval_gradient = K without")
    assert dK.shape == K.shape + (k.n_dims,) and dK.dtype == np.float64 and dK.flags.c_contiguous, dK.shape
    fd = finite_difference(k, X, y)
    scale = np.abs(K).max()
    for i, hyper in enumerate(k.hyperparameter_names):
        assert np.abs(dK[..., i]).max() > 0 or (normalized and hyper == "p"), f"{name}: ∂K/∂log {hyper} is all zeros"
        assert_close(dK[..., i], fd[..., i], 1e-5, 1e-8 * scale, f"{name} {'K(X,Y)' if against else 'K(X)'} normalized={normalized}: ∂K/∂log {hyper}")


def test_gradient_is_theta_times_the_raw_gradient_of_the_native_call():
    k = product_kernel()
    K, dK = k(X, eval_gradient=True)
    raw_K, raw, names, _ = k._native().gram_gradient(X, None, False, None)
    assert names == ["p", "q", "node.charge.length_scale", "node.label.h", "edge.length.length_scale", "edge.order.c"], names
    assert names == [h.name for h in k.hyperparameters]
    assert_close(raw_K, K, 0.0, 0.0, "K")
    assert_close(dK, raw * np.exp(k.theta), 1e-15, 0.0, "∂K/∂log θ = θ · ∂K/∂θ")


def test_the_native_call_selects_and_scales_the_columns_asked_for():
    k = product_kernel()
    native = k._native()
    raw_K, raw, names, _ = native.gram_gradient(X, None, False, None)
    K, picked, names2, _ = native.gram_gradient(X, None, False, None, [(3, 2.5), (0, 1.0), (3, -1.0)])
    assert names2 == [names[3], names[0], names[3]] and picked.shape == raw.shape[:2] + (3,) and picked.flags.c_contiguous, picked.shape
    assert_close(K, raw_K, 0.0, 0.0, "K")
    assert_close(picked, raw[..., [3, 0, 3]] * np.array([2.5, 1.0, -1.0]), 0.0, 0.0, "columns 3, 0, 3 times 2.5, 1, -1")
    _, none, _, _ = native.gram_gradient(X, None, False, None, [])
    assert none.shape == raw.shape[:2] + (0,), none.shape
    with pytest.raises(ValueError, match="column 6 of a gradient with 6"):
        native.gram_gradient(X, None, False, None, [(1, 1.0), (len(names), 1.0)])


def test_hyperparameters_theta_bounds_and_names():
    k = additive_kernel()
    hyper = k.hyperparameters
    assert all(isinstance(h, Hyperparameter) for h in hyper), hyper
    names = [h.name for h in hyper]
    # the library's order: p, q, node terms by feature name (each parameter then its weight), edge terms
    assert names == ["p", "q", "node.charge.length_scale", "node.charge.weight", "node.label.h", "node.label.weight",
                     "edge.length.length_scale", "edge.length.weight", "edge.order.h", "edge.order.weight"], names
    fixed = {h.name for h in hyper if h.fixed}
    assert fixed == {"p", "edge.length.weight"}, fixed
    free = [n for n in names if n not in fixed]
    assert k.hyperparameter_names == free and k.n_dims == len(free) == 8
    values = {"q": 0.1, "node.charge.length_scale": 1.5, "node.charge.weight": 2.0, "node.label.h": 0.4, "node.label.weight": 1.0,
              "edge.length.length_scale": 0.9, "edge.order.h": 0.3, "edge.order.weight": 0.5}
    assert_close(k.theta, np.log([values[n] for n in free]), 1e-15, 0.0, "theta = log of the free values")
    bounds = {"q": (1e-3, 0.5), "node.charge.length_scale": (1e-2, 1e2), "node.charge.weight": (0.1, 10), "node.label.h": (1e-3, 1.0),
              "node.label.weight": (0.1, 10), "edge.length.length_scale": (1e-2, 1e2), "edge.order.h": (1e-3, 1.0), "edge.order.weight": (0.1, 10)}
    assert k.bounds.shape == (8, 2)
    assert_close(k.bounds, np.log([bounds[n] for n in free]), 1e-15, 0.0, "bounds = log of the free bounds")
    assert not k.is_stationary() and k.requires_vector_input is False
    assert isinstance(k, Kernel), "registered as a scikit-learn kernel"


def test_clone_with_theta_round_trips_and_leaves_the_original():
    k = additive_kernel()
    original = k.to_toml()
    theta = k.theta + np.linspace(-0.3, 0.2, k.n_dims)
    c = k.clone_with_theta(theta)
    assert_close(c.theta, theta, 1e-14, 0.0, "clone_with_theta(θ).theta = θ")
    assert k.to_toml() == original, "the original kernel is unchanged"
    values = dict(zip(c.hyperparameter_names, np.exp(theta)))
    assert c.q == pytest.approx(values["q"], rel=1e-14)
    assert c.node_kernel.features["label"].h == pytest.approx(values["node.label.h"], rel=1e-14)
    assert c.node_kernel.features["charge"].weight == pytest.approx(values["node.charge.weight"], rel=1e-14)
    assert c.edge_kernel.features["order"].weight == pytest.approx(values["edge.order.weight"], rel=1e-14)
    assert c.edge_kernel.features["length"].weight == 1.0, "a fixed weight keeps its value"
    assert c.node_kernel.features["label"].weight_bounds == (0.1, 10.0), "bounds are kept"
    # the values are those of a kernel built with them
    built = dict(octile._octile.hyperparameters(c.to_toml()))
    for n, v in values.items():
        assert built[n] == pytest.approx(v, rel=1e-14), (n, built[n], v)
    assert_close(c.clone_with_theta(k.theta)(X), k(X), 0.0, 0.0, "back to the original θ: the original K")
    with pytest.raises(ValueError, match="theta has 3 entries; the kernel has 8"):
        k.theta = [0.0, 0.0, 0.0]


def test_sklearn_clone_equality_and_parameters_round_trip():
    k = product_kernel(normalized=True)
    c = clone(k)
    assert c is not k and c == k and c.get_params().keys() == k.get_params().keys()
    assert c.q_bounds == (1e-3, 0.5) and c.p_bounds == (0.1, 10.0)
    assert c.node_kernel == k.node_kernel and c.node_kernel is not k.node_kernel
    assert k != c.set_params(q=0.2) and c.q == 0.2
    assert c.set_params(q_bounds="fixed").n_dims == k.n_dims - 1
    # positional arguments of before keep their meaning
    old = MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), None, 0.2, 1.0, "cpu")
    assert old.q == 0.2 and old.backend == "cpu" and old.q_bounds == (1e-3, 0.5)


def test_fixed_hyperparameters_are_dropped_from_theta_and_the_gradient():
    free = product_kernel()
    _, d_all = free(X, Y, eval_gradient=True)
    k = MarginalizedGraphKernel(
        TensorProduct(label=KroneckerDelta(0.5, h_bounds="fixed"), charge=SquareExponential(0.8)),
        TensorProduct(length=SquareExponential(1.2, length_scale_bounds="fixed"), order=Constant(0.7, c_bounds="fixed")),
        q=0.08, p=1.3, q_bounds="fixed", backend="cpu", progress=False)
    assert k.hyperparameter_names == ["node.charge.length_scale"] and k.n_dims == 1 and k.bounds.shape == (1, 2)
    _, d = k(X, Y, eval_gradient=True)
    assert d.shape == (len(X), len(Y), 1)
    assert_close(d[..., 0], d_all[..., free.hyperparameter_names.index("node.charge.length_scale")], 1e-14, 0.0, "the kept column")
    none = MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5, h_bounds="fixed")), None, q_bounds="fixed", backend="cpu", progress=False)
    K, d = none(X, eval_gradient=True)
    assert none.n_dims == 0 and none.theta.shape == (0,) and none.bounds.shape == (0,) and d.shape == K.shape + (0,)


@pytest.mark.parametrize("normalized", [False, True])
def test_diag_with_gradient_is_the_diagonal_of_k_and_dk(normalized):
    k = product_kernel(normalized=normalized)
    K, dK = k(X, eval_gradient=True)
    d, dd = k.diag(X, eval_gradient=True)
    assert_close(d, np.diag(K), 1e-12, 0.0, "diag = diagonal of K")
    assert_close(dd, np.einsum("iih->ih", dK), 1e-10, 1e-14 * np.abs(dK).max(), "diag gradient = diagonal of dK")
    assert_close(k.diag(X), np.diag(K), 1e-12, 0.0, "diag without gradient")


def test_sklearn_sum_and_product_around_the_kernel():
    mgk = product_kernel(normalized=True)
    k = ConstantKernel(2.0, (0.1, 10)) * mgk + WhiteKernel(0.1, (1e-3, 1))
    assert isinstance(k, Sum) and isinstance(k.k1, Product) and k.k1.k2 is mgk
    assert k.n_dims == mgk.n_dims + 2 and k.bounds.shape == (mgk.n_dims + 2, 2)
    K, dK = k(X, eval_gradient=True)
    Km = mgk(X)
    assert_close(K, 2.0 * Km + 0.1 * np.eye(len(X)), 1e-12, 0.0, "2·K + 0.1·I")
    assert dK.shape == K.shape + (mgk.n_dims + 2,)
    assert_close(dK, finite_difference(k, X, None), 1e-5, 1e-8 * np.abs(K).max(), "∂(C·K + W)/∂log θ")
    # the other side, and numbers
    right = mgk * ConstantKernel(3.0)
    assert isinstance(right, Product) and right.k1 is mgk
    assert_close(right(X, Y), 3.0 * mgk(X, Y), 1e-12, 0.0, "K · 3")
    assert_close((mgk + 1.0)(X), mgk(X) + 1.0, 1e-12, 0.0, "K + 1")
    assert_close((0.5 * mgk)(X), 0.5 * mgk(X), 1e-12, 0.0, "0.5 · K")
    assert_close((mgk ** 2)(X), mgk(X) ** 2, 1e-12, 0.0, "K ** 2")
    c = clone(k)
    assert c == k and c.k1.k2 is not mgk
    assert_close(k.clone_with_theta(k.theta)(X), K, 0.0, 0.0, "clone_with_theta of the sum")


def test_object_arrays_of_graphs_are_accepted():
    k = product_kernel()
    arr = np.empty(len(X), dtype=object)
    arr[:] = X
    assert_close(k(arr), k(X), 0.0, 0.0, "K(object array) = K(list)")
    assert_close(k(arr, eval_gradient=True)[1], k(X, eval_gradient=True)[1], 0.0, 0.0, "gradient of an object array")
    assert_close(k.diag(arr), k.diag(X), 0.0, 0.0, "diag(object array)")


def molecules():
    smiles = ["CCO", "CCN", "CCC", "CCCC", "CC(C)C", "CC(C)O", "OCCO", "NCCN", "CCOC", "COC", "CNC", "C1CC1", "C1CCC1", "C1CCCC1",
              "C1CCCCC1", "c1ccccc1", "Cc1ccccc1", "Oc1ccccc1", "Nc1ccccc1", "CC=O", "CC(=O)O", "CC(=O)N", "CC#N", "C=CC", "CCCO",
              "CCCN", "OCC(O)CO", "CC(N)C(=O)O", "c1ccncc1", "C1CCOC1"]
    graphs = octile.from_smiles(smiles)
    # a target the graphs decide: heavy atoms, with heteroatoms counting more
    y = np.array([g.n_nodes + 0.7 * sum(e != 6.0 for e in g.node_feature("element")) for g in graphs])
    return graphs, y


def test_gaussian_process_fit_raises_the_log_marginal_likelihood():
    graphs, y = molecules()
    mgk = MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.5), aromatic=KroneckerDelta(0.5)),
                                  TensorProduct(order=KroneckerDelta(0.5)), q=0.05, normalized=True, backend="cpu", progress=False)
    kernel = ConstantKernel(1.0, (1e-2, 1e2)) * mgk + WhiteKernel(1e-1, (1e-4, 1))
    gpr = GaussianProcessRegressor(kernel=kernel, normalize_y=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a bound reached is a ConvergenceWarning, not a failure
        gpr.fit(graphs, y)
    start = gpr.log_marginal_likelihood(kernel.theta)
    assert np.isfinite(start) and gpr.log_marginal_likelihood_value_ > start + 1.0, (start, gpr.log_marginal_likelihood_value_, gpr.kernel_)
    assert not np.allclose(gpr.kernel_.theta, kernel.theta), gpr.kernel_
    # the GP's LML gradient is what its optimizer used: check it against finite differences (at
    # the start, inside the bounds: the optimum may sit on one, h = 1 say, past which K is undefined)
    theta = kernel.theta
    lml, grad = gpr.log_marginal_likelihood(theta, eval_gradient=True)
    eps = 1e-5
    fd = [(gpr.log_marginal_likelihood(theta + eps * e) - gpr.log_marginal_likelihood(theta - eps * e)) / (2 * eps) for e in np.eye(len(theta))]
    assert_close(grad, fd, 1e-4, 1e-5 * abs(lml), "∂ LML/∂θ")
    mean, std = gpr.predict(graphs[:5], return_std=True)
    assert mean.shape == (5,) and np.all(std > 0) and np.all(np.isfinite(std)), (mean, std)
    # the fitted model explains the training targets better than their mean
    assert np.abs(gpr.predict(graphs) - y).mean() < np.abs(y - y.mean()).mean()


def test_gaussian_process_takes_the_kernel_alone():
    graphs, y = molecules()
    mgk = MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.5)), TensorProduct(order=KroneckerDelta(0.5)), q=0.05,
                                  normalized=True, backend="cpu", progress=False)
    gpr = GaussianProcessRegressor(kernel=mgk, alpha=1e-1, normalize_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gpr.fit(graphs, y)
    assert isinstance(gpr.kernel_, MarginalizedGraphKernel) and gpr.kernel_ is not mgk
    assert gpr.log_marginal_likelihood_value_ >= gpr.log_marginal_likelihood(mgk.theta) - 1e-9
    _, std = gpr.predict(graphs[:3], return_std=True)
    assert np.all(np.isfinite(std)), std


def test_non_convergence_carries_the_partial_gradient():
    k = MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), None, q=0.001, max_iterations=1, backend="cpu", progress=False)
    with pytest.raises(octile.NonConvergenceError) as e:
        k(X[:3], eval_gradient=True)
    assert e.value.partial.shape == (3, 3)
    assert e.value.partial_gradient.shape == (3, 3, k.n_dims), e.value.partial_gradient.shape
    with pytest.raises(octile.NonConvergenceError) as e:
        k(X[:3])
    assert e.value.partial_gradient is None


def test_bounds_are_checked_and_weights_bounds_only_in_additive():
    for bad in [(0.0, 1.0), (2.0, 1.0), "free", (1.0,), "nan"]:
        with pytest.raises(ValueError, match="h_bounds"):
            KroneckerDelta(0.5, h_bounds=bad)
    with pytest.raises(ValueError, match="q_bounds"):
        MarginalizedGraphKernel(None, None, q_bounds=(0, 1))
    with pytest.raises(ValueError, match=r"q_bounds \(1e-12, 0.5\): the lower bound must be ≥ 1e-09"):
        MarginalizedGraphKernel(None, None, q_bounds=(1e-12, 0.5))
    MarginalizedGraphKernel(None, None, q_bounds=(1e-9, 0.5))
    with pytest.raises(ValueError, match="weight_bounds"):
        MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5, weight_bounds=(0.1, 1))), None).to_toml()
    assert KroneckerDelta(0.5, h_bounds=np.array([[0.01, 1.0]])).h_bounds == (0.01, 1.0)
    assert repr(KroneckerDelta(0.5)) == "KroneckerDelta(h=0.5)"
    assert repr(2.0 * KroneckerDelta(0.5, h_bounds="fixed", weight_bounds=(1, 3))) == "2.0 * KroneckerDelta(h=0.5, h_bounds='fixed', weight_bounds=(1.0, 3.0))"
    assert KroneckerDelta(0.5) != KroneckerDelta(0.5, h_bounds="fixed")
    with pytest.raises(ValueError, match="marginalized graph kernel only"):
        octile.ShortestPathKernel(with_labels="label", backend="cpu")._native().gram_gradient(X)


def test_octile_imports_and_computes_gradients_without_scikit_learn():
    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "import octile\n"
        "from octile import MarginalizedGraphKernel, TensorProduct, KroneckerDelta\n"
        "g = octile.from_smiles(['CCO', 'CCN', 'c1ccccc1'])\n"
        "k = MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.5)), None, backend='cpu', progress=False)\n"
        "K, dK = k(g, eval_gradient=True)\n"
        "assert dK.shape == (3, 3, 2), dK.shape\n"
        "h = k.hyperparameters\n"
        "assert [x.name for x in h] == ['p', 'q', 'node.element.h'] and h[0].fixed and not h[1].fixed, h\n"
        "assert abs(k.clone_with_theta(k.theta).q - k.q) < 1e-15\n"
        "try:\n"
        "    k + 1\n"
        "except ImportError:\n"
        "    print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr

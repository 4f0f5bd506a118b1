"""Graph kernels as Python objects: GraphDot-style calls (``kernel(X)``, ``kernel(X, Y)``,
``kernel.diag(X)``) and GraKeL / scikit-learn-style ``fit`` / ``transform`` / ``fit_transform``.

Each object is a set of parameters. Calls turn them into octile's kernel TOML (``to_toml()``, the
file ``octile gram --kernel`` reads) and run the library on it with the interpreter's lock released,
so a value computed here equals the CLI's for the same graphs and settings.
"""
from __future__ import annotations

import copy
import inspect
import math
import operator
import re
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _octile, _sklearn
from .basekernels import BaseKernel, Bounds, KroneckerDelta, _bounds, _number, _toml_value, feature_kernels, toml_table
from .graphs import as_graphs
from .progress import Progress, Reporter

__all__ = ["GraphKernel", "MarginalizedGraphKernel", "ShortestPathKernel", "GraphletKernel"]

_BACKENDS = ("auto", "cpu", "cuda")


# the smallest stopping probability q a kernel may have (octile::mgk::config::MIN_Q: below it the
# f64 solution's rounding, growing as ε/q, passes the values' 1e-6 tolerance)
_MIN_Q = 1e-9

class GraphKernel:
    """What every octile kernel object shares. Subclasses give their parameters (constructor
    arguments, kept as attributes of the same name, scikit-learn's convention) and ``to_toml``."""

    #: info of the last computation: seconds, pairs, backend, device, details, iterations
    #: (min, median, max)
    last_run_: Dict[str, Any]

    # -- parameters (scikit-learn's BaseEstimator protocol, without importing scikit-learn) -----
    @classmethod
    def _param_names(cls) -> List[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD]

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor's parameters (``sklearn.base.clone`` and grid searches use it)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params) -> "GraphKernel":
        """Set constructor parameters by name; returns the kernel."""
        names = self._param_names()
        for k, v in params.items():
            if k not in names:
                raise ValueError(f"{type(self).__name__} has no parameter '{k}'; it has {names}")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{k}={v!r}" for k, v in self.get_params().items()) + ")"

    def __getstate__(self):
        # the native kernel is rebuilt from the parameters when needed (it holds no state)
        return {k: v for k, v in self.__dict__.items() if k != "_native_cache"}

    def _normalized(self, normalized) -> bool:
        value = self.normalized if normalized is None else normalized
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"normalized must be True or False, got {value!r}")
        return bool(value)

    def _reporter(self, progress: Progress, total: int) -> Reporter:
        """The progress of one call: its own ``progress``, else the kernel's."""
        return Reporter(self.progress if progress is None else progress, total, type(self).__name__)

    # -- the kernel file --------------------------------------------------------------------
    def to_toml(self) -> str:
        """The kernel's TOML (``octile gram --kernel FILE`` computes the same values from it)."""
        raise NotImplementedError

    def _native(self) -> "_octile.Kernel":
        # set_params may have changed them since the constructor checked
        _check_backend(self.backend, getattr(self, "precision", None))
        backend = self.backend
        if backend == "cuda":
            ok, why = _octile.gpu_available()
            if not ok:
                warnings.warn(f"backend='cuda' was asked for but no GPU is usable ({why}); computing on the CPU", RuntimeWarning, stacklevel=3)
                backend = "cpu"
        key = (self.to_toml(), backend, getattr(self, "precision", None))
        cached = getattr(self, "_native_cache", None)
        if cached is None or cached[0] != key:
            cached = (key, _octile.Kernel(key[0], key[1], key[2]))
            self._native_cache = cached
        return cached[1]

    @property
    def device_(self) -> str:
        """Where the kernel runs: "cpu: ..." or "cuda: <GPU>"."""
        k = self._native()
        return f"{k.backend}: {k.device}"

    # -- GraphDot-style calls ---------------------------------------------------------------
    def __call__(self, X, Y=None, *, normalized: Optional[bool] = None, progress: Progress = None) -> np.ndarray:
        """K(X) (symmetric, n × n) or K(X, Y) (n × m) as float64. ``X``, ``Y``: lists of graphs
        (octile Graphs, networkx graphs, RDKit molecules) or a file to read. ``normalized``
        (default: the kernel's): K_ij / √(K_ii K_jj). ``progress``: True / False / a callable
        taking the pairs finished; default: a bar when interactive."""
        x = as_graphs(X)
        y = None if Y is None else _as_y(Y)
        norm = self._normalized(normalized)
        native = self._native()
        total = _octile.pairs_of(len(x), None if y is None else len(y), norm)
        with self._reporter(progress, total) as report:
            k, info = native.gram(x, y, norm, report)
        self.last_run_ = info
        return k

    def diag(self, X, *, progress: Progress = None) -> np.ndarray:
        """K(G, G) of each graph (un-normalized)."""
        x = as_graphs(X)
        with self._reporter(progress, len(x)) as report:
            return self._native().diag(x, report)

    def pairs(self, X, pairs: Sequence[Tuple[int, int]], *, progress: Progress = None) -> np.ndarray:
        """K(X[i], X[j]) for the listed (i, j) only (un-normalized)."""
        x = as_graphs(X)
        try:
            pairs = [(operator.index(i), operator.index(j)) for i, j in pairs]
        except (TypeError, ValueError):
            raise ValueError("pairs must be (i, j) pairs of integer indices") from None
        negative = next((k for k, (i, j) in enumerate(pairs) if i < 0 or j < 0), None)
        if negative is not None:
            raise ValueError(f"pair {negative}: {pairs[negative]} has a negative index")
        with self._reporter(progress, len(pairs)) as report:
            return self._native().pairs(x, pairs, report)

    # -- GraKeL / scikit-learn-style transformer ---------------------------------------------
    def fit(self, X, y=None) -> "GraphKernel":
        """Keep the training graphs X (``transform`` compares new graphs with them)."""
        self.X_fit_ = as_graphs(X)
        return self

    def fit_transform(self, X, y=None) -> np.ndarray:
        """Fit on X and return K(X) (normalized when the kernel is)."""
        self.fit(X)
        return self(self.X_fit_)

    def transform(self, X) -> np.ndarray:
        """K(X, X_fit) — rows: the new graphs, columns: the training graphs — normalized with both
        diagonals when the kernel is normalized (GraKeL's ``normalize=True``)."""
        if not hasattr(self, "X_fit_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet: call fit(X_train) first")
        return self(X, self.X_fit_)


def _integer(name: str, value) -> int:
    try:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def _as_y(Y) -> List:
    """``as_graphs(Y)``, its errors naming Y's graphs "graph k of Y" (X's are "graph k")."""
    try:
        return as_graphs(Y)
    except (TypeError, ValueError) as e:
        if type(e) not in (TypeError, ValueError):
            raise
        message, n = re.subn(r"^graph (\d+)", r"graph \1 of Y", str(e), count=1)
        raise type(e)(message if n else f"Y: {message}") from None


def _check_backend(backend: str, precision: Optional[str]):
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")
    if precision not in (None, "f32", "f64"):
        raise ValueError(f"precision must be 'f32', 'f64' or None, got {precision!r}")


class MarginalizedGraphKernel(GraphKernel):
    """GraphDot's marginalized graph kernel: the expected similarity of simultaneous random walks
    on two graphs, nodes compared by ``node_kernel``, edges by ``edge_kernel``, stopping with
    probability ``q`` at each step, starting with probability ∝ ``p`` at every node.

    >>> from octile import MarginalizedGraphKernel, TensorProduct, KroneckerDelta, SquareExponential
    >>> mgk = MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.5)),
    ...                               TensorProduct(order=KroneckerDelta(0.5)), q=0.05)
    >>> K = mgk(graphs)          # doctest: +SKIP

    ``backend``: "auto" (the GPU when one is usable), "cpu" or "cuda" (falls back to the CPU with a
    warning when no GPU is usable). ``precision``: "f32" (mixed precision refined to an f64
    tolerance; the GPU's default) or "f64" (the CPU's default). ``rtol`` / ``max_iterations``: the
    conjugate-gradient solver's stopping rule per pair (pairs that miss it raise
    :class:`octile.NonConvergenceError` carrying the whole matrix).

    It is also a scikit-learn kernel (without subclassing scikit-learn's ``Kernel``):
    ``GaussianProcessRegressor(kernel=mgk)`` tunes its hyperparameters — ``p``, ``q``, each base
    kernel's ``h`` / ``length_scale`` / ``c`` and each :class:`~octile.Additive` term's weight, in
    that order, named "p", "q", "node.<feature>.h", ..., "edge.<feature>.weight" — within their
    bounds (``q_bounds``, ``p_bounds``, the base kernels' ``h_bounds``, ``length_scale_bounds``,
    ``c_bounds``, ``weight_bounds``; "fixed" ones are not tuned), and kernels combine with
    scikit-learn's: ``ConstantKernel() * mgk + WhiteKernel()``. ``mgk(X, Y, eval_gradient=True)``
    returns K and ∂K/∂log θ of the free hyperparameters (scikit-learn's ``theta``).
    """

    def __init__(self, node_kernel=None, edge_kernel=None, q: float = 0.05, p: Union[float, str] = 1.0, backend: str = "auto", precision: Optional[str] = None,
                 rtol: Optional[float] = None, max_iterations: Optional[int] = None, normalized: bool = False, progress: Progress = None, *,
                 q_bounds: Bounds = (1e-3, 0.5), p_bounds: Bounds = "fixed"):
        self.node_kernel = node_kernel
        self.edge_kernel = edge_kernel
        self.q = q
        self.p = p
        self.backend = backend
        self.precision = precision
        self.rtol = rtol
        self.max_iterations = max_iterations
        self.normalized = normalized
        self.progress = progress
        # kept as given (scikit-learn's clone checks that the constructor stores its arguments)
        self.q_bounds = q_bounds
        self.p_bounds = p_bounds
        _check_backend(backend, precision)
        qb = _bounds("q_bounds", q_bounds)
        if qb != "fixed" and qb[0] < _MIN_Q:
            # a fit would reach a q the kernel refuses (its values lose accuracy as ε/q)
            raise ValueError(f"q_bounds {q_bounds!r}: the lower bound must be ≥ {_MIN_Q:g}, octile's smallest q")
        if qb != "fixed" and qb[1] >= 1.0:
            # a fit would reach a q the kernel refuses (q is a stopping probability, below 1)
            raise ValueError(f"q_bounds {q_bounds!r}: the upper bound must be < 1 (q is the walks' stopping probability, in [{_MIN_Q:g}, 1))")
        _bounds("p_bounds", p_bounds)

    def to_toml(self) -> str:
        node = feature_kernels(self.node_kernel, "node_kernel")
        edge = feature_kernels(self.edge_kernel, "edge_kernel")
        p = 1.0 if self.p == "uniform" else _number("p", self.p)
        top: Dict[str, object] = {"method": "marginalized", "q": _number("q", self.q), "p": p}
        if self.rtol is not None:
            top["rtol"] = _number("rtol", self.rtol)
        if self.max_iterations is not None:
            top["max_iterations"] = _integer("max_iterations", self.max_iterations)
        if node is not None:
            top["node_combine"] = node.combine
        if edge is not None:
            top["edge_combine"] = edge.combine
        text = "".join(f"{k} = {_toml_value(v)}\n" for k, v in top.items())
        return text + (node.tables("node") if node else "") + (edge.tables("edge") if edge else "")

    # -- hyperparameters: scikit-learn's kernel protocol -----------------------------------------
    def _hyper(self) -> List[Tuple[str, float, Bounds]]:
        """Every hyperparameter as (name, value, bounds), in the library's order (that of the
        gradient's last axis): "p", "q", the node terms', the edge terms'."""
        out = []
        for name, value in _octile.hyperparameters(self.to_toml()):
            if name in ("p", "q"):
                bounds = _bounds(f"{name}_bounds", getattr(self, f"{name}_bounds"))
            else:
                side, rest = name.split(".", 1)
                feature, param = rest.rsplit(".", 1)
                kernel = getattr(self, f"{side}_kernel").features[feature]
                bounds = kernel.bounds()[param]
            out.append((name, value, bounds))
        return out

    def _free(self) -> List[Tuple[int, str, float, Bounds]]:
        """The hyperparameters that are tuned (bounds not "fixed"), with their index."""
        return [(i, n, v, b) for i, (n, v, b) in enumerate(self._hyper()) if not isinstance(b, str)]

    @property
    def hyperparameters(self) -> list:
        """scikit-learn's ``Hyperparameter`` (name, value_type, bounds, n_elements, fixed) of every
        hyperparameter, fixed ones included, in the library's order."""
        return [_sklearn.hyperparameter(n, b) for n, _, b in self._hyper()]

    @property
    def hyperparameter_names(self) -> List[str]:
        """The names of the tuned hyperparameters, in ``theta``'s order."""
        return [n for _, n, _, _ in self._free()]

    @property
    def theta(self) -> np.ndarray:
        """log of the tuned (not "fixed") hyperparameters' values, in the library's order."""
        free = self._free()
        bad = next(((n, v) for _, n, v, _ in free if not v > 0), None)
        if bad is not None:
            raise ValueError(f"hyperparameter {bad[0]} = {bad[1]!r} has no logarithm; give it a positive value or bounds=\"fixed\"")
        return np.log(np.array([v for _, _, v, _ in free], dtype=float))

    @theta.setter
    def theta(self, theta):
        theta = np.asarray(theta, dtype=float).ravel()
        free = self._free()
        if theta.shape[0] != len(free):
            raise ValueError(f"theta has {theta.shape[0]} entries; the kernel has {len(free)} tuned hyperparameters ({', '.join(n for _, n, _, _ in free) or 'none'})")
        for (_, name, _, _), t in zip(free, theta):
            self._set_hyperparameter(name, math.exp(t))

    def _set_hyperparameter(self, name: str, value: float):
        if name in ("p", "q"):
            setattr(self, name, float(value))
            return
        side, rest = name.split(".", 1)
        feature, param = rest.rsplit(".", 1)
        attr = f"{side}_kernel"
        # a new combination: the objects the kernel was given (maybe shared) stay as they are
        setattr(self, attr, getattr(self, attr).with_value(feature, param, value))

    @property
    def bounds(self) -> np.ndarray:
        """log of the tuned hyperparameters' bounds, shape (n_dims, 2) (empty when none)."""
        b = [pair for _, _, _, pair in self._free()]
        return np.log(np.array(b, dtype=float)) if b else np.array([])

    @property
    def n_dims(self) -> int:
        """How many hyperparameters are tuned."""
        return len(self._free())

    @property
    def requires_vector_input(self) -> bool:
        """False: X is a list of graphs (scikit-learn then passes it through as objects)."""
        return False

    def is_stationary(self) -> bool:
        return False

    def _clone(self) -> "MarginalizedGraphKernel":
        params = self.get_params(deep=False)
        for k in ("node_kernel", "edge_kernel"):
            params[k] = copy.deepcopy(params[k])
        return type(self)(**params)

    # scikit-learn's clone() calls this: the node and edge kernels copied, the progress callable kept
    __sklearn_clone__ = _clone

    def clone_with_theta(self, theta) -> "MarginalizedGraphKernel":
        """A copy with ``theta`` (log of the tuned hyperparameters) set."""
        out = self._clone()
        out.theta = theta
        return out

    def _check_bounds_params(self):
        """Warn where a tuned hyperparameter ended at one of its bounds (scikit-learn's check after
        a fit)."""
        theta, bounds = self.theta, self.bounds
        for t, (lo, hi), name in zip(theta, bounds if len(theta) else [], self.hyperparameter_names):
            for side, b in (("lower", lo), ("upper", hi)):
                if np.isclose(t, b):
                    warnings.warn(f"The optimal value found for {name} is close to its {side} bound {math.exp(b):g}; "
                                  f"{'decreasing' if side == 'lower' else 'increasing'} the bound and fitting again may find a better value.",
                                  _sklearn.convergence_warning(), stacklevel=2)

    def _check_names(self, names: List[str], idx: Optional[List[int]] = None):
        """The native gradient's column names against the kernel's hyperparameters (those at
        ``idx`` where the call chose columns)."""
        hyper = self._hyper()
        want = [n for n, _, _ in hyper] if idx is None else [hyper[i][0] for i in idx]
        if names != want:
            raise RuntimeError(f"internal: the gradient's hyperparameters {names} are not the kernel's {want}")

    def _log_gradient(self, dk: np.ndarray, names: List[str]) -> np.ndarray:
        """∂K/∂θ (raw, every hyperparameter, last axis) → ∂K/∂log θ of the tuned ones."""
        self._check_names(names)
        free = self._free()
        idx = [i for i, _, _, _ in free]
        scale = np.array([v for _, _, v, _ in free], dtype=float)
        return np.ascontiguousarray(dk[..., idx] * scale)

    def __call__(self, X, Y=None, eval_gradient: bool = False, *, normalized: Optional[bool] = None, progress: Progress = None):
        """K(X) (symmetric, n × n) or K(X, Y) (n × m) as float64, as :meth:`GraphKernel.__call__`.
        ``eval_gradient=True`` (scikit-learn's): also ∂K/∂log θ of the tuned hyperparameters,
        shape (n, m, n_dims) — scikit-learn's ``theta`` is log θ; GraphDot's gradient is ∂K/∂θ
        (divide by θ, ``np.exp(mgk.theta)``, to get it)."""
        if not isinstance(eval_gradient, (bool, np.bool_)):
            raise ValueError(f"eval_gradient must be True or False, got {eval_gradient!r}")
        if not eval_gradient:
            return super().__call__(X, Y, normalized=normalized, progress=progress)
        x = as_graphs(X)
        y = None if Y is None else _as_y(Y)
        norm = self._normalized(normalized)
        native = self._native()
        total = _octile.pairs_of(len(x), None if y is None else len(y), norm)
        # ∂K/∂log θ of the free hyperparameters, chosen and scaled as the native call assembles dK
        # (no pass of NumPy's over it); a NonConvergenceError's partial_gradient has the same columns
        columns = [(i, v) for i, _, v, _ in self._free()]
        with self._reporter(progress, total) as report:
            k, dk, names, info = native.gram_gradient(x, y, norm, report, columns)
        self._check_names(names, [i for i, _ in columns])
        self.last_run_ = info
        return k, dk

    def _log_partial_gradient(self, e):
        """A gradient run's ``NonConvergenceError``: its ``partial_gradient`` as ``eval_gradient``
        returns it (∂K/∂log θ of the tuned hyperparameters)."""
        raw = getattr(e, "partial_gradient", None)
        if raw is not None:
            e.partial_gradient = self._log_gradient(raw, [n for n, _, _ in self._hyper()])

    def diag(self, X, eval_gradient: bool = False, *, normalized: Optional[bool] = None, progress: Progress = None):
        """K(G, G) of each graph: ``np.diag(self(X))`` (ones when the kernel is normalized, as
        scikit-learn's contract asks; ``normalized=False`` gives the un-normalized values).
        ``eval_gradient=True`` (GraphDot's): also ∂K(G, G)/∂log θ, shape (n, n_dims)."""
        norm = self._normalized(normalized)
        x = as_graphs(X)
        if norm:
            d = np.ones(len(x))
            return (d, np.zeros((len(x), self.n_dims))) if eval_gradient else d
        if not eval_gradient:
            return super().diag(x, progress=progress)
        try:
            with self._reporter(progress, len(x)) as report:
                d, dd, names = self._native().diag_gradient(x, report)
        except _octile.NonConvergenceError as e:
            self._log_partial_gradient(e)
            raise
        return d, self._log_gradient(dd, names)

    # -- combining with scikit-learn's kernels (they need scikit-learn, imported then) ----------
    def __add__(self, b):
        sk = _sklearn.kernels_module()
        return sk.Sum(self, b if isinstance(b, sk.Kernel) else sk.ConstantKernel(b))

    def __radd__(self, b):
        sk = _sklearn.kernels_module()
        return sk.Sum(b if isinstance(b, sk.Kernel) else sk.ConstantKernel(b), self)

    def __mul__(self, b):
        sk = _sklearn.kernels_module()
        return sk.Product(self, b if isinstance(b, sk.Kernel) else sk.ConstantKernel(b))

    def __rmul__(self, b):
        sk = _sklearn.kernels_module()
        return sk.Product(b if isinstance(b, sk.Kernel) else sk.ConstantKernel(b), self)

    def __pow__(self, b):
        return _sklearn.kernels_module().Exponentiation(self, b)

    def __eq__(self, other) -> bool:
        if type(self) is not type(other):
            return False
        a, b = self.get_params(), other.get_params()
        for key in a.keys() | b.keys():
            try:
                if np.any(a.get(key) != b.get(key)):
                    return False
            except (TypeError, ValueError):
                return False
        return True

    __hash__ = None  # type: ignore[assignment]  # mutable and compared by value, as scikit-learn's kernels


class ShortestPathKernel(GraphKernel):
    """GraKeL's shortest-path kernel: the number of pairs of shortest paths of equal length (and
    equal end labels), or with kernels on the ends' features and on the lengths.

    ``with_labels``: the node feature GraKeL compares exactly (``ShortestPath(with_labels=True)``
    on that label); or ``node_kernel``: any combination of base kernels on node features (h = 0
    allowed). ``length_kernel``: on the path lengths (default ``KroneckerDelta(0.0)``: equal
    lengths only; ``SquareExponential`` and ``BrownianBridge`` also work).
    """

    def __init__(self, with_labels: Optional[str] = None, node_kernel=None, length_kernel: Optional[BaseKernel] = None, backend: str = "auto",
                 normalized: bool = False, progress: Progress = None):
        self.with_labels = with_labels
        self.node_kernel = node_kernel
        self.length_kernel = length_kernel
        self.backend = backend
        self.normalized = normalized
        self.progress = progress
        _check_backend(backend, None)

    def to_toml(self) -> str:
        from .basekernels import TensorProduct

        if self.with_labels is not None and self.node_kernel is not None:
            raise ValueError("give with_labels (a label compared exactly) or node_kernel, not both")
        node = TensorProduct(**{str(self.with_labels): KroneckerDelta(0.0)}) if self.with_labels is not None else feature_kernels(self.node_kernel, "node_kernel")
        length = KroneckerDelta(0.0) if self.length_kernel is None else self.length_kernel
        if not isinstance(length, BaseKernel):
            raise ValueError(f"length_kernel: expected a base kernel such as KroneckerDelta(0.0), got {length!r}")
        if length.weight != 1.0:
            raise ValueError(f"length_kernel: a weight ({length.weight!r}) has no meaning for the one path-length kernel")
        text = 'method = "shortest_path"\n' + (f'node_combine = "{node.combine}"\n' if node else "")
        return text + (node.tables("node") if node else "") + "\n" + toml_table("path_length", length.table())


class GraphletKernel(GraphKernel):
    """A graph kernel on FGlT's graphlet orbit counts (net or raw, per node, 16 orbits of graphlets
    up to 4 nodes): each graph becomes a vector φ (the counts ``summed`` over its nodes, or per
    orbit a ``histogram`` of its nodes' counts in ``bins`` log2 bins), optionally ``log1p``-scaled,
    compared by a ``linear`` or ``rbf`` (``gamma``) kernel. ``orbits``: "0-15", "0-4,15" or a list."""

    def __init__(self, features: str = "summed", counts: str = "net", orbits: Union[str, Sequence[int]] = "0-15", scale: str = "none", kernel: str = "linear",
                 gamma: Optional[float] = None, bins: Optional[int] = None, backend: str = "auto", normalized: bool = False, progress: Progress = None):
        self.features = features
        self.counts = counts
        self.orbits = orbits
        self.scale = scale
        self.kernel = kernel
        self.gamma = gamma
        self.bins = bins
        self.backend = backend
        self.normalized = normalized
        self.progress = progress
        _check_backend(backend, None)

    def to_toml(self) -> str:
        orbits = self.orbits if isinstance(self.orbits, str) else ",".join(str(_integer("orbits", o)) for o in self.orbits)
        top: Dict[str, object] = {"method": "graphlets", "features": self.features, "counts": self.counts, "orbits": orbits, "scale": self.scale, "kernel": self.kernel}
        if self.gamma is not None:
            top["gamma"] = _number("gamma", self.gamma)
        if self.bins is not None:
            top["bins"] = _integer("bins", self.bins)
        return "".join(f"{k} = {_toml_value(v)}\n" for k, v in top.items())

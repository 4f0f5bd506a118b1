"""Graph kernels as Python objects: GraphDot-style calls (``kernel(X)``, ``kernel(X, Y)``,
``kernel.diag(X)``) and GraKeL / scikit-learn-style ``fit`` / ``transform`` / ``fit_transform``.

Each object is a set of parameters. Calls turn them into octile's kernel TOML (``to_toml()``, the
file ``octile gram --kernel`` reads) and run the library on it with the interpreter's lock released,
so a value computed here equals the CLI's for the same graphs and settings.
"""
from __future__ import annotations

import inspect
import operator
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _octile
from .basekernels import BaseKernel, KroneckerDelta, _number, _toml_value, feature_kernels, toml_table
from .graphs import as_graphs
from .progress import Progress, Reporter

__all__ = ["GraphKernel", "MarginalizedGraphKernel", "ShortestPathKernel", "GraphletKernel"]

_BACKENDS = ("auto", "cpu", "cuda")


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
        y = None if Y is None else as_graphs(Y)
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
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


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
    """

    def __init__(self, node_kernel=None, edge_kernel=None, q: float = 0.05, p: Union[float, str] = 1.0, backend: str = "auto", precision: Optional[str] = None,
                 rtol: Optional[float] = None, max_iterations: Optional[int] = None, normalized: bool = False, progress: Progress = None):
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
        _check_backend(backend, precision)

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

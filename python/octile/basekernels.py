"""Base kernels on node and edge features, GraphDot-style, and their combinations.

A marginalized graph kernel compares nodes with a node kernel and edges with an edge kernel; each is
a combination, per named feature, of base kernels::

    TensorProduct(element=KroneckerDelta(0.5), charge=SquareExponential(1.0))   # product over features
    Additive(element=KroneckerDelta(0.5), charge=2.0 * SquareExponential(1.0))  # weighted sum

These objects only describe the kernel: they become the ``[node.<feature>]`` / ``[edge.<feature>]``
tables of octile's kernel TOML (``kernel.to_toml()``), which the library reads exactly as
``octile gram --kernel`` does.

Each hyperparameter has bounds in GraphDot's (and scikit-learn's) spelling, used when a
:class:`~octile.MarginalizedGraphKernel` is tuned as a scikit-learn kernel: ``h_bounds``,
``length_scale_bounds``, ``c_bounds`` — a ``(lower, upper)`` pair with ``0 < lower ≤ upper``, or
``"fixed"`` (not tuned). An :class:`Additive` term's weight (``w * kernel``) is a hyperparameter too,
with ``weight_bounds`` (keyword of every base kernel, default ``"fixed"``)::

    Additive(element=KroneckerDelta(0.5), charge=2.0 * SquareExponential(1.0, weight_bounds=(0.1, 10)))
"""
from __future__ import annotations

import json
import math
from typing import Dict, Mapping, Tuple, Union

Bounds = Union[str, Tuple[float, float]]

__all__ = ["BaseKernel", "KroneckerDelta", "SquareExponential", "Constant", "BrownianBridge", "TensorProduct", "Additive"]


def _number(name: str, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if math.isnan(v):
        raise ValueError(f"{name} must be a number, got NaN")
    return v


def _bounds(name: str, value) -> Bounds:
    """``"fixed"`` or a ``(lower, upper)`` pair of floats with 0 < lower ≤ upper (θ is tuned as
    log θ, so the bounds must be positive)."""
    if isinstance(value, str):
        if value != "fixed":
            raise ValueError(f"{name} must be \"fixed\" or (lower, upper), got {value!r}")
        return value
    try:
        lo, hi = (float(v) for v in _flat_pair(value))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be \"fixed\" or a (lower, upper) pair of numbers, got {value!r}") from None
    if not (0.0 < lo <= hi):
        raise ValueError(f"{name} must be \"fixed\" or (lower, upper) with 0 < lower ≤ upper (θ is tuned as log θ), got {value!r}")
    return (lo, hi)


def _flat_pair(value):
    """Two numbers from a pair, or a 1 × 2 array (scikit-learn's form of one hyperparameter's bounds)."""
    items = list(value)
    if len(items) == 1:
        items = list(items[0])
    if len(items) != 2:
        raise ValueError("not a pair")
    return items


def _toml_value(v) -> str:
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


def toml_table(header: str, table: Mapping[str, object]) -> str:
    """One TOML table: ``[header]`` and its ``key = value`` lines."""
    return f"[{header}]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in table.items())


def toml_key(name: str) -> str:
    """A feature name as a TOML key (quoted: any name is allowed)."""
    return json.dumps(str(name), ensure_ascii=False)


class BaseKernel:
    """A base kernel on one feature (a number per node or edge)."""

    weight: float = 1.0
    #: bounds of the weight (an :class:`Additive` term's hyperparameter): "fixed" or (lower, upper)
    weight_bounds: Bounds = "fixed"
    #: the name of the kernel's hyperparameter ("h", "length_scale", "c")
    _param = ""
    #: its default bounds
    _default_bounds: Bounds = "fixed"

    def _set_bounds(self, bounds, weight_bounds):
        setattr(self, f"{self._param}_bounds", _bounds(f"{self._param}_bounds", bounds))
        self.weight_bounds = _bounds("weight_bounds", weight_bounds)

    def table(self) -> Dict[str, object]:
        """The kernel's TOML table entries (``kernel = ...`` and its hyperparameter)."""
        raise NotImplementedError

    def bounds(self) -> Dict[str, Bounds]:
        """The bounds of the kernel's hyperparameter and of its weight, by name."""
        return {self._param: getattr(self, f"{self._param}_bounds", self._default_bounds), "weight": self.weight_bounds}

    def __mul__(self, w) -> "BaseKernel":
        return self.__rmul__(w)

    def __rmul__(self, w) -> "BaseKernel":
        """``w * kernel``: the term's weight in an :class:`Additive` combination."""
        out = _copy(self)
        out.weight = self.weight * _number("weight", w)
        return out

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.table() == other.table() and self.weight == other.weight and self.bounds() == other.bounds()

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self.table().items()), self.weight, tuple(self.bounds().items())))

    def __repr__(self) -> str:
        args = [f"{k}={v!r}" for k, v in self.table().items() if k != "kernel"]
        bounds = getattr(self, f"{self._param}_bounds", self._default_bounds)
        if bounds != self._default_bounds:
            args.append(f"{self._param}_bounds={bounds!r}")
        if self.weight_bounds != "fixed":
            args.append(f"weight_bounds={self.weight_bounds!r}")
        r = f"{type(self).__name__}({', '.join(args)})"
        return r if self.weight == 1.0 else f"{self.weight!r} * {r}"


def _copy(k: BaseKernel) -> BaseKernel:
    out = object.__new__(type(k))
    out.__dict__.update(k.__dict__)
    return out


class KroneckerDelta(BaseKernel):
    """1 when the two values are equal, else ``h`` (in (0, 1] for the marginalized kernel's node
    kernel, [0, 1] elsewhere). For labels: atoms' elements, bond orders, string labels (the only
    base kernel that may read a feature holding strings)."""

    _param = "h"
    _default_bounds = (1e-3, 1.0)

    def __init__(self, h: float = 0.5, h_bounds: Bounds = (1e-3, 1.0), *, weight_bounds: Bounds = "fixed"):
        self.h = _number("h", h)
        self._set_bounds(h_bounds, weight_bounds)

    def table(self):
        return {"kernel": "kronecker_delta", "h": self.h}


class SquareExponential(BaseKernel):
    """exp(−(a − b)² / (2 ℓ²)) with ℓ = ``length_scale`` > 0. For continuous values."""

    _param = "length_scale"
    _default_bounds = (1e-2, 1e2)

    def __init__(self, length_scale: float = 1.0, length_scale_bounds: Bounds = (1e-2, 1e2), *, weight_bounds: Bounds = "fixed"):
        self.length_scale = _number("length_scale", length_scale)
        self._set_bounds(length_scale_bounds, weight_bounds)

    def table(self):
        return {"kernel": "square_exponential", "length_scale": self.length_scale}


class Constant(BaseKernel):
    """The constant ``c`` whatever the values (in (0, 1] for the marginalized kernel's node kernel,
    [0, 1] for its edge kernel: ``c_bounds`` defaults to (1e-3, 1), not GraphDot's (1e-3, 1e3),
    so that tuning stays where the solver converges)."""

    _param = "c"
    _default_bounds = (1e-3, 1.0)

    def __init__(self, c: float = 1.0, c_bounds: Bounds = (1e-3, 1.0), *, weight_bounds: Bounds = "fixed"):
        self.c = _number("c", c)
        self._set_bounds(c_bounds, weight_bounds)

    def table(self):
        return {"kernel": "constant", "c": self.c}


class BrownianBridge(BaseKernel):
    """max(0, c − |a − b|) (the shortest-path kernel's path-length kernel only)."""

    _param = "c"
    _default_bounds = "fixed"

    def __init__(self, c: float = 3.0):
        self.c = _number("c", c)
        self.c_bounds = "fixed"

    def table(self):
        return {"kernel": "brownian_bridge", "c": self.c}


class _Combination:
    """Base kernels per named feature, combined by ``combine`` ("product" or "additive")."""

    combine = ""

    def __init__(self, **features: BaseKernel):
        for name, k in features.items():
            if not isinstance(k, BaseKernel):
                raise ValueError(f"feature '{name}': expected a base kernel such as KroneckerDelta(0.5), got {k!r}")
        self.features: Dict[str, BaseKernel] = dict(features)

    def tables(self, side: str) -> str:
        """``side`` ("node" or "edge"): the combination line and one table per feature."""
        return "".join("\n" + toml_table(f"{side}.{toml_key(name)}", {**k.table(), **({"weight": k.weight} if k.weight != 1.0 else {})}) for name, k in self.features.items())

    def check(self, what: str):
        """Raise for what the library would not honour: weights outside an additive combination."""
        for name, k in self.features.items():
            if k.weight != 1.0 and self.combine != "additive":
                raise ValueError(f"{what}: feature '{name}' has weight {k.weight!r}, but weights only apply to the terms of Additive(...) (a product ignores them)")
            if k.weight_bounds != "fixed" and self.combine != "additive":
                raise ValueError(f"{what}: feature '{name}' has weight_bounds {k.weight_bounds!r}, but weights only apply to the terms of Additive(...) (a product has none to tune)")

    def with_value(self, feature: str, param: str, value: float) -> "_Combination":
        """A copy with the hyperparameter ``param`` ("h", "length_scale", "c" or "weight") of
        ``feature``'s base kernel set to ``value`` (the objects given are left as they are)."""
        k = _copy(self.features[feature])
        setattr(k, param, float(value))
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.features = {**self.features, feature: k}
        return out

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.features == other.features

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{n}={k!r}" for n, k in self.features.items()) + ")"


class TensorProduct(_Combination):
    """The product of one base kernel per named feature (GraphDot's ``TensorProduct``)."""

    combine = "product"


class Additive(_Combination):
    """The weighted sum of one base kernel per named feature (weights: ``w * kernel``; the library
    normalizes them to sum to 1, so the sum of base kernels in [0, 1] stays in [0, 1])."""

    combine = "additive"

    def __init__(self, **features: BaseKernel):
        if not features:
            raise ValueError("Additive() needs at least one feature (a sum of no kernels is 0); use None to compare nothing")
        super().__init__(**features)


def feature_kernels(value, what: str):
    """A node or edge kernel as given: a combination, or a bare ``Constant(1.0)`` / None (every
    pair of nodes or edges alike: no features read)."""
    if value is None:
        return None
    if isinstance(value, _Combination):
        value.check(what)
        return value if value.features else None
    if isinstance(value, Constant) and value.c == 1.0 and value.weight == 1.0:
        return None
    if isinstance(value, BaseKernel):
        raise ValueError(f"{what}: name the feature it compares, e.g. TensorProduct(label={value!r}) (a bare Constant(1.0) compares nothing)")
    raise ValueError(f"{what}: expected TensorProduct(...), Additive(...), Constant(1.0) or None, got {value!r}")

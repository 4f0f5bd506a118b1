"""scikit-learn's kernel protocol without importing scikit-learn.

:class:`~octile.MarginalizedGraphKernel` implements what ``sklearn.gaussian_process`` calls on a
kernel (``theta``, ``bounds``, ``hyperparameters``, ``__call__(X, Y, eval_gradient)``, ...) but
does not subclass ``sklearn.gaussian_process.kernels.Kernel``, so that octile imports without
scikit-learn (and without its second of import time). scikit-learn checks kernels with
``isinstance(k, Kernel)`` (``GaussianProcessRegressor``'s parameter check, ``ConstantKernel() *
k``); ``Kernel`` is an abstract base class, so the kernel classes are *registered* with it: at once
when scikit-learn's kernels module is already imported, else by a one-shot import hook the moment
it is imported.
"""
from __future__ import annotations

import importlib.abc
import sys
import warnings
from collections import namedtuple
from typing import List, Type

import numpy as np

KERNELS = "sklearn.gaussian_process.kernels"

_classes: List[Type] = []

#: scikit-learn's ``Hyperparameter`` fields, for when scikit-learn is not imported
_Hyperparameter = namedtuple("Hyperparameter", ("name", "value_type", "bounds", "n_elements", "fixed"))


def hyperparameter(name: str, bounds):
    """scikit-learn's ``Hyperparameter(name, "numeric", bounds)`` when scikit-learn is imported,
    else a namedtuple with the same fields and values (bounds as a 1 × 2 array, or "fixed")."""
    module = sys.modules.get(KERNELS)
    if module is not None:
        return module.Hyperparameter(name, "numeric", bounds)
    fixed = isinstance(bounds, str)
    return _Hyperparameter(name, "numeric", bounds if fixed else np.atleast_2d(np.asarray(bounds, dtype=float)), 1, fixed)


def kernels_module():
    """``sklearn.gaussian_process.kernels`` (imported now if needed; the registration follows)."""
    import importlib

    module = importlib.import_module(KERNELS)
    _register(module)
    return module


def convergence_warning():
    module = sys.modules.get("sklearn.exceptions")
    return getattr(module, "ConvergenceWarning", UserWarning)


def _register(module):
    base = getattr(module, "Kernel", None)
    if base is None:
        return
    for cls in _classes:
        if not issubclass(cls, base):
            base.register(cls)


class _Hook(importlib.abc.MetaPathFinder):
    """Finds ``sklearn.gaussian_process.kernels`` with the other finders and registers the kernel
    classes once its module has run; then removes itself."""

    def find_spec(self, name, path, target=None):
        if name != KERNELS:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _uninstall()
            try:
                _register(module)
            except Exception as e:  # never break scikit-learn's import
                warnings.warn(f"octile: could not register its kernels with scikit-learn ({e})", RuntimeWarning)

        spec.loader.exec_module = exec_module
        return spec


_hook = _Hook()


def _uninstall():
    try:
        sys.meta_path.remove(_hook)
    except ValueError:
        pass


def install(*classes: Type):
    """Register ``classes`` as scikit-learn kernels: now, or when scikit-learn's kernels are imported."""
    _classes.extend(classes)
    module = sys.modules.get(KERNELS)
    if module is not None:
        _register(module)
    elif _hook not in sys.meta_path:
        sys.meta_path.insert(0, _hook)

"""octile: graph kernels on NVIDIA GPUs and all CPU cores.

>>> import octile
>>> from octile import MarginalizedGraphKernel, TensorProduct, KroneckerDelta, SquareExponential
>>> graphs = octile.read("molecules.smi")                       # doctest: +SKIP
>>> mgk = MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.5)),
...                               TensorProduct(order=KroneckerDelta(0.5)), q=0.05)
>>> K = mgk(graphs, normalized=True)                            # doctest: +SKIP

Graphs: :func:`read` (files octile reads: SMILES, SDF, networkx JSON, TU folders, PDB), networkx
graphs and RDKit molecules (converted on the fly). Kernels: :class:`MarginalizedGraphKernel`,
:class:`ShortestPathKernel`, :class:`GraphletKernel`, each callable GraphDot-style and a
scikit-learn-style transformer (``fit`` / ``transform`` / ``fit_transform``); the marginalized
kernel is also a scikit-learn Gaussian-process kernel (hyperparameters tuned through their gradients).
"""
from ._octile import Graph, Interrupted, NonConvergenceError, __version__, gpu_available
from .basekernels import Additive, BrownianBridge, Constant, KroneckerDelta, SquareExponential, TensorProduct
from .graphs import as_graphs, from_networkx, from_rdkit, from_smiles, generate, read
from .kernels import GraphKernel, GraphletKernel, MarginalizedGraphKernel, ShortestPathKernel
from ._sklearn import install as _install_sklearn

# scikit-learn's `isinstance(k, Kernel)` holds for the marginalized kernel (registered when
# scikit-learn's kernels are imported; octile itself never imports scikit-learn)
_install_sklearn(MarginalizedGraphKernel)

__all__ = [
    "Graph", "read", "from_networkx", "from_rdkit", "from_smiles", "as_graphs", "generate",
    "MarginalizedGraphKernel", "ShortestPathKernel", "GraphletKernel", "GraphKernel",
    "KroneckerDelta", "SquareExponential", "Constant", "BrownianBridge", "TensorProduct", "Additive",
    "NonConvergenceError", "Interrupted", "gpu_available", "__version__",
]

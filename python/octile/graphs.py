"""Graphs from files, networkx, RDKit and SMILES, through octile's own readers.

Every function returns a list of :class:`octile.Graph`. A networkx graph becomes networkx
node-link JSON and is read by the JSON reader the CLI uses for ``.json`` / ``.jsonl`` files, so its
graphs (and kernel values) are the CLI's: node attributes become node features, edge attributes
edge features, except the edge attribute ``weight`` (the edge weight, default 1). Values may be
numbers, booleans or strings (strings are compared as labels); one kind per feature.
"""
from __future__ import annotations

import json
import math
import numbers
import os
import warnings
from typing import Iterable, List, Optional, Sequence

from . import _octile
from ._octile import Graph

__all__ = ["read", "from_networkx", "from_rdkit", "from_smiles", "as_graphs", "generate", "Graph"]


def read(path, format: Optional[str] = None, skip_invalid: bool = False, pdb_cutoff: float = 5.0) -> List[Graph]:
    """Every graph of ``path``: networkx node-link JSON / JSON Lines (``.json``, ``.jsonl``), SMILES
    (``.smi``), CSV with a ``smiles`` column, SDF/MOL, PDB (``.pdb``, ``.pdb.gz``; residues within
    ``pdb_cutoff`` Å are joined) or a TU dataset folder (MUTAG, ...). ``format`` overrides the
    extension. Bad records are an error naming file and line, or with ``skip_invalid`` skipped with a
    warning."""
    graphs, skipped = _octile.read(os.fspath(path), format, skip_invalid, pdb_cutoff)
    if skipped:
        warnings.warn(f"{path}: {skipped} invalid record(s) skipped", stacklevel=2)
    return graphs


def _scalar(value, where: str):
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        if not math.isfinite(value):
            raise ValueError(f"{where} is {value!r}; feature values must be finite")
        return float(value)
    item = getattr(value, "item", None)  # numpy scalars of other kinds
    if callable(item) and getattr(value, "shape", None) == ():
        return _scalar(item(), where)
    raise ValueError(f"{where} is {value!r} ({type(value).__name__}); octile's features are numbers, booleans or strings")


def _node_link(g, k: int) -> str:
    if g.is_directed():
        raise ValueError(f"graph {k} is directed; octile's kernels take undirected graphs (use G.to_undirected())")
    if g.is_multigraph():
        raise ValueError(f"graph {k} is a multigraph; octile's graphs have at most one edge per pair of nodes (use nx.Graph(G))")
    index = {}
    nodes = []
    for i, (v, attrs) in enumerate(g.nodes(data=True)):
        index[v] = i
        node = {"id": i}
        for name, value in attrs.items():
            if name == "id":
                raise ValueError(f"graph {k}: node {v!r}: an attribute named 'id' cannot be a feature (node-link JSON keeps 'id' for the node; rename it)")
            node[name] = _scalar(value, f"graph {k}: node {v!r}: attribute '{name}'")
        nodes.append(node)
    links = []
    for u, v, attrs in g.edges(data=True):
        link = {"source": index[u], "target": index[v]}
        for name, value in attrs.items():
            if name in ("source", "target", "key"):
                raise ValueError(f"graph {k}: edge ({u!r}, {v!r}): an attribute named '{name}' cannot be a feature (node-link JSON keeps it for the edge; rename it)")
            link[name] = _scalar(value, f"graph {k}: edge ({u!r}, {v!r}): attribute '{name}'")
        links.append(link)
    return json.dumps({"nodes": nodes, "links": links}, allow_nan=False)


def from_networkx(graphs, first: int = 0) -> List[Graph]:
    """networkx graph(s) → octile graphs (one list; one kind per feature across it). A node or edge
    without an attribute that other nodes or edges of its graph have is an error naming the graph,
    the node and the attribute (graphs are numbered from ``first``); a feature a kernel reads but a
    whole graph lacks is an error of the kernel call. Attributes named ``id`` (nodes) or
    ``source``, ``target``, ``key`` (edges) are refused: node-link JSON keeps those names."""
    if isinstance(first, bool) or not isinstance(first, int) or first < 0:
        raise ValueError(f"first must be a non-negative integer (the index of the first graph in messages), got {first!r}")
    if _is_networkx(graphs):
        graphs = [graphs]
    return _octile.from_node_link([_node_link(g, first + k) for k, g in enumerate(graphs)], first)


def from_rdkit(mols, first: int = 0) -> List[Graph]:
    """RDKit molecule(s) → octile graphs: each molecule as RDKit writes it in SMILES (its
    hydrogens, charges, radicals and aromaticity as RDKit perceived them), read by octile's SMILES
    reader, so the graphs are those of a ``.smi`` file of RDKit's SMILES: nodes have ``element``,
    ``aromatic``, ``charge`` and ``hcount``, edges ``order`` (1, 2, 3; 4 = aromatic)."""
    from rdkit import Chem  # only when molecules are given

    if isinstance(mols, Chem.Mol):
        mols = [mols]
    smiles = []
    for k, m in enumerate(mols):
        if m is None:
            raise ValueError(f"molecule {first + k} is None (RDKit could not parse it)")
        smiles.append(Chem.MolToSmiles(m))
    return _octile.from_smiles(smiles, first)


def from_smiles(smiles: Sequence[str]) -> List[Graph]:
    """SMILES string(s) → octile graphs (the ``.smi`` reader's)."""
    if isinstance(smiles, str):
        smiles = [smiles]
    elif isinstance(smiles, (bytes, bytearray)):
        raise TypeError(f"expected a SMILES string or a list of them, got {type(smiles).__name__} (decode it first)")
    smiles = list(smiles)
    bad = next((k for k, s in enumerate(smiles) if not isinstance(s, str)), None)
    if bad is not None:
        raise TypeError(f"SMILES {bad}: expected a str, got {type(smiles[bad]).__name__}")
    return _octile.from_smiles(smiles, 0)


def _is_networkx(g) -> bool:
    return hasattr(g, "nodes") and hasattr(g, "edges") and hasattr(g, "is_directed")


def _is_rdkit(g) -> bool:
    return type(g).__module__.startswith("rdkit") and hasattr(g, "GetAtoms")


def as_graphs(x: Iterable) -> List[Graph]:
    """A list of graphs as octile's: octile Graphs as they are, networkx graphs and RDKit molecules
    converted (runs of one kind together), a path read. Anything else is a ``TypeError`` naming its
    index."""
    if isinstance(x, (str, os.PathLike)):
        return read(x)
    if isinstance(x, Graph) or _is_networkx(x) or _is_rdkit(x):
        raise TypeError("expected a list of graphs, got a single graph (wrap it in a list)")
    try:
        items = iter(x)
    except TypeError:
        raise TypeError(f"expected a list of graphs or a path, got {type(x).__name__}") from None
    items = list(items)
    out: List[Graph] = []
    run: list = []
    run_kind = None

    def flush():
        if run_kind == "nx":
            out.extend(from_networkx(run, len(out)))
        elif run_kind == "rdkit":
            out.extend(from_rdkit(run, len(out)))
        run.clear()

    for k, g in enumerate(items):
        kind = "octile" if isinstance(g, Graph) else "nx" if _is_networkx(g) else "rdkit" if _is_rdkit(g) else None
        if kind is None:
            raise TypeError(f"graph {k}: expected an octile.Graph, a networkx graph or an RDKit molecule, got {type(g).__name__}")
        if kind != run_kind:
            flush()
            run_kind = kind
        if kind == "octile":
            out.append(g)
        else:
            run.append(g)
    flush()
    return out


def generate(kind: str, count: int, seed: int = 2020) -> List[Graph]:
    """``count`` seeded synthetic graphs, as the CLI's generator inputs (``nws:COUNT:SEED``, ...):
    ``"nws"`` (the paper's Newman–Watts–Strogatz set), ``"ba"`` (Barabási–Albert) or
    ``"molecules"`` (molecule-like graphs with the SMILES reader's features: element, aromatic,
    charge, hcount; bond order)."""
    return _octile.generate(kind, int(count), int(seed))

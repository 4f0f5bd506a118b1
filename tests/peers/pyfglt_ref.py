"""pyfglt 0.3.0's raw and net frequencies of the graphs in a JSON file, for tests/tests/graphlets.rs.

Input: [{"n": nodes, "edges": [[u, v], ...]}, ...] (simple undirected graphs, nodes 0..n-1).
Output: [{"raw": [[16 ints] per node], "net": [...]}, ...] in the same order.
Usage: python pyfglt_ref.py IN.json OUT.json   (scripts/setup installs pyfglt into .venv)
"""
import contextlib, io, json, sys

import networkx as nx
from pyfglt.fglt import compute

graphs = json.load(open(sys.argv[1]))
out = []
for g in graphs:
    G = nx.Graph()
    G.add_nodes_from(range(g["n"]))
    G.add_edges_from(map(tuple, g["edges"]))
    with contextlib.redirect_stdout(io.StringIO()):  # the C++ prints its time
        net, raw = compute(G, raw=True)
    out.append({"raw": raw.values.tolist(), "net": net.values.tolist()})
json.dump(out, open(sys.argv[2], "w"))

"""octile.dask: the tiled Gram matrix on Dask equals the in-process matrix bit for bit — on the local
threaded scheduler and on a LocalCluster of worker processes, K(X) and K(X, Y), raw and normalized,
with the gradient, odd tile sizes, one graph, an empty Y, computed or gathered tile by tile — and
survives a worker killed mid-run."""
import os
import signal
import time

import numpy as np
import pytest

import octile
import octile.dask
from octile import KroneckerDelta, MarginalizedGraphKernel, ShortestPathKernel, SquareExponential, TensorProduct

from conftest import assert_matrix, edge_case_graphs

dask = pytest.importorskip("dask", reason="octile.dask needs dask (pip install 'dask[array]' distributed)")
distributed = pytest.importorskip("distributed")


def mgk(**kw):
    return MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(length=SquareExponential(1.0)),
                                   q=0.05, backend="cpu", **kw)


@pytest.fixture(scope="module")
def graphs():
    gs = octile.as_graphs(edge_case_graphs())
    return gs[:6] + gs[7:]  # without the 120-node graph: seconds, not minutes, on 2 cores


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c, Client(c) as client:
        yield client


def test_default_tiles_shrink_until_each_gpu_worker_has_its_share():
    # sixteen tiles a GPU worker (each computes several at once, one's host work beside the others')
    from octile import _octile
    assert _octile.default_tile_size(True, 1, 5000, 5000, True) == 864
    assert _octile.default_tile_size(True, 2, 5000, 5000, True) == 648
    assert _octile.default_tile_size(True, 1, 20008, 20008, True) == 2048
    assert _octile.default_tile_size(False, 4, 5000, 5000, True) == 128
    for workers in (1, 2, 3, 8):
        size = _octile.default_tile_size(True, workers, 5000, 5000, True)
        bands = -(-5000 // size)
        assert 256 <= size < 2048 and (bands * (bands + 1) // 2 >= 16 * workers or size == 256), (workers, size)
    # the CPU kernel's tiles stay 128 whatever the workers; the explicit count wins over a client's
    k = octile.MarginalizedGraphKernel(backend="cpu")
    assert octile.dask.default_tile_size(k, 5000, 5000, True, workers=4) == 128
    assert octile.dask.default_tile_size(k) == 128


@pytest.mark.parametrize("tile_size", [1, 3, 5, 100])
def test_local_scheduler_equals_the_in_process_matrix(graphs, tile_size):
    k = mgk()
    x, y = graphs, graphs[:4]
    with dask.config.set(scheduler="threads"):
        assert_matrix(octile.dask.gram(k, x, tile_size=tile_size).compute(), k(x), what=f"K(X) tile {tile_size}")
        assert_matrix(octile.dask.gram(k, x, y, tile_size=tile_size).compute(), k(x, y), what=f"K(X, Y) tile {tile_size}")
        assert_matrix(octile.dask.gram(k, x, tile_size=tile_size, normalized=True).compute(), k(x, normalized=True),
                      what=f"K(X) normalized tile {tile_size}")
        assert_matrix(octile.dask.gram(k, x, y, tile_size=tile_size, normalized=True).compute(), k(x, y, normalized=True),
                      what=f"K(X, Y) normalized tile {tile_size}")
        # gather without a distributed client: the local scheduler, into the array given
        out = np.full((len(x), len(y)), np.nan)
        assert octile.dask.gather(octile.dask.gram(k, x, y, tile_size=tile_size), out=out) is out
        assert_matrix(out, k(x, y), what=f"gather K(X, Y) tile {tile_size}")


def test_to_zarr_keeps_the_matrix_on_disk(graphs, tmp_path):
    zarr = pytest.importorskip("zarr")
    k = mgk()
    with dask.config.set(scheduler="threads"):
        octile.dask.gram(k, graphs, tile_size=4).rechunk(5).to_zarr(str(tmp_path / "K.zarr"))
    assert_matrix(zarr.open(str(tmp_path / "K.zarr"))[:], k(graphs), what="K(X) through Zarr")


def test_gradient_tiles_equal_eval_gradient(graphs):
    k = mgk()
    x, y = graphs[:7], graphs[7:]
    with dask.config.set(scheduler="threads"):
        for yy in (None, y):
            for norm in (False, True):
                K, dK = octile.dask.gram(k, x, yy, tile_size=3, normalized=norm, eval_gradient=True)
                assert dK.shape == (len(x), len(yy or x), k.n_dims)
                Kw, dKw = k(x, yy, eval_gradient=True, normalized=norm)
                what = f"{'K(X, Y)' if yy else 'K(X)'} normalized={norm}"
                assert_matrix(K.compute(), Kw, what=what)
                assert_matrix(dK.compute(), dKw, what=what + " dK/dlog θ")


def test_worker_processes_equal_the_in_process_matrix(graphs, cluster):
    k = mgk()
    x, y = graphs, graphs[2:6]
    assert len(cluster.scheduler_info()["workers"]) == 2
    assert_matrix(octile.dask.gram(k, x, tile_size=4).compute(), k(x), what="K(X) on 2 workers")
    assert_matrix(octile.dask.gram(k, x, y, tile_size=3, normalized=True).compute(), k(x, y, normalized=True),
                  what="K(X, Y) normalized on 2 workers")
    K, dK = octile.dask.gram(k, x, tile_size=5, normalized=True, eval_gradient=True)
    Kw, dKw = k(x, eval_gradient=True, normalized=True)
    assert_matrix(K.compute(), Kw, what="K(X) with gradient on 2 workers")
    assert_matrix(dK.compute(), dKw, what="dK on 2 workers")
    # another method; one graph; an empty Y
    sp = ShortestPathKernel(backend="cpu")
    assert_matrix(octile.dask.gram(sp, x, tile_size=4).compute(), sp(x), what="shortest path on 2 workers")
    assert_matrix(octile.dask.gram(k, x[:1], normalized=True).compute(), np.ones((1, 1)), what="one graph")
    empty = octile.dask.gram(k, x, [])
    assert empty.shape == (len(x), 0) and empty.compute().shape == (len(x), 0)


def test_gather_fills_the_matrix_tile_by_tile(graphs, cluster, tmp_path):
    k = mgk()
    x, y = graphs, graphs[2:7]
    seen = []
    K = octile.dask.gram(k, x, tile_size=4)
    got = octile.dask.gather(K, progress=lambda done, total: seen.append((done, total)))
    assert_matrix(got, k(x), what="K(X) gathered from 2 workers")
    n_tiles = K.numblocks[0] * K.numblocks[1]
    # K(X): each tile above the diagonal fills its mirror too (2 at a time), the diagonal's one
    steps = [b - a for (a, _), (b, _) in zip([(0, 0)] + seen, seen)]
    assert seen[-1] == (n_tiles, n_tiles) and all(t == n_tiles for _, t in seen) and sorted(set(steps)) == [1, 2], seen
    assert steps.count(1) == K.numblocks[0], f"one step of 1 per diagonal tile: {seen}"
    # an array derived from K (another name) is gathered block by block
    seen.clear()
    assert_matrix(octile.dask.gather(K + 0, progress=lambda done, total: seen.append((done, total))), k(x), what="K(X) + 0 gathered")
    assert seen == [(i + 1, n_tiles) for i in range(n_tiles)], seen
    assert_matrix(octile.dask.gather(octile.dask.gram(k, x, y, tile_size=3, normalized=True)), k(x, y, normalized=True),
                  what="K(X, Y) normalized gathered")
    K, dK = octile.dask.gram(k, x, tile_size=5, eval_gradient=True)
    Kw, dKw = k(x, eval_gradient=True)
    assert_matrix(octile.dask.gather(dK), dKw, what="dK gathered")
    assert_matrix(octile.dask.gather(K), Kw, what="K of the gradient call gathered")
    # into a .npy on disk (a memory map: the matrix need not fit in memory)
    path = str(tmp_path / "K.npy")
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(len(x), len(x)))
    octile.dask.gather(octile.dask.gram(k, x, tile_size=3), out=out)
    out.flush()
    del out
    assert_matrix(np.load(path), k(x), what="K(X) gathered into a .npy")
    with pytest.raises(ValueError, match="shape"):
        octile.dask.gather(octile.dask.gram(k, x, tile_size=3), out=np.empty((2, 2)))


def test_gather_deals_the_tiles_to_every_worker(graphs, cluster):
    # K(X) of 6 tiles on or above the diagonal and normalized (each tile waits for diagonals that
    # one worker computed): every worker computes tiles, not the one beside the diagonals
    from distributed import get_task_stream

    k = mgk()
    K = octile.dask.gram(k, graphs, tile_size=4, normalized=True)
    with get_task_stream(cluster) as ts:
        got = octile.dask.gather(K)
    assert_matrix(got, k(graphs, normalized=True), what="K(X) normalized, tiles dealt over 2 workers")
    by_worker = {}
    for t in ts.data:
        if "octile-tile-" in t["key"] if isinstance(t["key"], str) else "octile-tile-" in str(t["key"]):
            by_worker[t["worker"]] = by_worker.get(t["worker"], 0) + 1
    tiles = K.numblocks[0] * (K.numblocks[0] + 1) // 2
    assert sum(by_worker.values()) == tiles, f"{by_worker}: {tiles} tiles expected"
    # dealt 3 and 3 (Dask may still move a tile to an idle worker)
    assert len(by_worker) == 2 and min(by_worker.values()) >= 1, f"tiles per worker {by_worker}"


def test_graphs_are_sent_once_for_repeated_calls(graphs, cluster, monkeypatch):
    # a GP fit calls gram() many times on one X: the graphs go to the workers once (the same graph
    # objects, in another list too); other graphs are sent anew; the matrices stay right
    import octile.dask as od

    sent = []
    scatter = cluster.scatter
    monkeypatch.setattr(cluster, "scatter", lambda data, **kw: sent.append(len(data.graphs)) or scatter(data, **kw))
    od._SCATTERED.clear()
    k = mgk()
    want = k(graphs)
    for x in (graphs, list(graphs), graphs):
        assert_matrix(od.gather(od.gram(k, x, tile_size=4)), want, what="K(X), graphs sent once")
    assert sent == [len(graphs)], f"graphs sent {sent}"
    assert_matrix(od.gather(od.gram(k, graphs[:5], tile_size=4)), k(graphs[:5]), what="K of another set")
    assert sent == [len(graphs), 5], f"graphs sent {sent}"
    # K(X, Y): X found, Y sent
    assert_matrix(od.gather(od.gram(k, graphs, graphs[2:6], tile_size=3)), k(graphs, graphs[2:6]), what="K(X, Y)")
    assert sent == [len(graphs), 5, 4], f"graphs sent {sent}"
    # graphs converted for a call (networkx here) are sent each time and not kept
    nx = pytest.importorskip("networkx")
    g = nx.path_graph(4)
    nx.set_node_attributes(g, 1, "label")
    nx.set_edge_attributes(g, 1.0, "length")
    kept = len(od._SCATTERED)
    for _ in range(2):
        od.gather(od.gram(k, [g, g], tile_size=1))
    assert sent[3:] == [2, 2] and len(od._SCATTERED) == kept, f"graphs sent {sent}, kept {len(od._SCATTERED)}"
    # forget() releases what is kept: the next call sends X again
    od.forget()
    od.gather(od.gram(k, graphs, tile_size=4))
    assert sent[-1] == len(graphs) and len(sent) == 6, f"graphs sent {sent}"


def test_a_killed_worker_costs_only_its_tiles(cluster):
    # NWS-like graphs take milliseconds a pair on the CPU: tiles of 3 graphs last long enough to
    # kill a worker while some are done and others not
    x = octile.as_graphs(_nws(36))
    k = MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(length=SquareExponential(1.0)), q=0.02,
                                backend="cpu", precision="f64")
    want = k(x)
    pids = list(cluster.run(os.getpid).values())
    K = octile.dask.gram(k, x, tile_size=3)
    n_tiles = 12 * 13 // 2

    def tiles_done(dask_scheduler=None):
        return sum(1 for ts in dask_scheduler.tasks.values() if "octile-tile" in str(ts.key) and ts.state == "memory")

    future = cluster.compute(K)
    done_at_kill = None
    for _ in range(6000):
        done = cluster.run_on_scheduler(tiles_done)
        if done >= 2:
            # a worker process killed outright in the middle of the run (its nanny starts another)
            os.kill(pids[0], signal.SIGKILL)
            done_at_kill = done
            break
        time.sleep(0.01)
    got = future.result(timeout=600)
    assert done_at_kill is not None and done_at_kill < n_tiles, f"killed after {done_at_kill} of {n_tiles} tiles"
    assert_matrix(got, want, what=f"K(X) with a worker killed after {done_at_kill} of {n_tiles} tiles")


def _nws(n):
    """n NWS graphs of octile's generator (through the CLI's node-link JSON)."""
    import networkx as nx

    rng = np.random.default_rng(11)
    out = []
    for s in range(n):
        g = nx.connected_watts_strogatz_graph(48, 6, 0.1, seed=s)
        for v in g.nodes:
            g.nodes[v]["label"] = int(rng.integers(3))
        for a, b in g.edges:
            g.edges[a, b]["length"] = float(rng.uniform(0.5, 2.0))
        out.append(g)
    return out


def test_graphs_travel_as_bytes_made_once_and_read_when_needed(graphs):
    import pickle

    from octile.dask import _Graphs

    side = _Graphs(graphs)
    data = pickle.dumps(side)
    assert pickle.dumps(side) == data, "the bytes are made once and kept"
    copy = pickle.loads(data)
    assert copy._graphs is None, "an unpickled copy reads its graphs only when a tile needs them"
    assert pickle.dumps(copy) == data and copy._graphs is None, "forwarded as it came, without reading the graphs"
    assert [g.n_nodes for g in copy.graphs] == [g.n_nodes for g in graphs]
    k = mgk()
    assert_matrix(k(copy.graphs), k(graphs), what="K of the graphs read back from the bytes")


def test_each_worker_takes_its_share_of_the_host_cores(graphs, cluster):
    # two workers on this host: each one's host-side pool is half the cores (at most those it may
    # run on), set on its first tile; the CPU kernel's device line says the pool's size
    k = mgk()
    octile.dask.gather(octile.dask.gram(k, graphs, tile_size=4))

    def threads_here():
        import octile.dask as od

        cores = os.cpu_count() or 1
        allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
        return od._PROCESS_SET, str(k.device_), max(min(allowed, cores // 2), 1)

    for worker, (done, device, want) in cluster.run(threads_here).items():
        assert done, f"{worker}: the share was not set on the first tile"
        assert f"({want} threads)" in device, f"{worker}: {device}, expected {want} threads"
    # outside a worker nothing is set (the local scheduler's pool is the user's)
    from octile.dask import _threads_for_this_worker
    assert _threads_for_this_worker() is None

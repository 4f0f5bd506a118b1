"""Gram matrices past one process: lazy Dask arrays whose tiles octile computes on Dask's workers.

>>> import octile, octile.dask
>>> from dask.distributed import Client, LocalCluster          # doctest: +SKIP
>>> client = Client(LocalCluster(n_workers=4))                  # doctest: +SKIP
>>> K = octile.dask.gram(mgk, graphs)                           # doctest: +SKIP
>>> K.to_zarr("K.zarr")       # computed tile by tile, larger than memory    # doctest: +SKIP
>>> K = octile.dask.gather(octile.dask.gram(mgk, graphs))   # into this process, tile by tile  # doctest: +SKIP

The matrix is cut into tiles K[rows, cols] (bands of about ``tile_size`` graphs, cut at equal shares
of the node count, so every tile costs about the same); K(X) computes only the tiles on or above
the diagonal and takes the others as their transposes. Each tile's values equal those entries of
``kernel(X)`` (or ``kernel(X, Y)``) bit for bit, so the result does not depend on the cluster, the
tile size or a worker lost part way (Dask recomputes its tiles).

Runs on whatever scheduler is active: a ``dask.distributed`` client (a ``LocalCluster`` of CPU
processes, ``dask_cuda.LocalCUDACluster`` with one worker per GPU — ``threads_per_worker=4`` lets a
GPU worker compute four tiles at once, one's host work beside the others' launches —, SSH, SLURM through
dask-jobqueue, ...) — the graphs are then sent to every worker once, not per tile, and not again by a
later call with the same graph objects — or Dask's local threads.
"""
from __future__ import annotations

import collections
import ctypes
import itertools
import os
import sys
import threading
from typing import Optional, Tuple, Union

import numpy as np

from . import _octile
from .graphs import as_graphs

__all__ = ["gram", "gather", "default_tile_size", "forget"]

_counter = itertools.count()

# K(X)'s arrays (and dK's) by name: block (i, j) below the diagonal is block (j, i) transposed, so
# that gather() fetches only the blocks on and above it (the most recent arrays; a name is unique)
_MIRRORED = {}
_MIRRORED_KEPT = 256
_MIRRORED_LOCK = threading.Lock()


def default_tile_size(kernel, rows: int = 0, cols: int = 0, mirrored: bool = True, workers: Optional[int] = None) -> int:
    """Graphs per tile side, as ``octile gram``'s: 128 on CPUs (tiles of seconds, so workers share
    the work evenly); where the kernel runs on a GPU, 2048 (tiles of ~4 M pairs keep it full) or
    smaller — down to 256 (512 for sets too small for sixteen tiles of 256) — until a ``rows`` × ``cols`` matrix (``mirrored``: K(X), the tiles on
    and above the diagonal) has sixteen tiles per GPU worker (``workers``; default: those of the
    current ``distributed`` client, if any), as ``octile gram`` does per GPU.
    With the same tiles, the matrix equals ``octile gram``'s bit for bit on every backend (on the
    CPU, whatever the tiles)."""
    gpu = kernel._native().backend == "cuda"
    if workers is None:
        workers = _client_workers() if gpu else 1
    return _octile.default_tile_size(gpu, max(int(workers), 1), int(rows), int(cols), bool(mirrored))


def _client_workers() -> int:
    """Workers of the current ``distributed`` client (1 without one)."""
    try:
        from distributed import get_client

        return max(len(_workers_of(get_client())), 1)
    except (ImportError, ValueError):
        return 1


def _workers_of(client) -> dict:
    """Every worker the scheduler knows (address → its info): all of them, where a ``distributed``
    lists only the first few by default."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:  # a distributed without n_workers: it lists them all
        info = client.scheduler_info()
    return info.get("workers", {})


class _Graphs:
    """The graphs of one side, as one object (so a cluster holds them as one piece of data),
    pickled as one ``bytes`` object (``_octile._graphs_to_bytes``: flat arrays, not a Python list per
    feature array — 20,000 molecules in a fraction of a second instead of 2.4 s). The bytes are
    made once and kept, and a copy unpickled reads its graphs only when a tile first needs them:
    Dask's broadcast goes client → worker → worker, and each hop then forwards the bytes as they
    came instead of reading and writing the graphs again (two GPU workers got 20,008 graphs in
    0.64 s against one's 0.41 s). A worker keeps both, the bytes and the graphs read from them
    (about twice the graphs' memory), so that it can forward them."""

    __slots__ = ("_graphs", "_bytes")

    def __init__(self, graphs=None, data: Optional[bytes] = None):
        self._graphs, self._bytes = graphs, data

    @property
    def graphs(self):
        if self._graphs is None:
            with _READING:  # a worker's threads start their first tiles together: read once
                if self._graphs is None:
                    self._graphs = _octile._graphs_from_bytes(self._bytes)
        return self._graphs

    def __reduce__(self):
        if self._bytes is None:
            self._bytes = _octile._graphs_to_bytes(self._graphs)
        return (_graphs_from_bytes, (self._bytes,))


_READING = threading.Lock()


def _graphs_from_bytes(data: bytes) -> _Graphs:
    return _Graphs(data=data)


# the native kernel of each kernel file, built once per worker process
_NATIVE = {}


def _allocator_of_a_plain_process():
    """Dask's nanny starts its workers with MALLOC_TRIM_THRESHOLD_=65536: glibc then gives freed memory
    back at once, and each tile's buffers (hundreds of MB for a GPU tile) are page-faulted anew —
    13 % of the tiles' time on an H200 (benches/scale/overhead.py). A worker computing tiles gets
    the values glibc settles on in a plain process instead (mmap threshold 32 MiB, trim 64 MiB); a
    threshold other than Dask's 65536 is the user's and stays."""
    # only Dask's own value: a threshold the user chose stays
    if os.environ.get("MALLOC_TRIM_THRESHOLD_") != "65536" or not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 64 << 20)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):  # not glibc
        pass


def _share_of_the_host():
    """A Dask worker's share of its host's cores for octile's host-side threads: the host's cores
    ÷ the cluster's workers on this host (dask-cuda's one worker per GPU, a LocalCluster's
    processes), at most the cores the worker may run on (dask-cuda pins a GPU's worker to its
    NUMA node's). Each process's pool would otherwise take every core, and two GPU workers'
    packing and planning contend: their tiles took 49.5 s in all against one worker's 46.4 s
    (20,008 graphs, two H200s). Set before the pool starts; ``RAYON_NUM_THREADS`` wins, a pool
    already running (a kernel called on the worker before) keeps its size, and nothing here fails
    a tile."""
    try:
        threads = _threads_for_this_worker()
        if threads is not None:
            _octile._set_threads(threads)
    except Exception:  # a scheduler that cannot say: the pool keeps its default size
        pass


_PROCESS_SET = False
_PROCESS_LOCK = threading.Lock()


def _set_up_this_process():
    """Once per process, on its first tile (the worker's other threads wait for it): the
    allocator of a plain process and the worker's share of the host's cores."""
    global _PROCESS_SET
    if _PROCESS_SET:
        return
    with _PROCESS_LOCK:
        if not _PROCESS_SET:
            _allocator_of_a_plain_process()
            _share_of_the_host()
            _PROCESS_SET = True


def _threads_for_this_worker() -> Optional[int]:
    """[`_share_of_the_host`]'s count, or None where it does not apply (not on a Dask worker, one
    worker on the host, ``RAYON_NUM_THREADS`` set)."""
    if os.environ.get("RAYON_NUM_THREADS"):
        return None
    try:
        from distributed import get_client, get_worker

        me = get_worker()
    except (ImportError, ValueError):
        return None  # not on a worker (the local scheduler: this process's pool is the user's)
    workers = _workers_of(get_client())
    host = workers.get(me.address, {}).get("host")
    here = sum(1 for w in workers.values() if w.get("host") == host) if host else 1
    if here < 2:
        return None
    cores = os.cpu_count() or 1
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    return max(min(allowed, cores // here), 1)


def _native(kernel):
    _set_up_this_process()
    key = (kernel.to_toml(), kernel.backend, getattr(kernel, "precision", None))
    native = _NATIVE.get(key)
    if native is None:
        native = _NATIVE[key] = kernel._native()
    return native


def _diag(kernel, xs: _Graphs, lo: int, hi: int, gradient: bool):
    native = _native(kernel)
    part = xs.graphs[lo:hi]
    if gradient:
        d, dd, _ = native.diag_gradient(part)
        return np.asarray(d), np.asarray(dd)
    return np.asarray(native.diag(part)), None


def _tile(kernel, xs: _Graphs, ys: Optional[_Graphs], rows, cols, drows, dcols, gradient: bool):
    native = _native(kernel)
    y = None if ys is None else ys.graphs
    kw = {}
    if drows is not None:
        kw = dict(diag_rows=drows[0], diag_cols=dcols[0])
        if gradient:
            kw.update(diag_rows_gradient=drows[1].ravel(), diag_cols_gradient=dcols[1].ravel())
    k, dk, names, _ = native.tile(xs.graphs, y, rows, cols, gradient=gradient, **kw)
    # ∂K/∂θ (raw) → ∂K/∂log θ of the tuned hyperparameters, as kernel(X, eval_gradient=True)
    return k, (kernel._log_gradient(dk, names) if gradient else None)


def _pick(t, i):
    return t[i]


def _transpose(a):
    return np.ascontiguousarray(a.T)


def _transpose_gradient(a):
    return np.ascontiguousarray(a.transpose(1, 0, 2))


def _active_client():
    try:
        from distributed import get_client
        return get_client()
    except (ImportError, ValueError):
        return None


# the graphs of recent calls on each client's workers: (client id, the graphs' ids) → (the graphs,
# their future); the graphs are kept so that their ids stay theirs
_SCATTERED = collections.OrderedDict()
_SCATTERED_KEPT = 4
_SCATTERED_LOCK = threading.Lock()


def _same_objects(given, graphs) -> bool:
    """Whether ``graphs`` are the very objects the caller gave (octile Graphs in a list or tuple),
    not ones converted for this call (networkx, RDKit, a path: new objects every call)."""
    return isinstance(given, (list, tuple)) and len(given) == len(graphs) and all(a is b for a, b in zip(given, graphs))


def forget():
    """Release the graphs :func:`gram` keeps on the workers for later calls (the last four sets per
    client): their memory there, and the client's references."""
    with _SCATTERED_LOCK:
        _SCATTERED.clear()


def _scattered(client, graphs, keep: bool = True):
    """``graphs`` on every worker of ``client``: sent once (a broadcast), then reused by later calls
    with the same graph objects (octile Graphs are immutable) while the cluster holds them — a GP
    fit's many calls on one X send it once. The last few sets are kept (the oldest released;
    :func:`forget` releases them all); graphs converted for this call (``keep`` False) are sent
    and not kept."""
    if not keep:
        return client.scatter(_Graphs(graphs), broadcast=True, hash=False)
    key = (client.id, tuple(map(id, graphs)))
    with _SCATTERED_LOCK:
        hit = _SCATTERED.get(key)
        if hit is not None and hit[1].status == "finished":
            _SCATTERED.move_to_end(key)
            return hit[1]
    future = client.scatter(_Graphs(graphs), broadcast=True, hash=False)
    with _SCATTERED_LOCK:
        _SCATTERED[key] = (graphs, future)
        while len(_SCATTERED) > _SCATTERED_KEPT:
            _SCATTERED.popitem(last=False)
    return future


def _bounds(graphs, tile_size: int):
    return _octile.tile_bands([g.n_nodes for g in graphs], tile_size)


def gram(kernel, X, Y=None, *, tile_size: Optional[int] = None, normalized: Optional[bool] = None,
         eval_gradient: bool = False) -> Union["dask.array.Array", Tuple["dask.array.Array", "dask.array.Array"]]:
    """K(X) (``Y`` None, symmetric) or K(X, Y) of an octile ``kernel`` as a lazy ``dask.array.Array``
    (float64) whose tiles octile computes on Dask's workers; with ``eval_gradient`` (the
    marginalized kernel), also dK with respect to θ (the log of the free hyperparameters, as
    ``kernel(X, eval_gradient=True)``), shape (n, m, P). ``normalized``: default the kernel's.
    ``tile_size``: graphs per tile side (default :func:`default_tile_size`).
    Nothing is computed until the array is (``.compute()``, ``.to_zarr()``, ``.store()``, ...)."""
    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph

    x = as_graphs(X)
    y = None if Y is None else as_graphs(Y)
    norm = kernel._normalized(normalized)
    kernel._native()  # checks the kernel now, in the caller's process
    if eval_gradient and not hasattr(kernel, "_log_gradient"):
        raise ValueError(f"eval_gradient: hyperparameter gradients are computed for the marginalized graph kernel only, not {type(kernel).__name__}")
    rows, cols = len(x), len(x) if y is None else len(y)
    size = default_tile_size(kernel, rows, cols, y is None) if tile_size is None else int(tile_size)
    if size < 1:
        raise ValueError(f"tile_size must be at least 1, got {tile_size}")
    rb = _bounds(x, size)
    cb = rb if y is None else _bounds(y, size)
    n_rb, n_cb = len(rb) - 1, len(cb) - 1
    token = f"{next(_counter)}-{id(x):x}"
    name = f"octile-gram-{token}"
    # the graphs, sent once: to every worker of an active cluster, else into the graph
    client = _active_client()
    dsk = {}
    xkey, ykey = ("octile-x-" + token,), None if y is None else ("octile-y-" + token,)
    for key, side, given in ((xkey, x, X), (ykey, y, Y)):
        if key is not None:
            dsk[key] = _Graphs(side) if client is None else _scattered(client, side, keep=_same_objects(given, side))
    # diagonals of the bands (normalized)
    dname = f"octile-diag-{token}"
    if norm:
        for i in range(n_rb):
            dsk[(dname, "x", i)] = (_diag, kernel, xkey, rb[i], rb[i + 1], eval_gradient)
        if y is not None:
            for j in range(n_cb):
                dsk[(dname, "y", j)] = (_diag, kernel, ykey, cb[j], cb[j + 1], eval_gradient)
    tname = f"octile-tile-{token}"
    kname = name
    gname = f"octile-gradient-{token}"
    for i in range(n_rb):
        for j in range(n_cb):
            if y is None and i > j:
                dsk[(kname, i, j)] = (_transpose, (kname, j, i))
                if eval_gradient:
                    dsk[(gname, i, j, 0)] = (_transpose_gradient, (gname, j, i, 0))
                continue
            drow = (dname, "x", i) if norm else None
            dcol = ((dname, "x", j) if y is None else (dname, "y", j)) if norm else None
            dsk[(tname, i, j)] = (_tile, kernel, xkey, ykey, (rb[i], rb[i + 1]), (cb[j], cb[j + 1]), drow, dcol, eval_gradient)
            dsk[(kname, i, j)] = (_pick, (tname, i, j), 0)
            if eval_gradient:
                dsk[(gname, i, j, 0)] = (_pick, (tname, i, j), 1)
    P = kernel.n_dims if eval_gradient else 0
    if n_rb == 0 or n_cb == 0:
        # an empty side: an empty matrix of the right shape
        shape = (len(x), len(x) if y is None else len(y))
        K = da.zeros(shape, dtype=np.float64)
        return (K, da.zeros(shape + (P,), dtype=np.float64)) if eval_gradient else K
    chunks = (tuple(np.diff(rb).tolist()), tuple(np.diff(cb).tolist()))
    K = da.Array(HighLevelGraph.from_collections(kname, dsk, dependencies=()), kname, chunks=chunks, dtype=np.float64)
    dK = None
    if eval_gradient:
        dK = da.Array(HighLevelGraph.from_collections(gname, dsk, dependencies=()), gname, chunks=chunks + ((P,),), dtype=np.float64)
    if y is None:
        with _MIRRORED_LOCK:  # gram() may be called from several threads
            for a in (K, dK):
                if a is not None:
                    _MIRRORED[a.name] = a.chunks
            while len(_MIRRORED) > _MIRRORED_KEPT:
                del _MIRRORED[next(iter(_MIRRORED))]
    return (K, dK) if eval_gradient else K


def _deal(client, blocks, groups):
    """Submit ``blocks`` (each group: block indices and a priority) dealt round-robin over the
    client's workers, each tile asked of one worker but free to move (``allow_other_workers``).
    Left to itself, the scheduler places a tile beside its inputs — the graphs are on every
    worker, the diagonals it divides by on the one that computed them — so that on a set of
    sub-second tiles one of two GPU workers took every tile (NCI 5K, run 24: 1.02× one GPU).
    Returns (block indices, futures) in the same order."""
    workers = sorted(_workers_of(client))
    fetched, futures, dealt = [], [], 0
    for indices, priority in groups:
        if len(workers) < 2:
            fetched += indices
            futures += client.compute([blocks[i] for i in indices], priority=priority)
            continue
        # the deal goes on from group to group (the diagonal's first tile to the next worker)
        by_worker = [[] for _ in workers]
        for i in indices:
            by_worker[dealt % len(workers)].append(i)
            dealt += 1
        for worker, mine in zip(workers, by_worker):
            if mine:
                fetched += mine
                futures += client.compute([blocks[i] for i in mine], priority=priority, workers=[worker], allow_other_workers=True)
    return fetched, futures


def gather(array, out=None, *, progress=None):
    """Compute a Dask array (:func:`gram`'s K or dK) into this process tile by tile, as the tiles
    finish: each tile is sent once, straight into ``out`` — by default a new numpy array; a
    ``numpy.lib.format.open_memmap`` of a ``.npy`` file keeps the result on disk — and its memory
    on the workers released. ``array.compute()`` instead joins every tile on one worker first and
    then sends the whole matrix at once: for a large matrix that is seconds after the last tile,
    and twice its size in memory. The values are the same bit for bit. Of K(X) (and its dK) as
    :func:`gram` returned it, only the tiles on and above the diagonal are computed and sent; each
    one below is filled here with its mirror's transpose. ``progress``: a callable taking (tiles
    filled, tiles in all; a tile off the diagonal of K(X) fills two). The tiles are dealt
    round-robin over the client's workers (each free to move to another), so that every worker
    computes its share of a short call too. Returns ``out``. Without an
    active ``dask.distributed`` client, the array is computed by Dask's local scheduler into
    ``out``."""
    import dask.array as da

    if out is None:
        out = np.empty(array.shape, dtype=array.dtype)
    elif tuple(out.shape) != tuple(array.shape):
        raise ValueError(f"out has shape {tuple(out.shape)}, the array {tuple(array.shape)}")
    client = _active_client()
    if client is None:
        da.store(array, out, lock=False)
        return out
    from distributed import as_completed

    blocks = array.to_delayed()
    slices = np.empty(blocks.shape, dtype=object)
    for idx, sl in zip(np.ndindex(*blocks.shape), da.core.slices_from_chunks(array.chunks)):
        slices[idx] = sl
    # K(X) as gram() made it: the blocks on and above the diagonal are fetched, each one below is
    # its mirror's transpose, made here (half the bytes sent, no worker busy transposing); the
    # blocks off the diagonal go first, the diagonal's (half the pairs) last, so the last to
    # finish are small
    mirrored = _MIRRORED.get(array.name) == array.chunks
    if mirrored:
        off = [i for i in np.ndindex(*blocks.shape) if i[0] < i[1]]
        diagonal = [i for i in np.ndindex(*blocks.shape) if i[0] == i[1]]
        groups = [(off, 1), (diagonal, 0)]
    else:
        groups = [(list(np.ndindex(*blocks.shape)), 0)]
    fetched, futures = _deal(client, blocks, groups)
    where = {f.key: i for f, i in zip(futures, fetched)}
    done, total = 0, blocks.size
    try:
        # results fetched in the client's background as tiles finish (not one request per tile
        # from this loop), so that a tile's transfer overlaps the filling of the one before
        for f, tile in as_completed(futures, with_results=True):
            idx = where[f.key]
            out[slices[idx]] = tile
            f.release()
            done += 1
            if mirrored and idx[0] != idx[1]:
                out[slices[(idx[1], idx[0]) + idx[2:]]] = tile.swapaxes(0, 1)
                done += 1
            if progress is not None:
                progress(done, total)
    except BaseException:
        client.cancel(futures)  # a failed tile or Ctrl-C: the others are not computed for nothing
        raise
    return out

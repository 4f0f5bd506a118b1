"""Progress of long Gram computations: a bar on stderr when someone is watching (a terminal or a
Jupyter kernel), nothing otherwise. The library reports pairs finished after each batch."""
from __future__ import annotations

import sys
import time
from typing import Callable, Optional, Union

Progress = Union[None, bool, Callable[[int], None]]


def interactive() -> bool:
    """Whether a person is likely watching: stderr is a terminal, or this is a Jupyter kernel."""
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _TextBar:
    """A minimal bar on stderr (used when tqdm is not installed)."""

    def __init__(self, total: int, desc: str):
        self.total, self.desc, self.n = max(total, 1), desc, 0
        self.t0 = self.last = time.monotonic()

    def update(self, n: int):
        self.n += n
        now = time.monotonic()
        if now - self.last >= 0.2 or self.n >= self.total:
            self.last = now
            frac = min(self.n / self.total, 1.0)
            rate = self.n / max(now - self.t0, 1e-9)
            bar = "#" * int(30 * frac)
            sys.stderr.write(f"\r{self.desc} [{bar:<30}] {self.n}/{self.total} pairs {rate:,.0f}/s")
            sys.stderr.flush()

    def close(self):
        sys.stderr.write("\n")
        sys.stderr.flush()


class Reporter:
    """The callable the native kernel calls with the pairs finished, and its bar."""

    def __init__(self, progress: Progress, total: int, desc: str):
        self.callback: Optional[Callable[[int], None]] = None
        self.bar = None
        if progress is not None and not isinstance(progress, bool) and not callable(progress):
            raise ValueError(f"progress must be None (a bar when interactive), True, False or a callable taking the pairs finished, got {progress!r}")
        if callable(progress):
            self.callback = progress
        elif progress is True or (progress is None and interactive()):
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, desc=desc, unit="pairs", leave=False)
            except ImportError:
                self.bar = _TextBar(total, desc)
            self.callback = self.bar.update

    def __enter__(self):
        return self.callback

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
        return False

"""The one timing loop of the benchmarks: wall-clock seconds of repeated calls."""

from __future__ import annotations

import time
from collections.abc import Callable


def timed(fn: Callable[[], object], repeats: int) -> list[float]:
    """Seconds taken by each of ``repeats`` calls of ``fn`` (take their median or minimum)."""
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out

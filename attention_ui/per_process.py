"""A value built once per server process (per key) and shared by every session's runs.

For what a page's script would otherwise build again in every run though it never changes while the
server runs (app.py's navigation pages). ``st.cache_resource`` does the same for a function of an
imported module; on a function defined in the main script it reads the function's source from
disk again in every run (it keys the cache by that source), which is the cost this avoids.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")
_BUILT: dict[Hashable, object] = {}
_LOCK = threading.Lock()


def built(key: Hashable, build: Callable[[], T]) -> T:
    """``build()`` the first time ``key`` is asked for in this process; the same object afterwards."""
    with _LOCK:
        if key not in _BUILT:
            _BUILT[key] = build()
        return _BUILT[key]  # type: ignore[return-value]

"""Read-only arrays: how every frozen result of the core protects its numbers.

Results are cached and shared between reruns and sessions (``st.cache_resource`` in the app), so
whoever reads one must not be able to change it in place.
"""

from __future__ import annotations

import numpy as np


def read_only(a, *, copy: bool = False, contiguous: bool = False, dtype: type | None = None) -> np.ndarray:
    """``a`` as an array with ``writeable`` off. Any shape.

    ``copy``: a new array, so the result never aliases the caller's (needed when the caller's own
    array is handed in); otherwise an array made here is frozen in place, which costs nothing.
    ``contiguous``: C order (copied only if it is not already), which keeps later products on the
    BLAS fast path. ``dtype``: convert (implies a copy when the type differs).
    """
    if copy:
        a = np.array(a, dtype=dtype, order="C" if contiguous else "K", copy=True)
    elif contiguous:
        a = np.ascontiguousarray(a, dtype=dtype)
    else:
        a = np.asarray(a, dtype=dtype)
    a.setflags(write=False)
    return a

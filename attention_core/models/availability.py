"""Whether a pretrained model can run here, checked without loading it (each model's ``is_available``)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence


def can_run(libraries: Sequence[str], locate: Callable[[], object], unavailable: type[Exception]) -> bool:
    """True when every reader library in ``libraries`` is installed (found, not imported) and
    ``locate()`` finds the model's files; ``locate`` raises ``unavailable`` when it cannot."""
    if any(importlib.util.find_spec(m) is None for m in libraries):
        return False
    try:
        locate()
    except unavailable:
        return False
    return True

"""The whole trace as plain JSON values or a ``.npz`` file: what ``--json`` prints and the playground offers.

Pure (NumPy and the standard library). −∞ (masked) becomes ``null`` in JSON and stays −∞ in the
``.npz``; tokens are stored as text, so ``np.load(..., allow_pickle=False)`` reads everything.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable

import numpy as np

from .trace import AttentionTrace

JSON_KEYS = tuple(
    "tokens config X W_Q W_K W_V W_O Q K V scores_raw scores_scaled mask scores_masked weights head_outputs "
    "concat output".split()
)
# Arrays written to the .npz (every intermediate of the trace).
NPZ_ARRAYS = tuple(
    "X W_Q W_K W_V W_O Q K V scores_raw scores_scaled scores_masked weights mask fully_masked_rows head_outputs "
    "concat output".split()
)


def _tolist(a: np.ndarray) -> list:
    """Nested lists of Python floats (repr keeps full precision), −∞ as None."""
    a = np.asarray(a)
    if a.dtype == bool:
        return a.tolist()
    return np.where(np.isneginf(a), None, a).tolist()


def trace_to_json(trace: AttentionTrace) -> dict:
    """The trace as plain JSON values, keys exactly ``JSON_KEYS``."""
    config = trace.config.to_dict() if trace.config else {"divisor": trace.divisor}
    data = {"tokens": list(trace.tokens), "config": config}
    for key in JSON_KEYS[2:]:
        data[key] = _tolist(getattr(trace, key))
    return data


def json_bytes(trace) -> bytes:
    """The CLI's JSON (``python -m attention_core trace --json``) for this trace, UTF-8; −∞ as null."""
    return json.dumps(trace_to_json(trace), ensure_ascii=False, allow_nan=False).encode("utf-8")


def npz_bytes(trace) -> bytes:
    """Every array of the trace plus the tokens and the divisor, as a compressed ``.npz``.

    Tokens are stored as a unicode array, so ``np.load(..., allow_pickle=False)`` reads it all.
    """
    arrays = {name: np.asarray(getattr(trace, name)) for name in NPZ_ARRAYS}
    arrays["tokens"] = np.array(list(trace.tokens), dtype=str)
    arrays["divisor"] = np.array(float(trace.divisor))
    arrays["n_pad"] = np.array(int(trace.n_pad))
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def print_result(as_json: bool, data: Callable[[], object], text: Callable[[], str]) -> int:
    """A command's answer on stdout: one JSON object (``data()``, no NaN) with ``--json``, else
    ``text()``; the exit code 0. Only the form asked for is built."""
    if as_json:
        json.dump(data(), sys.stdout, allow_nan=False)  # \u escapes: safe on any terminal encoding
        sys.stdout.write("\n")
    else:
        print(text())
    return 0

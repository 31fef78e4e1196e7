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

from .csv_cells import csv_text
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


# Matrices the playground's export menu offers as CSV. Per-head ones are [h, n, ·] in the trace.
PER_HEAD_MAPS = ("scores_raw", "scores_scaled", "scores_masked", "weights")  # [h, n, n]
PER_HEAD_FEATURES = ("Q", "K", "V", "head_outputs")  # [h, n, d_k or d_v]
SHARED_MATRICES = ("X", "mask", "concat", "output")  # [n, ·], the same for every head
CSV_MATRICES = PER_HEAD_MAPS + PER_HEAD_FEATURES + SHARED_MATRICES


def matrix_csv(trace, name: str, heads=None) -> bytes:
    """One matrix of the trace as CSV, UTF-8 with a byte-order mark (spreadsheets then read Japanese).

    ``name``: one of :data:`CSV_MATRICES`; ``heads``: the heads to write for a per-head matrix (None:
    all of them), ignored for the shared ones. Rows and key columns are labelled ``"<position> <token>"``
    and every cell goes through :mod:`attention_core.csv_cells` (a token's text never starts a
    spreadsheet formula); feature columns are ``d0, d1, …``; per-head rows start with the head's
    number. The mask is 1 (may attend) or 0; a masked score is ``-inf``.
    """
    if name not in CSV_MATRICES:
        raise ValueError(f"unknown matrix {name!r}; one of {', '.join(CSV_MATRICES)}")
    labels = [f"{i} {tok}" for i, tok in enumerate(trace.tokens)]
    a = np.asarray(getattr(trace, name))
    per_head = name in PER_HEAD_MAPS + PER_HEAD_FEATURES
    if per_head:
        chosen = range(a.shape[0]) if heads is None else [int(h) for h in heads]
        if any(not 0 <= h < a.shape[0] for h in chosen):
            raise ValueError(f"heads must be in 0..{a.shape[0] - 1}")
        blocks = [(h, a[h]) for h in chosen]
    else:
        blocks = [(None, a)]
    square = name in PER_HEAD_MAPS or name == "mask"
    columns = labels if square else [f"d{j}" for j in range(blocks[0][1].shape[1])]
    rows = [(["head"] if per_head else []) + ["query" if square else "token"] + columns]
    for h, m in blocks:
        rows.extend(([h] if per_head else []) + [label, *row] for label, row in zip(labels, m, strict=True))
    return csv_text(rows).encode("utf-8-sig")

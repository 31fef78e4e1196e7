"""Downloads: a shown matrix as CSV with token labels, the whole trace as ``.npz`` or JSON (pure).

CSV labels always start with the token's position (``"4 the"``), so no cell or label can begin
with ``=``, ``+``, ``-`` or ``@`` and be taken for a spreadsheet formula; −∞ is written ``-inf``.
Files are UTF-8 with a byte-order mark so spreadsheet programs read Japanese tokens correctly.
"""

from __future__ import annotations

import io
import json
import re
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from attention_core.cli import trace_to_json

# Arrays written to the .npz (every intermediate of the trace).
NPZ_ARRAYS = (
    "X", "W_Q", "W_K", "W_V", "W_O", "Q", "K", "V", "scores_raw", "scores_scaled", "scores_masked",
    "weights", "mask", "fully_masked_rows", "head_outputs", "concat", "output",
)  # fmt: skip


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The table as CSV: the index (token labels) as the first column, full float precision."""
    return frame.to_csv(index=True, float_format="%.17g", lineterminator="\n").encode("utf-8-sig")


def csv_file_name(step: str, head: int | None = None) -> str:
    """``attention_weights_head0.csv``; only ASCII letters, digits and ``_`` from ``step``."""
    safe = re.sub(r"[^A-Za-z0-9_]", "_", str(step))[:40] or "matrix"
    suffix = f"_head{int(head)}" if head is not None and step not in ("x", "mask", "concat", "output") else ""
    return f"attention_{safe}{suffix}.csv"


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


def json_bytes(trace) -> bytes:
    """The CLI's JSON (``python -m attention_core trace --json``) for this trace; −∞ as null."""
    return json.dumps(trace_to_json(trace), ensure_ascii=False, allow_nan=False).encode("utf-8")

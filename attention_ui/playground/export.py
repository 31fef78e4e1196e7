"""Downloads of a shown matrix as CSV with token labels (the whole trace as ``.npz`` or JSON is
:mod:`attention_core.export`).

CSV labels always start with the token's position (``"4 the"``), so no cell or label can begin
with ``=``, ``+``, ``-`` or ``@`` and be taken for a spreadsheet formula; −∞ is written ``-inf``.
Files are UTF-8 with a byte-order mark so spreadsheet programs read Japanese tokens correctly.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The table as CSV: the index (token labels) as the first column, full float precision."""
    return frame.to_csv(index=True, float_format="%.17g", lineterminator="\n").encode("utf-8-sig")


def csv_file_name(step: str, head: int | None = None) -> str:
    """``attention_weights_head0.csv``; only ASCII letters, digits and ``_`` from ``step``."""
    safe = re.sub(r"[^A-Za-z0-9_]", "_", str(step))[:40] or "matrix"
    suffix = f"_head{int(head)}" if head is not None and step not in ("x", "mask", "concat", "output") else ""
    return f"attention_{safe}{suffix}.csv"

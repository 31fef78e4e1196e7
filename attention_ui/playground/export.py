"""Downloads of a shown matrix as CSV with token labels (the whole trace as ``.npz`` or JSON is
:mod:`attention_core.export`).

CSV labels start with the token's position (``"4 the"``), and every cell goes through the project's
one CSV writer (:mod:`attention_core.csv_cells`: no cell starts a spreadsheet formula); −∞ is
written ``-inf``. Files are UTF-8 with a byte-order mark so spreadsheet programs read Japanese
tokens correctly.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from attention_core.csv_cells import csv_text

if TYPE_CHECKING:
    import pandas as pd


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The table as CSV: the index (token labels) as the first column, full float precision."""
    header = [frame.index.name or "", *frame.columns]
    rows = (
        [label, *values] for label, values in zip(frame.index, frame.itertuples(index=False), strict=True)
    )
    return csv_text([header, *rows]).encode("utf-8-sig")


def csv_file_name(step: str, head: int | None = None) -> str:
    """``attention_weights_head0.csv``; only ASCII letters, digits and ``_`` from ``step``."""
    safe = re.sub(r"[^A-Za-z0-9_]", "_", str(step))[:40] or "matrix"
    suffix = f"_head{int(head)}" if head is not None and step not in ("x", "mask", "concat", "output") else ""
    return f"attention_{safe}{suffix}.csv"

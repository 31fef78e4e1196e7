"""The numbers behind each heatmap as labelled pandas DataFrames (pure; no Streamlit).

Row and column labels put the position first (``"0 the"``, ``"4 the"``) so a repeated word still
gets a unique label. Labels are plain text: st.dataframe shows them as text, never as HTML.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


def _pandas():
    """pandas, imported on first use: tables are built only when a learner asks for them."""
    import pandas

    return pandas


def token_index(tokens: Sequence[str]) -> list[str]:
    """Unique labels ``"<position> <token>"``, one per token."""
    return [f"{i} {tok}" for i, tok in enumerate(tokens)]


def dim_index(d: int, prefix: str = "d") -> list[str]:
    """Feature column labels ``d0, d1, …``."""
    return [f"{prefix}{j}" for j in range(d)]


def attention_table(values: np.ndarray, tokens: Sequence[str]) -> pd.DataFrame:
    """An n×n query × key matrix: query labels as the index, key labels as the columns.

    −∞ (masked) stays −∞, so the table shows exactly what softmax receives.
    """
    values = np.asarray(values)
    n = len(tokens)
    if values.shape != (n, n):
        raise ValueError("an n×n matrix with one token per row is needed")
    labels = token_index(tokens)
    return _pandas().DataFrame(np.array(values, dtype=float), index=labels, columns=labels)


def matrix_table(
    values, row_labels: Sequence[str], col_labels: Sequence[str], fmt: Callable | None = None
) -> pd.DataFrame:
    """A matrix with the given labels (e.g. W^O's ``h0·0`` rows and ``d0`` columns).

    ``fmt`` turns each number into text (e.g. scientific notation); without it the numbers stay floats.
    """
    values = np.asarray(values, dtype=float)
    if values.shape != (len(row_labels), len(col_labels)):
        raise ValueError("one row label per row and one column label per column are needed")
    cells = [[fmt(v) for v in row] for row in values.tolist()] if fmt is not None else values
    return _pandas().DataFrame(cells, index=list(row_labels), columns=list(col_labels))


def labelled_table(
    values, rows: Sequence[str], cols: Sequence[str], fmt: Callable | None = None
) -> pd.DataFrame:
    """A matrix with token labels on both sides (rows may differ from columns, as in cross-attention)."""
    return matrix_table(values, token_index(rows), token_index(cols), fmt)


def feature_table(
    values: np.ndarray, tokens: Sequence[str], dim_names: Sequence[str] | None = None
) -> pd.DataFrame:
    """Token rows × feature columns."""
    values = np.asarray(values, dtype=float)
    n, d = values.shape
    if n != len(tokens):
        raise ValueError("one token per row is needed")
    columns = list(dim_names) if dim_names is not None else dim_index(d)
    if len(columns) != d:
        raise ValueError("one name per column is needed")
    return _pandas().DataFrame(np.array(values), index=token_index(tokens), columns=columns)


def mask_table(allowed: np.ndarray, tokens: Sequence[str]) -> pd.DataFrame:
    """The additive mask M as numbers: 0.0 where allowed, −∞ where masked."""
    allowed = np.asarray(allowed, dtype=bool)
    return attention_table(np.where(allowed, 0.0, -np.inf), tokens)

"""The arithmetic behind one cell of the score/weight maps and one row of a head's output (pure).

Everything is recomputed from the trace's own inputs to that cell (Q, K, V, the mask and the
divisor), term by term, so the page can show *how* a number came about; tests check the results
against the trace's matrices and hand-computed cases.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CellArithmetic:
    """How weight A[head, i, j] is computed.

    raw = Σ_d q[d]·k[d]; scaled = raw / divisor; masked = scaled + mask_term (0 or −∞);
    exp_term = e^(masked − row_max); normaliser = Σ_j' e^(masked_j' − row_max); weight = exp / normaliser.
    Subtracting the row's largest allowed score (row_max) keeps exp from overflowing and cancels
    in the ratio, so the weight is the same as with plain e^masked.
    """

    head: int
    i: int
    j: int
    q: np.ndarray  # [d_k] query row i
    k: np.ndarray  # [d_k] key row j
    products: np.ndarray  # [d_k] q[d]·k[d]
    raw: float
    divisor: float
    scaled: float
    allowed: bool
    mask_term: float  # 0.0 or -inf
    masked: float
    row_max: float  # largest allowed scaled score of row i (nan if the row is fully masked)
    exp_term: float  # e^(masked − row_max); 0 where masked
    normaliser: float  # Σ over the row of e^(masked − row_max); 0 for a fully masked row
    weight: float
    fully_masked: bool


@dataclass(frozen=True)
class RowOutput:
    """head_out[head, i] = Σ_j A[i, j] · V[j]."""

    head: int
    i: int
    weights: np.ndarray  # [n] row i of A
    values: np.ndarray  # [n, d_v] V of this head
    contributions: np.ndarray  # [n, d_v] A[i, j] · V[j]
    output: np.ndarray  # [d_v] sum of the contributions


def _check(trace, head: int, i: int, j: int | None = None) -> None:
    n = trace.n
    if not 0 <= head < trace.heads:
        raise IndexError(f"head {head} out of range 0..{trace.heads - 1}")
    if not 0 <= i < n or (j is not None and not 0 <= j < n):
        raise IndexError(f"cell out of range for n = {n}")


def explain_cell(trace, head: int, i: int, j: int) -> CellArithmetic:
    _check(trace, head, i, j)
    q = np.asarray(trace.Q[head, i], dtype=float)  # [d_k]
    k = np.asarray(trace.K[head, j], dtype=float)  # [d_k]
    products = q * k  # [d_k]
    raw = float(products.sum())
    divisor = float(trace.divisor)
    scaled = raw / divisor
    allowed_row = np.asarray(trace.mask[i], dtype=bool)  # [n]
    allowed = bool(allowed_row[j])
    mask_term = 0.0 if allowed else -np.inf
    masked = scaled + mask_term
    # the whole row, recomputed the same way: [n, d_k] · [d_k] -> [n]
    row_scaled = (np.asarray(trace.K[head], dtype=float) @ q) / divisor
    fully = not allowed_row.any()
    if fully:
        row_max = float("nan")
        exp_row = np.zeros_like(row_scaled)
    else:
        row_max = float(row_scaled[allowed_row].max())
        exp_row = np.where(allowed_row, np.exp(np.where(allowed_row, row_scaled - row_max, 0.0)), 0.0)
    normaliser = float(exp_row.sum())
    exp_term = float(exp_row[j])
    weight = exp_term / normaliser if normaliser > 0 else 0.0
    return CellArithmetic(
        head=head, i=i, j=j, q=q, k=k, products=products, raw=raw, divisor=divisor, scaled=scaled,
        allowed=allowed, mask_term=mask_term, masked=masked, row_max=row_max, exp_term=exp_term,
        normaliser=normaliser, weight=weight, fully_masked=fully,
    )  # fmt: skip


def explain_row(trace, head: int, i: int) -> RowOutput:
    _check(trace, head, i)
    weights = np.asarray(trace.weights[head, i], dtype=float)  # [n]
    values = np.asarray(trace.V[head], dtype=float)  # [n, d_v]
    contributions = weights[:, None] * values  # [n, 1] * [n, d_v] -> [n, d_v]
    return RowOutput(head, i, weights, values, contributions, contributions.sum(axis=0))


def cell_from_point(point: dict, n_rows: int, n_cols: int) -> tuple[int, int] | None:
    """(row, column) of a Plotly selection point on a matrix drawn at integer positions.

    Cells sit at x = column, y = row; points outside the matrix or without numbers give None.
    """
    try:
        x, y = float(point["x"]), float(point["y"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (np.isfinite(x) and np.isfinite(y)):
        return None
    row, col = int(round(y)), int(round(x))
    if 0 <= row < n_rows and 0 <= col < n_cols:
        return row, col
    return None

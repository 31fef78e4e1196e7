"""The arithmetic behind one cell of the score/weight maps and one row of a head's output.

Everything is recomputed from the trace's own inputs to that cell (Q, K, V, the mask and the
divisor) with the core's step functions, term by term, so the playground can show *how* a number
came about; tests check the results against the trace's matrices and hand-computed cases.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import steps


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
    """Weight ``A[head, i, j]`` of ``trace`` step by step: its q·k terms, then query i's row through
    the core's own steps (scale, apply_mask, softmax), with the parts softmax combines."""
    _check(trace, head, i, j)
    q = np.asarray(trace.Q[head, i], dtype=float)  # [d_k]
    K = np.asarray(trace.K[head], dtype=float)  # [n, d_k]
    products = q * K[j]  # [d_k] the terms of q·k
    divisor = float(trace.divisor)
    allowed_row = np.asarray(trace.mask[i], dtype=bool)  # [n]
    scaled_row = steps.scale(steps.raw_scores(q[None, :], K)[0], divisor)  # [1, d_k] @ [d_k, n] -> [n]
    masked_row = steps.apply_mask(scaled_row, allowed_row)  # [n]
    weight = float(steps.softmax(masked_row)[j])
    # The parts softmax combines, shown to the learner: e^(s − m) with m the row's largest allowed
    # score (subtracting it keeps exp from overflowing and cancels in the ratio), and their sum.
    fully = not allowed_row.any()
    row_max = float("nan") if fully else float(masked_row.max())
    exp_row = np.zeros_like(masked_row) if fully else np.exp(masked_row - row_max)  # e^(−∞) = 0 where masked
    allowed = bool(allowed_row[j])
    raw = float(products.sum())
    return CellArithmetic(
        head=head,
        i=i,
        j=j,
        q=q,
        k=K[j],
        products=products,
        raw=raw,
        divisor=divisor,
        scaled=raw / divisor,
        allowed=allowed,
        mask_term=0.0 if allowed else -np.inf,
        masked=raw / divisor if allowed else -np.inf,
        row_max=row_max,
        exp_term=float(exp_row[j]),
        normaliser=float(exp_row.sum()),
        weight=weight,
        fully_masked=fully,
    )


def explain_row(trace, head: int, i: int) -> RowOutput:
    _check(trace, head, i)
    weights = np.asarray(trace.weights[head, i], dtype=float)  # [n]
    values = np.asarray(trace.V[head], dtype=float)  # [n, d_v]
    contributions = weights[:, None] * values  # [n, 1] * [n, d_v] -> [n, d_v]
    return RowOutput(head, i, weights, values, contributions, contributions.sum(axis=0))


@dataclass(frozen=True)
class CellSlips:
    """What weight ``A[head, i, j]`` becomes under the usual slips (the quiz's wrong answers):
    ``unscaled``: the softmax of the raw scores (the division left out); ``unmasked``: the softmax
    over every key (the mask left out; None when the mask forbids nothing in row i, where it equals
    the weight); ``score``: the scaled score itself, taken for a weight; ``uniform``: 1 / (allowed
    keys of row i), the weight if every allowed score were equal (0 for a forbidden key)."""

    weight: float
    unscaled: float
    unmasked: float | None
    score: float
    uniform: float
    allowed_keys: int


def cell_slips(trace, head: int, i: int, j: int) -> CellSlips:
    """The weight of one cell and the slips of :class:`CellSlips`, through the core's own steps."""
    a = explain_cell(trace, head, i, j)
    allowed_row = np.asarray(trace.mask[i], dtype=bool)  # [n]
    raw_row = steps.raw_scores(a.q[None, :], np.asarray(trace.K[head], dtype=float))[0]  # [n]
    unscaled = float(steps.softmax(steps.apply_mask(raw_row, allowed_row))[j])
    unmasked = None if allowed_row.all() else float(steps.softmax(steps.scale(raw_row, a.divisor))[j])
    count = int(allowed_row.sum())
    uniform = 1.0 / count if count and a.allowed else 0.0
    return CellSlips(a.weight, unscaled, unmasked, a.scaled, uniform, count)

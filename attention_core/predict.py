"""The answers to checkable predictions a learner makes before a step is shown.

Each function reads arrays an :class:`~attention_core.exercise.Exercise` or an
:class:`~attention_core.trace.AttentionTrace` already holds, so a page asks e.g.
``winning_keys(trace.weights[h, i])`` or ``masked_cells(exercise.allowed)``. Indices are 0-based.
"""

from __future__ import annotations

import numpy as np

# Two weights count as tied when they differ by at most this fraction of the row's largest weight.
# Mathematically equal scores can reach softmax through different rounding (q·k₁ and q·k₂ summed
# in another order), which leaves their weights a few ulp apart; anything closer than 1e-12 is
# far below what any display or learner can tell apart.
TIE_RTOL = 1e-12
SUM_ATOL = 1e-9  # a softmax row sums to 1 up to rounding of about n ulp


def scores_shape(Q: np.ndarray, K: np.ndarray) -> tuple[int, int]:
    """The shape of Q Kᵀ for one head: ``[n_q, d_k], [n_k, d_k] -> (n_q, n_k)``.

    Only the number of rows of Q and of K matter; d_k disappears in the dot products.
    """
    Q, K = np.asarray(Q), np.asarray(K)
    if Q.ndim != 2 or K.ndim != 2 or Q.shape[1] != K.shape[1]:
        raise ValueError("Q and K must be matrices [n, d_k] with the same d_k (pick one head)")
    return (Q.shape[0], K.shape[0])


def winning_keys(weights_row: np.ndarray) -> tuple[int, ...]:
    """Every key with the row's largest weight, in key order: ``[n_k] -> tuple of indices``.

    Ties: all tied keys win, and naming any one of them is right (``is_winning_key``). A row whose
    keys are all masked has weights all 0 and no winner: the empty tuple.
    """
    w = np.asarray(weights_row, dtype=float)
    if w.ndim != 1:
        raise ValueError("pass one row of weights, e.g. weights[i]")
    top = w.max()
    if top <= 0:
        return ()
    return tuple(int(j) for j in np.flatnonzero(w >= top * (1 - TIE_RTOL)))


def winning_key(weights_row: np.ndarray) -> int | None:
    """The winning key, the lowest index among tied ones (as ``np.argmax``); None for a masked row."""
    keys = winning_keys(weights_row)
    return keys[0] if keys else None


def is_winning_key(weights_row: np.ndarray, key: int) -> bool:
    """Whether ``key`` is right as "the key that wins this row" (any of tied winners is)."""
    return key in winning_keys(weights_row)


def masked_cells(allowed: np.ndarray) -> tuple[tuple[int, int], ...]:
    """The cells (query i, key j) a mask removes, row by row: ``[n_q, n_k] bool -> tuple of pairs``."""
    a = np.asarray(allowed, dtype=bool)
    return tuple((int(i), int(j)) for i, j in np.argwhere(~a))


def row_sums_to_one(weights_row: np.ndarray) -> bool:
    """Whether a (possibly masked) row of weights still sums to 1.

    True whenever the row keeps at least one key: softmax renormalises over the allowed keys. False
    for a row with every key masked, which the core sets to all zeros.
    """
    return bool(abs(float(np.sum(weights_row)) - 1.0) <= SUM_ATOL)


def score_matrix_bytes(n: int, heads: int = 1, bytes_per_entry: int = 2) -> int:
    """Memory of the n x n score (or weight) matrices: ``heads · n² · bytes_per_entry``.

    The default of 2 bytes is FP16; NumPy's float64 is 8.
    """
    for name, value in (("n", n), ("heads", heads), ("bytes_per_entry", bytes_per_entry)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number ≥ 1")
    return heads * n * n * bytes_per_entry


def memory_factor_when_doubling(n: int) -> int:
    """How many times the n x n matrix's memory grows when n doubles: (2n)² / n² = 4, for every n."""
    return score_matrix_bytes(2 * n) // score_matrix_bytes(n)

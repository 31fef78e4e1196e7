"""Attention without the n × n matrix: tiles plus an online softmax (the FlashAttention idea).

For one block of queries, walk over the keys block by block and keep, per query row,
- m: the largest score seen so far (running max),
- l: Σ exp(score − m) over the keys seen so far (running denominator),
- acc: Σ exp(score − m) · v over the keys seen so far (unnormalised output).
When a new tile raises the max from m to m', the old sums are rescaled by exp(m − m') so that
everything stays relative to the same max. At the end out = acc / l. Only a ``block_q × block_k``
tile of scores exists at any time; the result equals softmax(QKᵀ/divisor + M) V up to rounding.

Rows with no allowed key at all get 0, like :func:`attention_core.steps.softmax`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import steps
from .steps import apply_mask, build_mask, raw_scores, scale, softmax, weighted_sum

AllowedFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class TiledAttention:
    """Output of :func:`tiled_attention` plus how much work the tiling did."""

    output: np.ndarray  # [n_q, d_v]
    block_q: int
    block_k: int
    tiles_computed: int  # score tiles actually formed
    tiles_skipped: int  # tiles skipped because the mask hid every entry (causal: above the diagonal;
    # sliding window: also the tiles wholly older than the window, never even visited)
    max_tile_elements: int  # largest score tile held at once (≤ block_q · block_k)
    # the per-row softmax statistics, O(n) numbers, that FlashAttention writes out beside the output
    # for its backward pass: each row's max score and its sum of exp(score − max) (−inf and 0 for a
    # row with nothing allowed)
    row_max: np.ndarray | None = None  # [n_q]
    row_sum: np.ndarray | None = None  # [n_q]


def future_tile(q_end: int, k_start: int) -> bool:
    """Under the causal mask, a tile whose first key comes after its last query (``q_end - 1``)
    is masked everywhere: the tiled algorithm skips it without forming its scores."""
    return k_start > q_end - 1


def window_key_tiles(q0: int, q1: int, n_k: int, block_k: int, window: int) -> range:
    """Under a causal sliding window of ``window`` keys (query i sees keys i − window < j ≤ i), the
    starts of the key tiles that queries ``q0 … q1 − 1`` can see: from the tile holding key
    ``q0 − window + 1`` to the tile holding key ``q1 − 1``. Every other tile is wholly outside the
    window (too old for the first query or in the future of the last) and is never visited, so the
    work per query tile is about ``(window + block_q) / block_k`` tiles, not ``n_k / block_k``."""
    first = max(0, steps.window_start(q0, window)) // block_k * block_k
    return range(first, min(q1, n_k), block_k)


def window_allowed(window: int) -> AllowedFn:
    """``allowed_fn`` for the causal sliding window: ``[bq], [bk] -> [bq, bk]``, i − window < j ≤ i."""

    def allowed(q_idx: np.ndarray, k_idx: np.ndarray) -> np.ndarray:
        return steps.window_allowed(q_idx, k_idx, window)

    return allowed


def tile_grid(
    n_q: int, n_k: int, block_q: int, block_k: int, causal: bool = False, window: int | None = None
) -> np.ndarray:
    """Which score tiles :func:`tiled_attention` forms (True) or skips (False).

    ``-> [ceil(n_q / block_q), ceil(n_k / block_k)]`` bool, query tiles as rows. Without a mask
    every tile is formed; with ``causal`` the :func:`future_tile` ones are skipped; with ``window``
    only the :func:`window_key_tiles` are formed.
    """
    if min(n_q, n_k, block_q, block_k) < 1:
        raise ValueError("sizes and blocks must be positive")
    q_ranges = [(q0, min(q0 + block_q, n_q)) for q0 in range(0, n_q, block_q)]
    k_starts = range(0, n_k, block_k)
    if window is not None:
        return np.array(
            [
                [k0 in window_key_tiles(q0, q1, n_k, block_k, window) for k0 in k_starts]
                for q0, q1 in q_ranges
            ],
            dtype=bool,
        )
    return np.array(
        [[not (causal and future_tile(q1, k0)) for k0 in k_starts] for _, q1 in q_ranges], dtype=bool
    )


def causal_allowed(q_idx: np.ndarray, k_idx: np.ndarray) -> np.ndarray:
    """``allowed_fn`` for the causal mask: key j visible to query i when j ≤ i. ``[bq], [bk] -> [bq, bk]``."""
    return steps.window_allowed(q_idx, k_idx)


def online_softmax_merge(m, denom, acc, s, v):
    """Fold one tile of scores into the running state (the one merge of the tiled and ring labs).

    ``m [bq]`` running max, ``denom [bq]`` running Σ exp(score − m), ``acc [bq, d_v]`` running
    Σ exp(score − m)·v; ``s [bq, bk]`` the tile's scores (−inf where masked), ``v [bk, d_v]`` its
    values. ``-> (m', denom', acc')``: when the max rises from m to m', the old sums are multiplied
    by exp(m − m') so that every term stays relative to the same max.
    """
    m_new = np.maximum(m, s.max(axis=1))  # [bq]
    safe = np.where(np.isneginf(m_new), 0.0, m_new)  # rows with nothing allowed yet
    p = np.exp(s - safe[:, None])  # [bq, bk], exp(−inf) = 0 for masked entries
    rescale = np.exp(m - safe)  # [bq], 0 while m is still −inf
    return m_new, denom * rescale + p.sum(axis=1), acc * rescale[:, None] + p @ v


def online_softmax_output(denom, acc) -> np.ndarray:
    """``acc / denom`` per row, 0 for a row that saw no allowed key. ``[bq], [bq, d_v] -> [bq, d_v]``."""
    return np.where(denom[:, None] > 0, acc / np.where(denom > 0, denom, 1.0)[:, None], 0.0)


def tiled_attention(
    Q,
    K,
    V,
    block_q: int = 64,
    block_k: int = 64,
    causal: bool = False,
    allowed_fn: AllowedFn | None = None,
    divisor: float | None = None,
    window: int | None = None,
) -> TiledAttention:
    """softmax(QKᵀ/divisor + M) V computed tile by tile.

    ``Q [n_q, d_k]``, ``K [n_k, d_k]``, ``V [n_k, d_v]``. The mask comes from ``causal=True``
    (query i sees keys j ≤ i), from ``window=w`` (causal sliding window: i − w < j ≤ i; only the
    :func:`window_key_tiles` are visited, so the work grows as n·w, not n²) or from
    ``allowed_fn(query_indices, key_indices) -> bool tile``; only one of them. ``divisor`` defaults
    to √d_k. Blocks need not divide n.
    """
    Q = np.asarray(Q, float)
    K = np.asarray(K, float)
    V = np.asarray(V, float)
    if Q.ndim != 2 or K.ndim != 2 or V.ndim != 2 or Q.shape[1] != K.shape[1] or K.shape[0] != V.shape[0]:
        raise ValueError("expected Q [n_q, d_k], K [n_k, d_k], V [n_k, d_v]")
    if block_q < 1 or block_k < 1:
        raise ValueError("block sizes must be positive")
    if sum((causal, allowed_fn is not None, window is not None)) > 1:
        raise ValueError("give only one of causal=True, window or allowed_fn")
    if window is not None:
        if int(window) < 1 or Q.shape[0] != K.shape[0]:
            raise ValueError("a sliding window needs window >= 1 and as many queries as keys")
        window = int(window)
        allowed_fn = window_allowed(window)
    if causal:
        allowed_fn = causal_allowed
    if divisor is None:
        divisor = math.sqrt(Q.shape[1])
    n_q, n_k, d_v = Q.shape[0], K.shape[0], V.shape[1]
    out = np.zeros((n_q, d_v))
    row_max, row_sum = np.full(n_q, -np.inf), np.zeros(n_q)  # [n_q] the statistics kept per row
    computed = skipped = biggest = 0
    for q0 in range(0, n_q, block_q):
        q1 = min(q0 + block_q, n_q)
        q_idx = np.arange(q0, q1)
        m = np.full(q1 - q0, -np.inf)  # [bq] running max
        denom = np.zeros(q1 - q0)  # [bq] running denominator (l in the papers)
        acc = np.zeros((q1 - q0, d_v))  # [bq, d_v] running numerator
        k_starts = range(0, n_k, block_k)
        if window is not None:  # tiles wholly outside the window are not even visited
            visible = window_key_tiles(q0, q1, n_k, block_k, window)
            skipped += len(k_starts) - len(visible)
            k_starts = visible
        for k0 in k_starts:
            k1 = min(k0 + block_k, n_k)
            if causal and future_tile(q1, k0):  # every key of this tile is in the future of every query
                skipped += 1
                continue
            s = Q[q0:q1] @ K[k0:k1].T / divisor  # [bq, bk] the only score tile in memory
            if allowed_fn is not None:
                tile_ok = np.asarray(allowed_fn(q_idx, np.arange(k0, k1)), bool)  # [bq, bk]
                if not tile_ok.any():
                    skipped += 1
                    continue
                s = np.where(tile_ok, s, -np.inf)
            computed += 1
            biggest = max(biggest, s.size)
            m, denom, acc = online_softmax_merge(m, denom, acc, s, V[k0:k1])
        out[q0:q1] = online_softmax_output(denom, acc)
        row_max[q0:q1], row_sum[q0:q1] = m, denom
    return TiledAttention(out, block_q, block_k, computed, skipped, biggest, row_max, row_sum)


def direct_attention(Q, K, V, causal: bool = False, divisor: float | None = None) -> np.ndarray:
    """The textbook computation with the whole ``[n_q, n_k]`` matrix, from the core steps. ``-> [n_q, d_v]``."""
    Q = np.asarray(Q, float)
    K = np.asarray(K, float)
    if divisor is None:
        divisor = math.sqrt(Q.shape[1])
    s = scale(raw_scores(Q, K), divisor)  # [n_q, n_k]
    if causal:
        if Q.shape[0] != K.shape[0]:
            raise ValueError("the causal mask needs as many queries as keys")
        s = apply_mask(s, build_mask("causal", Q.shape[0]))
    return weighted_sum(softmax(s), np.asarray(V, float))  # [n_q, d_v]

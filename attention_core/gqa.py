"""Grouped-query attention (GQA): several query heads share one key/value head.

With ``h`` query heads and ``g`` key/value heads (``g`` divides ``h``), query head ``j`` reads KV
head ``j // (h/g)``. ``g = h`` is ordinary multi-head attention (MHA), ``g = 1`` is multi-query
attention (MQA). The scores, softmax and weighted sum are the usual steps of
:mod:`attention_core.steps`, run after each KV head is repeated for the query heads that read it;
only K and V (and so the KV cache) are ``h/g`` times smaller.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import steps


def group_size(n_heads: int, n_kv_heads: int) -> int:
    """How many query heads share one KV head: ``h / g`` (an error unless ``g`` divides ``h``)."""
    if n_heads < 1 or n_kv_heads < 1:
        raise ValueError("the numbers of query heads and of key/value heads must be at least 1")
    if n_heads % n_kv_heads:
        raise ValueError(
            f"the number of query heads ({n_heads}) must be a multiple of the key/value heads ({n_kv_heads})"
        )
    return n_heads // n_kv_heads


def kv_head_of(n_heads: int, n_kv_heads: int) -> np.ndarray:
    """The KV head each query head reads: ``-> [h]`` with entry ``j // (h/g)``."""
    return np.arange(n_heads) // group_size(n_heads, n_kv_heads)


def query_heads_of(n_heads: int, n_kv_heads: int) -> tuple[tuple[int, ...], ...]:
    """The query heads that share each KV head: ``g`` tuples of ``h/g`` head numbers."""
    owner = kv_head_of(n_heads, n_kv_heads)
    return tuple(tuple(int(j) for j in np.flatnonzero(owner == k)) for k in range(n_kv_heads))


def expand_kv(KV: np.ndarray, n_heads: int) -> np.ndarray:
    """Repeat each KV head for the query heads that read it: ``[g, n, d] -> [h, n, d]`` (a copy)."""
    KV = np.asarray(KV)
    return KV[kv_head_of(n_heads, KV.shape[0])]


def kv_memory_ratio(n_heads: int, n_kv_heads: int) -> float:
    """K and V stored with GQA, as a fraction of what MHA would store: ``g / h``."""
    group_size(n_heads, n_kv_heads)
    return n_kv_heads / n_heads


@dataclass(frozen=True)
class GroupedAttention:
    """The steps of grouped attention for ``h`` query heads over ``g`` KV heads.

    ``scores_raw``/``scores_scaled``/``weights``: ``[h, n_q, n_k]``; ``head_outputs``: ``[h, n_q, d_v]``;
    ``kv_head_of``: ``[h]``.
    """

    scores_raw: np.ndarray
    scores_scaled: np.ndarray
    weights: np.ndarray
    head_outputs: np.ndarray
    kv_head_of: np.ndarray


def grouped_attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, allowed: np.ndarray | None, divisor: float
) -> GroupedAttention:
    """Scaled dot-product attention with shared KV heads.

    ``Q [h, n_q, d_k]``, ``K [g, n_k, d_k]``, ``V [g, n_k, d_v]``, ``allowed [n_q, n_k]`` bool (None:
    every key allowed) -> :class:`GroupedAttention`. Query head ``j`` uses ``K[j // (h/g)]`` and
    ``V[j // (h/g)]``.
    """
    h = Q.shape[0]
    if K.shape[0] != V.shape[0]:
        raise ValueError("K and V must have the same number of heads")
    owner = kv_head_of(h, K.shape[0])
    raw = steps.raw_scores(Q, expand_kv(K, h))  # [h, n_q, n_k]
    scaled = steps.scale(raw, divisor)
    masked = scaled if allowed is None else steps.apply_mask(scaled, allowed)
    # steps.softmax returns float64 for float32 scores; the weights keep the scores' dtype, so that
    # float32 models stay float32 (a float64 operand would make every later product convert a matrix).
    weights = steps.softmax(masked).astype(scaled.dtype, copy=False)  # [h, n_q, n_k]
    outputs = steps.weighted_sum(weights, expand_kv(V, h))  # [h, n_q, d_v]
    return GroupedAttention(
        scores_raw=raw, scores_scaled=scaled, weights=weights, head_outputs=outputs, kv_head_of=owner
    )

"""The KV cache: the keys and values of the tokens seen so far, kept so the next token costs one row.

When a decoder generates text it appends one token at a time. A causal mask means earlier tokens
never look at later ones, so their keys and values never change: each layer keeps them, and the
new token only computes its own q, k and v, appends k and v, and attends with one query row
against every cached key. The result is the same as running the whole sequence again (the last
row of the causal weights), for a fraction of the work.

The cache holds ``2 · layers · n · kv_heads · d_k`` numbers (K and V; ``d_v = d_k`` here): with
grouped-query attention only the ``kv_heads`` KV heads are stored, not one per query head.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from .arrays import read_only
from .gqa import GroupedAttention, grouped_attention
from .steps import window_start


def cache_bytes(n_layers: int, n_tokens: int, n_kv_heads: int, d_k: int, bytes_per_value: int) -> int:
    """Size of a KV cache: ``2 · layers · n · kv_heads · d_k · bytes`` (the 2 counts K and V)."""
    for name, value in (
        ("n_layers", n_layers), ("n_tokens", n_tokens), ("n_kv_heads", n_kv_heads),
        ("d_k", d_k), ("bytes_per_value", bytes_per_value),
    ):  # fmt: skip
        if value < 0:
            raise ValueError(f"{name} must not be negative")
    return 2 * n_layers * n_tokens * n_kv_heads * d_k * bytes_per_value


def windowed_cache_bytes(
    n_tokens: int, layer_windows: tuple[int | None, ...], n_kv_heads: int, d_k: int, bytes_per_value: int
) -> int:
    """Size of a KV cache when some layers have a sliding window: ``2 · Σ_l min(n, w_l) · kv_heads · d_k · bytes``.

    ``layer_windows``: one entry per layer, the window (a local layer keeps at most that many
    tokens' keys and values) or None (a global layer keeps all ``n``). With no window anywhere this
    is :func:`cache_bytes`. Gemma 3 270M at 8,192 tokens, float32: 15 local layers × 512 tokens +
    3 global layers × 8,192 tokens, times 2 · 1 · 256 · 4 bytes.
    """
    if n_tokens < 0 or n_kv_heads < 0 or d_k < 0 or bytes_per_value < 0:
        raise ValueError("sizes must not be negative")
    if any(w is not None and w < 1 for w in layer_windows):
        raise ValueError("a window must hold at least 1 token")
    kept = sum(n_tokens if w is None else min(n_tokens, w) for w in layer_windows)
    return 2 * kept * n_kv_heads * d_k * bytes_per_value


_ro = partial(read_only, contiguous=True)  # C order keeps the products on the BLAS fast path


@dataclass(frozen=True)
class LayerCache:
    """One layer's cached keys and values: ``K [g, n, d_k]``, ``V [g, n, d_v]`` (read-only).

    ``start``: the position of the oldest cached token. It is 0 unless a sliding window has
    dropped older keys (:func:`keep_window`); the cache then holds positions ``start .. end - 1``.
    """

    K: np.ndarray
    V: np.ndarray
    start: int = 0

    def __post_init__(self) -> None:
        if self.K.ndim != 3 or self.V.ndim != 3 or self.K.shape[:2] != self.V.shape[:2]:
            raise ValueError("K and V must be [kv_heads, n, d] with the same kv_heads and n")
        if self.start < 0:
            raise ValueError("start must not be negative")
        object.__setattr__(self, "K", _ro(self.K))
        object.__setattr__(self, "V", _ro(self.V))

    @property
    def length(self) -> int:
        """Tokens held (after any dropped by a window)."""
        return int(self.K.shape[1])

    @property
    def end(self) -> int:
        """Tokens seen: the position the next token will take."""
        return self.start + self.length

    @property
    def nbytes(self) -> int:
        return int(self.K.nbytes + self.V.nbytes)


@dataclass(frozen=True)
class KVCache:
    """The cache of every layer. All layers have seen the same tokens (a layer with a sliding
    window may hold fewer of them)."""

    layers: tuple[LayerCache, ...]

    def __post_init__(self) -> None:
        if len({c.end for c in self.layers}) > 1:
            raise ValueError("every layer of a KV cache must have seen the same number of tokens")

    @property
    def length(self) -> int:
        """Tokens seen (0 for an empty cache): the position of the next token."""
        return self.layers[0].end if self.layers else 0

    @property
    def nbytes(self) -> int:
        """Bytes held: ``2 · layers · n · kv_heads · d_k · bytes`` when ``d_v = d_k``."""
        return sum(c.nbytes for c in self.layers)


def empty_layer_cache(n_kv_heads: int, d_k: int, d_v: int | None = None, dtype=np.float32) -> LayerCache:
    """A layer cache with no tokens yet: ``K [g, 0, d_k]``, ``V [g, 0, d_v]``."""
    d_v = d_k if d_v is None else d_v
    return LayerCache(K=np.zeros((n_kv_heads, 0, d_k), dtype), V=np.zeros((n_kv_heads, 0, d_v), dtype))


def empty_cache(
    n_layers: int, n_kv_heads: int, d_k: int, d_v: int | None = None, dtype=np.float32
) -> KVCache:
    """A cache of ``n_layers`` empty layers."""
    return KVCache(tuple(empty_layer_cache(n_kv_heads, d_k, d_v, dtype) for _ in range(n_layers)))


def append_kv(cache: LayerCache, K_new: np.ndarray, V_new: np.ndarray) -> LayerCache:
    """Add the new tokens' keys and values after the cached ones (a new cache; the old one is kept).

    ``K_new [g, m, d_k]``, ``V_new [g, m, d_v]`` -> a cache of ``n + m`` tokens.
    """
    if K_new.shape[0] != cache.K.shape[0] or K_new.shape[2] != cache.K.shape[2]:
        raise ValueError(f"new keys must be [{cache.K.shape[0]}, m, {cache.K.shape[2]}], got {K_new.shape}")
    if V_new.shape[0] != cache.V.shape[0] or V_new.shape[2] != cache.V.shape[2]:
        raise ValueError(f"new values must be [{cache.V.shape[0]}, m, {cache.V.shape[2]}], got {V_new.shape}")
    return LayerCache(
        K=np.concatenate([cache.K, K_new.astype(cache.K.dtype, copy=False)], axis=1),
        V=np.concatenate([cache.V, V_new.astype(cache.V.dtype, copy=False)], axis=1),
        start=cache.start,
    )


def keep_window(cache: LayerCache, window: int) -> LayerCache:
    """Drop the keys and values older than the ``window`` newest (a sliding-window layer's cache).

    A query at position ``p`` reads keys from ``window_start(p, window) = p - window + 1`` on; the
    newest cached token is at ``end - 1`` and every later query is further on, so the keys before
    ``window_start(end - 1, window)`` are never read again. ``-> a cache of min(n, window) tokens``
    (a view of the kept rows, no copy).
    """
    if window < 1:
        raise ValueError("the window must hold at least 1 token")
    drop = max(0, window_start(cache.end - 1, window) - cache.start)
    if drop == 0:
        return cache
    return LayerCache(K=cache.K[:, drop:], V=cache.V[:, drop:], start=cache.start + drop)


def decode_attention(q_new: np.ndarray, cache: LayerCache, divisor: float) -> GroupedAttention:
    """The new token's query rows against every cached key (its own key already appended).

    ``q_new [h, m, d_k]`` for the last ``m`` positions of the cache, ``cache`` of ``n`` tokens ->
    :class:`~attention_core.gqa.GroupedAttention` with ``weights [h, m, n]``. For ``m = 1`` no mask is
    needed: the newest token may look at every cached token, itself included. For ``m > 1`` the
    causal mask between the new positions applies (row ``r`` sees keys ``0 .. n-m+r``).
    """
    m, n = q_new.shape[1], cache.length
    if not 1 <= m <= n:
        raise ValueError("the cache must already hold the new tokens' keys and values")
    allowed = None
    if m > 1:
        allowed = np.arange(n)[None, :] <= (n - m + np.arange(m))[:, None]  # [m, n]
    return grouped_attention(q_new, cache.K, cache.V, allowed, divisor)

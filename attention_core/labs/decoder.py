"""What the decoder page shows beyond the model's own trace: per-head summaries, RoPE's offset curve,
the KV cache's size with and without GQA, and the seeded choice of the next token.

Everything here reads a :class:`attention_core.models.smollm2.DecoderTrace` (or its arrays) and
reuses the core's RoPE, GQA and KV-cache functions; nothing is computed a second way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..gqa import kv_memory_ratio
from ..kv_cache import cache_bytes
from ..models.llama import next_token_probs, pick_token
from ..rope import apply_rope, pair_norms
from ..steps import window_allowed

HEAD_STATS = ("first", "previous", "distance", "entropy")


def _query_rows(n: int) -> slice:
    """Rows a summary averages over: every query but the first, which can only read itself."""
    return slice(1, n) if n > 1 else slice(0, n)


def head_summary(weights: np.ndarray, stat: str) -> np.ndarray:
    """One number per head of causal weights ``[..., h, n, n] -> [..., h]``, averaged over query rows 1..n-1.

    ``first``: the weight on token 0; ``previous``: the weight on the token just before the query;
    ``distance``: the mean look-back distance Σ_j w_ij (i − j) in tokens; ``entropy``: the row's
    entropy −Σ_j w_ij ln w_ij in nats (0: one key takes everything). With one token only row 0 is used.
    """
    if stat not in HEAD_STATS:
        raise ValueError(f"stat must be one of {HEAD_STATS}, got {stat!r}")
    w = np.asarray(weights, dtype=np.float64)
    n = w.shape[-1]
    rows = _query_rows(n)
    if stat == "first":
        per_row = w[..., :, 0]
    elif stat == "previous":
        i = np.arange(n)
        per_row = np.where(i > 0, w[..., i, np.maximum(i - 1, 0)], 0.0)
    elif stat == "distance":
        offset = np.arange(n)[:, None] - np.arange(n)[None, :]  # i − j
        per_row = np.sum(w * np.maximum(offset, 0), axis=-1)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(w > 0, w * np.log(np.where(w > 0, w, 1.0)), 0.0)
        per_row = -np.sum(terms, axis=-1)
    return per_row[..., rows].mean(axis=-1)


def layer_head_grid(trace, stat: str) -> np.ndarray:
    """:func:`head_summary` of every layer and head of a trace: ``-> [n_layers, n_heads]``."""
    return np.stack([head_summary(layer.weights, stat) for layer in trace.layers])


@dataclass(frozen=True)
class RopeOffsetCurve:
    """One query vector and one key vector before RoPE, rotated to many position pairs.

    ``scores [starts, offsets]``: ``rope(q, s + o) · rope(k, s)`` for key position ``s = starts[a]``
    and offset ``o = offsets[b]``; every row is the same curve (up to rounding), because the score
    depends only on the offset. ``unrotated``: ``q · k`` without RoPE (the value at offset 0).
    """

    offsets: np.ndarray
    starts: np.ndarray
    scores: np.ndarray
    unrotated: float

    @property
    def spread(self) -> float:
        """The largest difference between any two rows at one offset (0 in exact arithmetic); not
        only the differences from the first row, which can be half as large."""
        return float((self.scores.max(axis=0) - self.scores.min(axis=0)).max())


def max_pair_norm_change(before: np.ndarray, after: np.ndarray, layout: str = "interleaved") -> float:
    """The largest change in the length of any coordinate pair between ``before`` and ``after`` RoPE
    ``[..., d]`` (0 in exact arithmetic: a rotation keeps lengths). ``layout``: which coordinates
    form a pair (``"interleaved"``: (2i, 2i+1), SmolLM2; ``"half"``: (i, i + d/2), Gemma 3)."""
    b, a = np.asarray(before, np.float64), np.asarray(after, np.float64)
    return float(np.abs(pair_norms(b, layout) - pair_norms(a, layout)).max())


def rope_offset_curve(
    q_pre: np.ndarray, k_pre: np.ndarray, offsets: np.ndarray, starts: np.ndarray, base: float,
    layout: str = "interleaved",
) -> RopeOffsetCurve:  # fmt: skip
    """``q_pre [d]``, ``k_pre [d]`` -> the raw score at each (key position, offset), see :class:`RopeOffsetCurve`."""
    q = np.asarray(q_pre, dtype=np.float64)
    k = np.asarray(k_pre, dtype=np.float64)
    offsets = np.asarray(offsets, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    scores = np.empty((starts.size, offsets.size))
    for a, s in enumerate(starts):
        q_rot = apply_rope(np.broadcast_to(q, (offsets.size, q.size)), s + offsets, base, layout)
        k_rot = apply_rope(k[None, :], np.array([s]), base, layout)[0]
        scores[a] = q_rot @ k_rot
    for arr in (offsets, starts, scores):
        arr.setflags(write=False)
    return RopeOffsetCurve(offsets=offsets, starts=starts, scores=scores, unrotated=float(q @ k))


@dataclass(frozen=True)
class KVMemory:
    """Bytes of the KV cache at ``n_tokens``: as stored (``g`` KV heads) and as multi-head attention
    with one K and V per query head (``h`` heads) would store them; ``ratio = mha / gqa = h / g``."""

    n_tokens: int
    gqa_bytes: int
    mha_bytes: int
    ratio: float


def kv_memory(config, n_tokens: int, bytes_per_value: int = 4) -> KVMemory:
    """The cache of ``n_tokens`` for a Llama config (float32 values: 4 bytes each, as this code stores them)."""
    gqa = cache_bytes(config.n_layers, n_tokens, config.n_kv_heads, config.head_dim, bytes_per_value)
    mha = cache_bytes(config.n_layers, n_tokens, config.n_heads, config.head_dim, bytes_per_value)
    return KVMemory(n_tokens, gqa, mha, 1.0 / kv_memory_ratio(config.n_heads, config.n_kv_heads))


def step_rng(seed: int, step: int) -> np.random.Generator:
    """The generator of generated token number ``step`` (0 = the first): ``default_rng([seed, step])``,
    so a token depends only on the seed, its step and the distribution, not on earlier draws."""
    return np.random.default_rng([int(seed), int(step)])


def choose_next(logits: np.ndarray, temperature: float, top_k: int, seed: int, step: int) -> int:
    """The token generation appends: greedy at temperature 0, else one seeded draw from
    :func:`next_token_probs` (``softmax(logits / T)`` over the ``top_k`` best, 0 = all)."""
    probs = next_token_probs(logits, temperature, top_k)
    return pick_token(probs, None if temperature == 0 else step_rng(seed, step))


def weight_outside_window(weights: np.ndarray, window: int | None) -> float:
    """The largest attention weight a query gives a key ``window`` or more positions back
    (``weights [h, n, n]``; 0 when a local layer's band holds; 0 for ``window`` None by definition,
    as a global layer has no band). Checks a trace's weights against its layer's window."""
    w = np.asarray(weights, dtype=np.float64)
    if window is None:
        return 0.0
    positions = np.arange(w.shape[-1])
    far = window_allowed(positions, positions) & ~window_allowed(positions, positions, window)  # [n, n]
    return float(w[..., far].max()) if far.any() else 0.0


def keys_read_per_query(weights: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """``weights [h, n, n]`` -> ``[n]``: for each query row, how many keys get a weight above ``tol``
    in any head (a local layer's count stops at its window; a global layer's grows to ``i + 1``)."""
    w = np.asarray(weights, dtype=np.float64)
    return (w > tol).any(axis=0).sum(axis=-1)


@dataclass(frozen=True)
class ScoreBound:
    """Cauchy–Schwarz: a scaled score ``q·k / divisor`` lies within ``±bound`` with
    ``bound = max|q| · max|k| / divisor`` (lengths entering the scores). ``largest``: the largest
    ``|score|`` the trace holds; ``holds``: ``largest <= bound`` (plus rounding)."""

    bound: float
    largest: float
    holds: bool


def dropped_detail_bytes(config, n: int) -> dict[str, int]:
    """Bytes (float32) of what a long prompt's trace does not keep, over all layers: the raw and the
    scaled scores together (``2 · layers · heads · n²`` numbers) and the rotated queries
    (``layers · heads · n · head_dim``)."""
    per = config.n_layers * config.n_heads * 4
    return {"scores": 2 * per * n * n, "q": per * n * config.head_dim}


def norm_length_cap(gain: np.ndarray) -> float:
    """The longest a head vector can be after an RMSNorm with per-coordinate gains ``gain [d]``, for any
    input: ``‖g ⊙ x / rms(x)‖ ≤ max|g| · ‖x‖ / rms(x) = √d · max|g|`` (ε only shortens it)."""
    g = np.asarray(gain, dtype=np.float64)
    return float(np.sqrt(g.size) * np.max(np.abs(g)))


def score_bound(
    q_lengths: np.ndarray, k_lengths: np.ndarray, score_range: np.ndarray, divisor: float
) -> ScoreBound:
    """``q_lengths [h, n]``, ``k_lengths [g, n]``, ``score_range [h, 2]`` (min, max) -> :class:`ScoreBound`."""
    bound = float(np.max(q_lengths)) * float(np.max(k_lengths)) / float(divisor)
    largest = float(np.max(np.abs(np.asarray(score_range, dtype=np.float64))))
    return ScoreBound(bound=bound, largest=largest, holds=largest <= bound * (1 + 1e-5) + 1e-6)

"""One small pure function per step of scaled dot-product attention.

Shapes use n = tokens, h = heads, d_model, d_k, d_v. Multi-head arrays carry the head first.
Where a shape starts with ``...``, leading batch axes are allowed (the training lab runs a whole
batch through the same steps); the playground's trace has none.
"""

from __future__ import annotations

import numpy as np

from .config import MASK_KINDS


def project(X: np.ndarray, W: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """Linear projection per head, with one matrix per head.

    ``[..., n, d_model] @ [h, d_model, d] (+ [h, d]) -> [..., h, n, d]`` (leading batch axes allowed)
    """
    out = project_heads(X, merge_head_weights(W), W.shape[0])
    if b is not None:
        out = out + b[:, None, :]
    return out


def project_heads(X: np.ndarray, W: np.ndarray, heads: int) -> np.ndarray:
    """Every head's projection as one product, cut into head slices.

    ``[..., n, d_model] @ [d_model, h*d] -> [..., h, n, d]``: head ``k`` gets columns ``k*d .. (k+1)*d - 1``
    of ``W``. The same sums as one product per head, in a fraction of the time on a batch. Weights
    stored ``[h*d, d_model]`` (PyTorch, GGUF) come in as ``W.T``, a view: no copy.
    """
    return split_heads(X @ W, heads)


def merge_head_weights(W: np.ndarray) -> np.ndarray:
    """Every head's matrix side by side, head 0's columns first: ``[h, d_model, d] -> [d_model, h*d]``."""
    h, d_model, d = W.shape
    return np.swapaxes(W, 0, 1).reshape(d_model, h * d)


def raw_scores(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Every query against every key: ``[..., h, n_q, d_k], [..., h, n_k, d_k] -> [..., h, n_q, n_k]``."""
    return Q @ np.swapaxes(K, -1, -2)


def scale(scores: np.ndarray, divisor: float) -> np.ndarray:
    """Divide the scores (before softmax, never after): ``[..., n_q, n_k] -> same``."""
    return scores / divisor


def build_mask(kind: str, n: int, n_pad: int = 0) -> np.ndarray:
    """Boolean mask ``[n, n]``: entry [i, j] is True when query i may attend to key j.

    ``causal`` allows j <= i; ``padding`` forbids the last ``n_pad`` keys (the [PAD] tokens) for
    every query, as an encoder does. Pad *queries* keep their rows: they are computed in every layer
    like any other position, and a model drops their outputs only at the loss or the pooling.
    """
    if kind not in MASK_KINDS:
        raise ValueError(f"unknown mask kind {kind!r}")
    if not 0 <= n_pad <= n:
        raise ValueError("n_pad must be between 0 and n")
    allowed = np.ones((n, n), dtype=bool)
    if "causal" in kind:
        allowed &= np.tril(np.ones((n, n), dtype=bool))
    if "padding" in kind and n_pad:
        allowed[:, n - n_pad :] = False
    return allowed


def window_start(position, window: int):
    """The oldest key a query at ``position`` reads under a causal sliding window of ``window`` keys
    (itself included): ``position - window + 1``, so that it reads keys ``position - window < j <= position``.

    The sliding window's rule is written here only; the masks (:func:`window_allowed`), the tiled
    algorithm's key tiles and a local layer's KV cache all take it from here. Works on integers and
    on arrays of positions alike; the result may be negative (then the window reaches back to key 0).
    """
    return position - window + 1


def window_allowed(q_positions: np.ndarray, k_positions: np.ndarray, window: int | None = None) -> np.ndarray:
    """Which keys each query may read: causal, and within a sliding window of ``window`` keys when one is given.

    ``[n_q], [n_k] -> [n_q, n_k]`` bool over the tokens' positions: entry ``[i, j]`` is True when
    ``window_start(q_i, window) <= k_j <= q_i``, i.e. ``q_i - window < k_j <= q_i`` (``window`` None:
    ``k_j <= q_i``, the causal mask). A query always reads its own key.
    """
    q = np.asarray(q_positions)[:, None]  # [n_q, 1]
    k = np.asarray(k_positions)[None, :]  # [1, n_k]
    allowed = k <= q
    if window is not None:
        allowed &= k >= window_start(q, window)
    return allowed


def additive_mask(allowed: np.ndarray) -> np.ndarray:
    """The matrix M of the formula: 0 where allowed, −∞ where masked. ``[n_q, n_k]``."""
    return np.where(allowed, 0.0, -np.inf)


def apply_mask(scores: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Scores + M: masked entries become −∞. ``[..., n_q, n_k], [n_q, n_k] -> [..., n_q, n_k]``.

    ``np.where`` rather than ``+ M`` so that a +∞ score under the mask cannot become NaN.
    """
    return np.where(allowed, scores, -np.inf)


def softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax over the last axis, where −∞ means "masked".

    ``[..., n_q, n_k] -> [..., n_q, n_k]``. Masked entries get exactly 0. A row whose entries are
    all −∞ (every key masked) gets all zeros rather than 0/0 = NaN. A row containing +∞ (an
    overflow) shares its weight equally between those entries, which is the limit softmax tends to.
    """
    row_max = np.max(scores, axis=-1, keepdims=True)
    empty = np.isneginf(row_max)  # every key masked
    has_posinf = np.isposinf(row_max)
    # Subtract the row max so the largest exponent is exp(0) = 1: no overflow, same result.
    safe_max = np.where(empty | has_posinf, 0.0, row_max)
    # over="ignore": a finite score far below the max (e.g. -1e308 - 1e308) overflows to -inf, whose
    # exp is the correct 0; NumPy would otherwise print a RuntimeWarning to the learner's console.
    with np.errstate(invalid="ignore", over="ignore"):
        shifted = scores - safe_max  # a new array: exp and the division below reuse it in place
        if has_posinf.any():  # rare: only then the +∞ entries' equal shares (a full-size where each)
            shifted = np.where(has_posinf, np.where(np.isposinf(scores), 0.0, -np.inf), shifted)
    if not np.issubdtype(shifted.dtype, np.floating):  # integer scores: exp needs a float array
        shifted = shifted.astype(np.float64)
    exp = np.exp(shifted, out=shifted)
    total = np.sum(exp, axis=-1, keepdims=True)
    if empty.any():
        return np.where(empty, 0.0, exp / np.where(empty, 1.0, total))
    return np.divide(exp, total, out=exp)  # same numbers as above, without two more n × n arrays


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """The log of :func:`softmax` over the last axis, in float64: ``[..., V] -> [..., V]``.

    Computed as ``z - log Σ exp(z)`` with the row max subtracted first, so that no exponent
    overflows and a tiny probability keeps its log instead of becoming log 0.
    """
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)  # the largest exponent is exp(0): no overflow
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def weighted_sum(weights: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Each output row is a weighted average of value rows: ``[..., h, n_q, n_k], [..., h, n_k, d_v] -> [..., h, n_q, d_v]``."""
    return weights @ V


def split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """Cut the feature axis into equal head slices: ``[..., n, h*d] -> [..., h, n, d]``."""
    *lead, n, width = x.shape
    if width % heads:
        raise ValueError("the feature size must be a multiple of heads")
    return np.swapaxes(x.reshape(*lead, n, heads, width // heads), -2, -3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """Concatenate the heads side by side: ``[..., h, n, d_v] -> [..., n, h*d_v]`` (head 0's columns first)."""
    *lead, h, n, d = x.shape
    return np.swapaxes(x, -2, -3).reshape(*lead, n, h * d)


def output_projection(concat: np.ndarray, W_O: np.ndarray, b_O: np.ndarray | None = None) -> np.ndarray:
    """Mix the heads back into d_model features: ``[..., n, h*d_v] @ [h*d_v, d_model] -> [..., n, d_model]``."""
    out = concat @ W_O
    if b_O is not None:
        out = out + b_O
    return out

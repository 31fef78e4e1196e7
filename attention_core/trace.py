"""Run every step and keep every intermediate in one frozen trace."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from . import steps
from .arrays import read_only
from .config import PAD_TOKEN, AttentionConfig, AttentionConfigError
from .embeddings import embed
from .tokenizer import DEFAULT_MAX_TOKENS, Tokenization, tokenize_sentence


def _frozen(a: np.ndarray, copy: bool = False) -> np.ndarray:
    """Mark an array read-only, so a cached trace cannot be changed by whoever reads it.

    Arrays the caller handed in are copied first (``copy=True``) so the trace never aliases
    them; intermediates made here are frozen in place, which keeps the trace cheap.
    """
    return read_only(a, copy=copy)


@dataclass(frozen=True)
class AttentionParams:
    """The learned matrices of one multi-head attention layer (biases optional).

    W_Q, W_K: ``[h, d_model, d_k]``; W_V: ``[h, d_model, d_v]``; W_O: ``[h*d_v, d_model]``.
    """

    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    b_Q: np.ndarray | None = None  # [h, d_k]
    b_K: np.ndarray | None = None  # [h, d_k]
    b_V: np.ndarray | None = None  # [h, d_v]
    b_O: np.ndarray | None = None  # [d_model]

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                object.__setattr__(self, f.name, _frozen(value, copy=True))
        h, d_model, _ = self.W_Q.shape
        if self.W_K.shape != self.W_Q.shape:
            raise ValueError("W_K must have the same shape as W_Q")
        if self.W_V.shape[:2] != (h, d_model):
            raise ValueError("W_V must be [heads, d_model, d_v]")
        if self.W_O.shape != (h * self.W_V.shape[2], d_model):
            raise ValueError("W_O must be [heads * d_v, d_model]")


def init_params(config: AttentionConfig) -> AttentionParams:
    """Draw W_Q, W_K, W_V, W_O from ``default_rng(config.seed)``, in that order.

    Entries are normal with standard deviation 1/√fan_in (1/√d_model for W_Q, W_K, W_V and
    1/√(h·d_v) for W_O): with unit-variance inputs, every projection then has unit-variance
    entries, so the effect of the √d_k scaling is the one the theory predicts.
    """
    rng = np.random.default_rng(config.seed)
    h, d, d_k, d_v = config.heads, config.d_model, config.head_dim_k, config.head_dim_v
    W_Q = rng.standard_normal((h, d, d_k)) / np.sqrt(d)
    W_K = rng.standard_normal((h, d, d_k)) / np.sqrt(d)
    W_V = rng.standard_normal((h, d, d_v)) / np.sqrt(d)
    W_O = rng.standard_normal((h * d_v, d)) / np.sqrt(h * d_v)
    return AttentionParams(W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O)


def _param(name: str) -> property:
    """A read-only property that is ``self.params.<name>``: a trace's weight matrix is its parameters'."""

    def weight(self) -> np.ndarray:
        return getattr(self.params, name)

    return property(weight, doc=f"``params.{name}``")


@dataclass(frozen=True)
class AttentionTrace:
    """Every intermediate of one multi-head self-attention pass. All arrays are read-only.

    Per-head arrays have the head first: Q ``[h, n, d_k]``, scores ``[h, n, n]`` and so on.
    """

    tokens: tuple[str, ...]  # n labels, [PAD] tokens included
    n_pad: int  # how many of the tokens are trailing [PAD]s
    config: AttentionConfig | None  # None for inputs that did not come from a config
    divisor: float
    X: np.ndarray  # [n, d_model] input rows (token vector + position)
    params: AttentionParams
    Q: np.ndarray  # [h, n, d_k]
    K: np.ndarray  # [h, n, d_k]
    V: np.ndarray  # [h, n, d_v]
    scores_raw: np.ndarray  # [h, n, n] Q Kᵀ
    scores_scaled: np.ndarray  # [h, n, n] Q Kᵀ / divisor
    mask: np.ndarray  # [n, n] bool, True = may attend
    scores_masked: np.ndarray  # [h, n, n] scaled scores, −∞ where masked
    weights: np.ndarray  # [h, n, n] softmax rows
    fully_masked_rows: np.ndarray  # [n] bool: query rows with no allowed key (weights and output 0)
    head_outputs: np.ndarray  # [h, n, d_v] weights @ V
    concat: np.ndarray  # [n, h*d_v] heads side by side
    output: np.ndarray  # [n, d_model] concat @ W_O
    tokenization: Tokenization | None = field(default=None, compare=False)

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def heads(self) -> int:
        return self.Q.shape[-3]

    # The layer's weights, read through to ``params`` (shapes: :class:`AttentionParams`).
    W_Q = _param("W_Q")
    W_K = _param("W_K")
    W_V = _param("W_V")
    W_O = _param("W_O")


def attend(
    X: np.ndarray,
    params: AttentionParams,
    allowed: np.ndarray,
    divisor: float,
    tokens: tuple[str, ...] | None = None,
    n_pad: int = 0,
    config: AttentionConfig | None = None,
    tokenization: Tokenization | None = None,
) -> AttentionTrace:
    """Multi-head self-attention on X, keeping every step.

    ``X [n, d_model]``, ``allowed [n, n]`` (True = may attend) and a positive ``divisor``. X may
    carry leading batch axes ``[..., n, d_model]`` (the training lab's batches); every per-token
    array of the trace then carries them too, and the mask is shared by the batch.
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[-2]
    allowed = np.asarray(allowed, dtype=bool)
    if allowed.shape != (n, n):
        raise ValueError(f"the mask must be {n}x{n}")
    if tokens is None:
        tokens = tuple(str(i) for i in range(n))
    if len(tokens) != n:
        raise ValueError("one token label per row of X is needed")

    Q = steps.project(X, params.W_Q, params.b_Q)  # [h, n, d_k]
    K = steps.project(X, params.W_K, params.b_K)  # [h, n, d_k]
    V = steps.project(X, params.W_V, params.b_V)  # [h, n, d_v]
    raw = steps.raw_scores(Q, K)  # [h, n, n]
    scaled = steps.scale(raw, divisor)  # [h, n, n]
    masked = steps.apply_mask(scaled, allowed)  # [h, n, n]
    weights = steps.softmax(masked)  # [h, n, n]
    head_out = steps.weighted_sum(weights, V)  # [h, n, d_v]
    concat = steps.merge_heads(head_out)  # [n, h*d_v]
    output = steps.output_projection(concat, params.W_O, params.b_O)  # [n, d_model]

    return AttentionTrace(
        tokens=tuple(tokens),
        n_pad=n_pad,
        config=config,
        divisor=float(divisor),
        X=_frozen(X, copy=True),
        params=params,
        Q=_frozen(Q),
        K=_frozen(K),
        V=_frozen(V),
        scores_raw=_frozen(raw),
        scores_scaled=_frozen(scaled),
        mask=_frozen(allowed, copy=True),
        scores_masked=_frozen(masked),
        weights=_frozen(weights),
        fully_masked_rows=_frozen(~allowed.any(axis=1)),
        head_outputs=_frozen(head_out),
        concat=_frozen(concat),
        output=_frozen(output),
        tokenization=tokenization,
    )


def trace_tokens(
    tokens: tuple[str, ...], config: AttentionConfig, tokenization: Tokenization | None = None
) -> AttentionTrace:
    """Attention over given sentence tokens; ``config.pad`` [PAD] tokens are appended."""
    if not tokens:
        raise AttentionConfigError("There are no tokens: type at least one word.")
    all_tokens = tuple(tokens) + (PAD_TOKEN,) * config.pad
    X = embed(all_tokens, config.d_model, config.seed, config.positional)  # [n, d_model]
    allowed = steps.build_mask(config.mask, len(all_tokens), config.pad)  # [n, n]
    return attend(
        X,
        init_params(config),
        allowed,
        config.divisor,
        tokens=all_tokens,
        n_pad=config.pad,
        config=config,
        tokenization=tokenization,
    )


def trace_text(text: str, config: AttentionConfig, max_tokens: int = DEFAULT_MAX_TOKENS) -> AttentionTrace:
    """Tokenize ``text`` (keeping at most ``max_tokens``) and trace attention over it.

    Raises :class:`AttentionConfigError` for blank text; truncation is reported in
    ``trace.tokenization`` rather than refused.
    """
    tok = tokenize_sentence(text, max_tokens=max_tokens)
    return trace_tokens(tok.tokens, config, tokenization=tok)

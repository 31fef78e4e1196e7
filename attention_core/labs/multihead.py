"""Lab "Multi-head attention": what splitting into h heads costs and what it does.

Counting convention (used throughout): **FLOPs = 2 × multiply-adds**. A matrix product
``[m, k] @ [k, p]`` costs m·k·p multiply-adds (MACs) = 2·m·k·p FLOPs. Softmax is not a matmul;
it is counted approximately as :data:`SOFTMAX_FLOPS_PER_ELEMENT` operations per score (row max,
subtract, exp, row sum, divide) and the ÷divisor step as 1 operation per score. Biases are left out
unless ``bias=True``. Everything is per sequence of n tokens, one layer, no batch.

With d_k = d_v = d_model / h:

- projections Q, K, V: 3 · 2·n·d_model·(h·d_k) = 6·n·d_model²           (independent of h)
- scores QKᵀ:   h · 2·n·n·d_k = 2·n²·d_model                           (independent of h)
- weights · V:  h · 2·n·n·d_v = 2·n²·d_model                           (independent of h)
- output W^O:   2·n·(h·d_v)·d_model = 2·n·d_model²                     (independent of h)
- softmax and scaling: h·n² elements each — these *do* grow with h (one n×n matrix per head),
  and so does the memory for the attention weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrays import read_only
from ..config import AttentionConfig
from ..steps import split_heads
from ..tokenizer import DEFAULT_MAX_TOKENS
from ..trace import AttentionTrace, trace_text

SOFTMAX_FLOPS_PER_ELEMENT = 5


_ro = read_only


def matmul_flops(m: int, k: int, p: int) -> int:
    """FLOPs of ``[m, k] @ [k, p]``: 2·m·k·p (one multiply and one add per multiply-add)."""
    return 2 * m * k * p


def valid_head_counts(d_model: int) -> tuple[int, ...]:
    """Every h that divides d_model (so that d_k = d_model / h is a whole number)."""
    if d_model < 1:
        raise ValueError("d_model must be positive")
    return tuple(h for h in range(1, d_model + 1) if d_model % h == 0)


@dataclass(frozen=True)
class MultiHeadCost:
    """Parameter count and FLOPs of one multi-head self-attention layer on n tokens."""

    n: int
    d_model: int
    heads: int
    d_k: int
    d_v: int
    params_qkv: int  # W_Q, W_K, W_V (+ their biases)
    params_out: int  # W_O (+ bias)
    flops_projections: int  # Q, K, V
    flops_scores: int  # Q Kᵀ, all heads
    flops_scale: int  # ÷ divisor, one per score
    flops_softmax: int  # approximate, SOFTMAX_FLOPS_PER_ELEMENT per score
    flops_weighted_sum: int  # weights @ V, all heads
    flops_output: int  # concat @ W_O

    @property
    def params_total(self) -> int:
        return self.params_qkv + self.params_out

    @property
    def flops_total(self) -> int:
        return self.flops_matmul + self.flops_softmax_scale

    @property
    def attention_matrix_elements(self) -> int:
        """h · n²: what must be held for the weights."""
        return self.heads * self.n * self.n

    @property
    def flops_matmul(self) -> int:
        """The matrix products (projections, QKᵀ, weights·V, W^O): the same for every h."""
        return self.flops_projections + self.flops_scores + self.flops_weighted_sum + self.flops_output

    @property
    def flops_softmax_scale(self) -> int:
        """Scaling and softmax, one n × n matrix per head: grows with h."""
        return self.flops_softmax + self.flops_scale


def multihead_cost(n: int, d_model: int, heads: int, bias: bool = False) -> MultiHeadCost:
    """Counts for d_k = d_v = d_model / heads (heads must divide d_model)."""
    if n < 1 or d_model < 1 or heads < 1:
        raise ValueError("n, d_model and heads must be positive")
    if d_model % heads:
        raise ValueError("heads must divide d_model")
    h = heads
    d_k = d_v = d_model // h
    params_qkv = d_model * h * d_k * 2 + d_model * h * d_v + (2 * h * d_k + h * d_v if bias else 0)
    params_out = h * d_v * d_model + (d_model if bias else 0)
    proj = 2 * matmul_flops(n, d_model, h * d_k) + matmul_flops(n, d_model, h * d_v)
    scores = h * matmul_flops(n, d_k, n)
    scl = h * n * n
    smax = SOFTMAX_FLOPS_PER_ELEMENT * h * n * n
    wsum = h * matmul_flops(n, n, d_v)
    out = matmul_flops(n, h * d_v, d_model)
    if bias:
        proj += n * (2 * h * d_k + h * d_v)
        out += n * d_model
    return MultiHeadCost(n, d_model, h, d_k, d_v, params_qkv, params_out, proj, scores, scl, smax, wsum, out)


def cost_vs_heads(n: int, d_model: int, heads=None, bias: bool = False) -> tuple[MultiHeadCost, ...]:
    """:func:`multihead_cost` for each h (default: every divisor of d_model)."""
    hs = valid_head_counts(d_model) if heads is None else tuple(int(h) for h in heads)
    return tuple(multihead_cost(n, d_model, h, bias) for h in hs)


@dataclass(frozen=True)
class HeadSweep:
    """The costs of one layer for every valid h, and whether the ones that should stay do stay."""

    costs: tuple[MultiHeadCost, ...]  # one per divisor h of d_model, h ascending
    params_constant: bool  # every h has the same parameter count (4·d_model² without biases)
    matmul_constant: bool  # every h has the same matmul FLOPs


def head_sweep(n: int, d_model: int) -> HeadSweep:
    """:func:`cost_vs_heads` for every divisor of d_model, with the two constancy checks."""
    costs = cost_vs_heads(n, d_model)
    return HeadSweep(
        costs, len({c.params_total for c in costs}) == 1, len({c.flops_matmul for c in costs}) == 1
    )


@dataclass(frozen=True)
class SplitCheck:
    """One big projection cut into heads vs one small projection per head."""

    heads: int
    d_k: int
    split: np.ndarray  # [h, n, d_k] split_heads(X @ W)
    separate: np.ndarray  # [h, n, d_k] X @ W[:, i·d_k:(i+1)·d_k] for each head i
    max_abs_diff: float
    equal: bool  # np.allclose (the two are the same products; rounding may differ by ulps)


def split_vs_separate(X, W, heads: int) -> SplitCheck:
    """Show that X·W with W ``[d_model, h·d_k]`` split into heads equals h separate projections.

    Head i's projection matrix is the column slice W[:, i·d_k:(i+1)·d_k].
    """
    X = np.asarray(X, float)
    W = np.asarray(W, float)
    if W.shape[1] % heads:
        raise ValueError("heads must divide the number of columns of W")
    d_k = W.shape[1] // heads
    split = split_heads(X @ W, heads)  # [n, h*d_k] -> [h, n, d_k]
    separate = np.stack([X @ W[:, i * d_k : (i + 1) * d_k] for i in range(heads)])  # [h, n, d_k]
    diff = float(np.max(np.abs(split - separate))) if split.size else 0.0
    return SplitCheck(heads, d_k, _ro(split), _ro(separate), diff, bool(np.allclose(split, separate)))


def merge_head_weights(W: np.ndarray) -> np.ndarray:
    """Every head's projection side by side, head 0's columns first: ``[h, d_model, d_k] -> [d_model, h·d_k]``."""
    W = np.asarray(W, float)
    h, d_model, d_k = W.shape
    return W.transpose(1, 0, 2).reshape(d_model, h * d_k)


@dataclass(frozen=True)
class MultiHeadLab:
    """What the multi-head page shows for one sentence and setting."""

    trace: AttentionTrace  # every step, all heads
    head_counts: tuple[int, ...]  # every h that divides d_model
    head_dims: tuple[int, ...]  # d_k = d_model / h for each of head_counts
    distinct_patterns: int  # heads whose most-attended keys (one per query) differ from each other
    split: SplitCheck  # X·W^Q with all heads' W^Q side by side, split into heads vs per-head products
    split_vs_trace: float  # largest |split − the trace's Q|


def multihead_lab(
    text: str, d_model: int, heads: int, seed: int, max_tokens: int = DEFAULT_MAX_TOKENS
) -> MultiHeadLab:
    """Multi-head attention on ``text`` (d_k = d_v = d_model / heads) and the checks the page shows."""
    trace = trace_text(text, AttentionConfig(d_model=d_model, heads=heads, seed=seed), max_tokens=max_tokens)
    counts = valid_head_counts(d_model)
    top = np.argmax(trace.weights, axis=2)  # [h, n]: each query's most-attended key, per head
    split = split_vs_separate(trace.X, merge_head_weights(trace.W_Q), heads)
    vs_trace = float(np.max(np.abs(split.split - trace.Q))) if split.split.size else 0.0
    return MultiHeadLab(
        trace,
        counts,
        tuple(d_model // h for h in counts),
        len({tuple(row) for row in top.tolist()}),
        split,
        vs_trace,
    )

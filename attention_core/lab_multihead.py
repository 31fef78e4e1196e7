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

from dataclasses import asdict, dataclass

import numpy as np

from .steps import split_heads

SOFTMAX_FLOPS_PER_ELEMENT = 5


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    a.setflags(write=False)
    return a


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
    params_total: int
    flops_projections: int  # Q, K, V
    flops_scores: int  # Q Kᵀ, all heads
    flops_scale: int  # ÷ divisor, one per score
    flops_softmax: int  # approximate, SOFTMAX_FLOPS_PER_ELEMENT per score
    flops_weighted_sum: int  # weights @ V, all heads
    flops_output: int  # concat @ W_O
    flops_total: int
    attention_matrix_elements: int  # h · n² (what must be held for the weights)

    def to_dict(self) -> dict:
        return asdict(self)


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
    return MultiHeadCost(
        n=n,
        d_model=d_model,
        heads=h,
        d_k=d_k,
        d_v=d_v,
        params_qkv=params_qkv,
        params_out=params_out,
        params_total=params_qkv + params_out,
        flops_projections=proj,
        flops_scores=scores,
        flops_scale=scl,
        flops_softmax=smax,
        flops_weighted_sum=wsum,
        flops_output=out,
        flops_total=proj + scores + scl + smax + wsum + out,
        attention_matrix_elements=h * n * n,
    )


def cost_vs_heads(n: int, d_model: int, heads=None, bias: bool = False) -> tuple[MultiHeadCost, ...]:
    """:func:`multihead_cost` for each h (default: every divisor of d_model)."""
    hs = valid_head_counts(d_model) if heads is None else tuple(int(h) for h in heads)
    return tuple(multihead_cost(n, d_model, h, bias) for h in hs)


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

"""Lab "Look-alikes": cross-attention, additive (Bahdanau) scores, and self-attention vs an RNN.

- Cross-attention (encoder–decoder attention): queries from one sequence, keys and values from
  another, so the weight matrix is n_q × n_kv. With both sequences equal it *is* self-attention.
- Additive attention scores a query–key pair with a small network, e(q, k) = vᵀ tanh(W1 q + W2 k),
  instead of the (scaled) dot product q·k/√d_k.
- An RNN links tokens i and j through |i − j| recurrent steps and must run n steps one after the
  other; self-attention links any pair in one step and computes all positions at once, at the
  price of the n × n matrix.

Tables here hold ids and formulas only; the page's message catalog words them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import steps
from ..arrays import read_only
from ..config import AttentionConfig
from ..trace import AttentionParams, AttentionTrace, trace_text

_ro = read_only


@dataclass(frozen=True)
class CrossAttention:
    """Every intermediate of multi-head cross-attention (arrays read-only)."""

    Q: np.ndarray  # [h, n_q, d_k] from X_q
    K: np.ndarray  # [h, n_kv, d_k] from X_kv
    V: np.ndarray  # [h, n_kv, d_v] from X_kv
    scores: np.ndarray  # [h, n_q, n_kv] scaled (and masked, if a mask was given)
    weights: np.ndarray  # [h, n_q, n_kv]
    head_outputs: np.ndarray  # [h, n_q, d_v]
    concat: np.ndarray  # [n_q, h*d_v]
    output: np.ndarray  # [n_q, d_model]


def cross_attention(X_q, X_kv, params: AttentionParams, divisor: float, allowed=None) -> CrossAttention:
    """Queries from ``X_q [n_q, d_model]``; keys and values from ``X_kv [n_kv, d_model]``.

    ``allowed [n_q, n_kv]`` (True = may attend) is optional, e.g. to hide padding in X_kv.
    """
    X_q = np.asarray(X_q, float)
    X_kv = np.asarray(X_kv, float)
    if X_q.ndim != 2 or X_kv.ndim != 2 or X_q.shape[1] != X_kv.shape[1]:
        raise ValueError("X_q and X_kv must be [n, d_model] with the same d_model")
    Q = steps.project(X_q, params.W_Q, params.b_Q)  # [h, n_q, d_k]
    K = steps.project(X_kv, params.W_K, params.b_K)  # [h, n_kv, d_k]
    V = steps.project(X_kv, params.W_V, params.b_V)  # [h, n_kv, d_v]
    s = steps.scale(steps.raw_scores(Q, K), divisor)  # [h, n_q, n_kv]
    if allowed is not None:
        s = steps.apply_mask(s, np.asarray(allowed, bool))
    w = steps.softmax(s)  # [h, n_q, n_kv]
    heads = steps.weighted_sum(w, V)  # [h, n_q, d_v]
    concat = steps.merge_heads(heads)  # [n_q, h*d_v]
    out = steps.output_projection(concat, params.W_O, params.b_O)  # [n_q, d_model]
    return CrossAttention(*(_ro(a) for a in (Q, K, V, s, w, heads, concat, out)))


@dataclass(frozen=True)
class AdditiveParams:
    """Parameters of additive attention: W1 ``[d_a, d_q]``, W2 ``[d_a, d_k]``, v ``[d_a]``."""

    W1: np.ndarray
    W2: np.ndarray
    v: np.ndarray


def init_additive_params(d_q: int, d_k: int, d_a: int, seed: int = 0) -> AdditiveParams:
    """N(0, 1/fan_in) draws from ``default_rng(seed)`` in the order W1, W2, v."""
    rng = np.random.default_rng(seed)
    W1 = rng.standard_normal((d_a, d_q)) / math.sqrt(d_q)
    W2 = rng.standard_normal((d_a, d_k)) / math.sqrt(d_k)
    v = rng.standard_normal(d_a) / math.sqrt(d_a)
    return AdditiveParams(_ro(W1), _ro(W2), _ro(v))


def additive_scores(Q, K, W1, W2, v) -> np.ndarray:
    """e[i, j] = vᵀ tanh(W1 q_i + W2 k_j). ``Q [n_q, d_q]``, ``K [n_k, d_k]`` -> ``[n_q, n_k]``."""
    Q = np.asarray(Q, float)
    K = np.asarray(K, float)
    a = Q @ np.asarray(W1, float).T  # [n_q, d_a]  row i = W1 q_i
    b = K @ np.asarray(W2, float).T  # [n_k, d_a]  row j = W2 k_j
    hidden = np.tanh(a[:, None, :] + b[None, :, :])  # [n_q, n_k, d_a]
    return hidden @ np.asarray(v, float)  # [n_q, n_k]


@dataclass(frozen=True)
class ScoreComparison:
    """Additive vs scaled dot-product scores on the same queries and keys."""

    additive_scores: np.ndarray  # [n_q, n_k]
    dot_scores: np.ndarray  # [n_q, n_k] Q Kᵀ / divisor
    additive_weights: np.ndarray  # [n_q, n_k]
    dot_weights: np.ndarray  # [n_q, n_k]
    additive_params: int  # number of learned numbers in W1, W2, v
    dot_params: int  # 0: the dot product itself has no parameters


def compare_scores(Q, K, params: AdditiveParams, divisor: float | None = None) -> ScoreComparison:
    """Both score functions on ``Q [n_q, d_k]``, ``K [n_k, d_k]``; divisor defaults to √d_k."""
    Q = np.asarray(Q, float)
    K = np.asarray(K, float)
    if divisor is None:
        divisor = math.sqrt(Q.shape[1])
    add = additive_scores(Q, K, params.W1, params.W2, params.v)
    dot = steps.scale(steps.raw_scores(Q, K), divisor)
    n_params = params.W1.size + params.W2.size + params.v.size
    return ScoreComparison(
        _ro(add), _ro(dot), _ro(steps.softmax(add)), _ro(steps.softmax(dot)), int(n_params), 0
    )


@dataclass(frozen=True)
class ComparisonRow:
    """One property of self-attention vs a recurrent network (formulas; wording lives in the catalog)."""

    aspect: str  # id: "path_length", "sequential_steps", "per_layer_cost", "memory"
    self_attention: str  # big-O formula
    rnn: str  # big-O formula


RNN_COMPARISON = (
    ComparisonRow("path_length", "O(1)", "O(n)"),
    ComparisonRow("sequential_steps", "O(1)", "O(n)"),
    ComparisonRow("per_layer_cost", "O(n²·d)", "O(n·d²)"),
    ComparisonRow("memory", "O(n²)", "O(n)"),
)


@dataclass(frozen=True)
class LookalikeRow:
    """What tells a look-alike apart from plain self-attention (ids only)."""

    term: str  # id of the term
    query_source: str  # "same" (the sequence itself) or "other" (a second sequence) or "any"
    key_value_source: str  # "same", "other" or "any"
    score: str  # "dot" (scaled dot product) or "additive" (small network)
    mask: str  # "none", "causal" or "any"
    parallel_heads: bool  # several projections side by side


LOOKALIKES = (
    LookalikeRow("self_attention", "same", "same", "dot", "any", False),
    LookalikeRow("cross_attention", "same", "other", "dot", "any", False),
    LookalikeRow("encoder_decoder_attention", "same", "other", "dot", "any", False),
    LookalikeRow("additive_attention", "any", "any", "additive", "any", False),
    LookalikeRow("multi_head_attention", "any", "any", "dot", "any", True),
    LookalikeRow("causal_attention", "same", "same", "dot", "causal", False),
)


@dataclass(frozen=True)
class LayerCost:
    """Multiply-adds of one layer of width d on n tokens: self-attention against a recurrent layer.

    The *mixing* terms are what the original paper's complexity table compares (constants dropped
    there): attention's QKᵀ and A·V against an RNN's recurrence. Counting every matrix product adds
    attention's projections W^Q, W^K, W^V, W^O and the RNN's input matrix; an LSTM has four gates,
    each with an input and a recurrent matrix. Counted in full, attention (2·n²·d + 4·n·d²) is never
    cheaper than a plain RNN (2·n·d²) and is cheaper than an LSTM (8·n·d²) only while n < 2d.
    """

    n: int
    d: int
    attention_macs: int  # 2·n²·d: QKᵀ and A·V, the mixing term
    rnn_macs: int  # n·d²: one d × d recurrent product per step, the mixing term
    attention_projection_macs: int  # 4·n·d²: W^Q, W^K, W^V, W^O (d_model = d)
    attention_total_macs: int  # every matrix product of the attention layer
    rnn_total_macs: int  # 2·n·d²: input and recurrent matrices of a plain (Elman) RNN
    lstm_total_macs: int  # 8·n·d²: four gates, each with an input and a recurrent matrix


def layer_cost(n: int, d: int) -> LayerCost:
    """Mixing terms and full counts of one layer, in multiply-adds."""
    if n < 1 or d < 1:
        raise ValueError("n and d must be positive")
    mix, proj = 2 * n * n * d, 4 * n * d * d
    return LayerCost(n, d, mix, n * d * d, proj, mix + proj, 2 * n * d * d, 8 * n * d * d)


@dataclass(frozen=True)
class PathIllustration:
    """How far apart tokens i and j are for each architecture."""

    n: int
    i: int
    j: int
    rnn_path_length: int  # |i − j| recurrent steps carry information from one to the other
    attention_path_length: int  # 1 (0 when i == j): one attention step links any pair
    rnn_sequential_steps: int  # n: step t needs step t − 1 done
    attention_sequential_steps: int  # 1: every position at once
    rnn_hidden_states: tuple[int, ...]  # the positions the signal passes through, i..j


def rnn_steps_illustration(n: int, i: int = 0, j: int | None = None) -> PathIllustration:
    """Path length between positions i and j (default: first and last) and sequential steps."""
    if n < 1:
        raise ValueError("n must be positive")
    j = n - 1 if j is None else j
    if not (0 <= i < n and 0 <= j < n):
        raise ValueError("i and j must be positions in 0..n-1")
    lo, hi = min(i, j), max(i, j)
    return PathIllustration(
        n=n,
        i=i,
        j=j,
        rnn_path_length=hi - lo,
        attention_path_length=0 if i == j else 1,
        rnn_sequential_steps=n,
        attention_sequential_steps=1,
        rnn_hidden_states=tuple(range(lo, hi + 1)),
    )


# --- the lab on two sentences --------------------------------------------------------------------


@dataclass(frozen=True)
class LookalikesLab:
    """Everything the look-alikes page shows for two sentences (one head of each comparison)."""

    a: AttentionTrace  # sentence A, self-attention, no mask
    b: AttentionTrace  # sentence B, self-attention, no mask (its X is what cross-attention reads)
    cross: CrossAttention  # queries from A, keys and values from B, A's weights
    causal: AttentionTrace  # sentence A with the causal mask
    scores: ScoreComparison  # additive vs dot-product scores on A's queries and keys of one head
    head: int
    causal_last_row_same: bool  # the last query sees every key either way: its weights agree
    causal_masked: int  # how many query–key pairs the causal mask hides


def lookalikes_lab(
    text_a: str, text_b: str, d_model: int, heads: int, seed: int, head: int, d_a: int, max_tokens: int
) -> LookalikesLab:
    """Self-, cross- and causal attention and both score functions on ``text_a``/``text_b``.

    One seed gives both sentences the same token vectors and the same W_Q, W_K, W_V, W_O, so the
    cross-attention map differs from self-attention only by where K and V come from.
    """
    config = AttentionConfig(d_model=d_model, heads=heads, seed=seed)
    a = trace_text(text_a, config, max_tokens=max_tokens)
    b = trace_text(text_b, config, max_tokens=max_tokens)
    causal = trace_text(
        text_a, AttentionConfig(d_model=d_model, heads=heads, seed=seed, mask="causal"), max_tokens
    )
    Q, K = a.Q[head], a.K[head]  # [n, d_k] each
    scores = compare_scores(
        Q, K, init_additive_params(Q.shape[1], K.shape[1], d_a, seed=seed), divisor=a.divisor
    )
    same_last = bool(np.allclose(a.weights[head][-1], causal.weights[head][-1], atol=1e-12))
    return LookalikesLab(
        a,
        b,
        cross_attention(a.X, b.X, a.params, a.divisor),
        causal,
        scores,
        head,
        same_last,
        int((~causal.mask).sum()),
    )


@dataclass(frozen=True)
class CostCurves:
    """The n-dependent work of attention (n²·d) and of an RNN (n·d²) around a chosen n, for a chart."""

    n: int
    d: int
    n2d: int  # n²·d at the chosen n (constant factors dropped)
    nd2: int  # n·d² at the chosen n
    ns: np.ndarray  # [points] whole numbers of tokens, from below min(n, d) to above max(n, d)
    attention: np.ndarray  # [points] ns²·d
    rnn: np.ndarray  # [points] ns·d²

    @property
    def verdict(self) -> str:
        """Which term is smaller at the chosen n: ``"attention_cheaper"`` (n < d), ``"rnn_cheaper"`` or ``"equal"``."""
        if self.n2d == self.nd2:
            return "equal"
        return "attention_cheaper" if self.n2d < self.nd2 else "rnn_cheaper"

    @property
    def ratio(self) -> float:
        """How many times larger the larger term is (d/n or n/d)."""
        return max(self.n2d, self.nd2) / min(self.n2d, self.nd2)


def cost_curves(n: int, d: int, points: int = 120) -> CostCurves:
    """n²·d and n·d² over a log-spaced range of n, 16× below the smaller and 16× above the larger of n, d."""
    if n < 1 or d < 1:
        raise ValueError("n and d must be positive")
    ns = np.unique(np.round(np.geomspace(max(1.0, min(n, d) / 16), max(n, d) * 16, points)))
    return CostCurves(n, d, n * n * d, n * d * d, _ro(ns), _ro(ns**2 * d), _ro(ns * float(d) ** 2))

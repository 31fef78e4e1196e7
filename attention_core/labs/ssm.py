"""State-space models beside attention: what each model's output y_t does with the past inputs x_s.

Four causal models on the same token rows X ``[n, d_model]`` of the learner's sentence:

- softmax attention: y_t = Σ_{s≤t} A_ts v_s, A from softmax(q_t·k_s/√d_k); no fixed-size state, the
  keys and values of every past token are kept (a KV cache of 2·n·d numbers grows with n);
- linear attention (Katharopoulos et al. 2020): the same form with A_ts = φ(q_t)·φ(k_s) / Σ, computed
  as a recurrence with a d_φ × d_v matrix state (:func:`attention_core.labs.efficient.linear_attention_recurrent`);
- a diagonal state-space recurrence on one input channel x_t (a scalar per token):
  h_t = a_t ⊙ h_{t−1} + b x_t, y_t = c · h_t with h_t ``[N]``. Unrolled,
  y_t = Σ_{s≤t} W_ts x_s with W_ts = Σ_k c_k b_k Π_{r=s+1..t} a_{r,k}: the implied weights.
  With a fixed decay a_{t,k} = exp(−Δ λ_k) the weights depend only on t − s (a convolution). With a
  selective decay a_{t,k} = exp(−Δ_t λ_k), Δ_t = softplus(w·x_t-row + β) computed from the token, the
  weights depend on the input, as in Mamba (Gu & Dao 2023).

Simplified here: one input channel (a real layer runs d channels, each with its own N-dim state), no
learned parameters (seeded random b, c, w; λ_k = k + 1), b and c fixed (Mamba also makes them
input-dependent), no discretisation of b, no convolution, gating or output projection around the scan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..arrays import read_only
from ..config import AttentionConfig
from ..trace import trace_text
from .efficient import linear_attention_recurrent, linear_weights

STATE_NS = (16, 256, 4_096, 65_536, 1_048_576)
MODELS = ("attention", "linear", "ssm_fixed", "ssm_selective")


def softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + eˣ), written to stay finite for large x. Any shape."""
    x = np.asarray(x, float)
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def fixed_decay(n: int, delta: float, lam: np.ndarray) -> np.ndarray:
    """``[n, N]`` decays a_{t,k} = exp(−Δ λ_k), the same at every step."""
    return np.tile(np.exp(-delta * np.asarray(lam, float)), (n, 1))


def selective_steps(X: np.ndarray, w: np.ndarray, delta: float) -> np.ndarray:
    """``X [n, d_model], w [d_model] -> Δ [n]``: Δ_t = softplus(w·X_t/√d + β), β chosen so that a
    token with w·X_t = 0 gets the fixed model's Δ."""
    beta = math.log(math.expm1(delta))  # softplus(β) = Δ
    return softplus(np.asarray(X, float) @ w / math.sqrt(X.shape[1]) + beta)


def selective_decay(steps: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """``Δ [n], λ [N] -> [n, N]``: a_{t,k} = exp(−Δ_t λ_k), each in (0, 1)."""
    return np.exp(-np.outer(steps, lam))


@dataclass(frozen=True)
class Scan:
    """The recurrence run token by token."""

    y: np.ndarray  # [n] outputs y_t = c·h_t
    states: np.ndarray  # [n, N] h_t after each token


def diagonal_ssm_scan(x, a, b, c) -> Scan:
    """h_t = a_t ⊙ h_{t−1} + b x_t, y_t = c · h_t from h_{−1} = 0. ``x [n], a [n, N], b [N], c [N]``."""
    x, a = np.asarray(x, float), np.asarray(a, float)
    h, ys, hs = np.zeros(a.shape[1]), np.zeros(len(x)), np.zeros(a.shape)
    for t in range(len(x)):
        h = a[t] * h + b * x[t]  # [N] the whole memory of the past
        ys[t], hs[t] = c @ h, h
    return Scan(read_only(ys), read_only(hs))


def ssm_implied_weights(a, b, c) -> np.ndarray:
    """``a [n, N], b [N], c [N] -> W [n, n]``, W_ts = Σ_k c_k b_k Π_{r=s+1..t} a_{r,k} for s ≤ t, else 0,
    so that y = W x for every input x (the recurrence is linear in x)."""
    # a in (0, 1]: log-sums instead of long products (a decay that underflowed to 0 stays finite)
    log_a = np.log(np.maximum(np.asarray(a, float), np.finfo(float).tiny))
    cum = np.cumsum(log_a, axis=0)  # [n, N] Σ_{r≤t} log a_r
    n = cum.shape[0]
    past = np.tril(np.ones((n, n), bool))[:, :, None]  # s ≤ t; above the diagonal exp(+…) would overflow
    log_decay = np.where(past, cum[:, None, :] - cum[None, :, :], -np.inf)  # [t, s, N]
    return np.exp(log_decay) @ (np.asarray(c, float) * np.asarray(b, float))  # [n, n], 0 above the diagonal


def toeplitz_gap(W: np.ndarray) -> float:
    """Largest change along a diagonal of the lower triangle: 0 when W_ts depends only on t − s."""
    n = W.shape[0]
    gaps = [np.ptp(np.diagonal(W, -k)) for k in range(n)]
    return float(max(gaps))


@dataclass(frozen=True)
class StateSizes:
    """Numbers a model keeps between tokens, one head / one layer of d channels, as n grows."""

    ns: tuple[int, ...]
    attention: tuple[int, ...]  # KV cache: keys and values of every past token, 2·n·d
    linear: tuple[int, ...]  # S [d, d] and z [d]: d² + d
    ssm: tuple[int, ...]  # d channels × N: N·d, fixed or selective alike


def state_sizes(d: int, N: int, ns=STATE_NS) -> StateSizes:
    ns = tuple(int(n) for n in ns)
    return StateSizes(ns, tuple(2 * n * d for n in ns), (d * d + d,) * len(ns), (N * d,) * len(ns))


@dataclass(frozen=True)
class SsmLab:
    """Each model's weights of y_t on the past inputs, on the learner's sentence (arrays read-only)."""

    tokens: tuple[str, ...]
    d: int  # d_model = d_k = d_v of the one head
    N: int  # state size per channel of the SSM
    delta: float
    weights: dict  # model -> [n, n] weights of y_t on x_s (attention: on v_s)
    steps: np.ndarray  # [n] Δ_t of the selective model
    recurrence_diffs: dict  # recurrent model -> max |recurrence − its weights applied to the inputs|
    toeplitz_gaps: dict  # model -> toeplitz_gap(weights)
    row_sums: dict  # model -> [n] Σ_s W_ts
    sizes: StateSizes
    tokenization: object = None


def ssm_lab(
    text: str, d_model: int = 16, seed: int = 0, N: int = 4, delta: float = 0.5, max_tokens=16
) -> SsmLab:
    """Trace ``text`` with one causal head; run linear attention and both SSMs on the same rows."""
    if not 1 <= N <= 64 or not 0.01 <= delta <= 5:
        raise ValueError("N must be 1–64 and Δ between 0.01 and 5")
    trace = trace_text(text, AttentionConfig(d_model=d_model, heads=1, mask="causal", seed=seed), max_tokens)
    X, Q, K, V = np.asarray(trace.X), trace.Q[0], trace.K[0], trace.V[0]
    rng = np.random.default_rng([seed, 29])  # the SSM's own draws, apart from the attention weights
    u, w = rng.standard_normal(d_model), rng.standard_normal(d_model) * 2.0
    b, c = rng.standard_normal(N) / math.sqrt(N), rng.standard_normal(N)
    lam = np.arange(1, N + 1, dtype=float)  # decay rates λ_k = k + 1 (k from 0)
    x = X @ u / math.sqrt(d_model)  # [n] the one input channel
    steps = selective_steps(X, w, delta)
    decays = {"ssm_fixed": fixed_decay(len(x), delta, lam), "ssm_selective": selective_decay(steps, lam)}
    weights = {"attention": np.asarray(trace.weights[0]), "linear": linear_weights(Q, K, causal=True)}
    diffs = {
        "linear": float(np.max(np.abs(linear_attention_recurrent(Q, K, V).output - weights["linear"] @ V)))
    }
    for name, a in decays.items():
        weights[name] = ssm_implied_weights(a, b, c)
        diffs[name] = float(np.max(np.abs(diagonal_ssm_scan(x, a, b, c).y - weights[name] @ x)))
    return SsmLab(
        tuple(trace.tokens),
        d_model,
        N,
        delta,
        {m: read_only(np.array(weights[m])) for m in MODELS},
        read_only(steps),
        diffs,
        {m: toeplitz_gap(weights[m]) for m in MODELS},
        {m: read_only(weights[m].sum(axis=1)) for m in MODELS},
        state_sizes(d_model, N),
        trace.tokenization,
    )

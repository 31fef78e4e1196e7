"""Efficient attention, measured: a sliding window as a saving of work, and linear attention.

Sliding window (one-sided, as in Mistral 7B): query i sees keys i − w < j ≤ i. The tiled algorithm of
:mod:`attention_core.tiled` visits only the key tiles inside the window, so its work grows as n·w
instead of n²; its output equals full attention *with the window mask* (the same model), not full
causal attention (a different model as soon as n > w).

Linear attention (Katharopoulos et al. 2020): the similarity exp(q·k/√d_k) is replaced by
φ(q)·φ(k) with φ(x) = elu(x) + 1 > 0. Causal output of query i:
``φ(q_i)ᵀ S_i / φ(q_i)ᵀ z_i`` with ``S_i = Σ_{j≤i} φ(k_j) v_jᵀ`` ``[d_φ, d_v]`` and
``z_i = Σ_{j≤i} φ(k_j)`` ``[d_φ]``: a recurrence with a fixed-size state, O(n·d_φ·d_v) work.
It is a different kernel, not an approximation of softmax attention.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

import numpy as np

from ..arrays import read_only
from ..config import AttentionConfig
from ..steps import apply_mask, raw_scores, scale, softmax, weighted_sum
from ..tiled import direct_attention, tile_grid, tiled_attention
from ..trace import trace_text
from .cost import attention_flops
from .masks import sliding_window_mask

MAX_WINDOW_N = 4096  # the page's live check and sweep build an n × n reference matrix
WINDOW_SWEEP_NS = (256, 512, 1024, 2048, 4096)
WINDOW_D = 64


def _inputs(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal((n, d)), rng.standard_normal((n, d))


# --- sliding window ---------------------------------------------------------------------------


def masked_attention(Q, K, V, allowed: np.ndarray) -> np.ndarray:
    """Full attention with an explicit mask: softmax(QKᵀ/√d_k, −∞ where not allowed) V.
    ``[n, d_k], [n, d_k], [n, d_v], [n, n] bool -> [n, d_v]`` (the whole n × n matrix is formed)."""
    s = scale(raw_scores(np.asarray(Q, float), np.asarray(K, float)), math.sqrt(np.shape(Q)[1]))
    return weighted_sum(softmax(apply_mask(s, allowed)), np.asarray(V, float))


def window_score_elements(n: int, window: int) -> int:
    """Scores a sliding window actually needs: Σ_i min(i + 1, w) = n·w − w(w − 1)/2 for n ≥ w."""
    w = min(window, n)
    return n * w - w * (w - 1) // 2


@dataclass(frozen=True)
class WindowCheck:
    """The tiled sliding window against full attention with the window mask, on random Q, K, V."""

    n: int
    window: int
    block: int
    max_abs_diff: float  # |tiled window − masked full attention|: rounding only
    diff_to_causal: float  # |window − full causal attention|: the model changed (0 when n ≤ w)
    tiles_computed: int
    tiles_skipped: int
    tiles_total: int
    scores_formed: int  # score entries in the formed tiles (≤ tiles_computed · block²)
    scores_needed: int  # score entries inside the window: n·w − w(w − 1)/2
    grid: np.ndarray  # [tiles, tiles] bool, the tiles formed


def window_check(n: int, window: int, block: int, d: int = WINDOW_D, seed: int = 0) -> WindowCheck:
    """Run the windowed tiled attention, the masked full attention and full causal attention."""
    if not 1 <= n <= MAX_WINDOW_N:
        raise ValueError(f"n must be between 1 and {MAX_WINDOW_N}")
    if window < 1 or block < 1:
        raise ValueError("window and block must be positive")
    Q, K, V = _inputs(n, d, seed)
    tiled = tiled_attention(Q, K, V, block, block, window=window)
    reference = masked_attention(Q, K, V, sliding_window_mask(n, window))
    causal = direct_attention(Q, K, V, causal=True)
    grid = tile_grid(n, n, block, block, window=window)
    formed = sum(
        (min(q0 + block, n) - q0) * (min(k0 + block, n) - k0)
        for qi, q0 in enumerate(range(0, n, block))
        for ki, k0 in enumerate(range(0, n, block))
        if grid[qi, ki]
    )
    return WindowCheck(
        n,
        window,
        block,
        float(np.max(np.abs(tiled.output - reference))),
        float(np.max(np.abs(reference - causal))),
        tiled.tiles_computed,
        tiled.tiles_skipped,
        grid.size,
        formed,
        window_score_elements(n, window),
        read_only(grid),
    )


@dataclass(frozen=True)
class WindowTiming:
    """Seconds for one n, measured side by side in one run (fastest of ``repeats``)."""

    n: int
    window: int
    block: int
    full_direct: float  # direct causal attention, the whole n × n matrix
    full_tiled: float  # tiled causal attention: every tile on or below the diagonal
    window_tiled: float  # tiled sliding window: only the tiles inside the window
    tiles_full: int
    tiles_window: int

    @property
    def ratio_tiled(self) -> float:
        """full tiled ÷ window tiled: the same code, only the skipped tiles differ."""
        return self.full_tiled / self.window_tiled

    @property
    def ratio_direct(self) -> float:
        return self.full_direct / self.window_tiled


def _best(fn, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def window_timing(
    ns=WINDOW_SWEEP_NS, window: int = 256, block: int = 128, d: int = WINDOW_D, repeats: int = 2
) -> Iterator[WindowTiming]:
    """Time full attention (direct and tiled, causal) and the tiled sliding window for each n.

    A generator (one n at a time, for progress). Times depend on the machine's load: compare the
    ratios measured in the same run, never the seconds of different runs.
    """
    direct_attention(*_inputs(64, d, 0), causal=True)  # warm-up
    for n in ns:
        if not 1 <= n <= MAX_WINDOW_N:
            raise ValueError(f"n must be between 1 and {MAX_WINDOW_N}")
        Q, K, V = _inputs(n, d, 0)
        full = tiled_attention(Q, K, V, block, block, causal=True)
        win = tiled_attention(Q, K, V, block, block, window=window)
        yield WindowTiming(
            n,
            window,
            block,
            _best(partial(direct_attention, Q, K, V, causal=True), repeats),
            _best(partial(tiled_attention, Q, K, V, block, block, causal=True), repeats),
            _best(partial(tiled_attention, Q, K, V, block, block, window=window), repeats),
            full.tiles_computed,
            win.tiles_computed,
        )


# --- linear attention -------------------------------------------------------------------------


def elu_plus_one(x: np.ndarray) -> np.ndarray:
    """Feature map φ(x) = elu(x) + 1: x + 1 for x > 0, eˣ for x ≤ 0; always > 0. Any shape."""
    x = np.asarray(x, float)
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def linear_weights(Q, K, causal: bool = True) -> np.ndarray:
    """Weights of linear attention written as a matrix (the O(n²) matrix form, for comparison only):
    ``a_ij = φ(q_i)·φ(k_j) / Σ_j' φ(q_i)·φ(k_j')`` over the allowed keys. ``[n, d], [n, d] -> [n, n]``."""
    sim = elu_plus_one(Q) @ elu_plus_one(K).T  # [n, n], all > 0
    if causal:
        sim = np.tril(sim)
    return sim / sim.sum(axis=1, keepdims=True)


def linear_attention_quadratic(Q, K, V, causal: bool = True) -> np.ndarray:
    """Linear attention's output through its n × n weights (O(n²) work). ``-> [n, d_v]``."""
    return linear_weights(Q, K, causal) @ np.asarray(V, float)


@dataclass(frozen=True)
class LinearRecurrence:
    """Causal linear attention as a recurrence: the output and the state after the last token."""

    output: np.ndarray  # [n, d_v]
    state: np.ndarray  # [d_φ, d_v]  S_n = Σ_j φ(k_j) v_jᵀ
    normaliser_state: np.ndarray  # [d_φ]  z_n = Σ_j φ(k_j)
    normalisers: np.ndarray  # [n]  φ(q_i)ᵀ z_i, the denominator of each query


def linear_attention_recurrent(Q, K, V) -> LinearRecurrence:
    """One token at a time: ``S += φ(k_i) v_iᵀ``, ``z += φ(k_i)``, ``out_i = φ(q_i)ᵀS / φ(q_i)ᵀz``.

    ``Q, K [n, d_k]``, ``V [n, d_v]``; the state ``S [d_φ, d_v]`` (d_φ = d_k for elu + 1) and ``z [d_φ]``
    never grow with n, and each step costs O(d_φ·d_v).
    """
    fq, fk, V = elu_plus_one(Q), elu_plus_one(K), np.asarray(V, float)
    n, d_phi, d_v = fq.shape[0], fq.shape[1], V.shape[1]
    S, z = np.zeros((d_phi, d_v)), np.zeros(d_phi)
    out, norms = np.zeros((n, d_v)), np.zeros(n)
    for i in range(n):
        S += np.outer(fk[i], V[i])  # [d_φ, d_v]
        z += fk[i]  # [d_φ]
        norms[i] = fq[i] @ z
        out[i] = fq[i] @ S / norms[i]
    return LinearRecurrence(read_only(out), read_only(S), read_only(z), read_only(norms))


def linear_attention_flops(n: int, d_phi: int, d_v: int) -> int:
    """FLOPs of the causal recurrence, 2 per multiply-add (feature map not counted):
    per token S update 2·d_φ·d_v, z update d_φ, numerator 2·d_φ·d_v, denominator 2·d_φ, division d_v."""
    return n * (4 * d_phi * d_v + 3 * d_phi + d_v)


def softmax_attention_flops(n: int, d_k: int, d_v: int) -> int:
    """The full (non-causal) softmax attention core for one head, from the cost lab's count."""
    return attention_flops(n, d_k, d_v).total


def causal_softmax_attention_flops(n: int, d_k: int, d_v: int) -> int:
    """Causal softmax attention computing only the allowed scores, the n(n + 1)/2 on and below the
    diagonal, at the cost lab's per-element rates (2·d_k, scaling + softmax, 2·d_v): about half the
    full count, so its crossover with the recurrence moves from n ≈ d to n ≈ 2d."""
    full = attention_flops(1, d_k, d_v)  # one score: the per-element cost of each of the three parts
    return n * (n + 1) // 2 * full.total


def linear_crossover_n(
    d_phi: int, d_v: int, d_k: int, n_max: int = 10**7, causal: bool = False
) -> int | None:
    """The smallest n at which the causal recurrence needs fewer FLOPs than softmax attention (one
    head): full (non-causal) softmax attention, or with ``causal`` causal softmax attention that
    computes only the n(n + 1)/2 allowed scores."""
    softmax = causal_softmax_attention_flops if causal else softmax_attention_flops
    lo, hi = 1, n_max
    if linear_attention_flops(hi, d_phi, d_v) >= softmax(hi, d_k, d_v):
        return None
    while lo < hi:  # softmax − linear grows with n once positive: bisect
        mid = (lo + hi) // 2
        if linear_attention_flops(mid, d_phi, d_v) < softmax(mid, d_k, d_v):
            hi = mid
        else:
            lo = mid + 1
    return lo


@dataclass(frozen=True)
class LinearLab:
    """Linear and softmax attention on the learner's sentence (head 0 of a causal trace)."""

    tokens: tuple[str, ...]
    d_k: int
    softmax_weights: np.ndarray  # [n, n] causal softmax weights
    linear_weights: np.ndarray  # [n, n] causal linear-attention weights
    recurrence_vs_quadratic: float  # max |recurrent output − quadratic output|
    state_shape: tuple[int, int]  # (d_φ, d_v)
    normalisers: np.ndarray  # [n]
    weight_diff: float  # max |linear weight − softmax weight|
    softmax_top: np.ndarray  # [n] largest weight of each row, softmax
    linear_top: np.ndarray  # [n] largest weight of each row, linear
    tokenization: object = None


def linear_lab(text: str, d_model: int = 16, seed: int = 0) -> LinearLab:
    """Trace ``text`` with one causal head, then compare linear attention on the same Q, K, V."""
    trace = trace_text(text, AttentionConfig(d_model=d_model, heads=1, mask="causal", seed=seed))
    Q, K, V = trace.Q[0], trace.K[0], trace.V[0]
    rec = linear_attention_recurrent(Q, K, V)
    quad = linear_attention_quadratic(Q, K, V, causal=True)
    lw = linear_weights(Q, K, causal=True)
    sw = np.asarray(trace.weights[0])
    return LinearLab(
        tuple(trace.tokens),
        Q.shape[1],
        read_only(np.array(sw)),
        read_only(lw),
        float(np.max(np.abs(rec.output - quad))),
        tuple(rec.state.shape),
        rec.normalisers,
        float(np.max(np.abs(lw - sw))),
        read_only(sw.max(axis=1)),
        read_only(lw.max(axis=1)),
        trace.tokenization,
    )


# --- exact or not ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExactnessRow:
    """One method against full causal softmax attention on the same random Q, K, V."""

    method: str  # "tiled", "window", "linear"
    max_abs_diff: float


def exactness(n: int = 256, window: int = 32, block: int = 64, d: int = WINDOW_D, seed: int = 0):
    """How far each method's output is from full causal softmax attention (n > window)."""
    Q, K, V = _inputs(n, d, seed)
    full = direct_attention(Q, K, V, causal=True)
    rows = {
        "tiled": tiled_attention(Q, K, V, block, block, causal=True).output,
        "window": tiled_attention(Q, K, V, block, block, window=window).output,
        "linear": linear_attention_recurrent(Q, K, V).output,
    }
    return tuple(ExactnessRow(m, float(np.max(np.abs(out - full)))) for m, out in rows.items())

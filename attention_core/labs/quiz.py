"""Computed quiz questions: small numeric problems with exact answers, reproducible from a seed.

A question carries no English: ``kind`` selects the sentence in the page's message catalog and
``params`` fills its placeholders (plain ints, floats, strings and nested lists, JSON-friendly).
``choices`` holds the answer and its distractors in a seeded order for multiple choice;
``answer_index`` points at the answer. Free-typed answers are checked with :func:`check_answer`
(absolute ``tolerance``; 0 means exact).

Kinds (:data:`QUIZ_KINDS`):

- ``causal_weight``: Q, K (2 × d_k integers), causal mask, divisor √d_k; weight[row, col].
- ``scores_shape``: shape of QKᵀ for n tokens and key size d_k (answer ``(n, n)``).
- ``attention_memory``: MiB (2²⁰ bytes) of one n × n attention matrix in a dtype.
- ``dot_variance``: Var(q·k) (or Var(q·k/√d_k) when ``scaled``) for N(0, 1) entries.
- ``memory_ratio``: how many times the attention memory grows when n is multiplied by ``factor``.
- ``head_dim``: d_k = d_model / h.
- ``multihead_params``: learned numbers in W_Q, W_K, W_V, W_O (no biases) = 4·d_model².
- ``padding_cells``: −∞ cells of a padding mask for n tokens plus p [PAD] = (n + p)·p.
- ``softmax_shift``: one softmax weight of a row of scores so large that exp overflows in float64
  unless the row maximum is subtracted first.
- ``sqrt_divisor``: the divisor √d_k of a head (its explanation also gives √128 for d_k = 128).
- ``kv_cache_size``: MiB of a KV cache, ``2 · layers · n · kv_heads · d_k · bytes`` (GQA shapes).
- ``sinusoidal_value``: one entry PE(pos, j) of the sinusoidal positional encoding.
- ``window_scores``: scores a causal sliding window of w keys needs for n tokens = n·w − w(w − 1)/2.
- ``block_crossover``: the n at which a block's n² attention FLOPs equal its projections + FFN
  (rounded to a whole token), for a classic FFN with d_ff = 4·d_model.
- ``ring_send_bytes``: MiB a ring of P devices sends in all for one head, 2·(P − 1)·n·d·bytes (each of
  the P − 1 hops moves one K and one V block from every device), from :func:`ring.ring_costs`.
- ``ssm_weight``: the weight of x_s in y_{s+lag} for the scalar recurrence h_t = a·h_{t−1} + b·x_t,
  y_t = c·h_t, i.e. c·b·a^lag, from :func:`ssm.ssm_implied_weights`.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

from ..config import AttentionConfig
from ..embeddings import positional_encoding
from ..kv_cache import cache_bytes
from ..steps import apply_mask, build_mask, raw_scores, scale, softmax
from .block import crossover_n
from .cost import DTYPE_BYTES, attention_matrix_bytes
from .efficient import window_score_elements
from .multihead import multihead_cost
from .ring import ring_costs
from .ssm import ssm_implied_weights

QUIZ_KINDS = (
    "causal_weight",
    "scores_shape",
    "attention_memory",
    "dot_variance",
    "memory_ratio",
    "head_dim",
    "multihead_params",
    "padding_cells",
    "softmax_shift",
    "sqrt_divisor",
    "kv_cache_size",
    "sinusoidal_value",
    "window_scores",
    "block_crossover",
    "ring_send_bytes",
    "ssm_weight",
)
N_CHOICES = 4
SQRT_DIVISOR_D_K = (16, 32, 64, 96, 128, 256)  # 128: the d_k of many large models


@dataclass(frozen=True)
class QuizQuestion:
    kind: str  # one of QUIZ_KINDS: selects the question text in the catalog
    seed: int
    params: dict  # placeholder values for the question text
    answer: float | int | tuple  # the correct answer
    tolerance: float  # absolute tolerance for typed answers (0 = exact)
    choices: tuple  # N_CHOICES options: the answer and distractors, shuffled
    answer_index: int  # choices[answer_index] == answer
    unit: str | None = None  # e.g. "MiB"; None when the answer has no unit


def _rng(kind: str, seed: int) -> np.random.Generator:
    return np.random.default_rng((int(seed), zlib.crc32(kind.encode())))


def _distinct(a, b, tol: float) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return a != b
    return abs(float(a) - float(b)) > max(2 * tol, 1e-9)


def _build(kind, seed, rng, params, answer, tol, distractors, fallbacks, unit=None) -> QuizQuestion:
    """Keep distractors that differ from the answer and each other; shuffle them with the answer."""
    picked = []
    for d in list(distractors) + list(fallbacks):
        if len(picked) == N_CHOICES - 1:
            break
        if all(_distinct(d, x, tol) for x in [answer, *picked]):
            picked.append(d)
    if len(picked) < N_CHOICES - 1:
        raise RuntimeError("not enough distinct distractors")  # a bug in the generator, not user input
    options = [answer, *picked]
    order = rng.permutation(len(options))
    choices = tuple(options[i] for i in order)
    return QuizQuestion(kind, int(seed), params, answer, float(tol), choices, int(np.argmin(order)), unit)


def _causal_steps(Q, K, d_k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The causal_weight question's steps: scaled scores, masked scores and weights, ``[2, 2]`` each."""
    scores = scale(raw_scores(np.asarray(Q, float), np.asarray(K, float)), math.sqrt(d_k))
    masked = apply_mask(scores, build_mask("causal", 2))
    return scores, masked, softmax(masked)


def _causal_weight(seed: int) -> QuizQuestion:
    rng = _rng("causal_weight", seed)
    d_k = 4
    while True:
        Q = rng.integers(-2, 3, size=(2, d_k))
        K = rng.integers(-2, 3, size=(2, d_k))
        if (Q[1] @ K[0]) != (Q[1] @ K[1]):  # avoid the 0.5 / 0.5 case
            break
    row, col = [(1, 0), (1, 1), (0, 1)][int(rng.integers(3))]
    scores, _, w = _causal_steps(Q, K, d_k)  # [2, 2] each
    w_unmasked = softmax(scores)
    w_unscaled = softmax(apply_mask(raw_scores(Q.astype(float), K.astype(float)), build_mask("causal", 2)))
    answer = round(float(w[row, col]), 6)
    distractors = [float(w_unmasked[row, col]), float(w_unscaled[row, col]), 1.0 - answer, 0.5]
    distractors = [round(x, 6) for x in distractors]
    params = {"Q": Q.tolist(), "K": K.tolist(), "d_k": d_k, "row": row, "col": col}
    return _build("causal_weight", seed, rng, params, answer, 0.005, distractors, [0.0, 1.0, 0.25, 0.75, 0.1])


def _scores_shape(seed: int) -> QuizQuestion:
    rng = _rng("scores_shape", seed)
    n = int(rng.integers(3, 13))
    d_k = int(rng.choice([d for d in (2, 4, 8, 16, 32, 64) if d != n]))
    answer = (n, n)
    distractors = [(n, d_k), (d_k, d_k), (d_k, n)]
    return _build("scores_shape", seed, rng, {"n": n, "d_k": d_k}, answer, 0.0, distractors, [(n, 1), (1, n)])


def _attention_memory(seed: int) -> QuizQuestion:
    rng = _rng("attention_memory", seed)
    n = int(rng.choice([512, 1024, 2048, 4096, 8192, 16384]))
    dtype = str(rng.choice(list(DTYPE_BYTES)))
    b = DTYPE_BYTES[dtype]
    mib = 2**20
    answer = attention_matrix_bytes(n, b) / mib
    distractors = [n * b / mib * 1024, answer * 2, answer / 2, n * n / mib]  # linear in n, dtype slips
    tol = answer * 0.005
    return _build(
        "attention_memory",
        seed,
        rng,
        {"n": n, "dtype": dtype, "bytes_per_elem": b},
        answer,
        tol,
        distractors,
        [answer * 4, answer / 4, answer * 8],
        unit="MiB",
    )


def _dot_variance(seed: int) -> QuizQuestion:
    rng = _rng("dot_variance", seed)
    d_k = int(rng.choice([4, 9, 16, 25, 36, 64, 100, 144, 256]))
    scaled = bool(rng.integers(2))
    answer = 1 if scaled else d_k
    distractors = [d_k if scaled else 1, math.isqrt(d_k), d_k * d_k]
    return _build(
        "dot_variance",
        seed,
        rng,
        {"d_k": d_k, "scaled": scaled},
        answer,
        0.0,
        distractors,
        [2 * d_k, 0, d_k + 1],
    )


def _memory_ratio(seed: int) -> QuizQuestion:
    rng = _rng("memory_ratio", seed)
    factor = int(rng.choice([2, 3, 4, 8, 10]))
    answer = factor * factor
    return _build(
        "memory_ratio",
        seed,
        rng,
        {"factor": factor},
        answer,
        0.0,
        [factor, 2 * factor, factor**3],
        [factor + 1, answer + factor],
    )


def _head_dim(seed: int) -> QuizQuestion:
    rng = _rng("head_dim", seed)
    d_model = int(rng.choice([64, 128, 256, 512, 768, 1024]))
    h = int(rng.choice([h for h in (2, 4, 8, 12, 16) if d_model % h == 0]))
    answer = d_model // h
    return _build(
        "head_dim",
        seed,
        rng,
        {"d_model": d_model, "heads": h},
        answer,
        0.0,
        [d_model * h, d_model, h],
        [answer * 2, answer // 2],
    )


def _multihead_params(seed: int) -> QuizQuestion:
    rng = _rng("multihead_params", seed)
    d_model = int(rng.choice([8, 16, 64, 128, 512]))
    h = int(rng.choice([h for h in (2, 4, 8) if d_model % h == 0]))
    answer = multihead_cost(1, d_model, h).params_total
    distractors = [4 * d_model * d_model // h, 4 * d_model * d_model * h, 3 * d_model * d_model]
    return _build(
        "multihead_params",
        seed,
        rng,
        {"d_model": d_model, "heads": h},
        answer,
        0.0,
        distractors,
        [2 * d_model * d_model, d_model * d_model],
    )


def _padding_cells(seed: int) -> QuizQuestion:
    rng = _rng("padding_cells", seed)
    n = int(rng.integers(3, 9))
    pads = int(rng.integers(1, 5))
    total = n + pads
    answer = int(np.count_nonzero(~build_mask("padding", total, pads)))  # [total, total] -> cells
    distractors = [n * pads, pads * pads, total * total - n * n, pads]  # real rows only, pad block, ...
    return _build(
        "padding_cells",
        seed,
        rng,
        {"n": n, "pads": pads, "total": total},
        answer,
        0.0,
        distractors,
        [total, total * (pads + 1)],
    )


def _softmax_shift(seed: int) -> QuizQuestion:
    rng = _rng("softmax_shift", seed)
    base = int(rng.choice([720, 800, 1000, 1200]))  # exp(716) already overflows float64
    offsets = rng.permutation([0, *rng.choice(np.arange(-4, 0), size=2, replace=False)])
    scores = [int(base + o) for o in offsets]
    col = int(rng.integers(3))
    w = softmax(np.asarray(scores, dtype=float))  # [3] the core subtracts the row max itself
    answer = round(float(w[col]), 6)
    others = [round(float(w[j]), 6) for j in range(3) if j != col]
    unnormalised = round(math.exp(scores[col] - max(scores)), 6)  # e^(s - m) without dividing
    # forgetting to divide comes first: the explanation's last step (behind 1/3 and the two other weights,
    # which always differ, it was never offered)
    distractors = [unnormalised, round(1 / 3, 6), *others]
    return _build(
        "softmax_shift",
        seed,
        rng,
        {"scores": scores, "col": col},
        answer,
        0.005,
        distractors,
        [0.5, 0.25, 0.1, 0.9, 0.75],
    )


def _sqrt_divisor(seed: int) -> QuizQuestion:
    rng = _rng("sqrt_divisor", seed)
    d_k = int(rng.choice(SQRT_DIVISOR_D_K))
    answer = round(AttentionConfig(d_model=d_k, heads=1).divisor, 6)  # the core's own √d_k
    distractors = [float(d_k), d_k / 2, math.log2(d_k)]  # no root, halving, a log (floats, shown alike)
    return _build(
        "sqrt_divisor",
        seed,
        rng,
        {"d_k": d_k},
        answer,
        0.005,
        distractors,
        [answer * 2, answer / 2, float(d_k * d_k)],
    )


def _kv_cache_size(seed: int) -> QuizQuestion:
    rng = _rng("kv_cache_size", seed)
    layers = int(rng.choice([12, 24, 32, 40]))
    kv_heads = int(rng.choice([1, 2, 4, 8]))
    group = int(rng.choice([2, 4, 8]))
    d_k = int(rng.choice([64, 128]))
    n = int(rng.choice([1024, 2048, 4096, 8192, 32768]))
    dtype = str(rng.choice(["fp32", "fp16", "bf16"]))
    b = DTYPE_BYTES[dtype]
    mib = 2**20
    answer = cache_bytes(layers, n, kv_heads, d_k, b) / mib
    # K or V only; one KV head per query head (MHA); one layer only
    distractors = [answer / 2, answer * group, answer / layers]
    params = {"layers": layers, "n": n, "heads": kv_heads * group, "kv_heads": kv_heads, "d_k": d_k, "dtype": dtype,
              "bytes_per_value": b}  # fmt: skip
    tol = answer * 0.005
    return _build(
        "kv_cache_size", seed, rng, params, answer, tol, distractors, [answer * 2, answer * 4], unit="MiB"
    )


def _sinusoidal_value(seed: int) -> QuizQuestion:
    rng = _rng("sinusoidal_value", seed)
    d_model = int(rng.choice([4, 8, 16]))
    pos = int(rng.integers(1, 21))
    dim = int(rng.integers(0, 4))
    i = dim // 2  # the pair: columns 2i (sine) and 2i + 1 (cosine) share the angle pos / 10000^(2i/d)
    angle = pos / 10000.0 ** (2 * i / d_model)
    answer = round(float(positional_encoding(pos + 1, d_model)[pos, dim]), 3)
    other = math.cos(angle) if dim % 2 == 0 else math.sin(angle)  # sine and cosine swapped
    wrong_exp = pos / 10000.0 ** (i / d_model)  # exponent i/d instead of 2i/d
    slip = math.sin(wrong_exp) if dim % 2 == 0 else math.cos(wrong_exp)
    distractors = [round(x, 3) for x in (other, slip, -answer)]
    params = {"pos": pos, "dim": dim, "d_model": d_model, "i": i, "angle": round(angle, 4)}
    return _build(
        "sinusoidal_value", seed, rng, params, answer, 0.005, distractors, [0.0, 1.0, -1.0, 0.5, -0.5]
    )


def _window_scores(seed: int) -> QuizQuestion:
    rng = _rng("window_scores", seed)
    w = int(rng.choice([4, 8, 16, 32, 64]))
    n = int(rng.choice([m for m in (64, 128, 256, 512, 1024) if m > w]))
    answer = window_score_elements(n, w)
    return _build(
        "window_scores",
        seed,
        rng,
        {"n": n, "w": w},
        answer,
        0.0,
        [n * w, n * n, n * (n + 1) // 2],  # forgetting the first rows, full, full causal
        [n * w * 2, answer + w],
    )


def _block_crossover(seed: int) -> QuizQuestion:
    rng = _rng("block_crossover", seed)
    d_model = int(rng.choice([256, 512, 768, 1024, 2048, 4096]))
    heads = int(rng.choice([h for h in (4, 8, 12, 16, 32) if d_model % h == 0]))
    answer = int(round(crossover_n(d_model, heads, 4 * d_model)))
    return _build(
        "block_crossover",
        seed,
        rng,
        {"d_model": d_model, "heads": heads, "d_ff": 4 * d_model},
        answer,
        0.0,
        [d_model, d_model * d_model, 4 * d_model],  # n = d, n = d², n = d_ff
        [answer * 2, answer // 2],
    )


def _ring_send_bytes(seed: int) -> QuizQuestion:
    rng = _rng("ring_send_bytes", seed)
    P = int(rng.choice([4, 8, 16]))
    n = int(rng.choice([8_192, 32_768, 131_072]))
    d = int(rng.choice([64, 128]))
    dtype = str(rng.choice(["fp32", "fp16", "bf16"]))
    mib = 2**20
    answer = ring_costs(n, d, P, DTYPE_BYTES[dtype], 1.0, 1.0).send_bytes_total / mib
    per_hop = answer / (P - 1)  # every device sends one K and one V block
    params = {"P": P, "n": n, "d": d, "dtype": dtype}
    # a send at every one of the P steps, K only, one hop only
    distractors = [per_hop * P, answer / 2, per_hop]
    return _build(
        "ring_send_bytes", seed, rng, params, answer, answer * 0.005, distractors, [answer * 2], unit="MiB"
    )


def _ssm_weight(seed: int) -> QuizQuestion:
    rng = _rng("ssm_weight", seed)
    a = float(rng.choice([0.5, 0.6, 0.8, 0.9]))
    b = float(rng.choice([0.5, 1.0, 2.0]))
    c = float(rng.choice([1.0, 2.0, 3.0]))
    lag = int(rng.choice([1, 2, 3]))
    W = ssm_implied_weights(np.full((lag + 1, 1), a), np.array([b]), np.array([c]))  # [lag + 1, lag + 1]
    answer = round(float(W[lag, 0]), 6)
    params = {"a": a, "b": b, "c": c, "lag": lag}
    # one decay too many or too few, the decay alone, no decay at all
    distractors = [c * b * a ** (lag + 1), c * b * a ** (lag - 1), a**lag, c * b]
    fallbacks = [c * a**lag, b * a**lag, answer * 2, answer / 2, answer * 3, answer + 0.25]  # without b, c, …
    return _build("ssm_weight", seed, rng, params, answer, 0.0005, distractors, fallbacks)


_GENERATORS = {
    "causal_weight": _causal_weight,
    "scores_shape": _scores_shape,
    "attention_memory": _attention_memory,
    "dot_variance": _dot_variance,
    "memory_ratio": _memory_ratio,
    "head_dim": _head_dim,
    "multihead_params": _multihead_params,
    "padding_cells": _padding_cells,
    "softmax_shift": _softmax_shift,
    "sqrt_divisor": _sqrt_divisor,
    "kv_cache_size": _kv_cache_size,
    "sinusoidal_value": _sinusoidal_value,
    "window_scores": _window_scores,
    "block_crossover": _block_crossover,
    "ring_send_bytes": _ring_send_bytes,
    "ssm_weight": _ssm_weight,
}


def generate_question(kind: str, seed: int) -> QuizQuestion:
    """One question of ``kind``; the same (kind, seed) always gives the same question."""
    if kind not in _GENERATORS:
        raise ValueError(f"unknown quiz kind {kind!r}; use one of {QUIZ_KINDS}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError("seed must be a non-negative integer")
    return _GENERATORS[kind](int(seed))


def worked_numbers(question: QuizQuestion) -> dict:
    """The intermediate numbers behind a computed answer, for its explanation (computed by the
    same steps as the answer): the question row's masked scores and weights (``causal_weight``),
    the matrix's elements and bytes (``attention_memory``), the max-shifted scores and their
    exponentials (``softmax_shift``), √128 (``sqrt_divisor``); nothing for the other kinds."""
    p = question.params
    if question.kind == "causal_weight":
        _, masked, weights = _causal_steps(p["Q"], p["K"], p["d_k"])
        return {"scores": masked[p["row"]], "weights": weights[p["row"]]}
    if question.kind == "attention_memory":
        elements = p["n"] * p["n"]
        return {"elements": elements, "bytes": elements * p["bytes_per_elem"]}
    if question.kind == "softmax_shift":
        s = np.asarray(p["scores"], dtype=float)  # [3]
        shifted = s - np.max(s)  # the largest becomes 0, so its exponential is e^0 = 1
        return {"max": float(np.max(s)), "shifted": shifted, "exps": np.exp(shifted)}
    if question.kind == "kv_cache_size":
        args = (p["layers"], p["n"], p["kv_heads"], p["d_k"], p["bytes_per_value"])
        return {"bytes": cache_bytes(*args)}
    if question.kind == "sqrt_divisor":
        return {"sqrt128": AttentionConfig(d_model=128, heads=1).divisor}  # the explanation's example
    return {}


def check_answer(question: QuizQuestion, value) -> bool:
    """True when ``value`` is the answer (shape tuples exactly, numbers within the tolerance)."""
    if isinstance(question.answer, tuple):
        try:
            return tuple(int(v) for v in value) == question.answer
        except (TypeError, ValueError):
            return False
    try:
        v = float(value)
    except (TypeError, ValueError):
        return False
    return math.isfinite(v) and abs(v - float(question.answer)) <= question.tolerance

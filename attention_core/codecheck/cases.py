"""The cases a learner's code is checked on, and the core's answer for each, step by step.

The learner's sentence (head 0 of the layer the page or the command line sets up) and hidden cases
made to catch what a sentence alone does not: random shapes with d_k ≠ d_v, d_k = 1, n = 1, a
causal mask, a query whose every key is masked, padding, scores large enough to overflow a softmax
that does not subtract the row's maximum, and four heads with d_k ≠ d_v for ``multi_head``.

The contract (the template's docstring says the same): ``attention(X, W_Q, W_K, W_V, mask, d_k)``
with X ``[n, d_model]``, W_Q and W_K ``[d_model, d_k]``, W_V ``[d_model, d_v]``, ``mask`` a boolean
``[n, n]`` array, True where query i may read key j, or None for no mask, ``d_k`` an int; it returns
``[n, d_v]``, and a query whose every key is masked gets a zero row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import steps
from ..arrays import read_only
from ..config import AttentionConfig
from ..trace import AttentionParams, attend, trace_text

ONE_HEAD = "attention"
STEP_FUNCTIONS = ("scores", "scale", "apply_mask", "softmax", "weighted_sum")
MULTI_HEAD = "multi_head"
FUNCTIONS = (ONE_HEAD, *STEP_FUNCTIONS, MULTI_HEAD)
# The one-head intermediates in the order they are computed; each step function makes one of them.
STEPS = ("Q", "K", "V", "scores", "scaled", "masked", "weights", "output")
# The multi-head ones: the same steps with the head first ([h, n, ...]), each head's output, the heads
# side by side, and the layer's output (Concat · W_O).
MULTI_STEPS = ("Q", "K", "V", "scores", "scaled", "masked", "weights", "heads", "concat", "layer_output")
STEP_OUTPUT = {
    "scores": "scores",
    "scale": "scaled",
    "apply_mask": "masked",
    "softmax": "weights",
    "weighted_sum": "output",
}
SENTENCE = "sentence"
HIDDEN_SEED = 44


@dataclass(frozen=True)
class Case:
    """The inputs of one call. One head: W_Q ``[d_model, d_k]``; multi-head (``W_O`` set): W_Q
    ``[h, d_model, d_k]``, W_V ``[h, d_model, d_v]``, W_O ``[h*d_v, d_model]``."""

    name: str
    X: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    mask: np.ndarray | None
    d_k: int
    W_O: np.ndarray | None = None

    @property
    def multi(self) -> bool:
        return self.W_O is not None

    @property
    def n(self) -> int:
        return self.X.shape[0]


@dataclass(frozen=True)
class Reference:
    """The core's intermediates of one case: one head's (names of :data:`STEPS`; ``masked`` is
    ``scaled`` when there is no mask), or a multi-head case's (:data:`MULTI_STEPS`: the per-head steps
    head first, ``heads`` ``[h, n, d_v]``, ``concat`` ``[n, h*d_v]``; ``output`` is the layer's)."""

    output: np.ndarray
    Q: np.ndarray | None = None
    K: np.ndarray | None = None
    V: np.ndarray | None = None
    scores: np.ndarray | None = None
    scaled: np.ndarray | None = None
    masked: np.ndarray | None = None
    weights: np.ndarray | None = None
    heads: np.ndarray | None = None
    concat: np.ndarray | None = None

    @property
    def multi(self) -> bool:
        return self.concat is not None

    @property
    def steps(self) -> tuple[str, ...]:
        return MULTI_STEPS if self.multi else STEPS

    @property
    def layer_output(self) -> np.ndarray:
        return self.output

    def step(self, name: str) -> np.ndarray:
        return getattr(self, name)


def _case(name: str, X, W_Q, W_K, W_V, mask, W_O=None) -> Case:
    frozen = [read_only(a, copy=True, dtype=float) for a in (X, W_Q, W_K, W_V)]
    return Case(
        name,
        *frozen,
        mask=None if mask is None else read_only(mask, copy=True, dtype=bool),
        d_k=int(W_Q.shape[-1]),
        W_O=None if W_O is None else read_only(W_O, copy=True, dtype=float),
    )


def reference(case: Case) -> Reference:
    """The core's answer for ``case``, every step (one head) or the layer's output (multi-head)."""
    divisor = math.sqrt(case.d_k)
    if case.multi:
        n = case.n
        allowed = np.ones((n, n), dtype=bool) if case.mask is None else case.mask
        params = AttentionParams(W_Q=case.W_Q, W_K=case.W_K, W_V=case.W_V, W_O=case.W_O)
        t = attend(case.X, params, allowed, divisor)
        masked = t.scores_scaled if case.mask is None else t.scores_masked
        return Reference(
            t.output,
            t.Q,
            t.K,
            t.V,
            t.scores_raw,
            t.scores_scaled,
            masked,
            t.weights,
            t.head_outputs,
            t.concat,
        )
    Q = case.X @ case.W_Q  # [n, d_k]
    K = case.X @ case.W_K  # [n, d_k]
    V = case.X @ case.W_V  # [n, d_v]
    scores = steps.raw_scores(Q, K)  # [n, n]
    scaled = steps.scale(scores, divisor)  # [n, n]
    masked = scaled if case.mask is None else steps.apply_mask(scaled, case.mask)  # [n, n]
    weights = steps.softmax(masked)  # [n, n], a fully masked row is all zeros
    output = steps.weighted_sum(weights, V)  # [n, d_v]
    return Reference(output, Q, K, V, scores, scaled, masked, weights)


def step_inputs(case: Case, ref: Reference) -> dict[str, tuple]:
    """The arguments each step function is called with: the core's inputs of that step."""
    return {
        "scores": (ref.Q, ref.K),
        "scale": (ref.scores, case.d_k),
        "apply_mask": (ref.scaled, case.mask),
        "softmax": (ref.masked,),
        "weighted_sum": (ref.weights, ref.V),
    }


def sentence_cases(text: str, config: AttentionConfig) -> tuple[Case, Case]:
    """Head 0 of the learner's sentence, and the whole layer for ``multi_head``.

    The check's contract divides by √d_k, so the layer is traced with that scaling whatever
    ``config.scale`` says; ``mask`` is None when the layer has no mask.
    """
    trace = trace_text(text, _sqrt_scaled(config))
    mask = None if config.mask == "none" else trace.mask
    p = trace.params
    one = _case(SENTENCE, trace.X, p.W_Q[0], p.W_K[0], p.W_V[0], mask)
    multi = _case(SENTENCE, trace.X, p.W_Q, p.W_K, p.W_V, mask, W_O=p.W_O)
    return one, multi


def _sqrt_scaled(config: AttentionConfig) -> AttentionConfig:
    if config.scale == "sqrt":
        return config
    return AttentionConfig(**{**config.to_dict(), "scale": "sqrt"})


def _weights(rng, d_model: int, d_k: int, d_v: int, heads: int | None = None):
    lead = () if heads is None else (heads,)
    scale = 1 / math.sqrt(d_model)
    return (
        rng.standard_normal((*lead, d_model, d_k)) * scale,
        rng.standard_normal((*lead, d_model, d_k)) * scale,
        rng.standard_normal((*lead, d_model, d_v)) * scale,
    )


def hidden_cases(seed: int = HIDDEN_SEED) -> tuple[Case, ...]:
    """The fixed hidden cases (one head, then one multi-head case)."""
    rng = np.random.default_rng(seed)

    def one(name: str, n: int, d_model: int, d_k: int, d_v: int, mask, x_scale: float = 1.0) -> Case:
        X = rng.standard_normal((n, d_model)) * x_scale
        return _case(name, X, *_weights(rng, d_model, d_k, d_v), mask)

    masked_row = np.tril(np.ones((4, 4), dtype=bool))
    masked_row[2, :] = False  # query 2 may read no key: its output row must be zeros
    cases = [
        one("random_shapes", 5, 7, 3, 2, None),
        one("d_k_1", 4, 3, 1, 2, None),
        one("n_1", 1, 4, 2, 3, np.ones((1, 1), dtype=bool)),
        one("causal", 6, 8, 4, 4, steps.build_mask("causal", 6)),
        one("masked_row", 4, 5, 2, 3, masked_row),
        one("padding", 5, 6, 3, 3, steps.build_mask("padding", 5, n_pad=2)),
        # scores in the thousands: exp() of them overflows to inf unless the row's max is subtracted;
        # d_k = n, the one case where Q @ K (K not transposed) runs, so that trap can be named
        one("large_scores", 4, 4, 4, 2, None, x_scale=60.0),
    ]
    X = rng.standard_normal((5, 8))
    W_Q, W_K, W_V = _weights(rng, 8, 3, 5, heads=4)
    W_O = rng.standard_normal((4 * 5, 8)) / math.sqrt(20)
    cases.append(_case("four_heads", X, W_Q, W_K, W_V, steps.build_mask("causal", 5), W_O=W_O))
    return tuple(cases)

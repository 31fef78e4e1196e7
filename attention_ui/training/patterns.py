"""Which pattern each trained head shows, for the predict-then-reveal section and the questions.

A head's score for a pattern is the mean weight its queries put on the key that pattern names. The
previous-token and induction scores are the run's own (the heads page's definitions, computed by the
core on its repeated sample); the two others are read here from the run's final maps on the sample
input, over queries 1..n−1 (query 0 under a causal mask can only look at itself). A head "shows" its
best pattern when that score reaches :data:`THRESHOLD`, and no single pattern otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PATTERNS = ("previous", "self", "first", "induction", "spread")  # what a learner can guess
SCORED = ("previous", "self", "first", "induction")
THRESHOLD = 0.5  # at least half of the weight, on average, on the pattern's key


def self_scores(weights: np.ndarray) -> np.ndarray:
    """Mean weight, over queries ``i = 1..n-1``, on key ``i`` itself: ``[..., n, n] -> [...]``."""
    i = np.arange(1, np.shape(weights)[-1])
    return np.asarray(weights, np.float64)[..., i, i].mean(axis=-1)


def first_scores(weights: np.ndarray) -> np.ndarray:
    """Mean weight, over queries ``i = 1..n-1``, on key 0: ``[..., n, n] -> [...]``."""
    return np.asarray(weights, np.float64)[..., 1:, 0].mean(axis=-1)


@dataclass(frozen=True)
class HeadPatterns:
    layers: int
    heads: int
    scores: dict  # pattern -> [L][H] floats
    pattern: tuple  # [L][H] the pattern each head shows (one of PATTERNS)
    best_score: tuple  # [L][H] its score (the best of SCORED)


def classify(scores: dict[str, np.ndarray], threshold: float = THRESHOLD) -> tuple[tuple, tuple]:
    """``scores``: pattern -> ``[L, H]``. ``-> (pattern [L][H], best score [L][H])``."""
    stack = np.stack([np.asarray(scores[p], float) for p in SCORED])  # [4, L, H]
    best = stack.argmax(axis=0)
    value = stack.max(axis=0)
    names = tuple(
        tuple(SCORED[int(b)] if v >= threshold else "spread" for b, v in zip(row_b, row_v, strict=True))
        for row_b, row_v in zip(best, value, strict=True)
    )
    return names, tuple(tuple(float(v) for v in row) for row in value)


def head_patterns(run) -> HeadPatterns:
    attention = np.asarray(run.attention, float)  # [L, H, n, n]
    scores = {
        "previous": np.asarray(run.previous_token, float),
        "self": self_scores(attention),
        "first": first_scores(attention),
        "induction": np.asarray(run.induction, float),
    }
    pattern, best = classify(scores)
    layers, heads = attention.shape[:2]
    return HeadPatterns(layers, heads, {p: scores[p].tolist() for p in SCORED}, pattern, best)

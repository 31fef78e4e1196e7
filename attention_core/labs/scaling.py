"""Lab "Why divide by √d_k": the numbers behind the scaling argument.

Model: every entry of a query q and a key k is drawn independently from N(0, 1). Then each
product q_i·k_i has mean 0 and variance 1, so the dot product q·k (a sum of d_k of them) has
variance d_k, and q·k / √d_k has variance 1 whatever d_k is. Without the divisor, larger d_k
means wider scores, a softmax that puts almost all weight on one key ("saturation") and a
softmax Jacobian close to zero (tiny gradients).

Randomness: each d_k gets its own generator ``default_rng((seed, d_k))``, so the numbers for one
d_k do not depend on which other d_k values were asked for, and the scaled and unscaled
versions use the *same* draws (only the divisor differs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..arrays import read_only
from ..steps import scale, softmax

# Refuse experiments that would need more than this many random numbers at once.
MAX_DRAWS = 20_000_000
MIN_SAMPLES = 50  # fewer samples than this say nothing about a spread
_CHUNK = 1 << 20  # random numbers per chunk in the variance experiment


_ro = read_only


def _rng(seed: int, d_k: int) -> np.random.Generator:
    return np.random.default_rng((int(seed), int(d_k)))


def _check_d_ks(d_ks) -> tuple[int, ...]:
    out = tuple(int(d) for d in d_ks)
    if not out or any(d < 1 for d in out):
        raise ValueError("d_ks must be a non-empty list of positive integers")
    return out


def dot_variance_standard_error(d_k: int, samples: int) -> float:
    """Standard error of the sample variance of q·k, for q, k with i.i.d. N(0, 1) entries.

    Write s = q·k = Σ x_i with x_i = q_i k_i. E[x] = 0, E[x²] = 1, E[x⁴] = E[q⁴]E[k⁴] = 3·3 = 9.
    Expanding the fourth power of the sum, only terms with every index paired survive:
    E[s⁴] = d_k·E[x⁴] + 3·d_k(d_k − 1)·E[x²]² = 3d_k² + 6d_k. The sample variance of N draws has
    variance (E[s⁴] − Var(s)²)/N + O(1/N²) = (2d_k² + 6d_k)/N, hence this square root.
    Divide by d_k for the scaled score q·k/√d_k (relative error √((2 + 6/d_k)/N)).
    """
    return math.sqrt((2.0 * d_k * d_k + 6.0 * d_k) / samples)


@dataclass(frozen=True)
class DotVariance:
    """Measured spread of raw and scaled scores, one entry per d_k (arrays are ``[len(d_ks)]``)."""

    d_ks: tuple[int, ...]
    samples: int
    raw_variance: np.ndarray  # measured Var(q·k); theory: d_k
    scaled_variance: np.ndarray  # measured Var(q·k / √d_k); theory: 1
    expected_raw: np.ndarray  # d_k
    expected_scaled: np.ndarray  # 1
    raw_standard_error: np.ndarray  # theoretical standard error of raw_variance
    scaled_standard_error: np.ndarray  # theoretical standard error of scaled_variance


def dot_variance_experiment(d_ks, samples: int = 20_000, seed: int = 0) -> DotVariance:
    """Draw ``samples`` pairs (q, k) per d_k and measure the variance of q·k and q·k/√d_k."""
    d_ks = _check_d_ks(d_ks)
    if samples < 2:
        raise ValueError("samples must be at least 2")
    if samples * max(d_ks) * 2 > MAX_DRAWS * 10:
        raise ValueError("too many random numbers requested")
    raw_var, scaled_var = [], []
    for d_k in d_ks:
        rng = _rng(seed, d_k)
        rows = max(1, _CHUNK // d_k)
        dots = []
        for start in range(0, samples, rows):
            m = min(rows, samples - start)
            q = rng.standard_normal((m, d_k))  # [m, d_k]
            k = rng.standard_normal((m, d_k))  # [m, d_k]
            dots.append(np.einsum("md,md->m", q, k))  # [m]
        s = np.concatenate(dots)  # [samples]
        raw_var.append(np.var(s, ddof=1))
        scaled_var.append(np.var(s / math.sqrt(d_k), ddof=1))
    se = np.array([dot_variance_standard_error(d, samples) for d in d_ks])
    d_arr = np.array(d_ks, dtype=float)
    return DotVariance(
        d_ks=d_ks,
        samples=samples,
        raw_variance=_ro(np.array(raw_var)),
        scaled_variance=_ro(np.array(scaled_var)),
        expected_raw=_ro(d_arr),
        expected_scaled=_ro(np.ones_like(d_arr)),
        raw_standard_error=_ro(se),
        scaled_standard_error=_ro(se / d_arr),
    )


def samples_within(d_ks, n_keys: int, samples: int, budget: int, minimum: int = MIN_SAMPLES) -> int:
    """The most samples, at most ``samples``, whose draws Σ over d_ks of samples·(n_keys + 1)·d_k
    stay within ``budget`` (never fewer than ``minimum``)."""
    per_sample = (n_keys + 1) * sum(_check_d_ks(d_ks))
    return max(minimum, min(samples, budget // per_sample))


def _draw_scores(d_k: int, n_keys: int, samples: int, seed: int) -> np.ndarray:
    """Raw scores of one query against ``n_keys`` keys, ``samples`` times: ``[samples, n_keys]``."""
    if d_k < 1 or n_keys < 1 or samples < 1:
        raise ValueError("d_k, n_keys and samples must be positive")
    if samples * (n_keys + 1) * d_k > MAX_DRAWS:
        raise ValueError("too many random numbers requested")
    rng = _rng(seed, d_k)
    q = rng.standard_normal((samples, 1, d_k))  # [samples, 1, d_k]
    k = rng.standard_normal((samples, n_keys, d_k))  # [samples, n_keys, d_k]
    return np.einsum("sqd,skd->sk", q, k)  # [samples, n_keys]


@dataclass(frozen=True)
class ScoreSamples:
    """Scores for a histogram: ``samples`` queries, each against ``n_keys`` fresh keys."""

    d_k: int
    n_keys: int
    samples: int
    scaled: bool
    divisor: float  # √d_k when scaled, else 1
    scores: np.ndarray  # [samples, n_keys]
    expected_std: float  # √d_k unscaled, 1 scaled

    @property
    def measured_std(self) -> float:
        """The standard deviation of all the scores drawn (expected: :attr:`expected_std`)."""
        return float(np.std(self.scores))


def score_samples(
    d_k: int, n_keys: int = 8, samples: int = 2000, seed: int = 0, scaled: bool = True
) -> ScoreSamples:
    """Random scores q·k (or q·k/√d_k); scaled and unscaled calls with one seed share the draws."""
    raw = _draw_scores(d_k, n_keys, samples, seed)
    divisor = math.sqrt(d_k) if scaled else 1.0
    return ScoreSamples(
        d_k=d_k,
        n_keys=n_keys,
        samples=samples,
        scaled=scaled,
        divisor=divisor,
        scores=_ro(scale(raw, divisor)),
        expected_std=math.sqrt(d_k) / divisor,
    )


def jacobian_frobenius_norm(p: np.ndarray) -> np.ndarray:
    """‖diag(p) − p pᵀ‖_F for each row of p, without building the matrix: ``[..., n] -> [...]``.

    Squaring entry by entry: diagonal (p_i − p_i²)², off-diagonal p_i²p_j² (i ≠ j). Summing gives
    Σp² − 2Σp³ + (Σp²)².
    """
    p = np.asarray(p, dtype=float)
    s2 = np.sum(p**2, axis=-1)
    s3 = np.sum(p**3, axis=-1)
    return np.sqrt(np.maximum(s2 - 2.0 * s3 + s2**2, 0.0))


def entropy_nats(p: np.ndarray) -> np.ndarray:
    """Shannon entropy −Σ p log p in nats over the last axis (0·log 0 counted as 0)."""
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return -np.sum(terms, axis=-1)


@dataclass(frozen=True)
class Peakedness:
    """How concentrated softmax gets, per d_k, with and without the √d_k divisor.

    All arrays are ``[len(d_ks)]`` means over ``samples`` random queries, each against ``n_keys``
    keys. Entropy is in nats; the normalised entropy divides by log(n_keys) (1 = uniform,
    0 = one-hot). The Jacobian norm is the Frobenius norm of diag(p) − p pᵀ: near 0 means the
    softmax is saturated and passes almost no gradient back to the scores.
    """

    d_ks: tuple[int, ...]
    n_keys: int
    samples: int
    max_weight_raw: np.ndarray
    max_weight_scaled: np.ndarray
    entropy_raw: np.ndarray
    entropy_scaled: np.ndarray
    normalised_entropy_raw: np.ndarray
    normalised_entropy_scaled: np.ndarray
    jacobian_norm_raw: np.ndarray
    jacobian_norm_scaled: np.ndarray

    @property
    def jacobian_norm_max(self) -> float:
        """The largest mean Jacobian norm, with or without the divisor (the top of a shared axis)."""
        return float(max(np.max(self.jacobian_norm_raw), np.max(self.jacobian_norm_scaled)))


def softmax_peakedness(d_ks, n_keys: int = 16, samples: int = 2000, seed: int = 0) -> Peakedness:
    """Mean largest weight, entropy and Jacobian norm of softmax rows against d_k."""
    d_ks = _check_d_ks(d_ks)
    if n_keys < 2:
        raise ValueError("n_keys must be at least 2")
    cols: dict[str, list[float]] = {k: [] for k in ("mr", "ms", "er", "es", "jr", "js")}
    for d_k in d_ks:
        raw = _draw_scores(d_k, n_keys, samples, seed)  # [samples, n_keys]
        for tag, divisor in (("r", 1.0), ("s", math.sqrt(d_k))):
            p = softmax(scale(raw, divisor))  # [samples, n_keys]
            cols["m" + tag].append(float(np.mean(np.max(p, axis=-1))))
            cols["e" + tag].append(float(np.mean(entropy_nats(p))))
            cols["j" + tag].append(float(np.mean(jacobian_frobenius_norm(p))))
    arr = {k: np.array(v) for k, v in cols.items()}
    log_n = math.log(n_keys)
    return Peakedness(
        d_ks=d_ks,
        n_keys=n_keys,
        samples=samples,
        max_weight_raw=_ro(arr["mr"]),
        max_weight_scaled=_ro(arr["ms"]),
        entropy_raw=_ro(arr["er"]),
        entropy_scaled=_ro(arr["es"]),
        normalised_entropy_raw=_ro(arr["er"] / log_n),
        normalised_entropy_scaled=_ro(arr["es"] / log_n),
        jacobian_norm_raw=_ro(arr["jr"]),
        jacobian_norm_scaled=_ro(arr["js"]),
    )


@dataclass(frozen=True)
class OneRow:
    """One row of scores through the divisor and softmax (for the one-row widget)."""

    scores: np.ndarray  # [n] as given
    divisor: float
    scaled: np.ndarray  # [n] scores / divisor
    weights: np.ndarray  # [n] softmax(scaled)
    max_weight: float
    entropy: float  # nats
    jacobian_norm: float  # ‖diag(p) − p pᵀ‖_F

    @property
    def max_entropy(self) -> float:
        """log n: the entropy of the uniform weights over the row's n keys."""
        return math.log(self.scores.size)


def one_row(scores, divisor: float = 1.0) -> OneRow:
    """Divide one row of scores by ``divisor`` (> 0) and apply softmax."""
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size == 0:
        raise ValueError("scores must be a non-empty 1-D list")
    if not divisor > 0 or not math.isfinite(divisor):
        raise ValueError("divisor must be a positive number")
    scaled_row = scale(s, divisor)  # [n]
    w = softmax(scaled_row)  # [n]
    return OneRow(
        scores=_ro(s.copy()),
        divisor=float(divisor),
        scaled=_ro(scaled_row),
        weights=_ro(w),
        max_weight=float(np.max(w)),
        entropy=float(entropy_nats(w)),
        jacobian_norm=float(jacobian_frobenius_norm(w)),
    )


# --- one row of scores typed by the learner ---------------------------------------------------------

MAX_ROW_SCORES = 32
MAX_ABS_SCORE = 1e4


def parse_scores(text: str) -> tuple[list[float] | None, str | None, dict]:
    """Numbers separated by commas, semicolons or spaces -> (scores, None, {}) or (None, problem, values).

    ``problem`` names what is wrong (``scores_empty``, ``scores_number``, ``scores_count``,
    ``scores_range``) and ``values`` the details a message needs. Full-width commas/minus signs
    (typed with a Japanese input method) are accepted.
    """
    cleaned = str(text).translate(
        str.maketrans({"，": ",", "、": ",", "；": ";", "－": "-", "−": "-", "　": " "})
    )
    parts = [p for p in cleaned.replace(";", ",").replace(",", " ").split() if p]
    if not parts:
        return None, "scores_empty", {}
    values: list[float] = []
    for part in parts:
        try:
            v = float(part)
        except ValueError:
            return None, "scores_number", {"part": part[:20]}
        if not math.isfinite(v) or abs(v) > MAX_ABS_SCORE:
            return None, "scores_range", {"limit": f"{MAX_ABS_SCORE:g}"}
        values.append(v)
    if not 2 <= len(values) <= MAX_ROW_SCORES:
        return None, "scores_count", {"count": len(values), "lo": 2, "hi": MAX_ROW_SCORES}
    return values, None, {}

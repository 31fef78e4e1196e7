"""Self-attention exercises small enough to do with pencil and paper, each with its worked solution.

An exercise is drawn from ``np.random.default_rng(seed)``: n = 2-4 tokens, Q, K and V with whole
numbers from -3 to 3, d_k in (1, 4, 9) so that √d_k is a whole number, and no mask or a causal one.
The softmax stays on paper because every query row is drawn so that its scaled scores lie within
``MAX_SPREAD`` of each other: after subtracting the row's largest score (which does not change
softmax), every exponent is one of 0, -1/√d_k, -2/√d_k, ..., -MAX_SPREAD, and the exercise prints
e^x for exactly those values (``Exercise.exp_table``).

The solution is computed by the core's own step functions (``raw_scores``, ``scale``,
``build_mask``, ``apply_mask``, ``softmax``, ``weighted_sum``); the few extra numbers a person
writes down on the way (row maximum, e^(x - max), row sum) are kept next to them.

Rows and columns are 0-based here, as everywhere in Python; paper and terminal show them from 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import partial

import numpy as np

from . import steps
from .arrays import read_only
from .config import MAX_SEED

EXERCISE_MASKS = ("none", "causal")
N_CHOICES = (2, 3, 4)  # tokens
D_K_CHOICES = (1, 4, 9)  # whole square roots 1, 2, 3: dividing by √d_k stays exact on paper
D_V_CHOICES = (1, 2, 3)
MAX_ENTRY = 3  # |entry| of Q, K and V
# The widest a query row's scaled scores may spread. It bounds the e^x table at e^-3 ≈ 0.05, so a
# row is never dominated so completely that softmax becomes a plain argmax, and the table stays
# short (at most 3·3 + 1 = 10 lines for √d_k = 3).
MAX_SPREAD = 3
TABLE_DECIMALS = 4  # e^x in the table; one more than the weights' 3 decimals
WEIGHT_DECIMALS = 3

# What the entries are drawn from. Longer vectors get more zeros, so a dot product has only a few
# terms to add by hand and a row's scores are more likely to stay within MAX_SPREAD.
QK_ENTRIES = {
    1: (-3, -2, -1, 0, 1, 2, 3),
    4: (-3, -2, -1, 0, 0, 1, 2, 3),
    9: (-3, -2, -1, 0, 0, 0, 0, 1, 2, 3),
}
V_ENTRIES = (-3, -2, -1, 0, 1, 2, 3)
# Drawing rounds: the keys are redrawn when some query row cannot be fitted to them. Over the first
# 20,000 seeds at most 19 rounds were needed; the last round accepts the zero query (an all-equal
# row), so drawing always ends with a valid exercise.
MAX_KEY_ROUNDS = 200
MAX_QUERY_TRIES = 50


class ExerciseError(ValueError):
    """A seed or mask the generator refuses; ``str(err)`` is meant for the person who typed it."""


@dataclass(frozen=True)
class ExpEntry:
    """One line of the e^x table: an exponent (a multiple of -1/√d_k) and e^x rounded for print."""

    x: Fraction
    value: float


@dataclass(frozen=True)
class Exercise:
    """One hand-sized self-attention exercise and every number of its solution. Arrays are read-only.

    The exercise is ``seed``, ``mask``, ``Q [n, d_k]``, ``K [n, d_k]``, ``V [n, d_v]`` (integers)
    and ``d_k``; the rest is the solution. Where ``allowed`` is False the masked score, the
    shifted score are −∞ and the e^(x − max) term is 0.
    """

    seed: int
    mask: str  # one of EXERCISE_MASKS
    d_k: int
    Q: np.ndarray  # [n, d_k] int
    K: np.ndarray  # [n, d_k] int
    V: np.ndarray  # [n, d_v] int
    allowed: np.ndarray  # [n, n] bool, True = query i may attend to key j
    scores: np.ndarray  # [n, n] int, Q Kᵀ
    scaled: np.ndarray  # [n, n] Q Kᵀ / √d_k
    masked: np.ndarray  # [n, n] scaled, −∞ where not allowed
    row_max: np.ndarray  # [n] the largest allowed scaled score of each row
    shifted: np.ndarray  # [n, n] masked − row_max: 0 at the row's maximum, ≤ 0 elsewhere
    exp_terms: np.ndarray  # [n, n] e^shifted (0 where masked)
    row_sums: np.ndarray  # [n] sum of each row's exp_terms (≥ 1: the maximum contributes e^0)
    weights: np.ndarray  # [n, n] softmax rows (注意重み), from steps.softmax
    output: np.ndarray  # [n, d_v] weights V

    @property
    def n(self) -> int:
        return self.Q.shape[0]

    @property
    def d_v(self) -> int:
        return self.V.shape[1]

    @property
    def root_d_k(self) -> int:
        """√d_k, a whole number by construction."""
        return math.isqrt(self.d_k)

    @property
    def exp_table(self) -> tuple[ExpEntry, ...]:
        """The e^x values this exercise needs: x = 0, -1/√d_k, ..., -MAX_SPREAD."""
        return exp_table(self.d_k)

    def scaled_exact(self, i: int, j: int) -> Fraction:
        """The scaled score [i, j] as an exact fraction (what a person writes: 7/3, not 2.333)."""
        return Fraction(int(self.scores[i, j]), self.root_d_k)

    def shifted_exact(self, i: int, j: int) -> Fraction | None:
        """The exponent of entry [i, j] after subtracting the row maximum, exactly; None if masked."""
        if not self.allowed[i, j]:
            return None
        top = max(int(self.scores[i, k]) for k in range(self.n) if self.allowed[i, k])
        return Fraction(int(self.scores[i, j]) - top, self.root_d_k)

    @property
    def output_from_rounded_weights(self) -> np.ndarray:
        """``[n, d_v]``: the output a person gets from the weights rounded to WEIGHT_DECIMALS.

        It can differ from ``output`` in the third decimal (by at most n · 0.0005 · MAX_ENTRY).
        """
        return steps.weighted_sum(np.round(self.weights, WEIGHT_DECIMALS), self.V)


def exp_table(d_k: int) -> tuple[ExpEntry, ...]:
    """e^x for every exponent a row can need: x = -k/√d_k for k = 0 .. MAX_SPREAD·√d_k."""
    root = _whole_root(d_k)
    return tuple(
        ExpEntry(Fraction(-k, root), round(math.exp(-k / root), TABLE_DECIMALS))
        for k in range(MAX_SPREAD * root + 1)
    )


def generate_exercise(seed: int, mask: str = "none") -> Exercise:
    """The exercise for ``seed`` (0 .. 2⁶³−1) with mask ``"none"`` or ``"causal"``.

    The mask does not take part in the drawing: both masks give the same Q, K, V for one seed
    (the spread rule is checked over every key, which covers the causal rows too).
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= MAX_SEED:
        raise ExerciseError(f"the seed must be a whole number from 0 to {MAX_SEED} (got {seed!r})")
    if mask not in EXERCISE_MASKS:
        raise ExerciseError(f"the mask must be one of {', '.join(EXERCISE_MASKS)} (got {mask!r})")
    seed = int(seed)
    rng = np.random.default_rng(seed)
    n = int(_draw(rng, N_CHOICES, 1)[0])
    d_k = int(_draw(rng, D_K_CHOICES, 1)[0])
    d_v = int(_draw(rng, D_V_CHOICES, 1)[0])
    Q, K = _draw_queries_and_keys(rng, n, d_k)
    V = _draw(rng, V_ENTRIES, (n, d_v))
    return solve_exercise(seed, mask, Q, K, V)


def solve_exercise(seed: int, mask: str, Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> Exercise:
    """Every step of the solution, computed by the core's step functions.

    ``Q [n, d_k]``, ``K [n, d_k]``, ``V [n, d_v]`` integer matrices with d_k a perfect square.
    """
    Q, K, V = (np.asarray(a, dtype=np.int64) for a in (Q, K, V))
    n, d_k = Q.shape
    if K.shape != (n, d_k) or V.shape[0] != n:
        raise ValueError("Q and K must be [n, d_k] and V [n, d_v]")
    root = _whole_root(d_k)
    allowed = steps.build_mask(mask, n)  # [n, n]
    scores = steps.raw_scores(Q, K)  # [n, n] integers
    scaled = steps.scale(scores, root)  # [n, n]
    masked = steps.apply_mask(scaled, allowed)  # [n, n], −∞ where masked
    weights = steps.softmax(masked)  # [n, n]
    output = steps.weighted_sum(weights, V)  # [n, d_v]
    # The hand method of softmax: every row keeps its diagonal under both masks, so row_max is finite.
    row_max = np.max(masked, axis=-1)  # [n]
    shifted = masked - row_max[:, None]  # [n, n], −∞ stays −∞
    exp_terms = np.exp(shifted)  # [n, n], e^−∞ = 0
    row_sums = np.sum(exp_terms, axis=-1)  # [n]
    return Exercise(
        seed=int(seed),
        mask=mask,
        d_k=int(d_k),
        **{
            name: _readonly(value)
            for name, value in dict(
                Q=Q,
                K=K,
                V=V,
                allowed=allowed,
                scores=scores,
                scaled=scaled,
                masked=masked,
                row_max=row_max,
                shifted=shifted,
                exp_terms=exp_terms,
                row_sums=row_sums,
                weights=weights,
                output=output,
            ).items()
        },  # fmt: skip
    )


def _whole_root(d_k: int) -> int:
    root = math.isqrt(d_k)
    if root * root != d_k:
        raise ValueError(f"d_k = {d_k} has no whole square root")
    return root


def _draw(rng: np.random.Generator, options: tuple[int, ...], size) -> np.ndarray:
    """Entries picked uniformly from ``options``, from the bit generator's raw 64-bit words.

    The raw stream of a seeded PCG64 is the same on every platform and NumPy version, whereas the
    algorithms behind ``Generator.integers`` and friends may change between NumPy releases; a
    printed worksheet must regenerate identically years later. (The modulo bias, len/2⁶⁴, is nil.)
    """
    raw = rng.bit_generator.random_raw(size)
    return np.asarray(options, dtype=np.int64)[raw % np.uint64(len(options))]


def _draw_queries_and_keys(rng: np.random.Generator, n: int, d_k: int) -> tuple[np.ndarray, np.ndarray]:
    """``Q [n, d_k]`` and ``K [n, d_k]`` such that every row of Q Kᵀ spreads at most MAX_SPREAD·√d_k.

    Keys first, then each query row is redrawn until it is not all zeros and its scores fit; if
    some row cannot be fitted within MAX_QUERY_TRIES the keys are redrawn. An exercise whose rows
    are all flat (every weight 1/n) is redrawn too, except in the last round, which falls back to
    the zero query for a row that does not fit.
    """
    entries = QK_ENTRIES[d_k]
    limit = MAX_SPREAD * _whole_root(d_k)  # in units of raw (integer) scores
    for round_ in range(MAX_KEY_ROUNDS):
        last = round_ == MAX_KEY_ROUNDS - 1
        K = _draw(rng, entries, (n, d_k))
        rows = []
        for _ in range(n):
            for _ in range(MAX_QUERY_TRIES):
                q = _draw(rng, entries, d_k)
                row = K @ q
                # a zero query would make its row flat (every weight 1/n) for any keys: skip it
                if q.any() and row.max() - row.min() <= limit:
                    rows.append(q)
                    break
            else:
                if not last:
                    break
                rows.append(np.zeros(d_k, dtype=np.int64))
        if len(rows) < n:
            continue
        Q = np.stack(rows)
        S = Q @ K.T
        if last or np.any(S.max(axis=1) > S.min(axis=1)):
            return Q, K
    raise AssertionError("unreachable: the last round always returns")


_readonly = partial(read_only, copy=True)

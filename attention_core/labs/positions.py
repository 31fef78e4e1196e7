"""Lab "Positions": attention without positional information ignores word order, and three ways to
give it positions (sinusoidal, a learned-style table, RoPE).

One attention head (``d_k = d_model``, random ``W_Q``, ``W_K``, ``W_V`` from the seed) over the
learner's tokens. The steps, each a small pure function:

- :func:`shuffle_order`: a permutation of the positions (seeded, never the identity when n > 1);
- :func:`self_attention_outputs`: ``softmax(Q Kᵀ/√d_k) V`` for an ``X [n, d]``;
- :func:`equivariance_gap`: the largest difference between "shuffle, then attend" and "attend, then
  shuffle the rows" (zero up to rounding without positions; not zero with them added);
- :func:`learned_table`: a random ``[L, d]`` table standing in for trained position vectors (a model
  learns one row per position up to its longest training sequence ``L``; nothing beyond);
- :func:`pair_score_additive` / :func:`pair_score_rope`: the score of one query token at position
  ``m`` and one key token at position ``m - offset``, for many ``m``;
- :func:`rope_pair_path`: one 2-D pair of a query vector turning with position (RoPE);
- :func:`extrapolation_scores`: the score of the two tokens as the query moves past ``L``.

RoPE and the sinusoidal encoding are the project's own (:mod:`attention_core.rope`,
:func:`attention_core.embeddings.positional_encoding`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..arrays import read_only
from ..config import AttentionConfigError
from ..embeddings import embed, positional_encoding
from ..rope import apply_rope, pair_indices, pair_norms, rope_frequencies
from ..steps import raw_scores, scale, softmax, weighted_sum
from ..tokenizer import DEFAULT_MAX_TOKENS, Tokenization, tokenize_sentence

D_MODEL_RANGE = (2, 128)  # even values only (RoPE turns pairs of coordinates)
SEEN_RANGE = (2, 512)  # L, the longest position a model was trained on
OFFSET_RANGE = (0, 64)
ROPE_BASE = 10000.0  # the RoFormer paper's base, the same 10000 as the sinusoidal encoding
SCHEMES = ("sinusoidal", "learned", "rope")


_ro = read_only  # every array of a result is frozen: results are cached and shared


@dataclass(frozen=True)
class PositionsSettings:
    """What the page asks for, validated once."""

    text: str
    d_model: int = 16
    seed: int = 0
    seen: int = 32  # L: positions 0 .. L-1 were "seen"
    offset: int = 2  # query position minus key position for the side-by-side scores
    pair: int = 0  # the RoPE pair drawn as an arrow
    max_tokens: int = DEFAULT_MAX_TOKENS

    def __post_init__(self) -> None:
        lo, hi = D_MODEL_RANGE
        if not (lo <= self.d_model <= hi) or self.d_model % 2:
            raise AttentionConfigError(
                f"d_model must be an even number from {lo} to {hi}, got {self.d_model}."
            )
        if not SEEN_RANGE[0] <= self.seen <= SEEN_RANGE[1]:
            raise AttentionConfigError(
                f"The longest seen position must be from {SEEN_RANGE[0]} to {SEEN_RANGE[1]}, got {self.seen}."
            )
        if not OFFSET_RANGE[0] <= self.offset <= min(OFFSET_RANGE[1], self.seen - 1):
            raise AttentionConfigError(
                f"The offset must be from 0 to {min(OFFSET_RANGE[1], self.seen - 1)}, got {self.offset}."
            )
        if not 0 <= self.pair < self.d_model // 2:
            raise AttentionConfigError(
                f"The pair must be from 0 to {self.d_model // 2 - 1}, got {self.pair}."
            )
        if self.seed < 0:
            raise AttentionConfigError("The seed must not be negative.")


# --- the steps --------------------------------------------------------------------------------------


def head_weights(d_model: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``W_Q, W_K, W_V``, each ``[d, d]`` with entries ~ N(0, 1/d), from ``seed``."""
    rng = np.random.default_rng((int(seed), 0x9051))
    W = rng.standard_normal((3, d_model, d_model)) / math.sqrt(d_model)
    return W[0], W[1], W[2]


def shuffle_order(n: int, seed: int) -> np.ndarray:
    """A permutation of ``0 .. n-1`` from ``seed``, never the identity when ``n > 1``: ``-> [n]``."""
    if n <= 1:
        return np.arange(n)
    perm = np.random.default_rng((int(seed), 0x5AF)).permutation(n)
    if np.array_equal(perm, np.arange(n)):
        perm = np.roll(perm, 1)
    return perm


def self_attention_outputs(X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray) -> np.ndarray:
    """One unmasked head: ``softmax(X W_Q (X W_K)ᵀ / √d) X W_V``: ``[n, d] -> [n, d]``."""
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return weighted_sum(softmax(scale(raw_scores(Q, K), math.sqrt(W_Q.shape[1]))), V)


def row_gaps(X_shuffled_out: np.ndarray, out: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Per row, ``max |attend(shuffled X) − attend(X)[perm]|``: ``[n, d], [n, d], [n] -> [n]``."""
    if out.size == 0:
        return np.zeros(out.shape[0])
    return np.max(np.abs(X_shuffled_out - out[perm]), axis=1)


def equivariance_gap(X_shuffled_out: np.ndarray, out: np.ndarray, perm: np.ndarray) -> float:
    """``max |attend(shuffled X) − attend(X)[perm]|`` over every row: ``-> float``."""
    gaps = row_gaps(X_shuffled_out, out, perm)
    return float(np.max(gaps)) if gaps.size else 0.0


def learned_table(seen: int, d_model: int, seed: int) -> np.ndarray:
    """A stand-in for a trained position table: ``[L, d]``, entries ~ N(0, 1/2) from ``seed``.

    A trained model has one learned row per position up to its longest training sequence; a random
    table has the same shape and the same property: no row exists for position ``L`` or later. The
    variance 1/2 gives a row the expected squared length d/2 of a sinusoidal row (whose columns are
    sin² and cos² of the same angles), so the two additive schemes are compared at the same size.
    """
    return np.random.default_rng((int(seed), 0x7AB1E)).standard_normal((seen, d_model)) * math.sqrt(0.5)


def position_vectors(scheme: str, positions: np.ndarray, d_model: int, table: np.ndarray) -> np.ndarray:
    """The additive vector of each position: ``[m] -> [m, d]``; NaN rows where the scheme has none
    (the learned table beyond its last row). Sinusoidal comes from ``positional_encoding``."""
    positions = np.asarray(positions, dtype=int)
    if scheme == "sinusoidal":
        top = int(positions.max()) + 1 if positions.size else 0
        return positional_encoding(top, d_model)[positions]
    if scheme == "learned":
        out = np.full((positions.size, d_model), np.nan)
        inside = positions < table.shape[0]
        out[inside] = table[positions[inside]]
        return out
    raise ValueError(f"not an additive scheme: {scheme!r}")


def pair_score_additive(
    x_q: np.ndarray, x_k: np.ndarray, pe_q: np.ndarray, pe_k: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray
) -> np.ndarray:
    """Scores ``(x_q + pe_q[i]) W_Q · (x_k + pe_k[i]) W_K / √d`` for each placement ``i``:
    ``x [d]``, ``pe [m, d]`` -> ``[m]``."""
    q = (x_q[None, :] + pe_q) @ W_Q  # [m, d]
    k = (x_k[None, :] + pe_k) @ W_K  # [m, d]
    return np.sum(q * k, axis=1) / math.sqrt(W_Q.shape[1])


def pair_score_rope(
    x_q: np.ndarray, x_k: np.ndarray, pq: np.ndarray, pk: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray
) -> np.ndarray:
    """Scores ``rope(x_q W_Q, pq[i]) · rope(x_k W_K, pk[i]) / √d`` for each placement: ``-> [m]``."""
    m = len(pq)
    q = apply_rope(np.tile(x_q @ W_Q, (m, 1)), np.asarray(pq), ROPE_BASE)  # [m, d]
    k = apply_rope(np.tile(x_k @ W_K, (m, 1)), np.asarray(pk), ROPE_BASE)  # [m, d]
    return np.sum(q * k, axis=1) / math.sqrt(W_Q.shape[1])


def rope_pair_path(vector: np.ndarray, positions: np.ndarray, pair: int) -> np.ndarray:
    """Pair ``pair`` of ``vector`` after RoPE at each position: ``[d], [m] -> [m, 2]`` (interleaved
    layout: coordinates ``2·pair``, ``2·pair + 1``)."""
    m = len(positions)
    turned = apply_rope(np.tile(vector, (m, 1)), np.asarray(positions), ROPE_BASE)  # [m, d]
    first, second = pair_indices(vector.shape[0])
    return np.stack([turned[:, first[pair]], turned[:, second[pair]]], axis=1)


def unseen_angle_pairs(d_model: int, seen: int) -> int:
    """RoPE pairs whose angle ``p·θ_i`` has not completed one full turn by the last seen position
    ``L − 1``: past it they reach angles no seen position had. ``-> int``."""
    return int(np.sum(rope_frequencies(d_model, ROPE_BASE) * (seen - 1) < 2 * math.pi))


# --- what the page shows ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PositionsLab:
    """Everything the positions page shows for one sentence and setting."""

    settings: PositionsSettings
    tokenization: Tokenization
    tokens: tuple[str, ...]
    perm: np.ndarray  # [n] the shuffle
    out_plain: np.ndarray  # [n, d] outputs without positions
    out_plain_shuffled: np.ndarray  # [n, d] outputs for the shuffled tokens, without positions
    out_pos: np.ndarray  # [n, d] outputs with sinusoidal positions added
    out_pos_shuffled: np.ndarray  # [n, d] shuffled tokens, positions added after the shuffle
    rows_plain: np.ndarray  # [n] row_gaps without positions
    rows_pos: np.ndarray  # [n] row_gaps with positions
    gap_plain: float  # equivariance_gap without positions (rounding-sized)
    gap_pos: float  # with positions (not small)
    query_token: str  # the two tokens of the side-by-side scores
    key_token: str
    placements: np.ndarray  # [m] query positions; the key sits at placement − offset
    scores: dict  # scheme -> [m] scores of the two tokens at those placements
    spread: dict  # scheme -> max − min of those scores
    arrow_positions: np.ndarray  # [P]
    arrow_path: np.ndarray  # [P, 2] one pair of the query vector turning with position
    arrow_angle_step: float  # θ_pair: radians per position
    arrow_length: float  # the pair's length, the same at every position
    extrapolation_positions: np.ndarray  # [E] query positions 0 .. 3L−1 (key at 0)
    extrapolation: dict  # scheme -> [E] scores (NaN where the scheme has no vector)
    unseen_pairs: int  # RoPE pairs that meet unseen angles past L


def positions_lab(settings: PositionsSettings) -> PositionsLab:
    """Run every step of the page on ``settings.text``."""
    s = settings
    tok = tokenize_sentence(s.text, max_tokens=s.max_tokens)
    tokens = tok.tokens
    n, d = len(tokens), s.d_model
    W_Q, W_K, W_V = head_weights(d, s.seed)
    X = embed(tokens, d, s.seed, positional=False)  # [n, d]
    perm = shuffle_order(n, s.seed)
    perm.setflags(write=False)
    pe = positional_encoding(n, d)
    out_plain = self_attention_outputs(X, W_Q, W_K, W_V)
    out_plain_sh = self_attention_outputs(X[perm], W_Q, W_K, W_V)
    out_pos = self_attention_outputs(X + pe, W_Q, W_K, W_V)
    out_pos_sh = self_attention_outputs(X[perm] + pe, W_Q, W_K, W_V)  # positions stay where they are

    x_q, x_k = X[-1], X[0]  # the last token asks, the first answers
    table = learned_table(s.seen, d, s.seed)
    placements = np.arange(s.offset, s.seen)  # every placement inside the seen range
    keys = placements - s.offset

    def scores_at(q_pos: np.ndarray, k_pos: np.ndarray) -> dict[str, np.ndarray]:
        """The pair's score under each scheme, the query at q_pos[i] and the key at k_pos[i]."""
        additive = {
            kind: pair_score_additive(
                x_q,
                x_k,
                position_vectors(kind, q_pos, d, table),
                position_vectors(kind, k_pos, d, table),
                W_Q,
                W_K,
            )
            for kind in ("sinusoidal", "learned")
        }
        return {**additive, "rope": pair_score_rope(x_q, x_k, q_pos, k_pos, W_Q, W_K)}

    scores = scores_at(placements, keys)
    arrow_positions = np.arange(0, 9)
    ext = np.arange(3 * s.seen)
    extrapolation = scores_at(ext, np.zeros(ext.size, dtype=int))
    return PositionsLab(
        settings=s,
        tokenization=tok,
        tokens=tokens,
        perm=perm,
        out_plain=_ro(out_plain),
        out_plain_shuffled=_ro(out_plain_sh),
        out_pos=_ro(out_pos),
        out_pos_shuffled=_ro(out_pos_sh),
        rows_plain=_ro(row_gaps(out_plain_sh, out_plain, perm)),
        rows_pos=_ro(row_gaps(out_pos_sh, out_pos, perm)),
        gap_plain=equivariance_gap(out_plain_sh, out_plain, perm),
        gap_pos=equivariance_gap(out_pos_sh, out_pos, perm),
        query_token=tokens[-1],
        key_token=tokens[0],
        placements=_ro(placements),
        scores={k: _ro(v) for k, v in scores.items()},
        spread={k: float(np.ptp(v)) for k, v in scores.items()},
        arrow_positions=_ro(arrow_positions),
        arrow_path=_ro(rope_pair_path(x_q @ W_Q, arrow_positions, s.pair)),
        arrow_length=float(pair_norms(x_q @ W_Q)[s.pair]),
        arrow_angle_step=float(rope_frequencies(d, ROPE_BASE)[s.pair]),
        extrapolation_positions=_ro(ext),
        extrapolation={k: _ro(v) for k, v in extrapolation.items()},
        unseen_pairs=unseen_angle_pairs(d, s.seen),
    )

"""Answers to predict-then-reveal questions (issue 19), from exercises and traces, against hand-worked
cases and naive loops written here."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import AttentionConfig, build_mask, softmax, trace_text
from attention_core.exercise import generate_exercise
from attention_core.predict import (
    is_winning_key,
    masked_cells,
    memory_factor_when_doubling,
    row_sums_to_one,
    score_matrix_bytes,
    scores_shape,
    winning_key,
    winning_keys,
)


def test_scores_shape_from_an_exercise_and_a_trace():
    ex = generate_exercise(4)
    assert scores_shape(ex.Q, ex.K) == (ex.n, ex.n) == ex.scores.shape
    tr = trace_text("one two three four five", AttentionConfig(d_model=8, heads=2))
    assert scores_shape(tr.Q[1], tr.K[1]) == (5, 5) == tr.scores_raw[1].shape
    # a cross-attention-like pair: 2 queries, 3 keys, d_k = 4
    assert scores_shape(np.zeros((2, 4)), np.zeros((3, 4))) == (2, 3)
    with pytest.raises(ValueError, match="d_k"):
        scores_shape(np.zeros((2, 4)), np.zeros((3, 5)))
    with pytest.raises(ValueError):
        scores_shape(tr.Q, tr.K)  # all heads at once: pick one


def test_winning_keys_by_hand():
    assert winning_keys(np.array([0.2, 0.5, 0.3])) == (1,)
    assert winning_keys(np.array([0.5, 0.0, 0.5])) == (0, 2)  # a tie: both win
    assert winning_key(np.array([0.5, 0.0, 0.5])) == 0  # the lowest index, like np.argmax
    assert is_winning_key(np.array([0.5, 0.0, 0.5]), 2) and not is_winning_key(np.array([0.5, 0.0, 0.5]), 1)
    assert winning_keys(np.zeros(3)) == () and winning_key(np.zeros(3)) is None  # every key masked
    assert winning_keys(np.array([1.0, 0.0])) == (0,)


def test_a_tie_from_equal_scores_is_a_tie_after_softmax():
    a, b = (0.1 + 0.2) * 100, 0.3 * 100  # 30 reached by two roundings, one ulp apart
    assert a != b
    w = softmax(np.array([[a, b, -1.0]]))[0]
    assert w[0] != w[1] and winning_keys(w) == (0, 1)
    w = softmax(np.array([[1.0, 1.0 - 1e-9, -1.0]]))[0]  # close, but really different
    assert winning_keys(w) == (0,)


def test_winning_keys_match_a_naive_argmax_on_exercises():
    for seed in range(200):
        ex = generate_exercise(seed, "causal")
        for i in range(ex.n):
            row = [float(v) for v in ex.weights[i]]
            best = max(row)
            # integer scores: tied weights come from exactly equal scores
            tied = tuple(j for j in range(ex.n) if ex.allowed[i, j] and ex.scores[i, j] == max(
                ex.scores[i, k] for k in range(ex.n) if ex.allowed[i, k]))  # fmt: skip
            assert winning_keys(ex.weights[i]) == tied, (seed, i)
            assert row[winning_key(ex.weights[i])] == best


def test_winning_keys_on_a_trace_with_repeated_tokens():
    # no positional encoding: the two "cat" tokens have identical keys, so every query ties them
    tr = trace_text("cat dog cat", AttentionConfig(d_model=8, heads=1, positional=False, seed=3))
    winners = [winning_keys(tr.weights[0, i]) for i in range(3)]
    assert all(keys in ((0, 2), (1,)) for keys in winners), winners
    assert (0, 2) in winners


def test_masked_cells():
    assert masked_cells(build_mask("causal", 3)) == ((0, 1), (0, 2), (1, 2))
    assert masked_cells(build_mask("none", 4)) == ()
    assert masked_cells(build_mask("padding", 3, n_pad=1)) == ((0, 2), (1, 2), (2, 2))
    ex = generate_exercise(9, "causal")
    naive = tuple((i, j) for i in range(ex.n) for j in range(ex.n) if j > i)
    assert masked_cells(ex.allowed) == naive


def test_row_sums_to_one():
    ex = generate_exercise(2, "causal")
    assert all(row_sums_to_one(ex.weights[i]) for i in range(ex.n))  # masked rows renormalise
    tr = trace_text("a b c d", AttentionConfig(mask="causal+padding", pad=2))
    assert all(row_sums_to_one(tr.weights[0, i]) for i in range(tr.n))
    all_masked = softmax(np.array([[-np.inf, -np.inf]]))[0]
    assert not row_sums_to_one(all_masked)
    assert not row_sums_to_one(np.array([0.5, 0.4]))


def test_memory_of_the_score_matrix():
    # the reference notes' table: n = 2,048 in FP16, one head -> 8 MB (4M entries x 2 bytes)
    assert score_matrix_bytes(2048) == 8 * 1024 * 1024
    assert score_matrix_bytes(32768) == 2 * 1024**3
    assert score_matrix_bytes(4, heads=2, bytes_per_entry=8) == 2 * 4 * 4 * 8
    for n in (1, 3, 7, 100):
        assert memory_factor_when_doubling(n) == 4
        # measured on real arrays, independently of the formula
        small, big = np.zeros((n, n), dtype=np.float16), np.zeros((2 * n, 2 * n), dtype=np.float16)
        assert big.nbytes / small.nbytes == memory_factor_when_doubling(n)
        assert small.nbytes == score_matrix_bytes(n)
    with pytest.raises(ValueError):
        score_matrix_bytes(0)

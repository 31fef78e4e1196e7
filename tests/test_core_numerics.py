"""Numerical edge cases of softmax / masking, and small cases worked out by hand."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from attention_core import (
    AttentionConfig,
    AttentionParams,
    additive_mask,
    apply_mask,
    attend,
    merge_heads,
    softmax,
    split_heads,
    trace_text,
)


def _params(rng, h=2, d_model=4, d_k=3, d_v=2):
    return AttentionParams(
        W_Q=rng.normal(size=(h, d_model, d_k)),
        W_K=rng.normal(size=(h, d_model, d_k)),
        W_V=rng.normal(size=(h, d_model, d_v)),
        W_O=rng.normal(size=(h * d_v, d_model)),
    )


# ---------------------------------------------------------------- fully masked rows


def test_fully_masked_rows_give_zero_weights_and_outputs_and_are_flagged():
    rng = np.random.default_rng(1)
    n = 5
    X = rng.normal(size=(n, 4))
    allowed = rng.random((n, n)) < 0.6
    allowed[0] = False
    allowed[3] = False
    allowed[1] = True
    tr = attend(X, _params(rng), allowed, 2.0)
    assert tr.fully_masked_rows.tolist() == [not any(allowed[i].tolist()) for i in range(n)]
    assert tr.fully_masked_rows[0] and tr.fully_masked_rows[3] and not tr.fully_masked_rows[1]
    for i in (0, 3):
        assert np.array_equal(tr.weights[:, i, :], np.zeros((2, n)))
        assert np.array_equal(tr.head_outputs[:, i, :], np.zeros((2, 2)))
        assert np.array_equal(tr.output[i], np.zeros(4))  # no bias, so the output row is 0 too
    for arr in (tr.weights, tr.head_outputs, tr.concat, tr.output):
        assert not np.isnan(arr).any()


def test_everything_masked_is_all_zero_not_nan():
    rng = np.random.default_rng(2)
    tr = attend(rng.normal(size=(3, 4)), _params(rng), np.zeros((3, 3), dtype=bool), 1.0)
    assert tr.fully_masked_rows.all()
    assert np.array_equal(tr.weights, np.zeros((2, 3, 3)))
    assert np.array_equal(tr.output, np.zeros((3, 4)))
    assert np.isneginf(tr.scores_masked).all()


@pytest.mark.parametrize("seed", range(10))
def test_rows_sum_to_one_and_masked_weights_are_exactly_zero(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 10))
    allowed = rng.random((n, n)) < 0.5
    tr = attend(rng.normal(size=(n, 4)) * 3, _params(rng), allowed, float(rng.uniform(0.1, 5)))
    sums = tr.weights.sum(axis=-1)  # [h, n]
    has_key = allowed.any(axis=1)
    np.testing.assert_allclose(sums[:, has_key], 1.0, rtol=0, atol=1e-12)
    assert np.array_equal(sums[:, ~has_key], np.zeros((2, int((~has_key).sum()))))
    assert np.all(tr.weights[:, ~allowed] == 0.0)
    assert np.all(tr.weights >= 0.0)
    assert np.array_equal(tr.fully_masked_rows, ~has_key)


# ---------------------------------------------------------------- softmax itself


@pytest.mark.parametrize("shift", [-1e3, -7.5, 0.0, 3.25, 1e3, 1e6])
def test_softmax_is_invariant_to_a_constant_per_row(shift):
    rng = np.random.default_rng(3)
    s = rng.normal(size=(2, 4, 5)) * 4
    s[0, 1, 2] = -np.inf
    per_row = shift * rng.uniform(0.5, 1.5, size=(2, 4, 1))  # a different constant for every row
    # s + c itself is rounded to the spacing of floats near c, so the tolerance grows with |c|
    atol = 1e-12 + 8 * np.finfo(float).eps * 1.5 * abs(shift)
    np.testing.assert_allclose(softmax(s + per_row), softmax(s), rtol=0, atol=atol)


def test_softmax_with_positive_infinity_has_no_nan():
    s = np.array(
        [[np.inf, 1.0, -np.inf], [np.inf, np.inf, 0.0], [-np.inf, -np.inf, -np.inf], [1e308, 1e308, -1e308]]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow / invalid-value RuntimeWarning either
        w = softmax(s)
    assert not np.isnan(w).any() and np.isfinite(w).all()
    assert w[0].tolist() == [1.0, 0.0, 0.0]
    assert w[1].tolist() == [0.5, 0.5, 0.0]
    assert w[2].tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(w[3], [0.5, 0.5, 0.0], rtol=0, atol=1e-15)


@pytest.mark.parametrize("divisor", [1e-6, 1e-3, 1.0, 1e6])
def test_huge_scores_scaled_by_tiny_divisors_have_no_nan(divisor):
    raw = np.array([[[1e6, -1e6, 0.0], [-1e6, -1e6, 1e6], [1e6, 1e6, 1e6]]])
    w = softmax(
        apply_mask(raw / divisor, np.array([[True, True, False], [True, True, True], [False, True, True]]))
    )
    assert np.isfinite(w).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    if divisor <= 1.0:
        assert w[0, 0].tolist() == [1.0, 0.0, 0.0]


@pytest.mark.parametrize("divisor", [1e-6, 1e6])
def test_attend_with_extreme_inputs_stays_finite(divisor):
    rng = np.random.default_rng(4)
    X = rng.choice([-1e6, 1e6], size=(6, 4))
    tr = attend(X, _params(rng), np.tril(np.ones((6, 6), dtype=bool)), divisor)
    for arr in (tr.weights, tr.head_outputs, tr.concat, tr.output):
        assert np.isfinite(arr).all()
    np.testing.assert_allclose(tr.weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_apply_mask_hides_positive_infinity_and_additive_mask_is_zero_or_minus_inf():
    allowed = np.array([[True, False], [False, True]])
    masked = apply_mask(np.array([[1.0, np.inf], [np.nan, 2.0]]), allowed)
    assert (
        masked[0, 0] == 1.0
        and np.isneginf(masked[0, 1])
        and np.isneginf(masked[1, 0])
        and masked[1, 1] == 2.0
    )
    M = additive_mask(allowed)
    assert M[0, 0] == 0.0 and M[1, 1] == 0.0 and np.isneginf(M[0, 1]) and np.isneginf(M[1, 0])


def test_split_and_merge_heads_by_index():
    x = np.arange(2 * 6, dtype=float).reshape(2, 6)  # [n=2, h*d = 3*2]
    heads = split_heads(x, 3)
    assert heads.shape == (3, 2, 2)
    for h in range(3):
        for i in range(2):
            for c in range(2):
                assert heads[h, i, c] == x[i, h * 2 + c]
    assert np.array_equal(merge_heads(heads), x)
    with pytest.raises(ValueError):
        split_heads(x, 4)


# ---------------------------------------------------------------- worked by hand


def _two_token_case(divisor, causal):
    # X = [[1, 2], [3, -1]], W_Q = W_K = I, W_V = [[1], [0]], W_O = [[1, 0]]
    # => Q = K = X, raw = X X^T = [[5, 1], [1, 10]], V = [[1], [3]]
    X = np.array([[1.0, 2.0], [3.0, -1.0]])
    eye = np.eye(2)[None]
    params = AttentionParams(W_Q=eye, W_K=eye, W_V=np.array([[[1.0], [0.0]]]), W_O=np.array([[1.0, 0.0]]))
    allowed = np.array([[True, False], [True, True]]) if causal else np.ones((2, 2), dtype=bool)
    return attend(X, params, allowed, divisor)


@pytest.mark.parametrize(("divisor", "label"), [(math.sqrt(2), "sqrt"), (1.0, "none")])
def test_two_tokens_by_hand(divisor, label):
    tr = _two_token_case(divisor, causal=False)
    assert tr.scores_raw[0].tolist() == [[5.0, 1.0], [1.0, 10.0]]
    a, b = math.exp(5 / divisor), math.exp(1 / divisor)  # row 0: scores 5, 1
    c, d = math.exp(1 / divisor), math.exp(10 / divisor)  # row 1: scores 1, 10
    want = [[a / (a + b), b / (a + b)], [c / (c + d), d / (c + d)]]
    np.testing.assert_allclose(tr.weights[0], want, rtol=1e-13, atol=0)
    # each output is the weighted average of the values 1 and 3
    want_out = [[want[0][0] * 1 + want[0][1] * 3], [want[1][0] * 1 + want[1][1] * 3]]
    np.testing.assert_allclose(tr.head_outputs[0], want_out, rtol=1e-13, atol=0)
    np.testing.assert_allclose(tr.output, [[want_out[0][0], 0.0], [want_out[1][0], 0.0]], rtol=1e-13, atol=0)
    if label == "none":
        # e^5 / (e^5 + e^1) = 1 / (1 + e^-4) = 0.98201379...
        assert abs(tr.weights[0, 0, 0] - 0.9820137900379085) < 1e-15


def test_two_tokens_causal_by_hand():
    tr = _two_token_case(math.sqrt(2), causal=True)
    assert tr.weights[0, 0].tolist() == [1.0, 0.0]
    c, d = math.exp(1 / math.sqrt(2)), math.exp(10 / math.sqrt(2))
    np.testing.assert_allclose(tr.weights[0, 1], [c / (c + d), d / (c + d)], rtol=1e-13, atol=0)
    assert tr.head_outputs[0, 0, 0] == 1.0  # the first token only sees itself


def test_single_token_attends_to_itself():
    tr = trace_text("hello", AttentionConfig(d_model=4, heads=2, mask="causal"))
    assert tr.n == 1
    assert tr.weights.tolist() == [[[1.0]], [[1.0]]]
    np.testing.assert_allclose(tr.head_outputs, tr.V, rtol=0, atol=0)


def test_padding_mask_with_only_pads_after_one_word():
    tr = trace_text("hi", AttentionConfig(d_model=4, heads=1, mask="padding", pad=3))
    assert tr.tokens == ("hi", "[PAD]", "[PAD]", "[PAD]")
    # every query (pads included) may only look at "hi"
    assert np.array_equal(tr.weights[0], np.array([[1.0, 0, 0, 0]] * 4))

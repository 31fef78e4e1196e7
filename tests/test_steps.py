"""attention_core/steps.py: the steps several modules share (the sliding window's rule, the head
projection, log_softmax), each against its definition written out here element by element."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import steps

POSITIONS = {
    "consecutive": np.arange(7),
    "shifted": np.arange(7) + 3,
    "every other": 2 * np.arange(7),
    "uneven": np.array([0, 1, 4, 5, 9, 10, 11]),
}


@pytest.mark.parametrize("window", [None, 1, 2, 3, 7, 20])
@pytest.mark.parametrize("name", list(POSITIONS))
def test_window_allowed_is_the_rule_on_any_positions(name, window):
    pos = POSITIONS[name]
    want = np.array([[k <= q and (window is None or q - window < k) for k in pos] for q in pos])
    got = steps.window_allowed(pos, pos, window)
    assert got.dtype == bool and np.array_equal(got, want)


def test_window_allowed_between_different_queries_and_keys():
    q, k = np.array([5, 6]), np.arange(8)  # two new queries against eight cached keys
    assert steps.window_allowed(q, k, 3).tolist() == [
        [False, False, False, True, True, True, False, False],
        [False, False, False, False, True, True, True, False],
    ]
    assert steps.window_allowed(q, k).sum(axis=1).tolist() == [6, 7]  # causal: keys 0..5 and 0..6


def test_window_start_by_hand():
    assert steps.window_start(10, 3) == 8  # keys 8, 9, 10
    assert steps.window_start(1, 4) == -2  # the window reaches back past key 0
    assert steps.window_start(np.array([0, 5]), 1).tolist() == [0, 5]  # a window of one: itself


def test_log_softmax_by_hand():
    got = steps.log_softmax(np.array([[0.0, math.log(3.0)], [1000.0, 1000.0], [-1000.0, 0.0]]))
    np.testing.assert_allclose(got[0], [math.log(0.25), math.log(0.75)], rtol=1e-15)
    np.testing.assert_allclose(got[1], [math.log(0.5)] * 2, rtol=1e-15)  # no overflow
    assert got[2, 1] == 0.0 and got[2, 0] == pytest.approx(-1000.0)  # a tiny probability keeps its log
    assert steps.log_softmax(np.float32([1.0, 2.0])).dtype == np.float64
    batch = np.random.default_rng(0).normal(size=(2, 3, 5))
    np.testing.assert_allclose(np.exp(steps.log_softmax(batch)).sum(axis=-1), 1.0, atol=1e-15)
    np.testing.assert_allclose(steps.log_softmax(batch), np.log(steps.softmax(batch)), atol=1e-14)


def test_project_heads_is_one_product_per_head():
    rng = np.random.default_rng(1)
    X, W = rng.normal(size=(2, 4, 6)), rng.normal(size=(6, 3 * 5))  # a batch of 2, h = 3, d = 5
    got = steps.project_heads(X, W, 3)
    assert got.shape == (2, 3, 4, 5)
    for k in range(3):
        np.testing.assert_allclose(got[:, k], X @ W[:, 5 * k : 5 * (k + 1)], atol=1e-12)
    # a matrix stored [out, in] goes in transposed, as a view
    W_stored = np.ascontiguousarray(W.T)
    np.testing.assert_array_equal(steps.project_heads(X, W_stored.T, 3), got)
    with pytest.raises(ValueError, match="multiple of heads"):
        steps.project_heads(X, W, 4)


def test_merge_head_weights_and_project_with_one_matrix_per_head():
    W = np.arange(2 * 3 * 2).reshape(2, 3, 2)  # h = 2, d_model = 3, d = 2
    assert steps.merge_head_weights(W).tolist() == [[0, 1, 6, 7], [2, 3, 8, 9], [4, 5, 10, 11]]
    rng = np.random.default_rng(2)
    X, Wf, b = rng.normal(size=(4, 3)), rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 2))
    got = steps.project(X, Wf, b)
    np.testing.assert_allclose(got, np.stack([X @ Wf[k] + b[k] for k in range(2)]), atol=1e-12)
    np.testing.assert_allclose(steps.project(X, Wf), np.stack([X @ Wf[k] for k in range(2)]), atol=1e-12)


def test_padding_and_causal_masks_by_hand():
    assert steps.build_mask("causal", 3).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert steps.build_mask("padding", 3, 1).tolist() == [[1, 1, 0]] * 3
    assert steps.build_mask("causal+padding", 3, 1).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 0]]
    assert steps.build_mask("none", 2).tolist() == [[1, 1], [1, 1]]


def test_padding_mask_without_pads_hides_nothing():
    assert steps.build_mask("padding", 3).all()  # n_pad defaults to 0
    assert steps.build_mask("causal+padding", 2).tolist() == [[1, 0], [1, 1]]

"""The reference notes' NumPy worked example (n=4, d_model=6, d_k=3, d_v=2, causal, default_rng(0))."""

from __future__ import annotations

import math

import numpy as np

from attention_core import worked_example_params, worked_example_trace


def _notes_computation():
    """The notes' block, rerun here: same generator, same draws in the same order, one causal head."""
    gen = np.random.default_rng(0)
    X = gen.normal(size=(4, 6))
    Wq = gen.normal(size=(6, 3))
    Wk = gen.normal(size=(6, 3))
    Wv = gen.normal(size=(6, 2))
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ K.T / np.sqrt(3)
    future = np.triu(np.ones((4, 4), dtype=bool), k=1)
    scores = np.where(future, -np.inf, scores)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    return X, Wq, Wk, Wv, scores, w, w @ V


def test_weights_and_outputs_equal_the_notes_exactly():
    X, Wq, Wk, Wv, scores, weights, out = _notes_computation()
    tr = worked_example_trace()
    assert tr.heads == 1
    assert np.array_equal(tr.X, X)
    assert np.array_equal(tr.W_Q[0], Wq) and np.array_equal(tr.W_K[0], Wk) and np.array_equal(tr.W_V[0], Wv)
    assert np.array_equal(tr.weights[0], weights)
    assert np.array_equal(tr.head_outputs[0], out)
    assert np.array_equal(tr.scores_masked[0], scores)


def test_shapes_and_first_row_as_printed_in_the_notes():
    tr = worked_example_trace()
    # the notes print: (4, 4) (4, 4) (4, 2) and [1. 0. 0. 0.]
    assert (tr.scores_masked[0].shape, tr.weights[0].shape, tr.head_outputs[0].shape) == (
        (4, 4),
        (4, 4),
        (4, 2),
    )
    assert tr.weights[0][0].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert np.array_equal(np.round(tr.weights[0][0], 6), np.array([1.0, 0.0, 0.0, 0.0]))


def test_values_printed_by_the_notes_code():
    # Obtained by running the notes' block (python, numpy 2.4.6) and printing repr() of the floats.
    tr = worked_example_trace()
    w, out = tr.weights[0], tr.head_outputs[0]
    tol = {"rtol": 1e-14, "atol": 0}
    np.testing.assert_allclose(w[1], [0.7606972104411948, 0.23930278955880532, 0.0, 0.0], **tol)
    np.testing.assert_allclose(w[3, 1], 0.513595649216395, **tol)
    np.testing.assert_allclose(out[2], [-1.2518017123631175, 2.4050139720487413], **tol)
    # masked (future) weights are exactly zero, not tiny
    assert w[1, 2] == 0.0 and w[1, 3] == 0.0 and w[2, 3] == 0.0


def test_worked_example_setup():
    tr = worked_example_trace()
    assert tr.divisor == math.sqrt(3)
    assert np.array_equal(tr.mask, np.tril(np.ones((4, 4), dtype=bool)))
    assert not tr.fully_masked_rows.any()
    # W_O is drawn after the notes' three matrices, so it cannot move their numbers
    gen = np.random.default_rng(0)
    for shape in ((4, 6), (6, 3), (6, 3), (6, 2)):
        gen.normal(size=shape)
    W_O = gen.normal(size=(2, 6))
    X, params = worked_example_params()
    assert np.array_equal(params.W_O, W_O)
    np.testing.assert_allclose(tr.output, tr.head_outputs[0] @ W_O, rtol=1e-13, atol=1e-13)
    assert np.array_equal(tr.concat, tr.head_outputs[0])
    # calling it twice gives the same numbers (no hidden global random state)
    assert np.array_equal(worked_example_trace().output, tr.output)

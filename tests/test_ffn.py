"""The FFNs (attention_core/ffn.py): activations by hand values, the FFN blocks against loops written
from the formulas, erf against the standard library."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from attention_core import ffn


@pytest.mark.parametrize(("x", "expected"), [
    (0.0, 0.0), (1.0, 1 / (1 + math.exp(-1))), (-1.0, -1 / (1 + math.exp(1))), (20.0, 20 / (1 + math.exp(-20))),
    (-1000.0, 0.0),
])  # fmt: skip
def test_silu_hand_values(x, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning for very negative inputs
        assert ffn.silu(np.array([x]))[0] == pytest.approx(expected, abs=1e-15)


def test_relu():
    np.testing.assert_array_equal(ffn.relu(np.array([-2.0, 0.0, 3.0])), [0.0, 0.0, 3.0])


def test_swiglu_matches_loop():
    rng = np.random.default_rng(1)
    n, d, f = 3, 4, 5
    x = rng.standard_normal((n, d))
    Wg, Wu, Wd = rng.standard_normal((d, f)), rng.standard_normal((d, f)), rng.standard_normal((f, d))
    ref = np.zeros((n, d))
    for i in range(n):
        hidden = []
        for k in range(f):
            g = sum(x[i, c] * Wg[c, k] for c in range(d))
            u = sum(x[i, c] * Wu[c, k] for c in range(d))
            hidden.append(g / (1 + math.exp(-g)) * u)
        for c in range(d):
            ref[i, c] = sum(hidden[k] * Wd[k, c] for k in range(f))
    np.testing.assert_allclose(ffn.swiglu(x, Wg, Wu, Wd), ref, atol=1e-12)
    # [out, in] matrices passed as transposed views give the same
    np.testing.assert_allclose(ffn.swiglu(x, Wg.T.copy().T, Wu.T.copy().T, Wd.T.copy().T), ref, atol=1e-12)


@pytest.mark.parametrize("activation", ffn.FFN_ACTIVATIONS)
def test_mlp_ffn_matches_loop(activation):
    rng = np.random.default_rng(2)
    n, d, f = 2, 3, 4
    x, W1, b1, W2, b2 = (rng.standard_normal(s) for s in [(n, d), (d, f), (f,), (f, d), (d,)])

    def act(v: float) -> float:
        return max(v, 0.0) if activation == "relu" else 0.5 * v * (1 + math.erf(v / math.sqrt(2)))

    ref = np.array([
        [sum(act(sum(x[i, c] * W1[c, k] for c in range(d)) + b1[k]) * W2[k, j] for k in range(f)) + b2[j] for j in range(d)]
        for i in range(n)
    ])  # fmt: skip
    np.testing.assert_allclose(ffn.mlp_ffn(x, W1, b1, W2, b2, activation), ref, atol=1e-12)
    without_bias = ffn.mlp_ffn(x, W1, None, W2, None, activation)
    assert without_bias.shape == (n, d)


def test_mlp_ffn_rejects_unknown_activation():
    with pytest.raises(ValueError, match="activation"):
        ffn.mlp_ffn(np.ones((1, 2)), np.ones((2, 2)), None, np.ones((2, 2)), None, "tanh")


@pytest.mark.parametrize(
    "x", [0.0, 0.3, -1.2, 2.9, 2.999, 3.0, 3.0001, 3.01, 3.2, 3.7, 4.5, 5.5, 6.0, -3.05, -4.0, 8.0, 27.0]
)
def test_erf_matches_the_standard_library(x):
    # the Taylor side (|x| <= 3) is good to ~1e-14 as documented, the continued fraction to ~1e-16
    tol = 2e-14 if abs(x) <= 3 else 2e-15
    assert ffn.erf(np.array([x]))[0] == pytest.approx(math.erf(x), abs=tol)


def test_erf_of_integers_and_arrays():
    got = ffn.erf(np.array([[1, -2], [4, 0]]))  # integers in, floats out
    assert got.dtype == np.float64 and got.shape == (2, 2)
    np.testing.assert_allclose(got, [[math.erf(1), math.erf(-2)], [math.erf(4), 0.0]], atol=2e-15)


def test_mlp_ffn_defaults_to_gelu():
    rng = np.random.default_rng(2)
    x, W_in, W_out = rng.normal(size=(3, 4)), rng.normal(size=(4, 6)), rng.normal(size=(6, 4))
    hidden = x @ W_in
    expected = np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))(hidden) @ W_out
    np.testing.assert_allclose(ffn.mlp_ffn(x, W_in, None, W_out, None), expected, atol=1e-12)

"""RMSNorm / LayerNorm (attention_core/norms.py) and the FFNs (attention_core/ffn.py).

References: hand values, and loops written from the formulas.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from attention_core import ffn, norms


def test_rms_norm_hand_values():
    # [3, 4]: mean square 12.5, root 3.5355...; eps 0
    out = norms.rms_norm(np.array([[3.0, 4.0]]), np.ones(2), eps=0.0)
    np.testing.assert_allclose(out, [[3 / math.sqrt(12.5), 4 / math.sqrt(12.5)]], rtol=1e-15)
    out = norms.rms_norm(np.array([[3.0, 4.0]]), np.array([2.0, -1.0]), eps=0.0)
    np.testing.assert_allclose(out, [[6 / math.sqrt(12.5), -4 / math.sqrt(12.5)]], rtol=1e-15)
    # eps keeps a zero row finite
    np.testing.assert_array_equal(norms.rms_norm(np.zeros((1, 3)), np.ones(3), eps=1e-5), np.zeros((1, 3)))


def test_rms_norm_matches_loop_and_ignores_scale_of_input():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 6)), rng.standard_normal(6)
    ref = np.array(
        [
            [x[i, j] / math.sqrt(sum(v * v for v in x[i]) / 6 + 1e-5) * w[j] for j in range(6)]
            for i in range(4)
        ]
    )
    np.testing.assert_allclose(norms.rms_norm(x, w, 1e-5), ref, rtol=1e-13)
    np.testing.assert_allclose(norms.rms_norm(7.5 * x, w, 0.0), norms.rms_norm(x, w, 0.0), rtol=1e-13)
    # no centring, unlike LayerNorm: a shifted row normalises differently
    assert not np.allclose(norms.rms_norm(x + 3, w, 0.0), norms.rms_norm(x, w, 0.0))


def test_rms_norm_keeps_float32():
    x = np.ones((2, 4), dtype=np.float32)
    assert norms.rms_norm(x, np.ones(4, dtype=np.float32)).dtype == np.float32


def test_layer_norm_hand_values():
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    expected = np.array([[-1.5, -0.5, 0.5, 1.5]]) / math.sqrt(1.25)  # mean 2.5, biased variance 1.25
    np.testing.assert_allclose(norms.layer_norm(x, np.ones(4), np.zeros(4), eps=0.0), expected, rtol=1e-15)
    gamma, beta = np.array([2.0, 2.0, 0.5, 1.0]), np.array([1.0, 0.0, 0.0, -1.0])
    np.testing.assert_allclose(norms.layer_norm(x, gamma, beta, eps=0.0), expected * gamma + beta, rtol=1e-15)
    beta3 = np.array([0.1, -0.2, 0.3])
    np.testing.assert_allclose(
        norms.layer_norm(np.full((2, 3), 7.0), np.ones(3), beta3), [beta3, beta3], atol=1e-12
    )


# ------------------------------------------------------------------------------------------------ FFN


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

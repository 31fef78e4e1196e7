"""RMSNorm / LayerNorm (attention_core/norms.py).

References: hand values, and loops written from the formulas.
"""

from __future__ import annotations

import math

import numpy as np

from attention_core import norms


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


def test_rms_norm_epsilon_is_inside_the_square_root():
    """Rows of size 1e-3 make eps = 1e-5 matter: x / sqrt(mean(x²) + eps), not x / (rms + eps)."""
    x = np.array([[1e-3, -1e-3, 1e-3, -1e-3]])
    inside = 1e-3 / math.sqrt(1e-6 + 1e-5)  # 0.3015…
    outside = 1e-3 / (math.sqrt(1e-6) + 1e-5)  # 0.9901…: what eps outside the root would give
    got = norms.rms_norm(x, np.ones(4))  # the default eps, 1e-5
    np.testing.assert_allclose(got, inside * np.sign(x), rtol=1e-12)
    assert abs(got[0, 0] - outside) > 0.5
    np.testing.assert_allclose(norms.rms_norm(x, np.ones(4), eps=1e-6), 1e-3 / math.sqrt(2e-6) * np.sign(x))


def test_layer_norm_epsilon_is_inside_the_square_root():
    x = np.array([[1e-3, -1e-3]])  # mean 0, variance 1e-6
    np.testing.assert_allclose(norms.layer_norm(x, np.ones(2), np.zeros(2)), x / math.sqrt(1e-6 + 1e-5))


def _rms_loop(x, w, eps=1e-5):
    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape[:-1]):
        row = [float(v) for v in x[idx]]
        r = math.sqrt(sum(v * v for v in row) / len(row) + eps)
        out[idx] = [v / r * float(g) for v, g in zip(row, w, strict=True)]
    return out


def _ln_loop(x, gamma, beta, eps=1e-5):
    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape[:-1]):
        row = [float(v) for v in x[idx]]
        mu = sum(row) / len(row)
        var = sum((v - mu) ** 2 for v in row) / len(row)
        out[idx] = [(v - mu) / math.sqrt(var + eps) * g + b for v, g, b in zip(row, gamma, beta, strict=True)]
    return out


def test_norms_work_row_by_row_on_three_axes():
    """A [2, 3, 4] input: every row (last axis) on its own, whatever the leading axes."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 4)) * np.arange(1, 25).reshape(2, 3, 4)
    w, b = rng.normal(size=4), rng.normal(size=4)
    np.testing.assert_allclose(norms.rms_norm(x, w), _rms_loop(x, w), rtol=1e-12)
    np.testing.assert_allclose(norms.layer_norm(x, w, b), _ln_loop(x, w, b), rtol=1e-12, atol=1e-12)


def test_norms_of_integer_input_are_float64_with_the_epsilon():
    x = np.array([[1, 2, 2, 4]])  # integers: converted to float64, eps kept (not rounded to 0)
    got = norms.rms_norm(x, np.ones(4))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, _rms_loop(x, [1.0] * 4), rtol=1e-13)
    got = norms.layer_norm(x, np.ones(4), np.zeros(4))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, _ln_loop(x, [1.0] * 4, [0.0] * 4), rtol=1e-13)
    x1 = np.array([[1, 1, 1, 3]])  # variance 0.75: eps shows at 1e-5
    np.testing.assert_allclose(
        norms.layer_norm(x1, np.ones(4), np.zeros(4)), _ln_loop(x1, [1.0] * 4, [0.0] * 4), rtol=1e-13
    )


def test_layer_norm_keeps_float32():
    x = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)
    assert norms.layer_norm(x, np.ones(4, np.float32), np.zeros(4, np.float32)).dtype == np.float32

"""Adam (attention_core/training/optim.py) against two steps worked out by hand."""

from __future__ import annotations

import numpy as np

from attention_core.training.optim import Adam


def test_adam_two_steps_by_hand():
    opt = Adam(2, lr=0.1)
    theta = np.array([1.0, -2.0])
    g1, g2 = np.array([0.5, -4.0]), np.array([-1.0, 2.0])
    opt.step(theta, g1)
    # step 1: m̂ = g, v̂ = g², so every parameter moves by lr · sign(g) (up to ε)
    np.testing.assert_allclose(theta, [1.0 - 0.1, -2.0 + 0.1], rtol=1e-7)
    after_one = theta.copy()
    opt.step(theta, g2)
    m = 0.9 * 0.1 * g1 + 0.1 * g2
    v = 0.999 * 0.001 * g1**2 + 0.001 * g2**2
    step = 0.1 * (m / (1 - 0.9**2)) / (np.sqrt(v / (1 - 0.999**2)) + 1e-8)
    np.testing.assert_allclose(theta, after_one - step, rtol=1e-12)

"""The state-space recurrences against references written here: the implied weights against plain
loops and the scan, the fixed decay as a convolution, and the state sizes by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.labs import ssm

TEXT = "the cat sat on the mat"


def loop_weights(a, b, c):
    """W_ts = Σ_k c_k b_k Π_{r=s+1..t} a_{r,k} with explicit products."""
    n, N = a.shape
    W = np.zeros((n, n))
    for t in range(n):
        for s in range(t + 1):
            W[t, s] = sum(c[k] * b[k] * math.prod(a[q, k] for q in range(s + 1, t + 1)) for k in range(N))
    return W


def test_implied_weights_equal_loops_and_the_scan():
    rng = np.random.default_rng(5)
    n, N = 9, 3
    a, b, c, x = (
        rng.uniform(0.2, 0.95, (n, N)),
        rng.standard_normal(N),
        rng.standard_normal(N),
        rng.standard_normal(n),
    )
    W = ssm.ssm_implied_weights(a, b, c)
    assert np.max(np.abs(W - loop_weights(a, b, c))) <= 1e-12
    assert np.max(np.abs(ssm.diagonal_ssm_scan(x, a, b, c).y - W @ x)) <= 1e-12
    impulse = ssm.diagonal_ssm_scan(np.eye(n)[2], a, b, c).y  # x = δ at s = 2: column 2 of W
    assert np.allclose(impulse, W[:, 2], atol=1e-12)


def test_fixed_decay_is_a_convolution_selective_is_not():
    lab = ssm.ssm_lab("the cat sat on the mat because it was warm", d_model=16, seed=1)
    assert lab.toeplitz_gaps["ssm_fixed"] <= 1e-12
    assert lab.toeplitz_gaps["ssm_selective"] > 1e-3
    lam = np.arange(1, lab.N + 1)
    a = np.exp(-lab.delta * lam)
    W = lab.weights["ssm_fixed"]
    rng = np.random.default_rng([1, 29])
    rng.standard_normal(16), rng.standard_normal(16)
    b, c = rng.standard_normal(lab.N) / math.sqrt(lab.N), rng.standard_normal(lab.N)
    for lag in range(4):
        assert W[lag + 3, 3] == pytest.approx(float(np.sum(c * b * a**lag)), abs=1e-12)
    for name, diff in lab.recurrence_diffs.items():
        assert diff <= 1e-12, name
    assert np.allclose(lab.row_sums["attention"], 1) and np.allclose(lab.row_sums["linear"], 1)
    assert np.all(np.triu(lab.weights["ssm_selective"], 1) == 0)


def test_selective_steps_depend_on_the_token_and_meet_the_fixed_one_at_zero():
    X = np.zeros((3, 4))
    assert np.allclose(ssm.selective_steps(X, np.ones(4), 0.7), 0.7)
    assert ssm.softplus(np.array([800.0]))[0] == 800.0


def test_state_sizes_by_hand():
    s = ssm.state_sizes(16, 4, ns=(10, 1000))
    assert s.attention == (320, 32000) and s.linear == (272, 272) and s.ssm == (64, 64)
    with pytest.raises(ValueError):
        ssm.ssm_lab("a b", N=0)


def test_implied_weights_stay_finite_for_fast_decay():
    a = np.full((40, 2), np.exp(-80.0))  # the fastest decay the page allows: Δ = 2, λ = 16 … and beyond
    W = ssm.ssm_implied_weights(a, np.ones(2), np.ones(2))
    assert np.all(np.isfinite(W)) and np.allclose(np.diag(W), 2.0) and np.all(np.triu(W, 1) == 0)
    lab = ssm.ssm_lab(" ".join(["word"] * 16), N=16, delta=5.0)
    assert max(lab.recurrence_diffs.values()) <= 1e-12


def test_ssm_selective_step_by_hand():
    """w·X_t = 2, d = 4: Δ = softplus(2/√4 + β) with softplus(β) = Δ₀."""
    from attention_core.labs import ssm

    X = np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    got = ssm.selective_steps(X, np.array([1.0, 0.0, 0.0, 0.0]), 0.5)
    beta = math.log(math.exp(0.5) - 1)
    assert got[0] == pytest.approx(math.log(1 + math.exp(1 + beta)), abs=1e-12)
    assert got[1] == pytest.approx(0.5, abs=1e-12)


def test_ssm_scan_states_by_hand():
    """x = (1, 0), a = 0.5, b = 2, c = 3: h = 2 then 1, y = 6 then 3."""
    from attention_core.labs import ssm

    s = ssm.diagonal_ssm_scan([1.0, 0.0], [[0.5], [0.5]], np.array([2.0]), np.array([3.0]))
    assert s.states.tolist() == [[2.0], [1.0]] and s.y.tolist() == [6.0, 3.0]


def test_ssm_implied_weights_warn_nothing():
    import warnings

    from attention_core.labs import ssm

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        W = ssm.ssm_implied_weights(np.full((3, 1), 0.5), np.array([1.0]), np.array([1.0]))
    np.testing.assert_allclose(W[2], [0.25, 0.5, 1.0], atol=1e-15)


def test_ssm_state_sizes_keep_the_ns():
    from attention_core.labs import ssm

    s = ssm.state_sizes(4, 2, (10, 20))
    assert (s.ns, s.attention, s.linear, s.ssm) == ((10, 20), (80, 160), (20, 20), (8, 8))


def test_ssm_lab_defaults_are_the_pages_first_view():
    """N 4, Δ 0.5 and 16 tokens (attention_ui.lookalikes.ssm_view), d_model 16 and seed 0 (the look-alikes
    sidebar): a long sentence is cut to 16 tokens."""
    from attention_core.labs import ssm

    long = " ".join(["the cat sat on the mat"] * 4)  # 24 words
    lab = ssm.ssm_lab(long)
    assert (lab.d, lab.N, lab.delta, len(lab.tokens)) == (16, 4, 0.5, 16)
    assert lab.tokenization.truncated
    same = ssm.ssm_lab(long, d_model=16, seed=0, N=4, delta=0.5, max_tokens=16)
    for m in ssm.MODELS:
        np.testing.assert_array_equal(lab.weights[m], same.weights[m])


def test_ssm_lab_limits_edges():
    from attention_core.labs import ssm

    for N, delta in ((1, 0.5), (64, 0.5), (4, 0.01), (4, 5.0)):
        ssm.ssm_lab(TEXT, N=N, delta=delta)
    for N, delta in ((0, 0.5), (65, 0.5), (4, 0.005), (4, 5.5)):
        with pytest.raises(ValueError):
            ssm.ssm_lab(TEXT, N=N, delta=delta)


def test_ssm_lab_fields_against_its_own_head_and_draws():
    """The attention weights are the one causal head of the traced sentence (d_model 8, seed 3); the
    selective steps come from w = 2·N(0, 1) drawn after u from default_rng([seed, 29])."""
    from attention_core.config import AttentionConfig
    from attention_core.labs import ssm
    from attention_core.trace import trace_text

    lab = ssm.ssm_lab(TEXT, d_model=8, seed=3)
    t = trace_text(TEXT, AttentionConfig(d_model=8, heads=1, mask="causal", seed=3))
    np.testing.assert_allclose(lab.weights["attention"], t.weights[0], atol=1e-15)
    assert not np.triu(lab.weights["attention"], 1).any()  # causal
    assert lab.tokens == tuple(t.tokens) and lab.d == 8 and lab.tokenization is not None
    rng = np.random.default_rng([3, 29])
    rng.standard_normal(8)  # u
    w = 2 * rng.standard_normal(8)
    beta = math.log(math.expm1(0.5))
    z = np.asarray(t.X) @ w / math.sqrt(8) + beta
    np.testing.assert_allclose(lab.steps, np.log1p(np.exp(z)), atol=1e-12)
    assert set(lab.recurrence_diffs) == {"linear", "ssm_fixed", "ssm_selective"}
    assert lab.sizes.attention[0] == 2 * lab.sizes.ns[0] * 8 and lab.sizes.ssm[0] == 4 * 8

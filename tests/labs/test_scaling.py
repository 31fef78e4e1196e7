"""The scaling lab against theory, finite differences and hand-computed softmax rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.labs.scaling import (
    dot_variance_experiment,
    dot_variance_standard_error,
    entropy_nats,
    jacobian_frobenius_norm,
    one_row,
    parse_scores,
    samples_within,
    score_samples,
    softmax_peakedness,
)

D_KS = (1, 4, 16, 64, 256)


def _softmax_ref(s):
    e = [math.exp(x - max(s)) for x in s]
    return np.array([x / sum(e) for x in e])


def test_dot_variance_matches_d_k_within_five_standard_errors():
    r = dot_variance_experiment(D_KS, samples=20_000, seed=0)
    d = np.array(D_KS, dtype=float)
    # Standard error of a sample variance of q.k: sqrt((2 d^2 + 6 d) / N) (E[s^4] = 3d^2 + 6d).
    se = np.sqrt((2 * d**2 + 6 * d) / 20_000)
    assert np.all(np.abs(r.raw_variance - d) < 5 * se)
    assert np.all(np.abs(r.scaled_variance - 1.0) < 5 * se / d)
    np.testing.assert_allclose(r.raw_standard_error, se, rtol=1e-12)
    np.testing.assert_allclose(r.expected_raw, d)
    np.testing.assert_allclose(r.expected_scaled, 1.0)


def test_standard_error_formula_against_monte_carlo_fourth_moment():
    # E[s^4] = 3d^2 + 6d for d = 3, checked by simulation with a loose 3% tolerance.
    rng = np.random.default_rng(123)
    s = np.sum(rng.standard_normal((400_000, 3)) * rng.standard_normal((400_000, 3)), axis=1)
    assert abs(np.mean(s**4) - (3 * 9 + 18)) / 45 < 0.03
    assert dot_variance_standard_error(3, 100) == pytest.approx(math.sqrt((18 + 18) / 100))


def test_variance_for_one_d_k_does_not_depend_on_the_others():
    a = dot_variance_experiment((16,), samples=500, seed=3)
    b = dot_variance_experiment((4, 16), samples=500, seed=3)
    assert a.raw_variance[0] == b.raw_variance[1]


def test_score_samples_scaled_and_raw_share_draws():
    raw = score_samples(64, n_keys=8, samples=300, seed=1, scaled=False)
    sc = score_samples(64, n_keys=8, samples=300, seed=1, scaled=True)
    assert raw.scores.shape == (300, 8)
    np.testing.assert_allclose(sc.scores * 8.0, raw.scores, rtol=1e-12)
    assert raw.expected_std == 8.0 and sc.expected_std == 1.0
    assert 6.5 < np.std(raw.scores) < 9.5
    with pytest.raises(ValueError):
        raw.scores[0, 0] = 1.0


def softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """diag(p) − p pᵀ written out entry by entry: ∂p_i/∂s_j = p_i(δ_ij − p_j)."""
    n = len(p)
    return np.array([[p[i] * ((i == j) - p[j]) for j in range(n)] for i in range(n)])


def test_jacobian_matches_finite_differences():
    rng = np.random.default_rng(7)
    s = rng.standard_normal(5) * 2
    p = _softmax_ref(s)
    J = softmax_jacobian(p)
    eps = 1e-6
    fd = np.empty((5, 5))
    for j in range(5):
        up, down = s.copy(), s.copy()
        up[j] += eps
        down[j] -= eps
        fd[:, j] = (_softmax_ref(up) - _softmax_ref(down)) / (2 * eps)
    np.testing.assert_allclose(J, fd, atol=1e-8)
    np.testing.assert_allclose(J.sum(axis=1), 0.0, atol=1e-15)
    np.testing.assert_allclose(J, J.T)


def test_jacobian_norm_closed_form_equals_explicit_matrix_norm():
    rng = np.random.default_rng(8)
    P = np.array([_softmax_ref(rng.standard_normal(6) * 3) for _ in range(20)])
    explicit = [np.linalg.norm(softmax_jacobian(p), "fro") for p in P]
    np.testing.assert_allclose(jacobian_frobenius_norm(P), explicit, rtol=1e-12)
    assert jacobian_frobenius_norm(np.array([0.0, 1.0, 0.0])) == 0.0


def test_entropy_handcomputed():
    assert entropy_nats(np.array([0.25] * 4)) == pytest.approx(math.log(4))
    assert entropy_nats(np.array([1.0, 0.0])) == 0.0


def test_peakedness_grows_without_scaling_and_stays_flat_with_it():
    r = softmax_peakedness(D_KS, n_keys=16, samples=2000, seed=0)
    assert np.all(np.diff(r.max_weight_raw) > 0)
    assert np.all(np.diff(r.normalised_entropy_raw) < 0)
    assert r.max_weight_raw[-1] > 0.85  # nearly one-hot at d_k = 256
    # With the divisor the score spread is ~1 for every d_k: the curve stays within a narrow band.
    assert np.ptp(r.max_weight_scaled) < 0.06
    assert np.ptp(r.normalised_entropy_scaled) < 0.05
    # Saturation starves the gradient: the raw Jacobian shrinks for large d_k, the scaled one not.
    assert np.all(np.diff(r.jacobian_norm_raw[2:]) < 0)
    assert r.jacobian_norm_raw[-1] < 0.5 * r.jacobian_norm_scaled[-1]
    assert np.ptp(r.jacobian_norm_scaled) < 0.05
    np.testing.assert_allclose(r.normalised_entropy_raw, r.entropy_raw / math.log(16))


def test_one_row_handcomputed():
    r = one_row([2.0, 0.0, -2.0], divisor=2.0)
    e = np.exp([1.0, 0.0, -1.0])
    np.testing.assert_allclose(r.weights, e / e.sum(), rtol=1e-14)
    np.testing.assert_allclose(r.scaled, [1.0, 0.0, -1.0])
    assert r.max_weight == pytest.approx(e[0] / e.sum())
    with pytest.raises(ValueError):
        one_row([1.0], divisor=0.0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8, 4, 2, 0, -2, -6", [8, 4, 2, 0, -2, -6]),
        ("1 2\t3;4", [1, 2, 3, 4]),
        ("1，2、−3", [1, 2, -3]),  # typed with a Japanese input method
        ("1e2 -0.5", [100, -0.5]),
    ],
)
def test_parse_scores_accepts_numbers(text: str, expected: list[float]) -> None:
    values, problem, _ = parse_scores(text)
    assert problem is None and values == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "scores_empty"),
        ("  ,; ", "scores_empty"),
        ("1, two, 3", "scores_number"),
        ("5", "scores_count"),
        (" ".join(["1"] * 33), "scores_count"),
        ("1 nan", "scores_range"),
        ("1 inf", "scores_range"),
        ("1 20000", "scores_range"),
    ],
)
def test_parse_scores_names_the_problem(text: str, problem: str) -> None:
    values, found, placeholders = parse_scores(text)
    assert values is None and found == problem
    if problem == "scores_number":
        assert placeholders == {"part": "two"}
    if problem == "scores_count":
        assert placeholders["lo"] == 2 and placeholders["hi"] == 32


def test_samples_within_a_budget_of_draws():
    # (16 + 1) keys and queries · (4 + 64) dims = 1,156 draws per sample
    assert samples_within((4, 64), 16, 2000, 1_156_000) == 1000
    assert samples_within((4, 64), 16, 500, 1_156_000) == 500  # within budget: as asked
    assert samples_within((1024,), 64, 20_000, 1000) == 50  # never below the minimum
    with pytest.raises(ValueError):
        samples_within((), 16, 100, 10**6)


def test_spread_entropy_and_jacobian_summaries_by_hand():
    s = score_samples(16, n_keys=4, samples=300, seed=1, scaled=False)
    flat = s.scores.ravel().tolist()
    mean = sum(flat) / len(flat)
    assert s.measured_std == pytest.approx(
        math.sqrt(sum((x - mean) ** 2 for x in flat) / len(flat)), rel=1e-12
    )
    assert one_row([1.0, 2.0, 3.0, 4.0, 5.0]).max_entropy == pytest.approx(math.log(5))
    p = softmax_peakedness((1, 64), n_keys=8, samples=200, seed=0)
    top = max(*p.jacobian_norm_raw.tolist(), *p.jacobian_norm_scaled.tolist())
    assert p.jacobian_norm_max == top


def test_dot_variance_defaults_draws_and_limits(monkeypatch):
    from attention_core.labs import scaling as sc

    v = sc.dot_variance_experiment([3], samples=5)
    rng = np.random.default_rng((0, 3))  # the documented per-d_k generator, seed 0
    q, k = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    s = np.sum(q * k, axis=1)
    assert v.raw_variance[0] == pytest.approx(np.var(s, ddof=1), rel=1e-13)
    assert v.scaled_variance[0] == pytest.approx(np.var(s / math.sqrt(3), ddof=1), rel=1e-13)
    assert v.d_ks == (3,) and v.samples == 5
    assert v.scaled_standard_error[0] == pytest.approx(math.sqrt((2 * 9 + 18) / 5) / 3)
    assert sc.dot_variance_experiment([2]).samples == 20_000
    assert sc.dot_variance_experiment([2], samples=2).samples == 2
    with pytest.raises(ValueError):
        sc.dot_variance_experiment([2], samples=1)
    # _CHUNK = 4 numbers: one row of d_k = 3 per chunk, q and k drawn chunk by chunk
    monkeypatch.setattr(sc, "_CHUNK", 4)
    v = sc.dot_variance_experiment([3], samples=5)
    rng = np.random.default_rng((0, 3))
    chunks = []
    for m in (1, 1, 1, 1, 1):
        q, k = rng.standard_normal((m, 3)), rng.standard_normal((m, 3))
        chunks.append(np.sum(q * k, axis=1))
    assert v.raw_variance[0] == pytest.approx(np.var(np.concatenate(chunks), ddof=1), rel=1e-13)
    monkeypatch.setattr(sc, "MAX_DRAWS", 100)
    sc.dot_variance_experiment([5], samples=100)  # 100 · 5 · 2 = 1000 = MAX_DRAWS · 10: allowed
    with pytest.raises(ValueError):
        sc.dot_variance_experiment([5], samples=101)


def test_score_draws_defaults_and_limits(monkeypatch):
    from attention_core.labs import scaling as sc

    s = sc.score_samples(4)
    assert (s.d_k, s.n_keys, s.samples, s.scaled, s.divisor) == (4, 8, 2000, True, 2.0)
    rng = np.random.default_rng((0, 4))
    q, k = rng.standard_normal((2000, 1, 4)), rng.standard_normal((2000, 8, 4))
    np.testing.assert_allclose(s.scores, np.sum(q * k, axis=2) / 2.0, atol=1e-14)
    assert sc.score_samples(4, scaled=False).divisor == 1.0
    assert sc.score_samples(1, 1, 1).scores.shape == (1, 1)
    for bad in ((0, 1, 1), (1, 0, 1), (1, 1, 0)):
        with pytest.raises(ValueError):
            sc.score_samples(*bad)
    monkeypatch.setattr(sc, "MAX_DRAWS", 90)
    sc.score_samples(3, 2, 10)  # 10 · 3 · 3 = 90: allowed
    with pytest.raises(ValueError):
        sc.score_samples(3, 2, 11)
    assert sc.samples_within([2, 4], 3, 1000, 240) == 50  # floor(240 / 24) = 10, raised to the minimum 50
    assert (
        sc.samples_within([2, 4], 3, 1000, 2400, minimum=1) == 100
        and type(sc.samples_within([1], 1, 9, 9, 1)) is int
    )


def test_peakedness_defaults_fields_and_entropy_of_zeros():
    from attention_core.labs import scaling as sc

    p = sc.softmax_peakedness([4], samples=50)
    assert (p.d_ks, p.n_keys, p.samples) == ((4,), 16, 50)
    raw = np.einsum(
        "sqd,skd->sk",
        *(lambda r: (r.standard_normal((50, 1, 4)), r.standard_normal((50, 16, 4))))(
            np.random.default_rng((0, 4))
        ),
    )
    e = np.exp((raw / 2.0) - (raw / 2.0).max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    assert p.max_weight_scaled[0] == pytest.approx(w.max(axis=1).mean(), rel=1e-12)
    ent = -np.sum(w * np.log(w), axis=1).mean()
    assert p.entropy_scaled[0] == pytest.approx(ent, rel=1e-12)
    assert sc.softmax_peakedness([2], n_keys=2, samples=10).n_keys == 2
    assert sc.softmax_peakedness([1]).samples == 2000
    with pytest.raises(ValueError):
        sc.softmax_peakedness([2], n_keys=1, samples=10)
    assert sc.entropy_nats(np.array([0.5, 0.5, 0.0])) == pytest.approx(math.log(2))
    assert sc.entropy_nats(np.array([1, 0])) == 0.0  # integers: one-hot


def test_one_row_by_hand_and_parse_limits():
    from attention_core.labs import scaling as sc

    r = sc.one_row([1, 3])  # divisor 1 by default, integers accepted
    e = [math.exp(-2), 1.0]
    assert r.divisor == 1.0 and r.scaled.tolist() == [1.0, 3.0]
    assert r.weights.tolist() == pytest.approx([e[0] / sum(e), e[1] / sum(e)])
    p = r.weights
    assert r.entropy == pytest.approx(-sum(x * math.log(x) for x in p))
    assert r.jacobian_norm == pytest.approx(
        math.sqrt(sum((p[i] * ((i == j) - p[j])) ** 2 for i in range(2) for j in range(2)))
    )
    assert sc.one_row([5.0]).weights.tolist() == [1.0]  # one score is a row too
    for bad in ([], [[1.0, 2.0]]):
        with pytest.raises(ValueError):
            sc.one_row(bad)
    assert sc.parse_scores("x" * 30)[2] == {"part": "x" * 20}
    assert sc.parse_scores(f"{sc.MAX_ABS_SCORE:g} 1")[0] == [
        sc.MAX_ABS_SCORE,
        1.0,
    ]  # the limit itself is allowed
    assert sc.parse_scores("1e5 1")[1:] == ("scores_range", {"limit": "10000"})
    assert sc.parse_scores(" ".join(["1"] * 32))[0] == [1.0] * 32
    assert sc.parse_scores(" ".join(["1"] * 33))[1:] == ("scores_count", {"count": 33, "lo": 2, "hi": 32})

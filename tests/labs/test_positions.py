"""The positions lab's core against references written here: naive loops for attention and RoPE,
the sinusoidal formula written out, hand-checked permutations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import AttentionConfigError
from attention_core.embeddings import embed
from attention_core.labs import positions as lp
from attention_core.labs import positions as pos
from tests.labs.test_efficient import _loop_full

TOL = 1e-10


def naive_attention(X, W_Q, W_K, W_V):
    """One unmasked head with explicit loops over queries and keys."""
    n, d = X.shape
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    out = np.zeros((n, W_V.shape[1]))
    for i in range(n):
        s = [sum(Q[i, c] * K[j, c] for c in range(d)) / math.sqrt(d) for j in range(n)]
        m = max(s)
        e = [math.exp(x - m) for x in s]
        for j in range(n):
            out[i] += e[j] / sum(e) * V[j]
    return out


def naive_rope(x, p, base=10000.0):
    """Turn pair (2i, 2i+1) of x by p·base^(-2i/d), one pair at a time."""
    d = len(x)
    y = np.array(x, dtype=float)
    for i in range(d // 2):
        a, b = x[2 * i], x[2 * i + 1]
        ang = p * base ** (-2 * i / d)
        y[2 * i] = a * math.cos(ang) - b * math.sin(ang)
        y[2 * i + 1] = a * math.sin(ang) + b * math.cos(ang)
    return y


def sinusoid(pos, d):
    return np.array([
        math.sin(pos / 10000 ** (j / d)) if j % 2 == 0 else math.cos(pos / 10000 ** ((j - 1) / d)) for j in range(d)
    ])  # fmt: skip


def test_self_attention_matches_a_naive_loop():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((5, 6))
    W = lp.head_weights(6, 3)
    assert np.max(np.abs(lp.self_attention_outputs(X, *W) - naive_attention(X, *W))) < TOL


@pytest.mark.parametrize("n", range(2, 9))
def test_shuffle_is_never_the_identity(n):
    for seed in range(20):
        perm = lp.shuffle_order(n, seed)
        assert sorted(perm.tolist()) == list(range(n))
        assert perm.tolist() != list(range(n))


def test_without_positions_the_rows_move_with_the_tokens_and_with_positions_they_do_not():
    lab = lp.positions_lab(lp.PositionsSettings("the dog bites a man", d_model=8, seed=4))
    assert lab.gap_plain <= TOL
    assert lab.gap_pos > 1e-3
    # the same check written out: attend to the shuffled tokens with a naive loop
    from attention_core.embeddings import embed

    X = embed(lab.tokens, 8, 4, positional=False)
    W = lp.head_weights(8, 4)
    shuffled = naive_attention(X[lab.perm], *W)
    assert np.max(np.abs(shuffled - naive_attention(X, *W)[lab.perm])) <= TOL
    pe = np.stack([sinusoid(p, 8) for p in range(len(lab.tokens))])
    assert np.max(np.abs(naive_attention(X[lab.perm] + pe, *W) - lab.out_pos_shuffled)) <= TOL
    assert np.max(np.abs(lab.rows_plain)) <= TOL and lab.rows_pos.max() == pytest.approx(lab.gap_pos)


def test_rope_score_depends_only_on_the_offset_and_additive_ones_do_not():
    s = lp.PositionsSettings("alpha beta gamma", d_model=8, seed=2, seen=20, offset=3)
    lab = lp.positions_lab(s)
    from attention_core.embeddings import embed

    X = embed(lab.tokens, 8, 2, positional=False)
    W_Q, W_K, _ = lp.head_weights(8, 2)
    q, k = X[-1] @ W_Q, X[0] @ W_K
    expected = [naive_rope(q, m) @ naive_rope(k, m - 3) / math.sqrt(8) for m in range(3, 20)]
    assert np.max(np.abs(lab.scores["rope"] - expected)) <= TOL
    assert lab.spread["rope"] <= TOL
    sin_expected = [
        (X[-1] + sinusoid(m, 8)) @ W_Q @ ((X[0] + sinusoid(m - 3, 8)) @ W_K) / math.sqrt(8)
        for m in range(3, 20)
    ]
    assert np.max(np.abs(lab.scores["sinusoidal"] - sin_expected)) <= TOL
    assert lab.spread["sinusoidal"] > 1e-3 and lab.spread["learned"] > 1e-3
    table = lp.learned_table(20, 8, 2)
    learned_expected = [
        (X[-1] + table[m]) @ W_Q @ ((X[0] + table[m - 3]) @ W_K) / math.sqrt(8) for m in range(3, 20)
    ]
    assert np.max(np.abs(lab.scores["learned"] - learned_expected)) <= TOL


def test_the_rope_arrow_keeps_its_length_and_turns_by_theta():
    s = lp.PositionsSettings("x y", d_model=8, pair=1)
    lab = lp.positions_lab(s)
    theta = 10000 ** (-2 / 8)
    assert lab.arrow_angle_step == pytest.approx(theta, abs=1e-15)
    r = np.hypot(lab.arrow_path[:, 0], lab.arrow_path[:, 1])
    assert np.max(np.abs(r - r[0])) <= TOL and r[0] == pytest.approx(lab.arrow_length, abs=TOL)
    ang = np.arctan2(lab.arrow_path[:, 1], lab.arrow_path[:, 0])
    steps = np.mod(np.diff(ang), 2 * math.pi)
    assert np.max(np.abs(steps - theta)) <= 1e-9


def test_extrapolation_learned_stops_at_L_and_the_others_go_on():
    lab = lp.positions_lab(lp.PositionsSettings("a b c", d_model=8, seen=10))
    ext = lab.extrapolation
    assert len(lab.extrapolation_positions) == 30
    assert np.all(np.isfinite(ext["learned"][:10])) and np.all(np.isnan(ext["learned"][10:]))
    assert np.all(np.isfinite(ext["sinusoidal"])) and np.all(np.isfinite(ext["rope"]))


@pytest.mark.parametrize(("d", "seen"), [(8, 10), (16, 32), (64, 512), (2, 2)])
def test_unseen_pairs_counts_pairs_short_of_a_full_turn(d, seen):
    count = sum(1 for i in range(d // 2) if (seen - 1) * 10000 ** (-2 * i / d) < 2 * math.pi)
    assert lp.unseen_angle_pairs(d, seen) == count


def test_one_token_and_identical_tokens():
    lab = lp.positions_lab(lp.PositionsSettings("solo"))
    assert lab.gap_plain == 0.0 and lab.gap_pos == 0.0
    lab = lp.positions_lab(lp.PositionsSettings("la la la la"))
    assert lab.gap_plain <= TOL  # the same token everywhere: the shuffled input is the input


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(d_model=7),
        dict(d_model=0),
        dict(seen=1),
        dict(offset=40, seen=32),
        dict(pair=8, d_model=16),
        dict(seed=-1),
    ],
)
def test_bad_settings_are_refused_with_a_message(kwargs):
    with pytest.raises(AttentionConfigError):
        lp.PositionsSettings("a b", **kwargs)


def test_blank_text_is_refused():
    with pytest.raises(AttentionConfigError):
        lp.positions_lab(lp.PositionsSettings("   "))


def test_the_learned_table_has_the_size_of_a_sinusoidal_row():
    from attention_core.embeddings import positional_encoding

    d = 64
    table = lp.learned_table(512, d, 0)
    sin_sq = np.mean(np.sum(positional_encoding(512, d) ** 2, axis=1))
    assert sin_sq == pytest.approx(d / 2, rel=1e-12)  # sin² + cos² = 1 for each of the d/2 pairs
    assert np.mean(np.sum(table**2, axis=1)) == pytest.approx(d / 2, rel=0.02)


def test_positions_settings_limits():
    from attention_core.labs import positions as p

    ok = [
        dict(d_model=2), dict(d_model=128), dict(seen=2, offset=1), dict(seen=512),
        dict(seen=10, offset=9), dict(offset=0), dict(d_model=16, pair=7), dict(seen=200, offset=64),
    ]  # fmt: skip
    for kw in ok:
        p.PositionsSettings("a", **kw)
    bad = [
        dict(d_model=1), dict(d_model=130), dict(d_model=15), dict(seen=1, offset=0), dict(seen=513),
        dict(seen=10, offset=10), dict(offset=-1), dict(d_model=16, pair=8), dict(seen=200, offset=65),
        dict(seed=-1),
    ]  # fmt: skip
    for kw in bad:
        with pytest.raises(AttentionConfigError):
            p.PositionsSettings("a", **kw)


def test_position_steps_by_hand():
    from attention_core.labs import positions as p

    W_Q, W_K, W_V = p.head_weights(64, 1)
    assert not np.array_equal(W_Q, W_K) and not np.array_equal(W_K, W_V) and not np.array_equal(W_Q, W_V)
    for W in (W_Q, W_K, W_V):
        assert 0.9 / 8 < W.std() < 1.1 / 8  # N(0, 1/64)
    np.testing.assert_array_equal(p.shuffle_order(8, 3), p.shuffle_order(8, 3))
    assert p.row_gaps(np.array([[1.0]]), np.array([[0.0]]), np.array([0])).tolist() == [1.0]
    assert p.row_gaps(np.zeros((0, 3)), np.zeros((0, 3)), np.arange(0)).shape == (0,)
    assert p.row_gaps(np.ones((2, 3)), np.zeros((2, 3)), np.array([1, 0])).tolist() == [1.0, 1.0]
    assert p.equivariance_gap(np.zeros((0, 3)), np.zeros((0, 3)), np.arange(0)) == 0.0
    assert p.position_vectors("sinusoidal", np.arange(0), 4, None).shape == (0, 4)


def test_unseen_angle_pairs_against_a_loop():
    from attention_core.labs import positions as p

    for d in (2, 8, 16):
        for seen in range(2, 400):
            expected = sum(1 for i in range(d // 2) if 10000.0 ** (-2 * i / d) * (seen - 1) < 2 * math.pi)
            assert p.unseen_angle_pairs(d, seen) == expected, (d, seen)


def test_positions_lab_fields():
    from attention_core.labs import positions as p

    s = p.PositionsSettings(
        "one two three four five", d_model=8, seed=2, seen=12, offset=3, pair=1, max_tokens=4
    )
    lab = p.positions_lab(s)
    assert lab.settings is s and lab.tokenization is not None
    assert lab.tokens == ("one", "two", "three", "four") and (lab.query_token, lab.key_token) == (
        "four",
        "one",
    )
    assert lab.placements.tolist() == list(range(3, 12)) and lab.arrow_positions.tolist() == list(range(9))
    assert lab.unseen_pairs == p.unseen_angle_pairs(8, 12)
    W_Q, W_K, W_V = p.head_weights(8, 2)
    X = embed(lab.tokens, 8, 2, False)
    np.testing.assert_allclose(lab.out_plain, _loop_full(X @ W_Q, X @ W_K, X @ W_V), atol=1e-12)
    np.testing.assert_allclose(
        lab.out_plain_shuffled, _loop_full(*(X[lab.perm] @ W for W in (W_Q, W_K, W_V))), atol=1e-12
    )
    pe = np.array(
        [
            [
                math.sin(pos / 10000 ** (2 * (i // 2) / 8))
                if i % 2 == 0
                else math.cos(pos / 10000 ** (2 * (i // 2) / 8))
                for i in range(8)
            ]
            for pos in range(4)
        ]
    )
    np.testing.assert_allclose(lab.out_pos, _loop_full(*((X + pe) @ W for W in (W_Q, W_K, W_V))), atol=1e-12)
    for arr in (
        lab.perm,
        lab.out_plain,
        lab.out_plain_shuffled,
        lab.out_pos,
        lab.placements,
        lab.arrow_positions,
    ):
        assert not arr.flags.writeable


def test_equivariance_gap_with_the_wrong_permutation_is_large():
    rng = np.random.default_rng(3)
    out = rng.normal(size=(5, 4))
    perm = np.array([3, 0, 4, 1, 2])
    shuffled_out = out[perm]
    assert pos.equivariance_gap(shuffled_out, out, perm) == 0.0
    wrong = np.arange(5)  # forgetting to permute
    expected = max(float(np.max(np.abs(out[perm][i] - out[i]))) for i in range(5))
    assert pos.equivariance_gap(shuffled_out, out, wrong) == pytest.approx(expected)
    assert expected > 0.1
    np.testing.assert_allclose(
        pos.row_gaps(shuffled_out, out, wrong), [np.max(np.abs(out[perm][i] - out[i])) for i in range(5)]
    )

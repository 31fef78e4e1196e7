"""RoPE (attention_core/rope.py) against hand values, a plain-Python loop and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import rope


def naive_rope(x: np.ndarray, positions, base: float, layout: str) -> np.ndarray:
    """Each pair turned by a 2x2 rotation matrix, one number at a time (written from the formula)."""
    x = np.asarray(x, dtype=float)
    out = np.array(x, copy=True)
    *lead, n, d = x.shape
    for idx in np.ndindex(*lead):
        for t in range(n):
            for i in range(d // 2):
                theta = base ** (-2.0 * i / d)
                angle = positions[t] * theta
                a_at, b_at = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
                a, b = x[(*idx, t, a_at)], x[(*idx, t, b_at)]
                out[(*idx, t, a_at)] = math.cos(angle) * a - math.sin(angle) * b
                out[(*idx, t, b_at)] = math.sin(angle) * a + math.cos(angle) * b
    return out


def test_frequencies_hand_values():
    np.testing.assert_allclose(rope.rope_frequencies(4, 10000.0), [1.0, 0.01], rtol=1e-15)
    theta = rope.rope_frequencies(64, 100000.0)
    assert theta.shape == (32,) and theta[0] == 1.0
    assert theta[-1] == pytest.approx(100000.0 ** (-62 / 64), rel=1e-14)
    assert np.all(np.diff(theta) < 0)


def test_angles_and_tables():
    angles = rope.rope_angles(np.array([0, 1, 5]), 4, 100.0)
    np.testing.assert_allclose(angles, [[0, 0], [1, 0.1], [5, 0.5]], rtol=1e-15)
    cos, sin = rope.rope_cos_sin(np.array([2]), 2, 10.0)
    assert cos[0, 0] == pytest.approx(math.cos(2)) and sin[0, 0] == pytest.approx(math.sin(2))


def test_pair_indices_of_both_layouts():
    assert [list(a) for a in rope.pair_indices(6, "interleaved")] == [[0, 2, 4], [1, 3, 5]]
    assert [list(a) for a in rope.pair_indices(6, "half")] == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("layout", rope.ROPE_LAYOUTS)
def test_rotation_matches_naive_loop(layout):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 8))  # [heads, n, d]
    positions = np.array([0, 1, 2, 7, 100])
    got = rope.apply_rope(x, positions, 10000.0, layout)
    np.testing.assert_allclose(got, naive_rope(x, positions, 10000.0, layout), atol=1e-12)


def test_hand_case_quarter_turn():
    # d=2, base irrelevant for pair 0 (θ0 = 1): position π/2 turns (1, 0) to (0, 1).
    x = np.array([[[1.0, 0.0]]])
    out = rope.apply_rope(x, np.array([math.pi / 2]), 10.0)
    np.testing.assert_allclose(out, [[[0.0, 1.0]]], atol=1e-15)


@pytest.mark.parametrize("layout", rope.ROPE_LAYOUTS)
def test_position_zero_is_identity_and_norms_are_kept(layout):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6, 16))
    np.testing.assert_array_equal(rope.apply_rope(x[:, :1], np.array([0]), 500.0, layout), x[:, :1])
    out = rope.apply_rope(x, np.arange(6) * 13, 500.0, layout)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)
    np.testing.assert_allclose(rope.pair_norms(out, layout), rope.pair_norms(x, layout), rtol=1e-12)


@pytest.mark.parametrize("layout", rope.ROPE_LAYOUTS)
@pytest.mark.parametrize(("head_dim", "base"), [(8, 10000.0), (64, 100000.0), (2, 3.0)])
def test_score_depends_only_on_the_offset(layout, head_dim, base):
    rng = np.random.default_rng(head_dim)
    q, k = rng.standard_normal(head_dim), rng.standard_normal(head_dim)

    def score(m: int, n: int) -> float:
        rq = rope.apply_rope(q[None, :], np.array([m]), base, layout)[0]
        rk = rope.apply_rope(k[None, :], np.array([n]), base, layout)[0]
        return float(rq @ rk)

    for m, n in [(0, 0), (5, 2), (2, 5), (40, 3)]:
        # shifting both positions leaves the score unchanged
        for shift in (1, 17, 1000):
            assert score(m + shift, n + shift) == pytest.approx(score(m, n), abs=1e-9)
        # closed form per pair: c·(qa ka + qb kb) + s·(qb ka − qa kb), angle (n − m)·θ_i
        first, second = rope.pair_indices(head_dim, layout)
        theta = rope.rope_frequencies(head_dim, base)
        phi = (n - m) * theta
        qa, qb, ka, kb = q[first], q[second], k[first], k[second]
        closed = np.sum(np.cos(phi) * (qa * ka + qb * kb) + np.sin(phi) * (qb * ka - qa * kb))
        assert score(m, n) == pytest.approx(closed, abs=1e-9)


def test_permutation_hand_value_and_layout_equivalence():
    assert rope.half_to_interleaved_permutation(4).tolist() == [0, 2, 1, 3]
    assert rope.half_to_interleaved_permutation(6).tolist() == [0, 3, 1, 4, 2, 5]
    rng = np.random.default_rng(3)
    x_half = rng.standard_normal((2, 4, 10))
    perm = rope.half_to_interleaved_permutation(10)
    positions = np.array([0, 3, 9, 50])
    # rotating in the half layout then reordering == reordering then rotating in the interleaved layout
    np.testing.assert_allclose(
        rope.apply_rope(x_half, positions, 1000.0, "half")[..., perm],
        rope.apply_rope(x_half[..., perm], positions, 1000.0, "interleaved"),
        atol=1e-12,
    )


def _llama_cpp_permute(W: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's converter, as its source describes it: reshape(h, 2, d/2, in), swap axes 1 and 2."""
    return W.reshape(heads, 2, W.shape[0] // heads // 2, *W.shape[1:]).swapaxes(1, 2).reshape(W.shape)


def test_row_reordering_matches_llama_cpp_and_round_trips():
    rng = np.random.default_rng(4)
    W = rng.standard_normal((3 * 8, 5))  # 3 heads of d=8, d_in=5, PyTorch [out, in]
    np.testing.assert_array_equal(rope.half_to_interleaved_rows(W, 3), _llama_cpp_permute(W, 3))
    np.testing.assert_array_equal(rope.interleaved_to_half_rows(rope.half_to_interleaved_rows(W, 3), 3), W)


def test_file_rows_with_interleaved_pairs_give_the_hugging_face_scores():
    """The GGUF convention (reordered rows, interleaved pairs) and HF's (original rows, rotate-half)."""
    rng = np.random.default_rng(5)
    heads, d, d_in, n = 2, 8, 6, 5
    X = rng.standard_normal((n, d_in))
    Wq_hf, Wk_hf = rng.standard_normal((heads * d, d_in)), rng.standard_normal((heads * d, d_in))
    positions = np.arange(n)

    def scores(Wq, Wk, layout):
        Q = (X @ Wq.T).reshape(n, heads, d).transpose(1, 0, 2)
        K = (X @ Wk.T).reshape(n, heads, d).transpose(1, 0, 2)
        Q, K = rope.apply_rope(Q, positions, 10000.0, layout), rope.apply_rope(K, positions, 10000.0, layout)
        return Q @ K.transpose(0, 2, 1)

    hf = scores(Wq_hf, Wk_hf, "half")
    gguf = scores(
        rope.half_to_interleaved_rows(Wq_hf, heads),
        rope.half_to_interleaved_rows(Wk_hf, heads),
        "interleaved",
    )
    np.testing.assert_allclose(gguf, hf, atol=1e-10)
    # and the wrong pairing on the file's rows does NOT give them (the convention matters)
    wrong = scores(
        rope.half_to_interleaved_rows(Wq_hf, heads), rope.half_to_interleaved_rows(Wk_hf, heads), "half"
    )
    assert np.abs(wrong - hf).max() > 1e-3


def test_float32_stays_float32():
    x = np.ones((1, 3, 4), dtype=np.float32)
    assert rope.apply_rope(x, np.arange(3), 100.0).dtype == np.float32


@pytest.mark.parametrize(
    ("head_dim", "base", "layout"),
    [(3, 10.0, "half"), (0, 10.0, "half"), (4, 1.0, "half"), (4, 10.0, "zigzag")],
)
def test_bad_arguments(head_dim, base, layout):
    with pytest.raises(ValueError):
        rope.apply_rope(np.ones((1, max(head_dim, 1))), np.array([1]), base, layout)


def test_rope_head_dim_and_base_limits():
    from attention_core import rope

    for bad in (0, 1, 3, 5):
        with pytest.raises(ValueError):
            rope.rope_frequencies(bad, 10000.0)
    np.testing.assert_allclose(rope.rope_frequencies(2, 10000.0), [1.0])
    # any base above 1 is allowed: 1.5^(−2i/4) for i = 0, 1
    np.testing.assert_allclose(rope.rope_frequencies(4, 1.5), [1.0, 1.5**-0.5], rtol=1e-15)
    for bad in (1.0, 0.5, -3.0):
        with pytest.raises(ValueError):
            rope.rope_frequencies(4, bad)


def test_rope_default_layout_is_interleaved():
    from attention_core import rope

    first, second = rope.pair_indices(6)
    assert first.tolist() == [0, 2, 4] and second.tolist() == [1, 3, 5]
    x = np.array([3.0, 4.0, 6.0, 8.0])
    np.testing.assert_allclose(rope.pair_norms(x), [5.0, 10.0])
    np.testing.assert_allclose(rope.pair_norms(x, "half"), [math.hypot(3, 6), math.hypot(4, 8)])


def test_rotate_pairs_checks_both_tables_and_rotates_integers_in_float64():
    from attention_core import rope

    cos, sin = rope.rope_cos_sin(np.arange(2), 4, 10.0)
    with pytest.raises(ValueError):
        rope.rotate_pairs(np.zeros((2, 4)), cos, sin[:1])  # sin has the wrong shape, cos is right
    with pytest.raises(ValueError):
        rope.rotate_pairs(np.zeros((2, 4)), cos[:1], sin)
    x = np.array([[1, 0, 0, 2], [1, 0, 0, 2]])  # integers: rotated in float64
    got = rope.rotate_pairs(x, cos, sin)
    assert got.dtype == np.float64
    th = 10.0**-0.5  # pair 1's angle per position with d = 4, base 10
    expected = [[1, 0, 0, 2], [math.cos(1), math.sin(1), -2 * math.sin(th), 2 * math.cos(th)]]
    np.testing.assert_allclose(got, expected, atol=1e-15)
    assert rope.rotate_pairs(x.astype(np.float32), cos, sin).dtype == np.float32


def test_llama_cpp_row_order_by_hand():
    from attention_core import rope

    W = np.arange(16.0).reshape(8, 2)  # two heads of d = 4, rows 0..3 and 4..7
    moved = rope.half_to_interleaved_rows(W, 2)
    assert moved[:, 0].tolist() == [0.0, 4.0, 2.0, 6.0, 8.0, 12.0, 10.0, 14.0]  # rows 0, 2, 1, 3 | 4, 6, 5, 7
    np.testing.assert_array_equal(rope.interleaved_to_half_rows(moved, 2), W)
    W3 = np.arange(8.0 * 3 * 2).reshape(8, 3, 2)  # extra trailing axes are carried along
    np.testing.assert_array_equal(rope.interleaved_to_half_rows(rope.half_to_interleaved_rows(W3, 2), 2), W3)
    for f in (rope.half_to_interleaved_rows, rope.interleaved_to_half_rows):
        with pytest.raises(ValueError):
            f(np.zeros((6, 2)), 4)


def test_rotate_pairs_of_float32_is_float32_arithmetic():
    """The tables are cast to float32 first, so the rotation is float32 arithmetic, bit for bit."""
    from attention_core import rope

    rng = np.random.default_rng(11)
    x = rng.normal(size=(2, 40, 8)).astype(np.float32)
    cos, sin = rope.rope_cos_sin(np.arange(40) * 37, 8, 10000.0)
    c, s = cos.astype(np.float32), sin.astype(np.float32)
    a, b = x[..., 0::2], x[..., 1::2]
    expected = np.empty_like(x)
    expected[..., 0::2] = a * c - b * s
    expected[..., 1::2] = a * s + b * c
    np.testing.assert_array_equal(rope.rotate_pairs(x, cos, sin), expected)

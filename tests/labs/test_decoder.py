"""The decoder page's core helpers (``attention_core.labs.decoder``) against naive loops and
hand-computed values. No model needed."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from attention_core.labs import decoder as dv
from attention_core.models.smollm2 import SMOLLM2_135M
from attention_ui.decoder import sequence_text

TOL = 1e-10  # what a check reads as equal; a deliberately broken input gives far more


def causal_weights(h: int, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = np.tril(rng.random((h, n, n)) + 0.01)
    return w / w.sum(axis=-1, keepdims=True)


def naive_summary(w: np.ndarray, stat: str) -> list[float]:
    out = []
    for head in w:
        n = head.shape[0]
        vals = []
        for i in range(1, n):
            row = head[i]
            if stat == "first":
                vals.append(row[0])
            elif stat == "previous":
                vals.append(row[i - 1])
            elif stat == "distance":
                vals.append(sum(row[j] * (i - j) for j in range(i + 1)))
            else:
                vals.append(-sum(row[j] * math.log(row[j]) for j in range(i + 1) if row[j] > 0))
        out.append(sum(vals) / len(vals))
    return out


@pytest.mark.parametrize("stat", dv.HEAD_STATS)
def test_head_summary_matches_a_naive_loop(stat: str) -> None:
    w = causal_weights(3, 7)
    np.testing.assert_allclose(dv.head_summary(w, stat), naive_summary(w, stat), rtol=1e-12, atol=1e-12)


def test_head_summary_hand_cases() -> None:
    # every query reads token 0 only: weight 1 on token 0, distance i averaged over rows 1..3 = 2, entropy 0
    n = 4
    sink = np.zeros((1, n, n))
    sink[0, :, 0] = 1.0
    assert dv.head_summary(sink, "first")[0] == 1.0
    assert dv.head_summary(sink, "distance")[0] == pytest.approx(2.0)
    assert dv.head_summary(sink, "entropy")[0] == 0.0
    # uniform causal rows: entropy of row i is ln(i + 1)
    uniform = np.tril(np.ones((1, n, n)))
    uniform /= uniform.sum(-1, keepdims=True)
    expected = (math.log(2) + math.log(3) + math.log(4)) / 3
    assert dv.head_summary(uniform, "entropy")[0] == pytest.approx(expected)
    assert dv.head_summary(uniform, "previous")[0] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    with pytest.raises(ValueError):
        dv.head_summary(uniform, "mean")


def rotate_naive(x: np.ndarray, p: int, base: float) -> np.ndarray:
    """Interleaved RoPE written out pair by pair with a 2×2 rotation."""
    d = x.size
    out = np.empty(d)
    for i in range(d // 2):
        angle = p * base ** (-2 * i / d)
        c, s = math.cos(angle), math.sin(angle)
        a, b = x[2 * i], x[2 * i + 1]
        out[2 * i], out[2 * i + 1] = c * a - s * b, s * a + c * b
    return out


def test_rope_offset_curve_is_the_naive_rotation_and_depends_on_the_offset_only() -> None:
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=16), rng.normal(size=16)
    offsets, starts = np.arange(12), np.array([0, 5, 40])
    curve = dv.rope_offset_curve(q, k, offsets, starts, base=100.0)
    for a, s in enumerate(starts):
        for b, o in enumerate(offsets):
            expected = rotate_naive(q, s + o, 100.0) @ rotate_naive(k, s, 100.0)
            assert curve.scores[a, b] == pytest.approx(expected, abs=1e-10)
    assert curve.spread < 1e-10
    assert curve.scores[0, 0] == pytest.approx(q @ k) and curve.unrotated == pytest.approx(q @ k)
    assert not np.allclose(curve.scores[0], curve.scores[0, 0])  # it does change with the offset


def test_max_pair_norm_change_of_a_rotation_is_rounding_only() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 8))
    rotated = np.stack([rotate_naive(row, p, 10000.0) for p, row in enumerate(x)])
    assert dv.max_pair_norm_change(x, rotated) < 1e-12
    scaled = x.copy()
    scaled[:, 0] *= 2
    assert dv.max_pair_norm_change(x, scaled) > 0.01


def test_kv_memory_by_hand() -> None:
    # 2 (K and V) × 30 layers × 3 KV heads × 64 numbers × 4 bytes = 46,080 bytes per token
    one = dv.kv_memory(SMOLLM2_135M, 1)
    assert (one.gqa_bytes, one.mha_bytes, one.ratio) == (46_080, 138_240, 3.0)
    assert dv.kv_memory(SMOLLM2_135M, 20).gqa_bytes == 921_600


def test_choose_next_greedy_top_k_and_seeded_draws() -> None:
    logits = np.array([0.5, 2.0, 1.9, -1.0, 1.0])
    assert dv.choose_next(logits, 0.0, 0, seed=7, step=3) == 1  # greedy: the largest logit
    assert {dv.choose_next(logits, 1.5, 1, seed=s, step=0) for s in range(20)} == {1}  # top-1 is greedy
    # a draw is rng.choice with default_rng([seed, step]) over softmax(logits / T), written out here
    z = logits / 0.7
    p = np.exp(z - z.max())
    p /= p.sum()
    for seed, step in ((0, 0), (3, 5), (11, 2)):
        expected = int(np.random.default_rng([seed, step]).choice(5, p=p))
        assert dv.choose_next(logits, 0.7, 0, seed, step) == expected
    draws = {dv.choose_next(logits, 2.0, 0, seed, 0) for seed in range(40)}
    assert len(draws) > 2  # sampling does vary with the seed


def test_sequence_text_drops_an_unfinished_character() -> None:
    cat = "猫".encode()
    model = SimpleNamespace(token_bytes=(b"a", cat[:2], cat[2:], None), vocab=("a", "x", "y", "<|im_end|>"))
    assert sequence_text(model, (0, 1)) == ("a", True)
    assert sequence_text(model, (0, 1, 2)) == ("a猫", False)
    assert sequence_text(model, (0, 3)) == ("a<|im_end|>", False)


def _w(n, h=2, seed=0):
    rng = np.random.default_rng(seed)
    w = np.tril(rng.random((h, n, n)) + 0.1)
    return w / w.sum(axis=-1, keepdims=True)


def test_head_summary_of_one_and_two_tokens_by_hand():
    from attention_core.labs import decoder as dv

    one = np.ones((3, 1, 1))  # one token: row 0 is the only row
    assert dv.head_summary(one, "first").tolist() == [1.0, 1.0, 1.0]
    assert dv.head_summary(one, "previous").tolist() == [0.0, 0.0, 0.0]
    assert dv.head_summary(one, "distance").tolist() == [0.0, 0.0, 0.0]
    two = np.array([[[1.0, 0.0], [0.25, 0.75]]])  # two tokens: row 1 only
    assert dv.head_summary(two, "first").tolist() == [0.25]
    assert dv.head_summary(two, "previous").tolist() == [0.25]
    assert dv.head_summary(two, "distance").tolist() == [0.25]
    expected = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    assert dv.head_summary(two, "entropy")[0] == pytest.approx(expected, rel=1e-14)


def test_head_summary_keeps_leading_axes_and_computes_in_float64():
    from attention_core.labs import decoder as dv

    w = np.stack([_w(4, h=3, seed=s) for s in range(2)])  # [layers 2, heads 3, 4, 4]
    for stat in dv.HEAD_STATS:
        got = dv.head_summary(w, stat)
        assert got.shape == (2, 3)
        np.testing.assert_allclose(got[1], dv.head_summary(w[1], stat), rtol=1e-14)
    w32 = w[0].astype(np.float32)
    got = dv.head_summary(w32, "first")
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, w32.astype(np.float64)[:, 1:, 0].mean(axis=1))


def test_layer_head_grid_stacks_every_layer():
    from types import SimpleNamespace

    from attention_core.labs import decoder as dv

    layers = [SimpleNamespace(weights=_w(5, h=3, seed=s)) for s in range(4)]
    grid = dv.layer_head_grid(SimpleNamespace(layers=layers), "distance")
    assert grid.shape == (4, 3)
    np.testing.assert_allclose(grid[2], dv.head_summary(layers[2].weights, "distance"))


def test_pair_norm_change_is_computed_in_float64():
    from attention_core.labs import decoder as dv

    before = np.array([[0.1, 0.7, 3.3, -1.9]], dtype=np.float32)
    after = np.array([[0.7, 0.1, -1.9, 3.3]], dtype=np.float32)  # swapped inside pairs: same lengths
    b64, a64 = before.astype(np.float64), after.astype(np.float64)
    expected = max(
        abs(math.hypot(b64[0, i], b64[0, i + 1]) - math.hypot(a64[0, i], a64[0, i + 1])) for i in (0, 2)
    )
    assert dv.max_pair_norm_change(before, after) == expected == 0.0
    stretched = (after * np.float32(1.1)).astype(np.float32)
    s64 = stretched.astype(np.float64)
    expected = max(
        abs(math.hypot(b64[0, i], b64[0, i + 1]) - math.hypot(s64[0, i], s64[0, i + 1])) for i in (0, 2)
    )
    assert dv.max_pair_norm_change(before, stretched) == pytest.approx(expected, rel=1e-15)


def test_rope_offset_curve_fields_layout_and_precision():
    from attention_core.labs import decoder as dv

    rng = np.random.default_rng(3)
    q, k = rng.normal(size=4).astype(np.float32), rng.normal(size=4).astype(np.float32)
    curve = dv.rope_offset_curve(q, k, [0, 1, 2], [0, 5], 10.0, "half")
    assert curve.offsets.tolist() == [0, 1, 2] and curve.starts.tolist() == [0, 5]
    assert curve.scores.dtype == np.float64
    for arr in (curve.offsets, curve.starts, curve.scores):
        assert not arr.flags.writeable
    q64, k64 = q.astype(np.float64), k.astype(np.float64)

    def rot_half(x, p):  # pairs (i, i + d/2), θ_i = 10^(−2i/4)
        out = x.copy()
        for i in range(2):
            a = p * 10.0 ** (-2 * i / 4)
            out[i], out[i + 2] = (
                x[i] * math.cos(a) - x[i + 2] * math.sin(a),
                x[i] * math.sin(a) + x[i + 2] * math.cos(a),
            )
        return out

    for a, s in enumerate((0, 5)):
        for b_, o in enumerate((0, 1, 2)):
            assert curve.scores[a, b_] == pytest.approx(rot_half(q64, s + o) @ rot_half(k64, s), abs=1e-12)


def test_kv_memory_and_choose_next():
    from types import SimpleNamespace

    from attention_core.labs import decoder as dv

    cfg = SimpleNamespace(n_layers=2, n_kv_heads=1, n_heads=4, head_dim=8)
    m = dv.kv_memory(cfg, 10)
    assert (m.n_tokens, m.gqa_bytes, m.mha_bytes, m.ratio) == (
        10,
        2 * 2 * 10 * 1 * 8 * 4,
        2 * 2 * 10 * 4 * 8 * 4,
        4.0,
    )
    flat = np.zeros(5)  # T = 1: a seeded draw from the uniform distribution, not the greedy 0
    draws = [dv.choose_next(flat, 1.0, 0, 7, step) for step in range(6)]
    assert draws == [int(np.random.default_rng([7, s]).choice(5, p=np.full(5, 0.2))) for s in range(6)]
    assert len(set(draws)) > 1
    assert dv.choose_next(np.array([0.0, 3.0, 1.0]), 0.0, 0, 7, 0) == 1  # T = 0: greedy


def test_band_check_counts_a_key_exactly_window_back_and_short_texts():
    from attention_core.labs import decoder as dv

    w = np.zeros((1, 5, 5))
    w[0, 4, 1] = 0.3  # 3 positions back: outside a window of 3 (keys i − 2 … i)
    assert dv.weight_outside_window(w, 3) == 0.3 and dv.weight_outside_window(w, 4) == 0.0
    assert dv.weight_outside_window(np.ones((2, 3, 3)), 3) == 0.0  # no key is 3 back in 3 tokens


def test_score_bound_holds_at_equality_at_any_scale():
    """q ∥ k gives |q·k| = |q||k| exactly (Cauchy–Schwarz with equality): the bound holds, small or
    large; 10⁻⁴ relative and 10⁻⁵ absolute beyond it does not."""
    from attention_core.labs import decoder as dv

    for q in (1e-3, 1.0, 1e3):
        r = dv.score_bound(np.array([[q]]), np.array([[2.0]]), np.array([[-2 * q / 4, 2 * q / 4]]), 4.0)
        assert r.bound == pytest.approx(q / 2) and r.holds, q
        over = dv.score_bound(
            np.array([[q]]), np.array([[2.0]]), np.array([[0.0, q / 2 * (1 + 1e-4) + 1e-5]]), 4.0
        )
        assert not over.holds, q


def test_spread_of_rows_that_differ_is_their_largest_difference():
    scores = np.array([[1.0, 2.0, 3.0], [1.0, 2.5, 3.0], [0.7, 2.0, 3.0]])
    curve = dv.RopeOffsetCurve(np.arange(3), np.arange(3), scores, 1.0)
    assert curve.spread == pytest.approx(0.5)


def test_spread_compares_every_pair_of_rows_not_only_the_first():
    """Rows 1.4 and 0.6 around a first row of 1.0: each is 0.4 from the first, 0.8 from each other."""
    scores = np.array([[1.0, 2.0], [1.4, 2.0], [0.6, 2.0]])
    assert dv.RopeOffsetCurve(np.arange(2), np.arange(3), scores, 1.0).spread == pytest.approx(0.8)


def test_spread_of_an_absolute_position_code_is_large(monkeypatch):
    """Swap RoPE for a code that adds the position (not a rotation): the score then depends on where
    the pair sits, and the spread must show it."""
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=8), rng.normal(size=8)
    offsets, starts = np.arange(6), np.array([0, 3, 9])
    assert dv.rope_offset_curve(q, k, offsets, starts, 100.0).spread < TOL

    def added_position(x, positions, base, layout="interleaved"):
        return np.asarray(x) + 0.1 * np.asarray(positions, float)[:, None]

    monkeypatch.setattr(dv, "apply_rope", added_position)
    assert dv.rope_offset_curve(q, k, offsets, starts, 100.0).spread > 0.1


def test_pair_norm_change_of_a_stretch_is_large():
    x = np.array([[3.0, 4.0, 0.0, 1.0]])
    assert dv.max_pair_norm_change(x, x) == 0.0
    assert dv.max_pair_norm_change(x, 1.5 * x) == pytest.approx(2.5)  # the (3, 4) pair: 5 -> 7.5
    assert dv.max_pair_norm_change(x, x[:, [1, 0, 3, 2]]) == 0.0  # a swap inside pairs keeps lengths

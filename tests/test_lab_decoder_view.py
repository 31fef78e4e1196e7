"""The decoder page's core helpers (``attention_core.labs.decoder_view``) against naive loops and
hand-computed values. No model needed."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from attention_core.labs import decoder_view as dv
from attention_core.models.smollm2 import SMOLLM2_135M
from attention_ui.decoder import sequence_text


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

"""Grouped-query attention (attention_core/gqa.py).

References: a plain-Python loop written from the formulas (head j reads KV head j // (h/g)) and the
core's multi-head steps for g = h.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import gqa, steps


def naive_grouped(Q, K, V, causal: bool, divisor: float):
    """Loop reference: weights [h, n_q, n_k] and outputs [h, n_q, d_v]."""
    h, n_q, _ = Q.shape
    g, n_k, d_v = V.shape
    group = h // g
    W = np.zeros((h, n_q, n_k))
    out = np.zeros((h, n_q, d_v))
    for j in range(h):
        kv = j // group
        for i in range(n_q):
            visible = [t for t in range(n_k) if not causal or t <= i + (n_k - n_q)]
            s = [sum(Q[j, i, c] * K[kv, t, c] for c in range(Q.shape[2])) / divisor for t in visible]
            top = max(s)
            e = [math.exp(v - top) for v in s]
            for t, ev in zip(visible, e, strict=True):
                W[j, i, t] = ev / sum(e)
            for c in range(d_v):
                out[j, i, c] = sum(W[j, i, t] * V[kv, t, c] for t in range(n_k))
    return W, out


@pytest.mark.parametrize(("h", "g", "expected"), [
    (9, 3, [0, 0, 0, 1, 1, 1, 2, 2, 2]), (8, 2, [0, 0, 0, 0, 1, 1, 1, 1]), (4, 4, [0, 1, 2, 3]), (4, 1, [0, 0, 0, 0]),
])  # fmt: skip
def test_kv_head_of_hand_values(h, g, expected):
    assert gqa.kv_head_of(h, g).tolist() == expected
    assert gqa.group_size(h, g) == h // g


def test_query_heads_of_and_memory_ratio():
    assert gqa.query_heads_of(9, 3) == ((0, 1, 2), (3, 4, 5), (6, 7, 8))
    assert gqa.kv_memory_ratio(9, 3) == pytest.approx(1 / 3)
    assert gqa.kv_memory_ratio(8, 8) == 1.0 and gqa.kv_memory_ratio(8, 1) == 1 / 8


@pytest.mark.parametrize(("h", "g"), [(9, 2), (0, 1), (4, 0)])
def test_bad_head_counts(h, g):
    with pytest.raises(ValueError):
        gqa.kv_head_of(h, g)


@pytest.mark.parametrize(("h", "g"), [(6, 3), (6, 1), (6, 6), (9, 3)])
@pytest.mark.parametrize("causal", [True, False])
def test_grouped_attention_matches_loop(h, g, causal):
    rng = np.random.default_rng(h * 10 + g)
    n, d = 5, 4
    Q, K, V = rng.standard_normal((h, n, d)), rng.standard_normal((g, n, d)), rng.standard_normal((g, n, 3))
    allowed = steps.build_mask("causal", n) if causal else None
    att = gqa.grouped_attention(Q, K, V, allowed, 2.0)
    W, out = naive_grouped(Q, K, V, causal, 2.0)
    np.testing.assert_allclose(att.weights, W, atol=1e-12)
    np.testing.assert_allclose(att.head_outputs, out, atol=1e-12)
    np.testing.assert_allclose(att.scores_scaled, att.scores_raw / 2.0, atol=0)
    assert att.kv_head_of.tolist() == gqa.kv_head_of(h, g).tolist()


def test_gqa_with_as_many_kv_heads_as_query_heads_is_mha():
    rng = np.random.default_rng(7)
    Q, K, V = (rng.standard_normal((4, 6, 5)) for _ in range(3))
    allowed = steps.build_mask("causal", 6)
    att = gqa.grouped_attention(Q, K, V, allowed, math.sqrt(5))
    mha = steps.softmax(steps.apply_mask(steps.scale(steps.raw_scores(Q, K), math.sqrt(5)), allowed))
    np.testing.assert_allclose(att.weights, mha, atol=1e-14)
    np.testing.assert_allclose(att.head_outputs, steps.weighted_sum(mha, V), atol=1e-14)


def test_heads_of_one_group_share_keys_but_differ_by_query():
    rng = np.random.default_rng(8)
    Q, K, V = rng.standard_normal((6, 4, 3)), rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 4, 3))
    expanded = gqa.expand_kv(K, 6)
    assert expanded.shape == (6, 4, 3)
    for j in range(6):
        np.testing.assert_array_equal(expanded[j], K[j // 3])
    att = gqa.grouped_attention(Q, K, V, None, 1.0)
    assert not np.allclose(att.weights[0], att.weights[1])  # same keys, different queries


def test_float32_weights_stay_float32():
    Q, K, V = (np.ones((2, 3, 4), dtype=np.float32) for _ in range(3))
    att = gqa.grouped_attention(Q, K[:1], V[:1], steps.build_mask("causal", 3), 2.0)
    assert att.weights.dtype == np.float32 and att.head_outputs.dtype == np.float32


def test_group_size_of_one_head():
    assert gqa.group_size(1, 1) == 1
    assert gqa.group_size(6, 2) == 3
    for h, g in ((0, 1), (1, 0), (-2, 1)):
        with pytest.raises(ValueError):
            gqa.group_size(h, g)

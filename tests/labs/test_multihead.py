"""Multi-head counts against hand-counted small cases; the head split against explicit slices."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.labs import multihead as mh
from attention_core.labs.multihead import (
    cost_vs_heads,
    head_sweep,
    matmul_flops,
    merge_head_weights,
    multihead_cost,
    multihead_lab,
    split_vs_separate,
    valid_head_counts,
)

TOL = 1e-10  # what a check reads as equal; a deliberately broken input gives far more


def test_hand_counted_small_case():
    # n=3, d_model=4, h=2 -> d_k=d_v=2.
    c = multihead_cost(3, 4, 2)
    assert (c.d_k, c.d_v) == (2, 2)
    assert c.params_qkv == 3 * 16 and c.params_out == 16 and c.params_total == 64
    # Q, K, V: each [3,4]@[4,4] = 48 MACs = 96 FLOPs.
    assert c.flops_projections == 3 * 96
    # per head [3,2]@[2,3] = 18 MACs, two heads -> 72 FLOPs.
    assert c.flops_scores == 72
    # per head [3,3]@[3,2] = 18 MACs -> 72 FLOPs.
    assert c.flops_weighted_sum == 72
    assert c.flops_output == 96  # [3,4]@[4,4]
    assert c.flops_scale == 18 and c.flops_softmax == 5 * 18
    assert c.flops_total == 288 + 72 + 18 + 90 + 72 + 96
    assert c.attention_matrix_elements == 18


def test_bias_counts():
    c = multihead_cost(3, 4, 2, bias=True)
    assert c.params_total == 64 + 3 * 4 + 4
    assert c.flops_projections == 288 + 3 * 12 and c.flops_output == 96 + 12


def test_matmul_costs_constant_in_heads():
    n, d = 128, 64
    costs = cost_vs_heads(n, d)
    assert [c.heads for c in costs] == [1, 2, 4, 8, 16, 32, 64]
    for c in costs:
        assert c.params_total == 4 * d * d
        assert c.flops_scores == 2 * n * n * d  # h * n^2 * d_k with d_k = d/h
        assert c.flops_weighted_sum == 2 * n * n * d
        assert c.flops_projections == 6 * n * d * d
        assert c.flops_output == 2 * n * d * d
    # What does grow with h: one n x n matrix per head.
    assert [c.attention_matrix_elements for c in costs] == [h * n * n for h in (1, 2, 4, 8, 16, 32, 64)]


def test_invalid_heads():
    with pytest.raises(ValueError):
        multihead_cost(4, 6, 4)
    assert valid_head_counts(12) == (1, 2, 3, 4, 6, 12)
    assert matmul_flops(2, 3, 4) == 48


@pytest.mark.parametrize("heads", [1, 2, 3, 6])
def test_split_equals_separate(heads):
    rng = np.random.default_rng(5)
    X, W = rng.standard_normal((4, 6)), rng.standard_normal((6, 6))
    r = split_vs_separate(X, W, heads)
    assert r.equal and r.max_abs_diff < 1e-12
    d_k = 6 // heads
    for i in range(heads):
        for t in range(4):
            for c in range(d_k):
                expected = sum(X[t, m] * W[m, i * d_k + c] for m in range(6))
                assert abs(r.split[i, t, c] - expected) < 1e-12


def test_matmul_and_softmax_totals_against_h():
    n, d = 16, 8
    sweep = head_sweep(n, d)
    assert [c.heads for c in sweep.costs] == [1, 2, 4, 8]
    assert [c.flops_matmul for c in sweep.costs] == [
        8 * n * d * d + 4 * n * n * d
    ] * 4  # 6nd² + 2n²d + 2n²d + 2nd²
    assert [c.flops_softmax_scale for c in sweep.costs] == [6 * h * n * n for h in (1, 2, 4, 8)]
    assert sweep.params_constant and sweep.matmul_constant


def test_merge_head_weights_puts_head_i_in_its_column_block():
    W = np.random.default_rng(2).standard_normal((3, 5, 2))  # [h, d_model, d_k]
    M = merge_head_weights(W)
    assert M.shape == (5, 6)
    for i in range(3):
        for m in range(5):
            for c in range(2):
                assert M[m, i * 2 + c] == W[i, m, c]


def test_multihead_lab_checks_by_hand():
    lab = multihead_lab("the cat sat on the mat", 12, 3, seed=1)
    assert lab.trace.heads == 3 and lab.trace.n == 6
    assert lab.head_counts == (1, 2, 3, 4, 6, 12) and lab.head_dims == (12, 6, 4, 3, 2, 1)
    assert lab.split.equal and lab.split_vs_trace < 1e-12
    tops = set()
    for head in range(3):
        w = lab.trace.weights[head].tolist()
        tops.add(tuple(max(range(6), key=lambda j, row=row: row[j]) for row in w))
    assert lab.distinct_patterns == len(tops)


def test_head_counts_and_cost_limits():
    from attention_core.labs import multihead as mh

    assert mh.valid_head_counts(1) == (1,) and mh.valid_head_counts(12) == (1, 2, 3, 4, 6, 12)
    c = mh.multihead_cost(1, 1, 1)
    assert (c.n, c.d_model, c.heads, c.d_k, c.d_v) == (1, 1, 1, 1, 1) and type(c.d_k) is int
    for bad in ((0, 4, 2), (4, 0, 2), (4, 4, 0)):
        with pytest.raises(ValueError):
            mh.multihead_cost(*bad)
    sweep = mh.cost_vs_heads(10, 8, [2, 4.0], bias=True)
    assert [s.heads for s in sweep] == [2, 4]
    assert sweep[0].params_out == 2 * 4 * 8 + 8  # W_O plus its bias
    assert [s.heads for s in mh.cost_vs_heads(10, 8)] == [1, 2, 4, 8]


def test_split_check_fields_boolean_inputs_and_no_rows():
    from attention_core.labs import multihead as mh

    X = np.array([[True, False, True], [True, True, False]])
    W = np.array([[True, True, False, True], [False, True, True, True], [True, False, True, False]])
    chk = mh.split_vs_separate(X, W, 2)
    assert (chk.heads, chk.d_k) == (2, 2)
    products = X.astype(float) @ W.astype(float)  # sums of products, not logical ors
    np.testing.assert_array_equal(chk.split, np.stack([products[:, :2], products[:, 2:]]))
    np.testing.assert_array_equal(chk.separate, chk.split)
    assert chk.max_abs_diff == 0.0 and chk.equal
    empty = mh.split_vs_separate(np.zeros((0, 3)), np.ones((3, 4)), 2)
    assert empty.max_abs_diff == 0.0 and empty.split.shape == (2, 0, 2)
    assert mh.merge_head_weights(np.ones((2, 3, 4), dtype=int)).dtype == np.float64


def test_multihead_lab_settings_and_a_wrong_split(monkeypatch):
    from attention_core import AttentionConfig
    from attention_core.labs import multihead as mh
    from attention_core.trace import trace_text

    lab = mh.multihead_lab("one two three four five", 8, 2, 4, max_tokens=3)
    assert lab.trace.tokens == ("one", "two", "three") and lab.head_dims == (8, 4, 2, 1)
    assert all(type(d) is int for d in lab.head_dims)
    ref = trace_text("one two three", AttentionConfig(d_model=8, heads=2, seed=4))
    np.testing.assert_array_equal(lab.trace.Q, ref.Q)
    assert lab.split_vs_trace <= 1e-12
    monkeypatch.setattr(mh, "split_heads", lambda x, h: x.reshape(x.shape[0], -1, h).transpose(2, 0, 1))
    assert mh.multihead_lab("one two three", 8, 2, 4).split_vs_trace > 0.1


def test_split_check_of_a_wrong_head_cut_is_large(monkeypatch):
    rng = np.random.default_rng(4)
    X, W = rng.normal(size=(5, 8)), rng.normal(size=(8, 8))
    good = mh.split_vs_separate(X, W, 2)
    assert good.equal and good.max_abs_diff <= TOL
    # cutting the columns the other way round (column j to head j % h) is a different split
    monkeypatch.setattr(mh, "split_heads", lambda x, h: x.reshape(x.shape[0], -1, h).transpose(2, 0, 1))
    bad = mh.split_vs_separate(X, W, 2)
    assert not bad.equal and bad.max_abs_diff > 0.1

"""The cell explainer's arithmetic against the trace's matrices and hand computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import AttentionConfig, trace_text
from attention_core.explain import cell_slips, explain_cell, explain_row
from attention_ui.playground.figures import cell_from_point


@pytest.fixture(scope="module")
def trace():
    return trace_text(
        "the cat sat on the mat", AttentionConfig(d_model=16, heads=2, mask="causal+padding", pad=2)
    )


def test_every_cell_matches_the_trace(trace):
    for head in range(trace.heads):
        for i in range(trace.n):
            for j in range(trace.n):
                a = explain_cell(trace, head, i, j)
                assert a.raw == pytest.approx(trace.scores_raw[head, i, j], abs=1e-12)
                assert a.scaled == pytest.approx(trace.scores_scaled[head, i, j], abs=1e-12)
                assert a.allowed == bool(trace.mask[i, j])
                if a.allowed:
                    assert a.masked == pytest.approx(trace.scores_masked[head, i, j], abs=1e-12)
                else:
                    assert a.masked == -math.inf and a.mask_term == -math.inf and a.exp_term == 0.0
                assert a.weight == pytest.approx(trace.weights[head, i, j], abs=1e-12)


def test_terms_are_the_elementwise_products_and_the_normaliser_sums_the_row(trace):
    a = explain_cell(trace, 1, 3, 1)
    d_k = trace.Q.shape[2]
    assert a.products.shape == (d_k,)
    for d in range(d_k):  # one term per dimension, by hand
        assert a.products[d] == pytest.approx(trace.Q[1, 3, d] * trace.K[1, 1, d], abs=1e-15)
    # normaliser by a plain loop over the allowed keys (query 3 under a causal mask: keys 0..3)
    row = [trace.scores_scaled[1, 3, j] for j in range(4)]
    m = max(row)
    assert a.row_max == pytest.approx(m, abs=1e-12)
    assert a.normaliser == pytest.approx(sum(math.exp(s - m) for s in row), rel=1e-12)
    assert a.exp_term == pytest.approx(math.exp(row[1] - m), rel=1e-12)


def test_hand_computed_two_by_two_case():
    # q0 = (1, 2), k0 = (3, 4), k1 = (0, 1): S = 11 and 2; divisor sqrt(2)
    from attention_core import AttentionParams, attend

    X = np.eye(2)
    eye = np.eye(2)[None]
    params = AttentionParams(
        W_Q=np.array([[[1.0, 2.0], [0.0, 0.0]]]),
        W_K=np.array([[[3.0, 4.0], [0.0, 1.0]]]),
        W_V=eye.copy(),
        W_O=np.eye(2),
    )
    tr = attend(X, params, np.ones((2, 2), bool), math.sqrt(2), tokens=("a", "b"))
    a = explain_cell(tr, 0, 0, 1)
    assert list(a.products) == [0.0, 2.0] and a.raw == 2.0
    assert a.scaled == pytest.approx(2 / math.sqrt(2))
    expected = math.exp(2 / math.sqrt(2)) / (math.exp(11 / math.sqrt(2)) + math.exp(2 / math.sqrt(2)))
    assert a.weight == pytest.approx(expected, rel=1e-12)


def test_fully_masked_row_explains_zero_weights():
    # With at least one real token, the core's masks leave every query some key (a [PAD] query still
    # sees the real tokens), so the row is made here: query 1 may attend to nothing.
    from attention_core.trace import attend, init_params

    cfg = AttentionConfig(d_model=4, heads=1)
    allowed = np.ones((3, 3), dtype=bool)
    allowed[1] = False
    tr = attend(np.random.default_rng(0).normal(size=(3, 4)), init_params(cfg), allowed, 2.0)
    assert np.flatnonzero(tr.fully_masked_rows).tolist() == [1]
    a = explain_cell(tr, 0, 1, 0)
    assert a.fully_masked and a.weight == 0.0 and a.normaliser == 0.0


def test_row_output_is_the_weighted_sum_of_value_rows(trace):
    for i in range(trace.n):
        r = explain_row(trace, 0, i)
        by_loop = np.zeros(trace.V.shape[2])
        for j in range(trace.n):
            by_loop += trace.weights[0, i, j] * trace.V[0, j]
        np.testing.assert_allclose(r.output, by_loop, atol=1e-12)
        np.testing.assert_allclose(r.output, trace.head_outputs[0, i], atol=1e-12)
        np.testing.assert_allclose(r.contributions.sum(axis=0), r.output, atol=1e-15)


def test_out_of_range_cells_raise(trace):
    with pytest.raises(IndexError):
        explain_cell(trace, 2, 0, 0)
    with pytest.raises(IndexError):
        explain_cell(trace, 0, trace.n, 0)
    with pytest.raises(IndexError):
        explain_row(trace, 0, -1)


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ({"x": 2, "y": 3}, (3, 2)),
        ({"x": 1.9, "y": 0.2}, (0, 2)),
        ({"x": 6, "y": 0}, None),
        ({"x": "a", "y": 0}, None),
        ({"y": 1}, None),
        ({"x": float("nan"), "y": 1}, None),
        ({"x": -1, "y": 0}, None),
    ],
)
def test_cell_from_point(point, expected):
    assert cell_from_point(point, 6, 6) == expected


def test_cell_slips_by_hand() -> None:
    """The quiz's wrong answers for one cell (issue 45), each computed here without the core."""
    tr = trace_text("one two three", AttentionConfig(mask="causal", heads=1, d_model=4, seed=3))
    q, K = tr.Q[0, 2], tr.K[0]
    raw = np.array([q @ K[c] for c in range(3)])
    by_hand = np.exp(raw / 2.0) / np.exp(raw / 2.0).sum()  # d_k = 4: divisor 2, row 2 sees every key
    s = cell_slips(tr, 0, 2, 1)
    assert math.isclose(s.weight, by_hand[1], rel_tol=1e-12)
    assert math.isclose(s.unscaled, (np.exp(raw) / np.exp(raw).sum())[1], rel_tol=1e-12)
    assert s.unmasked is None and s.allowed_keys == 3 and s.uniform == pytest.approx(1 / 3)
    assert math.isclose(s.score, raw[1] / 2.0, rel_tol=1e-12)
    r0 = cell_slips(tr, 0, 0, 1)  # row 0 of a causal mask: key 1 is forbidden
    raw0 = np.array([tr.Q[0, 0] @ K[c] for c in range(3)])
    assert r0.weight == 0.0 and r0.uniform == 0.0 and r0.allowed_keys == 1
    assert math.isclose(r0.unmasked, (np.exp(raw0 / 2) / np.exp(raw0 / 2).sum())[1], rel_tol=1e-12)


def test_every_field_names_its_cell_and_the_edges_are_refused() -> None:
    """The records say which cell they are about, and the first index past each edge is refused."""
    tr = trace_text("one two three", AttentionConfig(mask="causal", heads=2, d_model=4, seed=1))
    a = explain_cell(tr, 1, 2, 0)
    assert (a.head, a.i, a.j) == (1, 2, 0) and np.array_equal(a.k, tr.K[1, 0]) and a.mask_term == 0.0
    r = explain_row(tr, 1, 2)
    assert (r.head, r.i) == (1, 2)
    assert np.array_equal(r.weights, tr.weights[1, 2]) and np.array_equal(r.values, tr.V[1])
    for args in ((tr.heads, 0, 0), (0, tr.n, 0), (0, 0, tr.n), (-1, 0, 0), (0, -1, 0), (0, 0, -1)):
        with pytest.raises(IndexError):
            explain_cell(tr, *args)
    with pytest.raises(IndexError):
        explain_row(tr, 0, tr.n)
    with pytest.raises(IndexError):
        cell_slips(tr, 0, 0, tr.n)


def test_a_row_with_no_allowed_key_has_no_largest_score() -> None:
    import dataclasses

    tr = trace_text("one two", AttentionConfig(heads=1, d_model=2))
    blocked = dataclasses.replace(tr, mask=np.zeros_like(tr.mask))  # every key forbidden
    a = explain_cell(blocked, 0, 1, 0)
    assert a.fully_masked and math.isnan(a.row_max) and a.weight == 0.0 and a.normaliser == 0.0

"""Look-alikes against self-attention, a naive additive-score loop and hand counts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.config import AttentionConfig
from attention_core.labs.lookalikes import (
    LOOKALIKES,
    RNN_COMPARISON,
    additive_scores,
    compare_scores,
    cost_curves,
    cross_attention,
    init_additive_params,
    layer_cost,
    lookalikes_lab,
    rnn_steps_illustration,
)
from attention_core.trace import attend, init_params


def _params(d_model=8, heads=2, seed=1):
    return init_params(AttentionConfig(d_model=d_model, heads=heads, seed=seed))


def test_cross_attention_with_same_sequence_is_self_attention():
    X = np.random.default_rng(0).standard_normal((5, 8))
    p = _params()
    ca = cross_attention(X, X, p, 2.0)
    sa = attend(X, p, np.ones((5, 5), bool), 2.0)
    np.testing.assert_allclose(ca.output, sa.output, atol=1e-13)
    np.testing.assert_allclose(ca.weights, sa.weights, atol=1e-13)


def test_cross_attention_shapes_and_naive_row():
    rng = np.random.default_rng(1)
    X_q, X_kv = rng.standard_normal((3, 8)), rng.standard_normal((6, 8))
    p = _params()
    ca = cross_attention(X_q, X_kv, p, math.sqrt(4))
    assert ca.weights.shape == (2, 3, 6) and ca.output.shape == (3, 8)
    np.testing.assert_allclose(ca.weights.sum(axis=-1), 1.0)
    # Head 1, query 2, by hand from the projections.
    q = X_q[2] @ p.W_Q[1]
    s = np.array([q @ (X_kv[j] @ p.W_K[1]) / 2.0 for j in range(6)])
    w = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    np.testing.assert_allclose(ca.weights[1, 2], w, atol=1e-13)
    allowed = np.ones((3, 6), bool)
    allowed[:, 4:] = False  # hide two padded source tokens
    masked = cross_attention(X_q, X_kv, p, 2.0, allowed)
    assert np.all(masked.weights[:, :, 4:] == 0.0)
    with pytest.raises(ValueError):
        cross_attention(X_q, rng.standard_normal((6, 5)), p, 2.0)


def test_additive_scores_against_loop():
    rng = np.random.default_rng(2)
    Q, K = rng.standard_normal((3, 4)), rng.standard_normal((5, 6))
    W1, W2, v = rng.standard_normal((7, 4)), rng.standard_normal((7, 6)), rng.standard_normal(7)
    expected = np.zeros((3, 5))
    for i in range(3):
        for j in range(5):
            hidden = [
                math.tanh(
                    sum(W1[a, c] * Q[i, c] for c in range(4)) + sum(W2[a, c] * K[j, c] for c in range(6))
                )
                for a in range(7)
            ]
            expected[i, j] = sum(v[a] * hidden[a] for a in range(7))
    np.testing.assert_allclose(additive_scores(Q, K, W1, W2, v), expected, atol=1e-12)


def test_compare_scores():
    rng = np.random.default_rng(3)
    Q, K = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    p = init_additive_params(4, 4, 5, seed=0)
    c = compare_scores(Q, K, p)
    np.testing.assert_allclose(c.dot_scores, Q @ K.T / 2.0, atol=1e-14)
    assert c.additive_weights.shape == c.dot_weights.shape == (4, 4)
    assert c.additive_params == 5 * 4 + 5 * 4 + 5 and c.dot_params == 0


def test_rnn_path_and_tables():
    r = rnn_steps_illustration(10, 2, 7)
    assert (r.rnn_path_length, r.attention_path_length) == (5, 1)
    assert (r.rnn_sequential_steps, r.attention_sequential_steps) == (10, 1)
    assert r.rnn_hidden_states == (2, 3, 4, 5, 6, 7)
    assert rnn_steps_illustration(4, 3, 3).attention_path_length == 0
    assert rnn_steps_illustration(6).rnn_path_length == 5
    with pytest.raises(ValueError):
        rnn_steps_illustration(3, 0, 3)
    assert {row.aspect for row in RNN_COMPARISON} == {
        "path_length",
        "sequential_steps",
        "per_layer_cost",
        "memory",
    }
    terms = {row.term: row for row in LOOKALIKES}
    assert terms["cross_attention"].key_value_source == "other"
    assert terms["additive_attention"].score == "additive"


def _naive_weights(Q, K, divisor, causal=False):
    out = np.zeros((len(Q), len(K)))
    for i in range(len(Q)):
        keys = [j for j in range(len(K)) if not (causal and j > i)]
        s = [sum(q * k for q, k in zip(Q[i], K[j], strict=True)) / divisor for j in keys]
        e = [math.exp(x - max(s)) for x in s]
        for j, v in zip(keys, e, strict=True):
            out[i, j] = v / sum(e)
    return out


def test_lookalikes_lab_against_loops():
    lab = lookalikes_lab("the cat sat on the mat", "a b c", 16, 4, seed=2, head=3, d_a=5, max_tokens=16)
    a, b = lab.a, lab.b
    assert (a.n, b.n, lab.head) == (6, 3, 3)
    Q, K_b = a.X @ a.W_Q[3], b.X @ a.W_K[3]  # queries from A, keys from B, A's (= B's) weights
    np.testing.assert_allclose(lab.cross.weights[3], _naive_weights(Q, K_b, math.sqrt(4)), atol=1e-12)
    K_a = a.X @ a.W_K[3]
    np.testing.assert_allclose(lab.causal.weights[3], _naive_weights(Q, K_a, 2.0, causal=True), atol=1e-12)
    assert lab.causal_last_row_same and lab.causal_masked == 6 * 5 // 2
    assert lab.scores.additive_params == 2 * 5 * 4 + 5  # W1, W2 [d_a, d_k] and v [d_a]
    np.testing.assert_allclose(lab.scores.dot_weights, _naive_weights(Q, K_a, 2.0), atol=1e-12)


def test_lookalikes_lab_cuts_long_sentences():
    lab = lookalikes_lab(" ".join(f"w{i}" for i in range(40)), "x", 8, 2, 0, 0, 4, max_tokens=16)
    assert lab.a.n == 16 and lab.a.tokenization.total_tokens == 40


def test_cost_curves_by_hand():
    c = cost_curves(100, 400)
    assert (c.n2d, c.nd2) == (100 * 100 * 400, 100 * 400 * 400)
    assert c.ns[0] == round(100 / 16) and c.ns[-1] == 400 * 16
    assert np.all(np.diff(c.ns) > 0) and np.all(c.ns == np.round(c.ns))
    np.testing.assert_array_equal(c.attention, c.ns**2 * 400)
    np.testing.assert_array_equal(c.rnn, c.ns * 400.0**2)
    assert (c.verdict, c.ratio) == ("attention_cheaper", 4.0)  # n·d² / n²·d = d / n
    assert (cost_curves(400, 100).verdict, cost_curves(400, 100).ratio) == ("rnn_cheaper", 4.0)
    assert (cost_curves(7, 7).verdict, cost_curves(7, 7).ratio) == ("equal", 1.0)
    assert cost_curves(1, 1).ns[0] == 1.0
    with pytest.raises(ValueError):
        cost_curves(0, 4)


def _macs(*products: tuple[int, int, int]) -> int:
    """Multiply-adds of matrix products given by their shapes [m, k] @ [k, p]."""
    return sum(m * k * p for m, k, p in products)


def _counted_by_shape(n: int, d: int) -> dict[str, int]:
    """Every product of one layer listed by its shapes, written apart from the core's formulas."""
    projections = [(n, d, d)] * 4  # X W^Q, X W^K, X W^V, Concat W^O
    mixing = [(n, d, n), (n, n, d)]  # Q Kᵀ, A V
    rnn_step = [(1, d, d), (1, d, d)]  # W_x x_t and W_h h_{t-1}, once per token
    return {
        "attention_mix": _macs(*mixing),
        "attention_proj": _macs(*projections),
        "rnn_recurrence": n * _macs((1, d, d)),
        "rnn": n * _macs(*rnn_step),
        "lstm": n * 4 * _macs(*rnn_step),  # four gates, each with an input and a recurrent matrix
    }


@pytest.mark.parametrize(("n", "d"), [(1, 1), (7, 3), (64, 512), (1000, 512), (1024, 512), (4096, 512)])
def test_layer_cost_counts_every_product(n, d):
    c, want = layer_cost(n, d), _counted_by_shape(n, d)
    assert (c.attention_macs, c.rnn_macs) == (want["attention_mix"], want["rnn_recurrence"])
    assert c.attention_projection_macs == want["attention_proj"]
    assert c.attention_total_macs == want["attention_mix"] + want["attention_proj"]
    assert (c.rnn_total_macs, c.lstm_total_macs) == (want["rnn"], want["lstm"])


def test_layer_cost_claims_of_the_page():
    """The sentences of lookalikes.cost_intro and cost_exact, checked over a grid of n and d."""
    for d in (8, 64, 512):
        for n in range(1, 4 * d + 2):
            c = layer_cost(n, d)
            # mixing terms, constants dropped as in the paper's table: equal exactly at n = d
            big_att, big_rnn = n * n * d, n * d * d
            assert (big_att < big_rnn) == (n < d) and (big_att == big_rnn) == (n == d)
            # counted in full: attention never beats a plain RNN, beats an LSTM only while n < 2d
            assert c.attention_total_macs > c.rnn_total_macs
            assert (c.attention_total_macs < c.lstm_total_macs) == (n < 2 * d)
    with pytest.raises(ValueError):
        layer_cost(0, 4)


def test_cross_attention_biases_mask_and_shape_checks():
    from attention_core.labs import lookalikes as lk
    from attention_core.trace import AttentionParams

    rng = np.random.default_rng(14)
    h, d, dk = 2, 4, 2
    P = AttentionParams(
        *(rng.normal(size=(h, d, dk)) for _ in range(3)), rng.normal(size=(h * dk, d)),
        b_Q=rng.normal(size=(h, dk)), b_K=rng.normal(size=(h, dk)), b_V=rng.normal(size=(h, dk)), b_O=rng.normal(size=d),
    )  # fmt: skip
    Xq = np.array([[1, 0, 2, 0], [0, 1, 0, 1]])  # integers: converted to float
    Xkv = rng.normal(size=(3, d))
    allowed = np.array([[1, 1, 0], [1, 0, 0]])  # 0/1: a mask, not numbers
    got = lk.cross_attention(Xq, Xkv, P, 2.0, allowed)
    heads = []
    for j in range(h):
        q, k, v = Xq @ P.W_Q[j] + P.b_Q[j], Xkv @ P.W_K[j] + P.b_K[j], Xkv @ P.W_V[j] + P.b_V[j]
        out = np.zeros((2, dk))
        for i in range(2):
            js = [c for c in range(3) if allowed[i, c]]
            s = [float(q[i] @ k[c]) / 2.0 for c in js]
            e = [math.exp(x - max(s)) for x in s]
            out[i] = sum(w / sum(e) * v[c] for w, c in zip(e, js, strict=True))
        heads.append(out)
    np.testing.assert_allclose(got.output, np.concatenate(heads, axis=1) @ P.W_O + P.b_O, atol=1e-12)
    for bad in ((np.zeros(4), Xkv), (Xq, np.zeros(4)), (np.zeros((2, 3)), Xkv)):
        with pytest.raises(ValueError):
            lk.cross_attention(*bad, P, 2.0)


def test_additive_params_and_scores_by_hand():
    from attention_core.labs import lookalikes as lk

    rng = np.random.default_rng(0)  # the default seed, draws in the order W1, W2, v
    W1, W2, v = (
        rng.standard_normal((3, 2)) / math.sqrt(2),
        rng.standard_normal((3, 4)) / math.sqrt(4),
        rng.standard_normal(3) / math.sqrt(3),
    )
    p = lk.init_additive_params(2, 4, 3)
    np.testing.assert_array_equal(p.W1, W1)
    np.testing.assert_array_equal(p.W2, W2)
    np.testing.assert_array_equal(p.v, v)
    Q = np.array([[True, False]])  # booleans and integers are numbers here
    K = np.array([[1, 0, 2, 0], [0, 1, 0, 1]])
    W1i = np.array([[1, 0], [0, 1], [1, 1]])
    expected = [
        [
            sum(float(v[a]) * math.tanh((W1i[a] @ [1.0, 0.0]) + (W2[a] @ K[j])) for a in range(3))
            for j in range(2)
        ]
    ]
    np.testing.assert_allclose(lk.additive_scores(Q, K.astype(float), W1i, W2, v), expected, atol=1e-14)
    cmp = lk.compare_scores(
        Q.astype(float), np.array([[1.0, 0.0], [0.0, 1.0]]), lk.init_additive_params(2, 2, 3)
    )
    assert (
        cmp.additive_scores.shape == (1, 2)
        and not cmp.additive_scores.flags.writeable
        and cmp.dot_params == 0
    )


def test_layer_cost_paths_and_curves_fields():
    from attention_core.labs import lookalikes as lk

    c = lk.layer_cost(5, 3)
    assert (c.n, c.d) == (5, 3)
    p = lk.rnn_steps_illustration(1)
    assert (p.n, p.i, p.j, p.rnn_path_length, p.attention_path_length) == (1, 0, 0, 0, 0)
    p = lk.rnn_steps_illustration(5, 3, 1)
    assert (p.n, p.i, p.j, p.rnn_path_length, p.rnn_hidden_states) == (5, 3, 1, 2, (1, 2, 3))
    assert lk.rnn_steps_illustration(5, 0, 0).attention_path_length == 0
    for bad in ((5, 5, 0), (5, 0, 5), (5, -1, 0), (5, 0, -1), (0, 0, 0)):
        with pytest.raises(ValueError):
            lk.rnn_steps_illustration(*bad)
    cc = lk.cost_curves(8, 64)
    assert (cc.n, cc.d) == (8, 64) and cc.ns[0] == 1.0 and cc.ns[-1] == 64 * 16
    assert len(cc.ns) <= 120 and len(lk.cost_curves(8, 64, 7).ns) <= 7


def test_lookalikes_lab_settings_reach_every_trace():
    from attention_core import AttentionConfig
    from attention_core.labs import lookalikes as lk
    from attention_core.trace import trace_text

    lab = lk.lookalikes_lab("a b c d", "e f g h i", 8, 2, 3, 1, 4, 3)
    cfg = AttentionConfig(d_model=8, heads=2, seed=3)
    assert (
        lab.a.tokens == ("a", "b", "c")
        and lab.b.tokens == ("e", "f", "g")
        and lab.causal.tokens == ("a", "b", "c")
    )
    np.testing.assert_array_equal(lab.a.Q, trace_text("a b c", cfg).Q)
    np.testing.assert_array_equal(lab.b.X, trace_text("e f g", cfg).X)
    Q, K = lab.a.Q[1], lab.a.K[1]
    ref = lk.compare_scores(Q, K, lk.init_additive_params(Q.shape[1], K.shape[1], 4, seed=3), lab.a.divisor)
    np.testing.assert_array_equal(lab.scores.additive_scores, ref.additive_scores)
    np.testing.assert_allclose(lab.scores.dot_scores, Q @ K.T / math.sqrt(4), atol=1e-15)
    assert lab.causal_last_row_same and lab.causal_masked == 3


def test_compare_scores_of_booleans_and_the_curve_points():
    from attention_core.labs import lookalikes as lk

    Q = np.array([[True, True], [True, False]])
    K = np.array([[True, True], [False, True]])
    cmp = lk.compare_scores(Q, K, lk.init_additive_params(2, 2, 3))
    np.testing.assert_allclose(
        cmp.dot_scores, [[2 / math.sqrt(2), 1 / math.sqrt(2)], [1 / math.sqrt(2), 0.0]]
    )
    cc = lk.cost_curves(1000, 2000)  # 62.5 … 32,000: 120 distinct whole numbers
    assert len(cc.ns) == 120 and cc.ns[0] == 62.0 and cc.ns[-1] == 32000.0

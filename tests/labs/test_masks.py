"""Mask builders against naive loops; the mask mistakes against hand-written per-query sums."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.config import PAD_TOKEN, AttentionConfig
from attention_core.embeddings import embed, token_embedding
from attention_core.labs.masks import (
    D_MODEL,
    METHODS,
    MaskLabSettings,
    attention_correct,
    attention_renormalise_after_softmax,
    attention_zero_values,
    attention_zero_weights_after_softmax,
    leakage,
    leakage_map,
    leakage_matrix,
    mask_lab,
    mask_matrices,
    masked_attention,
    sliding_window_mask,
    swap_leakage,
)
from attention_core.trace import init_params
from tests.reference_naive import naive_attention, naive_mask, naive_positional_encoding, naive_softmax_row


def _qkv(n=5, d_k=3, d_v=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d_k)), rng.standard_normal((n, d_k)), rng.standard_normal((n, d_v))


def _causal(n):
    return np.array([[j <= i for j in range(n)] for i in range(n)])


@pytest.mark.parametrize("n,w", [(1, 1), (5, 1), (6, 2), (6, 3), (4, 4), (4, 9)])
def test_sliding_window_against_loop(n, w):
    expected = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            expected[i, j] = i - w + 1 <= j <= i
    assert np.array_equal(sliding_window_mask(n, w), expected)


def test_sliding_window_wider_than_n_is_causal():
    assert np.array_equal(sliding_window_mask(5, 5), _causal(5))


def test_mask_matrices_additive_form_and_counts():
    m = mask_matrices("causal+padding", 4, n_pad=1)
    expected = _causal(4)
    expected[:, 3] = False
    assert np.array_equal(m.allowed, expected)
    assert np.all(m.additive[expected] == 0.0) and np.all(np.isneginf(m.additive[~expected]))
    assert m.allowed_per_query.tolist() == [1, 2, 3, 3]
    s = mask_matrices("sliding", 4, window=2)
    assert s.window == 2 and s.allowed_per_query.tolist() == [1, 2, 2, 2]


def _ref_softmax(row):
    finite = [x for x in row if x != -math.inf]
    if not finite:
        return [0.0] * len(row)
    m = max(finite)
    e = [0.0 if x == -math.inf else math.exp(x - m) for x in row]
    return [x / sum(e) for x in e]


def test_correct_and_mistakes_against_per_query_loops():
    Q, K, V = _qkv()
    n, d = 5, math.sqrt(3)
    allowed = _causal(n)
    S = [[float(Q[i] @ K[j]) / d for j in range(n)] for i in range(n)]
    correct = np.zeros((n, 2))
    zero_v = np.zeros((n, 2))
    for i in range(n):
        w_masked = _ref_softmax([S[i][j] if allowed[i, j] else -math.inf for j in range(n)])
        w_all = _ref_softmax(S[i])
        V_i = np.array([V[j] if allowed[i, j] else np.zeros(2) for j in range(n)])  # query i's zeroed V
        correct[i] = sum(w_masked[j] * V[j] for j in range(n))
        zero_v[i] = sum(w_all[j] * V_i[j] for j in range(n))
    np.testing.assert_allclose(attention_correct(Q, K, V, allowed, d).output, correct, atol=1e-13)
    zv = attention_zero_values(Q, K, V, allowed, d)
    np.testing.assert_allclose(zv.output, zero_v, atol=1e-13)
    zw = attention_zero_weights_after_softmax(Q, K, V, allowed, d)
    np.testing.assert_allclose(zw.output, zero_v, atol=1e-13)  # same sum, grouped differently
    assert np.all(zw.row_sums[:-1] < 1.0)  # weight mass lost to the forbidden keys
    # Teaching point: zero-then-renormalise equals the correct mask.
    rn = attention_renormalise_after_softmax(Q, K, V, allowed, d)
    np.testing.assert_allclose(rn.output, correct, atol=1e-13)
    np.testing.assert_allclose(rn.row_sums, 1.0, atol=1e-14)
    assert not np.allclose(zv.output, correct)


def test_fully_masked_row_gives_zeros_not_nan():
    Q, K, V = _qkv(n=3)
    allowed = np.ones((3, 3), dtype=bool)
    allowed[1] = False
    for method in METHODS:
        r = masked_attention(method, Q, K, V, allowed, 1.0)
        assert np.all(np.isfinite(r.output))
        if method != "zero_values":
            assert np.all(r.effective_weights[1] == 0.0)


def _setup(heads=2):
    cfg = AttentionConfig(d_model=8, heads=heads, seed=4)
    X = np.random.default_rng(11).standard_normal((6, 8))
    return X, init_params(cfg)


@pytest.mark.parametrize("position", [1, 3, 5])
def test_leakage_exactly_zero_only_for_correct_mask(position):
    X, params = _setup()
    ok = leakage(X, params, position, "correct", seed=2)
    assert ok.earlier_unchanged and ok.max_earlier == 0.0
    assert np.array_equal(ok.before[:position], ok.after[:position])
    assert ok.moved[position] > 0  # the changed position itself moves
    for method in ("zero_values", "zero_weights"):
        bad = leakage(X, params, position, method, seed=2)
        assert not bad.earlier_unchanged
        assert bad.max_earlier > 1e-3
    rn = leakage(X, params, position, "renormalise", seed=2)
    assert rn.max_earlier < 1e-12  # equal in exact arithmetic; rounding may differ by ~1e-16


def test_leakage_position_zero_and_bad_method():
    X, params = _setup(heads=1)
    assert leakage(X, params, 0, "zero_values").max_earlier == 0.0
    with pytest.raises(ValueError):
        leakage(X, params, 0, "forget_it")
    with pytest.raises(ValueError):
        leakage(X, params, 6)


def test_leakage_matrix_counts_only_past_outputs():
    X, params = _setup()
    ok = leakage_matrix(X, params, "correct", seed=1)
    assert ok.total_leaks == 0 and ok.moved.shape == (6, 6)
    for c in range(6):
        assert np.all(ok.moved[c, :c] == 0.0)
        assert ok.moved[c, c] > 0
    bad = leakage_matrix(X, params, "zero_values", seed=1)
    assert bad.total_leaks == 15  # every (changed c, earlier i < c) pair: 6 * 5 / 2
    assert np.array_equal(bad.leaks, np.tril(np.ones((6, 6), bool), k=-1))


# --- the lab on a sentence, against the loop reference ------------------------------------------

SENTENCE = ("the", "cat", "sat", "on", "the", "mat")


def _naive_layer(tokens, seed, allowed, heads=2):
    """The lab's layer from the definitions: token vectors + sinusoidal PE (by loops), then loops."""
    pe = np.array(naive_positional_encoding(len(tokens), D_MODEL))
    X = np.stack([token_embedding(t, D_MODEL, seed) for t in tokens]) + pe
    params = init_params(AttentionConfig(d_model=D_MODEL, heads=heads, seed=seed))
    return naive_attention(
        X, params.W_Q, params.W_K, params.W_V, params.W_O, allowed, math.sqrt(D_MODEL / heads)
    )


@pytest.mark.parametrize(("kind", "head"), [("causal+padding", 1), ("none", 0)])
def test_mask_lab_scores_weights_and_summary_match_the_loops(kind, head):
    settings = MaskLabSettings(SENTENCE, n_pad=2, kind=kind, window=2, seed=3, head=head)
    lab = mask_lab(settings)
    tokens = SENTENCE + (PAD_TOKEN,) * 2
    allowed = np.array(naive_mask(kind, 8, 2))
    ref = _naive_layer(tokens, 3, allowed)
    assert np.array_equal(lab.mask.allowed, allowed) and lab.mask.kind == kind
    assert [m.kind for m in lab.all_masks] == ["none", "causal", "padding", "causal+padding", "sliding"]
    np.testing.assert_allclose(lab.masked_scores, ref["scores_masked"][head], atol=1e-12)
    correct, zero_values = lab.methods[0], lab.methods[1]
    np.testing.assert_allclose(correct.effective_weights, ref["weights"][head], atol=1e-12)
    np.testing.assert_allclose(correct.output, ref["head_outputs"][head], atol=1e-12)
    by = {r.method: r for r in lab.summary}
    assert by["correct"].forbidden_weight == 0.0 and by["correct"].max_diff == 0.0
    assert by["correct"].row_sum_min == pytest.approx(1.0, abs=1e-12)
    # No method multiplies a forbidden value row by anything but 0 ...
    assert all(r.forbidden_weight == 0.0 for r in lab.summary)
    # ... but the mistakes took their softmax over every key: the rows lose the forbidden keys' mass.
    unmasked = [naive_softmax_row(list(row)) for row in ref["scores_scaled"][head]]
    lost = [sum(unmasked[i][j] for j in range(8) if not allowed[i, j]) for i in range(8)]
    np.testing.assert_allclose(zero_values.row_sums, [1 - x for x in lost], atol=1e-12)
    assert by["zero_values"].row_sum_min == pytest.approx(1 - max(lost), abs=1e-12)
    assert (by["zero_values"].max_diff > 1e-3) == (kind != "none")


def test_swap_leakage_moves_only_later_outputs_with_the_right_mask():
    settings = MaskLabSettings(SENTENCE, n_pad=0, kind="none", window=2, seed=0)
    assert settings.leak_kind == "causal"  # an unmasked choice is tested with the causal mask
    results = {r.method: r for r in swap_leakage(settings, 3, "dog")}
    causal = np.array(naive_mask("causal", 6))
    before = _naive_layer(SENTENCE, 0, causal)["output"]
    after = _naive_layer(("the", "cat", "sat", "dog", "the", "mat"), 0, causal)["output"]
    np.testing.assert_allclose(results["correct"].before, before, atol=1e-12)
    np.testing.assert_allclose(results["correct"].after, after, atol=1e-12)
    assert results["correct"].verdict == "zero" and results["correct"].earlier_unchanged
    assert results["zero_values"].verdict == "leak" and results["zero_weights"].verdict == "leak"
    assert results["renormalise"].verdict in ("zero", "rounding")


def test_leakage_map_uses_the_leak_kind():
    settings = MaskLabSettings(SENTENCE[:4], n_pad=1, kind="sliding", window=2, seed=1)
    assert settings.leak_kind == "sliding"
    assert leakage_map(settings, "correct").total_leaks == 0
    assert leakage_map(settings, "zero_weights").total_leaks > 0


def _mk_params(seed=16, h=2, d=4, dk=2, bias=False):
    from attention_core.trace import AttentionParams

    rng = np.random.default_rng(seed)
    extra = {}
    if bias:
        extra = dict(
            b_Q=rng.normal(size=(h, dk)),
            b_K=rng.normal(size=(h, dk)),
            b_V=rng.normal(size=(h, dk)),
            b_O=rng.normal(size=d),
        )
    return AttentionParams(
        *(rng.normal(size=(h, d, dk)) for _ in range(3)), rng.normal(size=(h * dk, d)), **extra
    )


def _layer_loop(X, P, allowed, divisor):
    heads = []
    for j in range(P.W_Q.shape[0]):
        bias = {n: 0.0 if getattr(P, n) is None else getattr(P, n)[j] for n in ("b_Q", "b_K", "b_V")}
        q, k, v = X @ P.W_Q[j] + bias["b_Q"], X @ P.W_K[j] + bias["b_K"], X @ P.W_V[j] + bias["b_V"]
        out = np.zeros((len(X), v.shape[1]))
        for i in range(len(X)):
            js = [c for c in range(len(X)) if allowed[i][c]]
            s = [float(q[i] @ k[c]) / divisor for c in js]
            e = [math.exp(x - max(s)) for x in s]
            out[i] = sum(w / sum(e) * v[c] for w, c in zip(e, js, strict=True))
        heads.append(out)
    return np.concatenate(heads, axis=1) @ P.W_O + (0.0 if P.b_O is None else P.b_O)


def test_mask_builders_defaults_and_fields():
    from attention_core.labs import masks as mk

    for bad in ((0, 2), (2, 0)):
        with pytest.raises(ValueError):
            mk.sliding_window_mask(*bad)
    assert mk.allowed_mask("padding", 3).all()  # no [PAD] by default
    assert mk.allowed_mask("sliding", 4).tolist() == [
        [1, 0, 0, 0],
        [1, 1, 0, 0],
        [0, 1, 1, 0],
        [0, 0, 1, 1],
    ]  # w = 2
    m = mk.mask_matrices("padding", 4, 1)
    assert (m.kind, m.n, m.n_pad, m.window, m.masked_cells) == ("padding", 4, 1, None, 4)
    s = mk.mask_matrices("sliding", 5, window=3)
    assert (s.n_pad, s.window) == (0, 3) and s.allowed_per_query.tolist() == [1, 2, 3, 3, 3]
    assert mk.mask_matrices("sliding", 4).window == 2


def test_masking_methods_fields_names_and_booleans():
    import warnings

    from attention_core.labs import masks as mk

    Q = np.array([[[True, False], [True, True], [False, True]]] * 2)  # [h 2, n 3, d 2], booleans
    V = np.arange(12.0).reshape(2, 3, 2)
    allowed = np.array([[False, False, False], [True, True, False], [True, True, True]])  # row 0: no key
    s = np.einsum("hid,hjd->hij", Q.astype(float), Q.astype(float)) / 2.0
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    soft = e / e.sum(axis=-1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = {m: mk.masked_attention(m, Q, Q, V, allowed, 2.0) for m in mk.METHODS}
    assert [r.method for r in results.values()] == list(mk.METHODS)
    for r in results.values():
        np.testing.assert_allclose(r.scores, s, atol=1e-15)
        assert r.row_sums.shape == (2, 3)
    np.testing.assert_allclose(results["zero_values"].softmax_weights, soft, atol=1e-15)
    np.testing.assert_allclose(results["zero_weights"].softmax_weights, soft, atol=1e-15)
    np.testing.assert_allclose(results["correct"].softmax_weights, results["correct"].effective_weights)
    assert results["renormalise"].effective_weights[:, 0].tolist() == [[0.0] * 3] * 2  # no key: zeros
    np.testing.assert_allclose(results["renormalise"].output, results["correct"].output, atol=1e-12)
    np.testing.assert_allclose(results["renormalise"].row_sums[:, 1:], 1.0)


def test_multihead_output_and_leakage_defaults():
    from attention_core.labs import masks as mk

    P = _mk_params(bias=True)
    X = np.array([[1, 0, 2, 0], [0, 1, 0, 1], [2, 1, 0, 0]])  # integers
    causal = np.tril(np.ones((3, 3), bool))
    np.testing.assert_allclose(
        mk.multihead_output(X, P, causal, 2.0), _layer_loop(X.astype(float), P, causal, 2.0), atol=1e-12
    )
    lk = mk.leakage(X, P, 1)  # method correct, causal mask, divisor √d_k, replacement from default_rng(0)
    assert (lk.method, lk.position) == ("correct", 1) and lk.verdict == "zero"
    X2 = X.astype(float)
    X2[1] = np.random.default_rng(0).standard_normal(4)
    np.testing.assert_allclose(lk.after, _layer_loop(X2, P, causal, math.sqrt(2)), atol=1e-12)


def test_leakage_matrix_passes_mask_divisor_method_and_seed_on():
    from attention_core.labs import masks as mk

    P = _mk_params()
    X = np.random.default_rng(17).normal(size=(3, 4))
    m = mk.leakage_matrix(X, P)
    assert m.method == "correct" and m.total_leaks == 0
    X2 = X.copy()
    X2[2] = np.random.default_rng((0, 2)).standard_normal(4)  # seed 0, changed row 2
    causal = np.tril(np.ones((3, 3), bool))
    moved = np.max(
        np.abs(_layer_loop(X2, P, causal, math.sqrt(2)) - _layer_loop(X, P, causal, math.sqrt(2))), axis=1
    )
    np.testing.assert_allclose(m.moved[2], moved, atol=1e-12)
    full = mk.leakage_matrix(X, P, "correct", np.ones((3, 3), bool), 1.0, seed=4)
    assert full.total_leaks == 3  # no mask: every earlier output moves
    X3 = X.copy()
    X3[1] = np.random.default_rng((4, 1)).standard_normal(4)
    ones = np.ones((3, 3), bool)
    expected = np.max(np.abs(_layer_loop(X3, P, ones, 1.0) - _layer_loop(X, P, ones, 1.0)), axis=1)
    np.testing.assert_allclose(full.moved[1], expected, atol=1e-12)
    assert mk.leakage_matrix(X, P, "zero_values").method == "zero_values"


def test_mask_lab_layer_swap_and_map_use_every_setting():
    from attention_core.labs import masks as mk

    layer = mk.lab_layer(("a", "b"), 1, 3)
    assert layer.X.shape == (3, mk.D_MODEL) and layer.heads == mk.HEADS
    s = mk.MaskLabSettings(("a", "b", "c", "d"), 1, "sliding", 3, 5)
    lab = mk.mask_lab(s)
    assert lab.settings is s and lab.mask.kind == "sliding" and lab.mask.window == 3
    assert all(m.n_pad == 1 for m in lab.all_masks) and lab.all_masks[-1].window == 3
    swap = mk.swap_leakage(s, 1, "zzz")
    layer = mk.lab_layer(s.sentence, 1, 5)
    allowed = mk.sliding_window_mask(5, 3)
    X2 = np.array(layer.X)
    X2[1] = embed(("a", "zzz", "c", "d", "[PAD]"), mk.D_MODEL, 5, True)[1]
    ref = mk.leakage(layer.X, layer.params, 1, "correct", allowed, layer.divisor, replacement=X2[1])
    np.testing.assert_allclose(swap[0].after, ref.after, atol=1e-12)
    np.testing.assert_allclose(swap[0].moved, ref.moved, atol=1e-12)
    lmap = mk.leakage_map(s, "correct")
    ref_map = mk.leakage_matrix(layer.X, layer.params, "correct", allowed, layer.divisor, seed=5)
    np.testing.assert_allclose(lmap.moved, ref_map.moved, atol=1e-12)
    pad = mk.MaskLabSettings(("a", "b", "c"), 2, "causal+padding", 2, 1)
    np.testing.assert_allclose(
        mk.leakage_map(pad, "correct").moved,
        mk.leakage_matrix(
            mk.lab_layer(("a", "b", "c"), 2, 1).X,
            mk.lab_layer(("a", "b", "c"), 2, 1).params,
            "correct",
            mk.allowed_mask("causal+padding", 5, 2),
            seed=1,
        ).moved,
        atol=1e-12,
    )


def test_masks_leakage_of_an_unchanged_row_is_zero_for_every_method():
    """Replacing a row by itself changes nothing, whatever the (wrong) masking method: before and
    after are the same layer run."""
    from attention_core.labs import masks as m

    layer = m.lab_layer(("a", "b", "c", "d"), 0, 2)
    for method in m.METHODS:
        for position in range(4):
            r = m.leakage(layer.X, layer.params, position, method, replacement=layer.X[position])
            assert not r.moved.any() and r.verdict == "zero", (method, position)


def test_masks_row_sums_of_the_wrong_methods_by_hand():
    """A padding mask hides the [PAD] keys of every row: zeroing their weights after softmax leaves
    each row the softmax mass of the real keys (< 1); the correct method's rows sum to 1."""
    from attention_core.labs import masks as m

    lab = m.mask_lab(m.MaskLabSettings(("a", "b", "c"), 2, "padding", 2, 0))
    summary = {s.method: s for s in lab.summary}
    s = np.asarray(lab.methods[0].scores)  # [5, 5] scaled scores of the chosen head
    w = np.exp(s - s.max(axis=1, keepdims=True))
    real_mass = w[:, :3].sum(axis=1) / w.sum(axis=1)  # [5] softmax weight on the 3 real keys
    assert summary["zero_weights"].row_sum_max == pytest.approx(real_mass.max(), abs=1e-12)
    assert summary["zero_weights"].row_sum_min == pytest.approx(real_mass.min(), abs=1e-12)
    assert real_mass.max() < 1 - 1e-6
    assert summary["correct"].row_sum_max == pytest.approx(1.0, abs=1e-12)
    assert summary["renormalise"].row_sum_max == pytest.approx(1.0, abs=1e-12)

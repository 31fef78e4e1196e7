"""Tests written from mutation testing (``make mutate``, issue 28): each one fails for a small change
of a step module that every other test let pass. Expected values come from the standard library
(``math.erf``), plain loops or hand arithmetic, never from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import ffn, gqa, kv_cache, norms, steps

# --- norms: RMSNorm's epsilon sits inside the square root ------------------------------------------


def test_rms_norm_epsilon_is_inside_the_square_root():
    """Rows of size 1e-3 make eps = 1e-5 matter: x / sqrt(mean(x²) + eps), not x / (rms + eps)."""
    x = np.array([[1e-3, -1e-3, 1e-3, -1e-3]])
    inside = 1e-3 / math.sqrt(1e-6 + 1e-5)  # 0.3015…
    outside = 1e-3 / (math.sqrt(1e-6) + 1e-5)  # 0.9901…: what eps outside the root would give
    got = norms.rms_norm(x, np.ones(4))  # the default eps, 1e-5
    np.testing.assert_allclose(got, inside * np.sign(x), rtol=1e-12)
    assert abs(got[0, 0] - outside) > 0.5
    np.testing.assert_allclose(norms.rms_norm(x, np.ones(4), eps=1e-6), 1e-3 / math.sqrt(2e-6) * np.sign(x))


def test_layer_norm_epsilon_is_inside_the_square_root():
    x = np.array([[1e-3, -1e-3]])  # mean 0, variance 1e-6
    np.testing.assert_allclose(norms.layer_norm(x, np.ones(2), np.zeros(2)), x / math.sqrt(1e-6 + 1e-5))


def _rms_loop(x, w, eps=1e-5):
    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape[:-1]):
        row = [float(v) for v in x[idx]]
        r = math.sqrt(sum(v * v for v in row) / len(row) + eps)
        out[idx] = [v / r * float(g) for v, g in zip(row, w, strict=True)]
    return out


def _ln_loop(x, gamma, beta, eps=1e-5):
    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape[:-1]):
        row = [float(v) for v in x[idx]]
        mu = sum(row) / len(row)
        var = sum((v - mu) ** 2 for v in row) / len(row)
        out[idx] = [(v - mu) / math.sqrt(var + eps) * g + b for v, g, b in zip(row, gamma, beta, strict=True)]
    return out


def test_norms_work_row_by_row_on_three_axes():
    """A [2, 3, 4] input: every row (last axis) on its own, whatever the leading axes."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 4)) * np.arange(1, 25).reshape(2, 3, 4)
    w, b = rng.normal(size=4), rng.normal(size=4)
    np.testing.assert_allclose(norms.rms_norm(x, w), _rms_loop(x, w), rtol=1e-12)
    np.testing.assert_allclose(norms.layer_norm(x, w, b), _ln_loop(x, w, b), rtol=1e-12, atol=1e-12)


def test_norms_of_integer_input_are_float64_with_the_epsilon():
    x = np.array([[1, 2, 2, 4]])  # integers: converted to float64, eps kept (not rounded to 0)
    got = norms.rms_norm(x, np.ones(4))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, _rms_loop(x, [1.0] * 4), rtol=1e-13)
    got = norms.layer_norm(x, np.ones(4), np.zeros(4))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, _ln_loop(x, [1.0] * 4, [0.0] * 4), rtol=1e-13)
    x1 = np.array([[1, 1, 1, 3]])  # variance 0.75: eps shows at 1e-5
    np.testing.assert_allclose(
        norms.layer_norm(x1, np.ones(4), np.zeros(4)), _ln_loop(x1, [1.0] * 4, [0.0] * 4), rtol=1e-13
    )


def test_layer_norm_keeps_float32():
    x = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)
    assert norms.layer_norm(x, np.ones(4, np.float32), np.zeros(4, np.float32)).dtype == np.float32


# --- ffn: erf on both sides of the switch to the continued fraction ---------------------------------


@pytest.mark.parametrize(
    "x", [0.0, 0.3, -1.2, 2.9, 2.999, 3.0, 3.0001, 3.01, 3.2, 3.7, 4.5, 5.5, 6.0, -3.05, -4.0, 8.0, 27.0]
)
def test_erf_matches_the_standard_library(x):
    # the Taylor side (|x| <= 3) is good to ~1e-14 as documented, the continued fraction to ~1e-16
    tol = 2e-14 if abs(x) <= 3 else 2e-15
    assert ffn.erf(np.array([x]))[0] == pytest.approx(math.erf(x), abs=tol)


def test_erf_of_integers_and_arrays():
    got = ffn.erf(np.array([[1, -2], [4, 0]]))  # integers in, floats out
    assert got.dtype == np.float64 and got.shape == (2, 2)
    np.testing.assert_allclose(got, [[math.erf(1), math.erf(-2)], [math.erf(4), 0.0]], atol=2e-15)


def test_mlp_ffn_defaults_to_gelu():
    rng = np.random.default_rng(2)
    x, W_in, W_out = rng.normal(size=(3, 4)), rng.normal(size=(4, 6)), rng.normal(size=(6, 4))
    hidden = x @ W_in
    expected = np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))(hidden) @ W_out
    np.testing.assert_allclose(ffn.mlp_ffn(x, W_in, None, W_out, None), expected, atol=1e-12)


# --- kv_cache ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["n_layers", "n_tokens", "n_kv_heads", "d_k", "bytes_per_value"])
def test_cache_bytes_names_the_negative_argument(name):
    args = {**dict(n_layers=1, n_tokens=1, n_kv_heads=1, d_k=1, bytes_per_value=1), name: -1}
    with pytest.raises(ValueError, match=f"^{name} must not be negative"):
        kv_cache.cache_bytes(**args)


@pytest.mark.parametrize(
    "K,V",
    [
        ((2, 3), (2, 3, 4)),  # K not 3-D
        ((2, 3, 4), (2, 3)),  # V not 3-D
        ((2, 3, 4), (2, 5, 4)),  # different n
        ((2, 3, 4), (1, 3, 4)),  # different kv_heads
    ],
)
def test_layer_cache_refuses_mismatched_arrays(K, V):
    with pytest.raises(ValueError):
        kv_cache.LayerCache(K=np.zeros(K), V=np.zeros(V))


def test_layer_cache_freezes_both_arrays_and_keeps_d_v():
    layer = kv_cache.LayerCache(K=np.zeros((2, 3, 4)), V=np.ones((2, 3, 5)))
    assert not layer.K.flags.writeable and not layer.V.flags.writeable
    assert layer.K.shape == (2, 3, 4) and layer.V.shape == (2, 3, 5) and layer.length == 3
    empty = kv_cache.empty_layer_cache(2, 4, 6)
    assert empty.K.shape == (2, 0, 4) and empty.V.shape == (2, 0, 6)
    cache = kv_cache.empty_cache(n_layers=3, n_kv_heads=2, d_k=4, d_v=6, dtype=np.float64)
    assert len(cache.layers) == 3
    assert all(la.V.shape == (2, 0, 6) and la.K.dtype == np.float64 for la in cache.layers)


@pytest.mark.parametrize("bad", [(3, 1, 4), (2, 1, 5)])
def test_append_refuses_a_wrong_key_or_value_shape(bad):
    layer = kv_cache.empty_layer_cache(2, 4)
    good = np.zeros((2, 1, 4))
    with pytest.raises(ValueError, match="keys"):
        kv_cache.append_kv(layer, np.zeros(bad), good)
    with pytest.raises(ValueError, match="values"):
        kv_cache.append_kv(layer, good, np.zeros(bad))


def test_append_puts_new_keys_and_values_after_the_cached_ones_in_order():
    """Keys in cache order 0, 1, 2, …: the attention output alone cannot tell (softmax over a set
    does not depend on the order of its keys), so the order is checked on K and V themselves."""
    layer = kv_cache.empty_layer_cache(1, 2, dtype=np.float64)
    for t in range(4):
        layer = kv_cache.append_kv(layer, np.full((1, 1, 2), float(t)), np.full((1, 1, 2), 10.0 + t))
    assert layer.K[0, :, 0].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert layer.V[0, :, 1].tolist() == [10.0, 11.0, 12.0, 13.0]
    two = kv_cache.append_kv(
        layer, np.array([[[7.0, 7.0], [8.0, 8.0]]]), np.array([[[1.0, 1.0], [2.0, 2.0]]])
    )
    assert two.K[0, :, 0].tolist() == [0.0, 1.0, 2.0, 3.0, 7.0, 8.0]
    assert two.V[0, :, 0].tolist() == [10.0, 11.0, 12.0, 13.0, 1.0, 2.0]


@pytest.mark.parametrize("m", [2, 3, 5])
def test_several_new_rows_keep_the_causal_mask_among_themselves(m):
    """Row r of m new rows sees keys 0 .. n−m+r: exact zeros after that, and the loop's weights before."""
    rng = np.random.default_rng(m)
    h, g, n, d = 4, 2, 5, 3
    Q, K, V = rng.normal(size=(h, n, d)), rng.normal(size=(g, n, d)), rng.normal(size=(g, n, d))
    got = kv_cache.decode_attention(Q[:, n - m :], kv_cache.LayerCache(K=K, V=V), 2.0)
    assert got.weights.shape == (h, m, n)
    for j in range(h):
        for r in range(m):
            i = n - m + r
            s = [float(Q[j, i] @ K[j // 2, k]) / 2.0 for k in range(i + 1)]
            e = [math.exp(v - max(s)) for v in s]
            expected = [v / sum(e) for v in e] + [0.0] * (n - i - 1)
            np.testing.assert_allclose(got.weights[j, r], expected, atol=1e-13)
            assert np.all(got.weights[j, r, i + 1 :] == 0.0)


def test_decode_attention_needs_the_new_rows_in_the_cache():
    layer = kv_cache.LayerCache(K=np.zeros((1, 2, 3)), V=np.zeros((1, 2, 3)))
    with pytest.raises(ValueError):
        kv_cache.decode_attention(np.zeros((1, 3, 3)), layer, 1.0)  # 3 new rows, 2 cached tokens
    with pytest.raises(ValueError):
        kv_cache.decode_attention(np.zeros((1, 0, 3)), layer, 1.0)


# --- gqa -------------------------------------------------------------------------------------------


def test_group_size_of_one_head():
    assert gqa.group_size(1, 1) == 1
    assert gqa.group_size(6, 2) == 3
    for h, g in ((0, 1), (1, 0), (-2, 1)):
        with pytest.raises(ValueError):
            gqa.group_size(h, g)


# --- steps -----------------------------------------------------------------------------------------


def test_padding_and_causal_masks_by_hand():
    assert steps.build_mask("causal", 3).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert steps.build_mask("padding", 3, 1).tolist() == [[1, 1, 0]] * 3
    assert steps.build_mask("causal+padding", 3, 1).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 0]]
    assert steps.build_mask("none", 2).tolist() == [[1, 1], [1, 1]]


# --- rope ------------------------------------------------------------------------------------------


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


# --- trace -----------------------------------------------------------------------------------------


def _tiny_params(h=2, d=4, d_k=2):
    from attention_core.trace import AttentionParams

    rng = np.random.default_rng(5)
    return AttentionParams(
        rng.normal(size=(h, d, d_k)), rng.normal(size=(h, d, d_k)), rng.normal(size=(h, d, d_k)),
        rng.normal(size=(h * d_k, d)),
    )  # fmt: skip


def test_attend_copies_what_the_caller_hands_in():
    """The trace never aliases the caller's arrays, and never freezes them."""
    from attention_core.trace import AttentionParams, attend

    rng = np.random.default_rng(6)
    X = rng.normal(size=(3, 4))
    allowed = np.tril(np.ones((3, 3), dtype=bool))
    W = [rng.normal(size=(2, 4, 2)) for _ in range(3)] + [rng.normal(size=(4, 4))]
    params = AttentionParams(*W)
    tr = attend(X, params, allowed, 2.0)
    assert X.flags.writeable and allowed.flags.writeable and all(w.flags.writeable for w in W)
    X_before, mask_before, WQ_before = tr.X.copy(), tr.mask.copy(), params.W_Q.copy()
    X[:] = 0.0
    allowed[:] = False
    W[0][:] = 0.0
    np.testing.assert_array_equal(tr.X, X_before)
    np.testing.assert_array_equal(tr.mask, mask_before)
    np.testing.assert_array_equal(params.W_Q, WQ_before)
    assert not params.W_Q.flags.writeable and not params.W_O.flags.writeable


def test_attend_takes_integer_inputs_and_fills_its_defaults():
    from attention_core.trace import attend

    X = np.array([[1, 0, 2, 0], [0, 1, 0, 3], [2, 2, 0, 1]])  # integers
    allowed = np.array([[1, 0, 0], [1, 1, 0], [1, 1, 1]])  # 0/1 instead of bools
    tr = attend(X, _tiny_params(), allowed, 2)
    assert tr.X.dtype == np.float64 and tr.mask.dtype == np.bool_
    assert tr.tokens == ("0", "1", "2") and tr.n_pad == 0 and tr.config is None and tr.tokenization is None
    assert tr.divisor == 2.0 and isinstance(tr.divisor, float)
    assert np.all(tr.weights[:, 0, 1:] == 0.0)  # the 0/1 mask is applied as a mask
    np.testing.assert_allclose(tr.weights.sum(axis=-1), 1.0)


def test_trace_tokens_and_text_pass_their_settings_on():
    from attention_core import AttentionConfig
    from attention_core.embeddings import embed
    from attention_core.trace import trace_text, trace_tokens

    cfg = AttentionConfig(d_model=8, heads=2, positional=False, seed=3)
    tr = trace_tokens(("a", "b", "a"), cfg)
    np.testing.assert_array_equal(tr.X, embed(("a", "b", "a"), 8, 3, False))
    np.testing.assert_array_equal(tr.X[0], tr.X[2])  # no positions: the same word, the same row
    assert tr.config is cfg
    tt = trace_text("one two three four five", cfg, max_tokens=3)
    assert tt.tokens == ("one", "two", "three") and tt.config is cfg
    assert tt.tokenization is not None and tt.tokenization.tokens == ("one", "two", "three")


# --- tiled -----------------------------------------------------------------------------------------


def _loop_attention(Q, K, V, allowed):
    out = np.zeros((len(Q), V.shape[1]))
    for i in range(len(Q)):
        js = [j for j in range(len(K)) if allowed(i, j)]
        s = [float(Q[i] @ K[j]) / math.sqrt(Q.shape[1]) for j in js]
        e = [math.exp(v - max(s)) for v in s]
        for w, j in zip(e, js, strict=True):
            out[i] += w / sum(e) * V[j]
    return out


@pytest.mark.parametrize(
    "shapes",
    [((3,), (3, 2), (3, 2)), ((3, 2), (3,), (3, 2)), ((3, 2), (3, 2), (3,)), ((3, 2), (3, 3), (3, 2)),
     ((3, 2), (3, 2), (4, 2))],
)  # fmt: skip
def test_tiled_refuses_each_wrong_shape(shapes):
    from attention_core.tiled import tiled_attention

    with pytest.raises(ValueError):
        tiled_attention(*(np.zeros(s) for s in shapes))


def test_tiled_block_and_window_limits():
    from attention_core.tiled import tiled_attention

    Q = np.random.default_rng(7).normal(size=(5, 2))
    for bq, bk in ((0, 1), (1, 0)):
        with pytest.raises(ValueError):
            tiled_attention(Q, Q, Q, bq, bk)
    with pytest.raises(ValueError):
        tiled_attention(Q, Q, Q, 2, 2, window=0)
    with pytest.raises(ValueError):
        tiled_attention(Q[:4], Q, Q, 2, 2, window=2)  # a window needs as many queries as keys
    # window 1: every query sees only itself, so the output is V
    np.testing.assert_allclose(tiled_attention(Q, Q, Q, 1, 1, window=1).output, Q, atol=1e-15)
    # a window of 2.0 (a float) is the window of 2
    got = tiled_attention(Q, Q, Q, 2, 2, window=2.0).output
    np.testing.assert_allclose(got, _loop_attention(Q, Q, Q, lambda i, j: i - 2 < j <= i), atol=1e-13)


def test_tiled_defaults_are_64_blocks_no_mask_and_integers_become_floats():
    from attention_core.tiled import direct_attention, tiled_attention

    rng = np.random.default_rng(8)
    Q, K, V = rng.integers(-3, 4, (130, 2)), rng.integers(-3, 4, (130, 2)), rng.integers(-3, 4, (130, 3))
    t = tiled_attention(Q, K, V)
    assert (t.tiles_computed, t.tiles_skipped, t.max_tile_elements) == (9, 0, 64 * 64)
    expected = _loop_attention(Q.astype(float), K.astype(float), V.astype(float), lambda i, j: True)
    np.testing.assert_allclose(t.output, expected, atol=1e-12)
    np.testing.assert_allclose(direct_attention(Q, K, V), expected, atol=1e-12)
    with pytest.raises(ValueError):
        direct_attention(Q[:5], K, V, causal=True)


def test_tile_grid_defaults_and_limits():
    from attention_core.tiled import tile_grid

    g = tile_grid(5, 4, 2, 2)
    assert g.dtype == np.bool_ and g.shape == (3, 2) and g.all()  # no mask by default
    assert tile_grid(3, 3, 1, 1, causal=True).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    w = tile_grid(6, 6, 2, 2, window=2)
    assert w.dtype == np.bool_ and w.tolist() == [[1, 0, 0], [1, 1, 0], [0, 1, 1]]
    for bad in ((0, 3, 1, 1), (3, 0, 1, 1), (3, 3, 0, 1), (3, 3, 1, 0)):
        with pytest.raises(ValueError):
            tile_grid(*bad)


# --- models.llama: the next-token distribution (the decoder page's sampling) ------------------------


def test_next_token_probs_by_hand():
    from attention_core.models import llama as L

    logits = np.array([1.0, 3.0, 2.0, 3.0])
    e = [math.exp(v / 2.0) for v in logits]
    np.testing.assert_allclose(L.next_token_probs(logits, 2.0), [v / sum(e) for v in e], rtol=1e-14)
    e1 = [math.exp(v) for v in logits]
    np.testing.assert_allclose(L.next_token_probs(logits), [v / sum(e1) for v in e1], rtol=1e-14)  # T = 1
    # top_k = 2 keeps the two 3.0s only; top_k = 3 adds the 2.0; top_k >= vocab keeps all
    np.testing.assert_allclose(L.next_token_probs(logits, 1.0, 2), [0, 0.5, 0, 0.5], atol=1e-15)
    k3 = [0.0, e1[1], e1[2], e1[3]]
    np.testing.assert_allclose(L.next_token_probs(logits, 1.0, 3), [v / sum(k3) for v in k3], rtol=1e-14)
    np.testing.assert_allclose(L.next_token_probs(logits, 1.0, 4), L.next_token_probs(logits), rtol=1e-15)
    np.testing.assert_allclose(L.next_token_probs(logits, 1.0, 9), L.next_token_probs(logits), rtol=1e-15)
    assert L.next_token_probs(logits, 0.0).tolist() == [0.0, 1.0, 0.0, 0.0]  # greedy: the lower id of a tie
    assert L.next_token_probs(np.array([1, 2]), 1.0).dtype == np.float64
    for bad_t in (-0.1, math.inf, math.nan):
        with pytest.raises(ValueError):
            L.next_token_probs(logits, bad_t)
    with pytest.raises(ValueError):
        L.next_token_probs(logits, 1.0, -1)


def test_top_indices_and_pick_token_by_hand():
    from attention_core.models import llama as L

    v = np.array([0.2, 0.5, 0.1, 0.5, 0.3])
    assert L.top_indices(v, 3).tolist() == [1, 3, 4]  # largest first, ties by lower index
    assert L.top_indices(v, 9).tolist() == [1, 3, 4, 0, 2]
    assert L.pick_token(np.array([0.1, 0.2, 0.7])) == 2
    draws = [L.pick_token(np.array([0.0, 1.0, 0.0]), np.random.default_rng(s)) for s in range(5)]
    assert draws == [1] * 5
    rng = np.random.default_rng(0)
    counts = np.bincount([L.pick_token(np.array([0.5, 0.0, 0.5]), rng) for _ in range(400)], minlength=3)
    assert counts[1] == 0 and 150 < counts[0] < 250  # a real draw, not always the first maximum


def test_padding_mask_without_pads_hides_nothing():
    assert steps.build_mask("padding", 3).all()  # n_pad defaults to 0
    assert steps.build_mask("causal+padding", 2).tolist() == [[1, 0], [1, 1]]


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


def test_tiled_reports_its_blocks_and_the_tiles_a_custom_mask_skips():
    from attention_core.tiled import tiled_attention

    rng = np.random.default_rng(12)
    Q, K, V = rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    t = tiled_attention(Q, K, V, 2, 3)
    assert (t.block_q, t.block_k) == (2, 3)

    def first_two_keys(q_idx, k_idx):
        return np.broadcast_to(k_idx[None, :] < 2, (len(q_idx), len(k_idx)))

    t = tiled_attention(Q, K, V, 2, 2, allowed_fn=first_two_keys)
    assert (t.tiles_computed, t.tiles_skipped) == (2, 2)  # key tile 1 is wholly masked for both query tiles
    np.testing.assert_allclose(t.output, _loop_attention(Q, K, V, lambda i, j: j < 2), atol=1e-13)


def test_tiled_keeps_a_row_far_below_another_rows_scores():
    """Each query row has its own running maximum: one row scoring ~1000 above another in the same
    tile must not push the other's exponentials to 0."""
    from attention_core.tiled import tiled_attention

    Q = np.array([[40.0, 0.0], [0.0, 0.01]])
    K = np.array([[40.0, 0.0], [39.0, 1.0], [0.0, 1.0]])  # row 0 scores up to 1600/√2 ≈ 1131
    V = np.array([[1.0], [2.0], [3.0]])
    expected = _loop_attention(Q, K, V, lambda i, j: True)
    np.testing.assert_allclose(tiled_attention(Q, K, V, 2, 3).output, expected, atol=1e-12)


def test_tiled_fully_masked_row_is_zero_without_warnings():
    import warnings

    from attention_core.tiled import tiled_attention

    Q = np.random.default_rng(13).normal(size=(3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 division behind the 0
        out = tiled_attention(
            Q, Q, Q, 3, 3, allowed_fn=lambda q, k: (q[:, None] > 0) & (k[None, :] >= 0)
        ).output
    assert out[0].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(out[1:], _loop_attention(Q, Q, Q, lambda i, j: True)[1:], atol=1e-13)


def test_boolean_queries_and_keys_are_numbers_not_logic():
    """0/1 inputs given as booleans: their scores are sums of products (2 here), not a logical or."""
    from attention_core.tiled import direct_attention, tiled_attention

    Q = np.array([[True, True], [True, False]])
    K = np.array([[True, True], [False, True]])
    V = np.array([[1.0, 0.0], [0.0, 1.0]])
    expected = _loop_attention(Q.astype(float), K.astype(float), V, lambda i, j: True)
    np.testing.assert_allclose(tiled_attention(Q, K, V, 2, 2).output, expected, atol=1e-13)
    np.testing.assert_allclose(direct_attention(Q, K, V), expected, atol=1e-13)


def test_layer_cache_stores_c_ordered_read_only_copies_of_views():
    base = np.arange(24.0).reshape(3, 2, 4)
    K = base.transpose(1, 0, 2)  # [2, 3, 4], not C-contiguous
    layer = kv_cache.LayerCache(K=K, V=K)
    for a in (layer.K, layer.V):
        assert a.flags.c_contiguous and not a.flags.writeable
    np.testing.assert_array_equal(layer.K, K)
    assert base.flags.writeable  # the caller's array is not frozen


# --- models.llama: the GGUF metadata and the 8-bit embedding table -----------------------------------

META = {
    "general.architecture": "llama",
    "llama.attention.head_count": 4,
    "llama.attention.head_count_kv": 2,
    "llama.embedding_length": 32,
    "llama.block_count": 3,
    "llama.feed_forward_length": 48,
    "llama.vocab_size": 11,
    "llama.rope.freq_base": 10000.0,
    "llama.attention.layer_norm_rms_epsilon": np.float32(1e-5),
    "llama.context_length": 256,
}


def test_llama_config_from_metadata_reads_every_number():
    from attention_core.models import llama as L

    c = L.LlamaConfig.from_metadata(META)
    got = (c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.head_dim, c.d_ff, c.vocab_size, c.context_length)
    assert got == (3, 32, 4, 2, 8, 48, 11, 256) and type(c.head_dim) is int
    assert c.rope_base == 10000.0 and c.rms_eps == float(np.float32(1e-5))
    no_vocab = {k: v for k, v in META.items() if k != "llama.vocab_size"} | {
        "tokenizer.ggml.tokens": ["a"] * 7
    }
    assert L.LlamaConfig.from_metadata(no_vocab).vocab_size == 7  # counted from the token list
    assert L.LlamaConfig.from_metadata(META | {"llama.rope.dimension_count": 8}).head_dim == 8
    for bad in (META | {"general.architecture": "gemma"}, META | {"llama.rope.dimension_count": 4}):
        with pytest.raises(ValueError):
            L.LlamaConfig.from_metadata(bad)
    with pytest.raises(ValueError, match="llama.block_count"):
        L.LlamaConfig.from_metadata({k: v for k, v in META.items() if k != "llama.block_count"})


def test_llama_config_refuses_inconsistent_shapes():
    from attention_core.models import llama as L

    good = dict(n_layers=1, d_model=8, n_heads=2, n_kv_heads=1, head_dim=4, d_ff=8, vocab_size=5,
                rope_base=10.0, rms_eps=1e-5, context_length=16)  # fmt: skip
    assert L.LlamaConfig(**good).group_size == 2
    # (heads · head_dim need not equal d_model since Gemma 3: 4 · 256 = 1024 ≠ 640)
    assert L.LlamaConfig(**(good | dict(d_model=9))).d_model == 9
    for bad in (dict(n_layers=0), dict(head_dim=3, d_model=6), dict(n_kv_heads=3, n_heads=2),
                dict(rope_layout="spiral"), dict(vocab_size=0)):  # fmt: skip
        with pytest.raises(ValueError):
            L.LlamaConfig(**(good | bad))


def test_8bit_embedding_rows_dense_and_matvec_against_loops(monkeypatch):
    from attention_core.models import llama as L

    rng = np.random.default_rng(15)
    vocab, d = 7, 64  # two 32-number blocks per row
    codes = rng.integers(-127, 128, (vocab, d)).astype(np.int8)
    scales = rng.random((vocab, 2)).astype(np.float32) + 0.5
    emb = L.Embedding8bit(codes, scales)
    table = np.array(
        [[float(codes[t, c]) * float(scales[t, c // 32]) for c in range(d)] for t in range(vocab)]
    )
    ids = np.array([4, 0, 4])
    np.testing.assert_allclose(emb.rows(ids), table[ids], rtol=1e-6)
    assert emb.rows(ids).dtype == np.float32 and emb.shape == (7, 64) and emb.nbytes == 7 * 64 + 7 * 2 * 4
    np.testing.assert_allclose(emb.dense(), table, rtol=1e-6)
    np.testing.assert_allclose(emb.dense(2, 5), table[2:5], rtol=1e-6)
    np.testing.assert_allclose(emb.dense(3), table[3:], rtol=1e-6)
    x = rng.normal(size=d).astype(np.float32)
    monkeypatch.setattr(L, "EMBED_CHUNK_ROWS", 3)  # chunks 0-2, 3-5, 6: the last one short
    got = emb.matvec(x)
    assert got.dtype == np.float32 and got.shape == (7,)
    np.testing.assert_allclose(got, table @ x.astype(np.float64), rtol=1e-5, atol=1e-3)


def test_tiny_llama_uses_its_own_rms_epsilon_and_keeps_every_step():
    """rms_eps = 0.5, far from the norms' default 1e-5: every RMSNorm (attention, FFN, output) must
    read the config's epsilon. The full pass and one cached step against the plain-float loop."""
    import dataclasses

    from attention_core.models import llama as L
    from tests.test_llama_generic import naive_logits, tiny_weights

    w = tiny_weights(4, 2, seed=5)
    w = dataclasses.replace(w, config=dataclasses.replace(w.config, rms_eps=0.5))
    ids = np.array([3, 1, 4, 1])
    traces, logits = L.run_layers(ids, w)
    np.testing.assert_allclose(logits, naive_logits(ids, w), atol=1e-9)
    t = traces[1]
    assert t.layer == 1 and t.divisor == 2.0 and t.kv_head_of.tolist() == [0, 0, 1, 1]
    assert t.mask.tolist() == np.tril(np.ones((4, 4), bool)).tolist()
    np.testing.assert_allclose(t.scores_scaled, t.scores_raw / 2.0)
    assert t.Q_pre.shape == (4, 4, 4) and t.K_pre.shape == (2, 4, 4) and not np.allclose(t.Q_pre, t.Q)
    np.testing.assert_allclose(t.head_outputs, t.weights @ t.V[t.kv_head_of])
    assert all(not getattr(t, f).flags.writeable for f in ("Q", "K", "V", "weights", "mask"))
    cache = kv_cache.KVCache(tuple(kv_cache.LayerCache(K=tr.K[:, :3], V=tr.V[:, :3]) for tr in traces))
    steps_, cache2, step_logits = L.decode_layers(1, cache, w)
    np.testing.assert_allclose(step_logits, naive_logits(ids, w), atol=1e-9)
    s = steps_[1]
    assert s.layer == 1 and s.position == 3 and s.kv_head_of.tolist() == [0, 0, 1, 1]
    np.testing.assert_allclose(s.q, t.Q[:, 3:4], atol=1e-12)
    np.testing.assert_allclose(s.q_pre, t.Q_pre[:, 3:4], atol=1e-12)
    np.testing.assert_allclose(s.k_pre, t.K_pre[:, 3:4], atol=1e-12)
    np.testing.assert_allclose(s.k, t.K[:, 3:4], atol=1e-12)
    np.testing.assert_allclose(s.v, t.V[:, 3:4], atol=1e-12)
    np.testing.assert_allclose(s.weights, t.weights[:, 3:4], atol=1e-12)
    np.testing.assert_allclose(s.scores_raw, t.scores_raw[:, 3:4], atol=1e-12)
    np.testing.assert_allclose(s.scores_scaled, t.scores_scaled[:, 3:4], atol=1e-12)
    np.testing.assert_allclose(s.head_outputs, t.head_outputs[:, 3:4], atol=1e-12)
    np.testing.assert_allclose(s.output, t.output[3:4], atol=1e-12)
    assert not s.q.flags.writeable and cache2.length == 4


def test_next_token_probs_top_one_and_float64():
    from attention_core.models import llama as L

    logits = np.array([0.5, 2.0, 1.0], dtype=np.float32)
    assert L.next_token_probs(logits, 1.0, 1).tolist() == [0.0, 1.0, 0.0]  # top_k = 1 keeps one token
    p = L.next_token_probs(logits, 0.7)
    assert p.dtype == np.float64
    e = [math.exp(float(v) / 0.7) for v in logits]
    np.testing.assert_allclose(p, [v / sum(e) for v in e], rtol=1e-14)


# --- trace: the weight properties read through to the parameters (issue 37's fold) ---------------
# The class body builds its four properties with trace._param at import, before a mutant is chosen,
# so this test builds one itself to reach the helper.


def test_a_weight_property_is_read_only_and_reads_the_parameters():
    from types import SimpleNamespace

    from attention_core import trace

    params = SimpleNamespace(W_Q=np.zeros((1, 2, 2)), W_K=np.ones((1, 2, 2)))
    holder = type("Holder", (), {"params": params, "W_K": trace._param("W_K")})()
    assert holder.W_K is params.W_K  # the very array, not W_Q's nor a copy
    assert type(holder).W_K.__doc__ == "``params.W_K``"
    with pytest.raises(AttributeError):
        holder.W_K = np.zeros((1, 2, 2))

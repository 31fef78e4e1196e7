"""The KV cache (attention_core/kv_cache.py): hand-counted cache sizes, appends against full causal
attention, and the shapes it refuses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import gqa, kv_cache, steps


def test_cache_bytes_formula_hand_values():
    # SmolLM2-135M, 64 tokens, float32: 2 · 30 · 64 · 3 · 64 · 4
    assert kv_cache.cache_bytes(30, 64, 3, 64, 4) == 2_949_120
    # the same model with one KV head per query head (MHA) would hold three times as much
    assert kv_cache.cache_bytes(30, 64, 9, 64, 4) == 3 * 2_949_120
    assert kv_cache.cache_bytes(1, 0, 3, 64, 2) == 0
    with pytest.raises(ValueError):
        kv_cache.cache_bytes(1, -1, 1, 1, 1)


def test_cache_grows_by_appending_and_reports_its_size():
    rng = np.random.default_rng(9)
    cache = kv_cache.empty_cache(n_layers=2, n_kv_heads=3, d_k=4)
    assert cache.length == 0 and cache.nbytes == 0
    for step in range(1, 4):
        layers = []
        for layer in cache.layers:
            k = rng.standard_normal((3, 1, 4)).astype(np.float32)
            v = rng.standard_normal((3, 1, 4)).astype(np.float32)
            new = kv_cache.append_kv(layer, k, v)
            np.testing.assert_array_equal(new.K[:, -1:], k)
            np.testing.assert_array_equal(new.K[:, :-1], layer.K)  # the old rows are untouched
            assert layer.length == step - 1  # and the old cache is unchanged
            layers.append(new)
        cache = kv_cache.KVCache(tuple(layers))
        assert cache.length == step
        assert cache.nbytes == kv_cache.cache_bytes(2, step, 3, 4, 4)
    assert not cache.layers[0].K.flags.writeable


def test_cache_shape_errors():
    layer = kv_cache.empty_layer_cache(3, 4)
    with pytest.raises(ValueError):
        kv_cache.append_kv(layer, np.zeros((2, 1, 4)), np.zeros((3, 1, 4)))
    with pytest.raises(ValueError):
        kv_cache.KVCache((layer, kv_cache.append_kv(layer, np.zeros((3, 1, 4)), np.zeros((3, 1, 4)))))
    with pytest.raises(ValueError):
        kv_cache.decode_attention(np.zeros((9, 1, 4)), layer, 2.0)


@pytest.mark.parametrize(("h", "g"), [(9, 3), (4, 4), (4, 1)])
def test_one_row_per_step_equals_full_causal_attention(h, g):
    """Feeding tokens one at a time through the cache gives every row of the full causal pass."""
    rng = np.random.default_rng(h + g)
    n, d = 7, 4
    Q, K, V = rng.standard_normal((h, n, d)), rng.standard_normal((g, n, d)), rng.standard_normal((g, n, d))
    full = gqa.grouped_attention(Q, K, V, steps.build_mask("causal", n), 2.0)
    layer = kv_cache.empty_layer_cache(g, d, dtype=np.float64)
    for t in range(n):
        layer = kv_cache.append_kv(layer, K[:, t : t + 1], V[:, t : t + 1])
        row = kv_cache.decode_attention(Q[:, t : t + 1], layer, 2.0)
        assert row.weights.shape == (h, 1, t + 1)
        np.testing.assert_allclose(row.weights[:, 0], full.weights[:, t, : t + 1], atol=1e-13)
        np.testing.assert_allclose(row.head_outputs[:, 0], full.head_outputs[:, t], atol=1e-13)
    # several new rows at once keep the causal mask among themselves
    cache = kv_cache.LayerCache(K=K, V=V)
    last3 = kv_cache.decode_attention(Q[:, -3:], cache, 2.0)
    np.testing.assert_allclose(last3.weights, full.weights[:, -3:], atol=1e-13)


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


def test_layer_cache_stores_c_ordered_read_only_copies_of_views():
    base = np.arange(24.0).reshape(3, 2, 4)
    K = base.transpose(1, 0, 2)  # [2, 3, 4], not C-contiguous
    layer = kv_cache.LayerCache(K=K, V=K)
    for a in (layer.K, layer.V):
        assert a.flags.c_contiguous and not a.flags.writeable
    np.testing.assert_array_equal(layer.K, K)
    assert base.flags.writeable  # the caller's array is not frozen

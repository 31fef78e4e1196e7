"""Gemma 3's steps in the decoder family (attention_core/models/llama.py) on a tiny random model.

Reference: a plain-Python forward pass written here from the formulas (Gemma 3 as the reference
implementations describe it), token by token: embedding · √d_model, QK-norm of each head vector
before RoPE, rotate-half RoPE with a base per layer, a sliding window on local layers
(0 <= i - j < window), scores / √query_pre_attn_scalar, post-attention and post-FFN RMSNorm,
GELU(tanh)-gated FFN, tied logits. No model file needed, so these run in every suite.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attention_core import ffn, kv_cache
from attention_core.models import gemma3 as G
from attention_core.models import llama as L

WINDOW = 3  # small, so that a 9-token prompt runs well past it


def tiny_gemma(seed: int = 0, n_layers: int = 6, window: int = WINDOW, dtype=np.float64) -> L.LlamaWeights:
    """4 query heads over 1 KV head, head_dim 8 with d_model 12 (4 · 8 = 32 ≠ 12, as in Gemma)."""
    rng = np.random.default_rng(seed)
    d, hd, ff, vocab, h, g = 12, 8, 20, 29, 4, 1
    config = G.gemma3_config(
        n_layers=n_layers, d_model=d, n_heads=h, n_kv_heads=g, head_dim=hd, d_ff=ff, vocab_size=vocab,
        global_rope_base=1000.0, rms_eps=1e-6, context_length=64, window=window, local_rope_base=10.0,
        query_pre_attn_scalar=6.0,
    )  # fmt: skip

    def m(*shape):
        return (rng.standard_normal(shape) / math.sqrt(shape[-1])).astype(dtype)

    def norm(k):
        return (1 + 0.3 * rng.standard_normal(k)).astype(dtype)

    layers = tuple(
        L.GemmaLayerWeights(
            attn_norm=norm(d),
            W_Q=m(h * hd, d),
            W_K=m(g * hd, d),
            W_V=m(g * hd, d),
            W_O=m(d, h * hd),
            ffn_norm=norm(d),
            W_gate=m(ff, d),
            W_up=m(ff, d),
            W_down=m(d, ff),
            q_norm=norm(hd),
            k_norm=norm(hd),
            post_attn_norm=norm(d),
            post_ffn_norm=norm(d),
        )  # fmt: skip
        for _ in range(n_layers)
    )
    return L.LlamaWeights(config, L.DenseEmbedding(m(vocab, d) * 0.3), layers, norm(d))


def naive_gemma_logits(ids, w: L.LlamaWeights) -> list[float]:
    """Token by token in plain Python floats, from the formulas."""
    c = w.config
    hd, half = c.head_dim, c.head_dim // 2

    def matvec(W, v):  # W [out, in]
        return [sum(W[o][i] * v[i] for i in range(len(v))) for o in range(len(W))]

    def rms(v, gain):
        r = math.sqrt(sum(t * t for t in v) / len(v) + c.rms_eps)
        return [v[i] / r * gain[i] for i in range(len(v))]

    def rope(v, pos, base):  # pairs (i, i + d/2)
        out = list(v)
        for i in range(half):
            a = pos * base ** (-2 * i / hd)
            out[i] = v[i] * math.cos(a) - v[i + half] * math.sin(a)
            out[i + half] = v[i + half] * math.cos(a) + v[i] * math.sin(a)
        return out

    def gelu_tanh(z):
        return 0.5 * z * (1 + math.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))

    n_layers = len(w.layers)
    xs = [[v * math.sqrt(c.d_model) for v in w.embedding.table[t]] for t in ids]
    for l_idx, lw in enumerate(w.layers):
        is_global = (l_idx + 1) % 6 == 0
        base = 1000.0 if is_global else 10.0
        W = {f: getattr(lw, f).tolist() for f in ("W_Q", "W_K", "W_V", "W_O", "W_gate", "W_up", "W_down")}
        qs, ks, vs = [], [], []
        for pos, x in enumerate(xs):
            h = rms(x, lw.attn_norm)
            q, k, v = matvec(W["W_Q"], h), matvec(W["W_K"], h), matvec(W["W_V"], h)
            qs.append([rope(rms(q[j * hd : (j + 1) * hd], lw.q_norm), pos, base) for j in range(c.n_heads)])
            ks.append(rope(rms(k, lw.k_norm), pos, base))
            vs.append(v)
        new = []
        for i, x in enumerate(xs):
            reach = [t for t in range(i + 1) if is_global or i - t < WINDOW]
            concat = []
            for j in range(c.n_heads):
                s = [sum(a * b for a, b in zip(qs[i][j], ks[t], strict=True)) / math.sqrt(6.0) for t in reach]
                top = max(s)
                e = [math.exp(v - top) for v in s]
                p = [v / sum(e) for v in e]
                concat += [sum(p[r] * vs[t][dd] for r, t in enumerate(reach)) for dd in range(hd)]
            attn = rms(matvec(W["W_O"], concat), lw.post_attn_norm)
            x = [a + b for a, b in zip(x, attn, strict=True)]
            h = rms(x, lw.ffn_norm)
            gate, up = matvec(W["W_gate"], h), matvec(W["W_up"], h)
            out = rms(
                matvec(W["W_down"], [gelu_tanh(gg) * u for gg, u in zip(gate, up, strict=True)]),
                lw.post_ffn_norm,
            )
            new.append([a + b for a, b in zip(x, out, strict=True)])
        xs = new
    assert n_layers == len(w.layers)
    return matvec(w.embedding.table.tolist(), rms(xs[-1], w.output_norm))


IDS = np.array([3, 17, 0, 9, 22, 5, 5, 28, 11])  # 9 tokens: three windows' worth


def test_tiny_gemma_matches_the_loop():
    w = tiny_gemma()
    traces, logits = L.run_layers(IDS, w)
    np.testing.assert_allclose(logits, naive_gemma_logits(IDS, w), atol=1e-10)
    kinds = [t.layer_kind for t in traces]
    assert kinds == ["local"] * 5 + ["global"]
    assert [t.window for t in traces] == [WINDOW] * 5 + [None]
    assert [t.rope_base for t in traces] == [10.0] * 5 + [1000.0]


def test_tiny_gemma_trace_steps_recomputed_by_hand():
    w = tiny_gemma(seed=1)
    traces, _ = L.run_layers(IDS, w)
    t, lw, c = traces[0], w.layers[0], w.config
    # QK-norm: each head vector divided by its RMS, times the gain; RoPE keeps the lengths
    rms = np.sqrt(np.mean(t.Q_pre**2, axis=-1, keepdims=True) + c.rms_eps)
    np.testing.assert_allclose(t.Q_normed, t.Q_pre / rms * lw.q_norm, atol=1e-12)
    np.testing.assert_allclose(t.q_lengths_pre, np.linalg.norm(t.Q_pre, axis=-1), atol=1e-12)
    np.testing.assert_allclose(t.q_lengths, np.linalg.norm(t.Q_normed, axis=-1), atol=1e-12)
    np.testing.assert_allclose(t.k_lengths, np.linalg.norm(t.K_normed, axis=-1), atol=1e-12)
    # the scores and their range over the allowed pairs
    np.testing.assert_allclose(t.scores_raw, t.Q @ t.K[0].swapaxes(-1, -2), atol=1e-12)
    np.testing.assert_allclose(t.scores_scaled, t.scores_raw / math.sqrt(6.0), atol=1e-12)
    allowed = t.scores_scaled[:, t.mask]
    np.testing.assert_allclose(t.score_range, np.stack([allowed.min(axis=1), allowed.max(axis=1)], 1), atol=0)
    # the band: row i has exactly min(i + 1, WINDOW) keys and zero weight outside them
    assert [int(r.sum()) for r in t.mask] == [min(i + 1, WINDOW) for i in range(len(IDS))]
    assert np.all(t.weights[:, ~t.mask] == 0)
    np.testing.assert_allclose(t.weights.sum(-1), 1.0, atol=1e-12)
    # the global layer reads every earlier key
    assert np.array_equal(traces[5].mask, np.tril(np.ones((9, 9), dtype=bool)))
    # layers of one kind share one read-only mask
    assert traces[0].mask is traces[1].mask and not traces[0].mask.flags.writeable


def test_window_allowed_against_the_definition():
    q, k = np.arange(7), np.arange(7)
    got = L.window_allowed(q, k, 3)
    want = np.array([[0 <= i - j < 3 for j in k] for i in q])
    assert np.array_equal(got, want)
    assert np.array_equal(L.window_allowed(q, k, None), np.tril(np.ones((7, 7), dtype=bool)))
    # a window of 1: each query reads only itself
    assert np.array_equal(L.window_allowed(q, k, 1), np.eye(7, dtype=bool))


def test_gelu_tanh_hand_values():
    # 0.5 · 1 · (1 + tanh(√(2/π) · 1.044715)) computed by hand: 0.841191990...
    assert ffn.gelu_tanh(np.array([1.0]))[0] == pytest.approx(0.8411919906082768, abs=1e-15)
    x = np.linspace(-6, 6, 121)
    assert np.max(np.abs(ffn.gelu_tanh(x) - ffn.gelu(x))) < 1e-3  # close to exact GELU
    assert ffn.gelu_tanh(np.float32([2.0])).dtype == np.float32


def test_head_rms_norm_hand_case():
    X = np.array([[[3.0, 4.0]]])  # one head, one token: RMS = √(12.5)
    got = L.head_rms_norm(X, np.array([1.0, 2.0]), 0.0)
    np.testing.assert_allclose(got, [[[3 / math.sqrt(12.5), 8 / math.sqrt(12.5)]]], atol=1e-15)
    assert L.head_rms_norm(X, None, 1e-6) is X


def test_embedding_scale_only_on_the_way_in():
    w = tiny_gemma()
    np.testing.assert_allclose(L.embed(np.array([4]), w), w.embedding.table[[4]] * math.sqrt(12), atol=1e-14)
    # the tied output layer reads the unscaled table: logits = table · RMSNorm(x)
    x = np.random.default_rng(2).standard_normal(12)
    h = x / np.sqrt(np.mean(x * x) + 1e-6) * w.output_norm
    np.testing.assert_allclose(L.output_logits(x, w), w.embedding.table @ h, atol=1e-12)


def test_cache_steps_equal_the_full_pass_past_the_window():
    """Token by token with the windowed cache = the full pass, for every prefix past the window."""
    w = tiny_gemma(seed=4, dtype=np.float32)
    traces, _ = L.run_layers(IDS[:2], w)
    cache = kv_cache.KVCache(tuple(kv_cache.LayerCache(K=t.K, V=t.V) for t in traces))
    sizes = []
    for n in range(3, len(IDS) + 1):
        steps_, cache, logits = L.decode_layers(int(IDS[n - 1]), cache, w)
        full_traces, full_logits = L.run_layers(IDS[:n], w)
        np.testing.assert_allclose(logits, full_logits, atol=1e-5)
        for s, full in zip(steps_, full_traces, strict=True):
            reach = full.mask[-1]  # the keys the last query reads in the full pass
            np.testing.assert_allclose(s.weights[:, 0], full.weights[:, -1, reach], atol=1e-5)
            assert s.first_position == int(np.flatnonzero(reach)[0])
        sizes.append(G.cache_bytes_by_kind(cache, w.config))
    # local layers stop growing at the window; the global layer grows by one token's K and V per step
    per_token = 2 * 1 * 8 * 4  # K and V, 1 KV head, head_dim 8, float32
    assert [s["local"] for s in sizes] == [5 * min(n, WINDOW) * per_token for n in range(3, 10)]
    assert [s["global"] for s in sizes] == [n * per_token for n in range(3, 10)]


def test_a_cache_that_keeps_every_key_gives_a_large_gap():
    """Broken on purpose: without the window's eviction (and its mask) the one-row step reads keys
    the full pass masks out, and the logits move far beyond the 1e-5 the page reports as equal."""
    w = tiny_gemma(seed=4, dtype=np.float32)
    unwindowed = dataclasses.replace(w, config=dataclasses.replace(w.config, layer_windows=()))
    traces, _ = L.run_layers(IDS[:-1], unwindowed)
    cache = kv_cache.KVCache(tuple(kv_cache.LayerCache(K=t.K, V=t.V) for t in traces))
    _, _, broken = L.decode_layers(int(IDS[-1]), cache, unwindowed)
    gap = float(np.max(np.abs(broken - L.run_layers(IDS, w)[1])))
    assert gap > 1e-2


def test_keep_window_drops_the_oldest_keys():
    K = np.arange(2 * 5 * 3, dtype=np.float32).reshape(2, 5, 3)
    layer = kv_cache.LayerCache(K=K, V=-K)
    kept = kv_cache.keep_window(layer, 2)
    assert kept.length == 2 and kept.start == 3 and kept.end == 5
    np.testing.assert_array_equal(kept.K, K[:, 3:])
    assert kv_cache.keep_window(layer, 9) is layer
    grown = kv_cache.append_kv(kept, np.zeros((2, 1, 3), np.float32), np.zeros((2, 1, 3), np.float32))
    assert grown.start == 3 and grown.end == 6
    # layers that have seen different numbers of tokens cannot form one cache
    with pytest.raises(ValueError):
        kv_cache.KVCache((kept, layer, grown))
    assert kv_cache.KVCache((kept, layer)).length == 5
    with pytest.raises(ValueError):
        kv_cache.keep_window(layer, 0)


def test_keep_weights_drops_the_big_arrays_and_keeps_the_cache():
    w = tiny_gemma(seed=5)
    full, logits = L.run_layers(IDS, w)
    slim, logits2 = L.run_layers(IDS, w, keep="weights")
    np.testing.assert_array_equal(logits, logits2)
    for a, b in zip(full, slim, strict=True):
        np.testing.assert_array_equal(a.weights, b.weights)
        np.testing.assert_array_equal(a.K, b.K)
        np.testing.assert_array_equal(a.q_lengths, b.q_lengths)
        assert b.Q is None and b.scores_raw is None and b.head_outputs is None and b.Q_normed is None
    with pytest.raises(ValueError):
        L.run_layers(IDS, w, keep="some")


def test_gemma_config_validation_and_layer_pattern():
    c = G.GEMMA3_270M
    assert [i for i in range(18) if c.layer_kind(i) == "global"] == [5, 11, 17]
    assert c.divisor == 16.0 and c.n_heads * c.head_dim == 1024 != c.d_model
    assert c.rope_base_of(0) == 10_000.0 and c.rope_base_of(5) == 1_000_000.0
    assert c.embed_scale == pytest.approx(math.sqrt(640))
    for bad in (
        {"layer_windows": (512,) * 17},
        {"layer_windows": (0,) * 18},
        {"layer_rope_bases": (1.0,) * 18},
        {"ffn_gate": "relu"},
        {"embed_scale": 0.0},
        {"query_pre_attn_scalar": -1.0},
    ):
        with pytest.raises(ValueError):
            dataclasses.replace(c, **bad)


def test_windowed_cache_bytes_hand_values():
    windows = G.GEMMA3_270M.layer_windows
    # 8,192 tokens: 15 · 512 + 3 · 8,192 = 32,256 token-layers, · 2 · 256 · 4 bytes
    assert kv_cache.windowed_cache_bytes(8192, windows, 1, 256, 4) == 32_256 * 2048 == 66_060_288
    # without the window every layer keeps all 8,192 tokens
    assert kv_cache.windowed_cache_bytes(8192, (None,) * 18, 1, 256, 4) == kv_cache.cache_bytes(
        18, 8192, 1, 256, 4
    )
    # below the window nothing is dropped
    assert kv_cache.windowed_cache_bytes(100, windows, 1, 256, 4) == kv_cache.cache_bytes(18, 100, 1, 256, 4)
    with pytest.raises(ValueError):
        kv_cache.windowed_cache_bytes(10, (0,), 1, 1, 1)

"""The generic Llama steps (attention_core/models/llama.py) on a tiny random model, any head counts.

Reference: a plain-Python forward pass written here from the formulas, token by token, in the
Hugging Face layout (RoPE pairs ``(i, i + d/2)``, no reordered rows). Our code runs the same
weights with ``rope_layout="half"``, and the llama.cpp-reordered weights with ``"interleaved"``:
all three must agree. No model file needed.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attention_core import kv_cache
from attention_core.models import llama as L
from attention_core.rope import half_to_interleaved_rows


def tiny_weights(n_heads: int, n_kv_heads: int, seed: int = 0) -> L.LlamaWeights:
    rng = np.random.default_rng(seed)
    d, hd, ff, vocab = n_heads * 4, 4, 12, 23
    config = L.LlamaConfig(
        n_layers=2, d_model=d, n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=hd, d_ff=ff, vocab_size=vocab,
        rope_base=50.0, rms_eps=1e-5, context_length=64, rope_layout="half",
    )  # fmt: skip

    def m(*shape):
        return rng.standard_normal(shape) / math.sqrt(shape[-1])

    layers = tuple(
        L.LlamaLayerWeights(
            attn_norm=1 + 0.1 * rng.standard_normal(d),
            W_Q=m(n_heads * hd, d),
            W_K=m(n_kv_heads * hd, d),
            W_V=m(n_kv_heads * hd, d),
            W_O=m(d, n_heads * hd),
            ffn_norm=1 + 0.1 * rng.standard_normal(d),
            W_gate=m(ff, d),
            W_up=m(ff, d),
            W_down=m(d, ff),
        )  # fmt: skip
        for _ in range(config.n_layers)
    )
    return L.LlamaWeights(config, L.DenseEmbedding(m(vocab, d)), layers, 1 + 0.1 * rng.standard_normal(d))


def naive_logits(ids, w: L.LlamaWeights) -> list[float]:
    """Token-by-token Llama in plain Python floats, from the formulas (HF rotate-half RoPE)."""
    c = w.config
    hd, half, group = c.head_dim, c.head_dim // 2, c.n_heads // c.n_kv_heads

    def matvec(W, v):  # W [out, in]
        return [sum(W[o][i] * v[i] for i in range(len(v))) for o in range(len(W))]

    def rms(v, g):
        r = math.sqrt(sum(t * t for t in v) / len(v) + c.rms_eps)
        return [v[i] / r * g[i] for i in range(len(v))]

    def rope(v, pos):
        out = list(v)
        for i in range(half):
            a = pos * c.rope_base ** (-2 * i / hd)
            out[i] = v[i] * math.cos(a) - v[i + half] * math.sin(a)
            out[i + half] = v[i + half] * math.cos(a) + v[i] * math.sin(a)
        return out

    xs = [list(w.embedding.table[t]) for t in ids]
    for lw in w.layers:
        W = {f: lw.__dict__[f].tolist() for f in ("W_Q", "W_K", "W_V", "W_O", "W_gate", "W_up", "W_down")}
        qs, ks, vs = [], [], []
        for pos, x in enumerate(xs):
            h = rms(x, lw.attn_norm)
            q, k, v = matvec(W["W_Q"], h), matvec(W["W_K"], h), matvec(W["W_V"], h)
            qs.append([rope(q[j * hd : (j + 1) * hd], pos) for j in range(c.n_heads)])
            ks.append([rope(k[g * hd : (g + 1) * hd], pos) for g in range(c.n_kv_heads)])
            vs.append([v[g * hd : (g + 1) * hd] for g in range(c.n_kv_heads)])
        new = []
        for i, x in enumerate(xs):
            concat = []
            for j in range(c.n_heads):
                g = j // group
                s = [
                    sum(a * b for a, b in zip(qs[i][j], ks[t][g], strict=True)) / math.sqrt(hd)
                    for t in range(i + 1)
                ]
                top = max(s)
                e = [math.exp(v - top) for v in s]
                p = [v / sum(e) for v in e]
                concat += [sum(p[t] * vs[t][g][dd] for t in range(i + 1)) for dd in range(hd)]
            x = [a + b for a, b in zip(x, matvec(W["W_O"], concat), strict=True)]
            h = rms(x, lw.ffn_norm)
            gate, up = matvec(W["W_gate"], h), matvec(W["W_up"], h)
            hidden = [gg / (1 + math.exp(-gg)) * u for gg, u in zip(gate, up, strict=True)]
            new.append([a + b for a, b in zip(x, matvec(W["W_down"], hidden), strict=True)])
        xs = new
    h = rms(xs[-1], w.output_norm)
    return matvec(w.embedding.table.tolist(), h)


@pytest.mark.parametrize(("n_heads", "n_kv_heads"), [(4, 2), (4, 4), (4, 1), (6, 3)])
def test_tiny_llama_matches_the_loop_in_both_rope_layouts(n_heads, n_kv_heads):
    w = tiny_weights(n_heads, n_kv_heads)
    ids = np.array([3, 17, 0, 9, 22])
    expected = naive_logits(ids, w)
    traces, logits = L.run_layers(ids, w)
    np.testing.assert_allclose(logits, expected, atol=1e-10)
    assert traces[0].weights.shape == (n_heads, 5, 5) and traces[0].K.shape == (n_kv_heads, 5, 4)
    # the same model with llama.cpp's row order and interleaved pairs
    h, g = n_heads, n_kv_heads
    gguf_layers = tuple(
        dataclasses.replace(
            lw, W_Q=half_to_interleaved_rows(lw.W_Q, h), W_K=half_to_interleaved_rows(lw.W_K, g)
        )
        for lw in w.layers
    )
    gguf_config = dataclasses.replace(w.config, rope_layout="interleaved")
    w2 = dataclasses.replace(w, config=gguf_config, layers=gguf_layers)
    traces2, logits2 = L.run_layers(ids, w2)
    np.testing.assert_allclose(logits2, expected, atol=1e-10)
    np.testing.assert_allclose(traces2[1].weights, traces[1].weights, atol=1e-12)


def test_tiny_llama_cache_steps_equal_the_full_pass():
    w = tiny_weights(6, 2, seed=3)
    ids = np.array([1, 2, 3, 4, 5, 6])
    traces, logits = L.run_layers(ids[:2], w)
    cache = kv_cache.KVCache(tuple(kv_cache.LayerCache(K=t.K, V=t.V) for t in traces))
    for t in ids[2:]:
        steps_, cache, logits = L.decode_layers(int(t), cache, w)
        assert steps_[0].weights.shape == (6, 1, cache.length)
    assert cache.nbytes == kv_cache.cache_bytes(2, 6, 2, 4, 8)
    full_traces, full_logits = L.run_layers(ids, w)
    np.testing.assert_allclose(logits, full_logits, atol=1e-12)
    # the logits do not depend on the keys' order (softmax over a set), so the cache itself is compared:
    # position t's key and value at index t of every layer, as the full pass has them
    for layer, full in zip(cache.layers, full_traces, strict=True):
        np.testing.assert_allclose(layer.K, full.K, atol=1e-12)
        np.testing.assert_allclose(layer.V, full.V, atol=1e-12)
    assert not np.allclose(cache.layers[0].K[:, 0], cache.layers[0].K[:, -1])  # the order is visible


def test_config_validation():
    base = tiny_weights(4, 2).config
    for bad in (
        {"n_kv_heads": 3},
        {"head_dim": 3, "d_model": 12},
        {"rope_layout": "zigzag"},
        {"n_layers": 0},
    ):
        with pytest.raises(ValueError):
            dataclasses.replace(base, **bad)

"""The inference lab's core against references written here: a naive loop over heads, steps and keys
for cached decoding, FLOPs counted from matrix shapes, cache bytes counted from real arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import AttentionConfigError
from attention_core.embeddings import embed
from attention_core.kv_cache import append_kv, empty_layer_cache
from attention_core.labs import inference as li

TOL = 1e-10


def naive_causal(Q, K, V):
    """Query head j reads KV head j // (h/g); row t sees keys 0..t. Loops only."""
    h, n, d = Q.shape
    g = K.shape[0]
    out = np.zeros((h, n, V.shape[2]))
    for j in range(h):
        kv = j // (h // g)
        for t in range(n):
            s = [sum(Q[j, t, c] * K[kv, u, c] for c in range(d)) / math.sqrt(d) for u in range(t + 1)]
            m = max(s)
            e = [math.exp(x - m) for x in s]
            for u in range(t + 1):
                out[j, t] += e[u] / sum(e) * V[kv, u]
    return out


def naive_bidirectional(Q, K, V):
    h, n, d = Q.shape
    g = K.shape[0]
    out = np.zeros((h, n, V.shape[2]))
    for j in range(h):
        kv = j // (h // g)
        for t in range(n):
            s = [float(Q[j, t] @ K[kv, u]) / math.sqrt(d) for u in range(n)]
            e = [math.exp(x - max(s)) for x in s]
            out[j, t] = sum(e[u] / sum(e) * V[kv, u] for u in range(n))
    return out


def qkv(text, d_model, heads, kv_heads, seed):
    s = li.InferenceSettings(text, d_model=d_model, heads=heads, kv_heads=kv_heads, seed=seed)
    lab = li.inference_lab(s)
    X = embed(lab.tokens, d_model, seed, positional=True)
    W_Q, W_K, W_V = li.projection_weights(d_model, heads, kv_heads, seed)
    d_k = d_model // heads
    Q = np.stack([X @ W_Q[:, j * d_k : (j + 1) * d_k] for j in range(heads)])
    K = np.stack([X @ W_K[:, j * d_k : (j + 1) * d_k] for j in range(kv_heads)])
    V = np.stack([X @ W_V[:, j * d_k : (j + 1) * d_k] for j in range(kv_heads)])
    return lab, Q, K, V


@pytest.mark.parametrize(("heads", "kv_heads"), [(4, 4), (4, 2), (4, 1), (2, 1), (1, 1)])
def test_cached_decoding_equals_the_full_causal_pass_and_a_naive_loop(heads, kv_heads):
    lab, Q, K, V = qkv("the cat sat on the mat today", 8, heads, kv_heads, 5)
    ref = naive_causal(Q, K, V)
    assert np.max(np.abs(lab.decoded - ref)) <= TOL
    assert np.max(np.abs(lab.full - ref)) <= TOL
    assert lab.cache_gap <= TOL
    assert lab.cache_lengths == tuple(range(1, 8))


def test_causal_outputs_of_earlier_tokens_do_not_change_and_bidirectional_ones_do():
    lab, Q, K, V = qkv("one two three four five", 8, 2, 1, 0)
    causal_change = np.abs(naive_causal(Q, K, V)[:, :4] - naive_causal(Q[:, :4], K[:, :4], V[:, :4])).max(
        axis=(0, 2)
    )
    bidi_change = np.abs(
        naive_bidirectional(Q, K, V)[:, :4] - naive_bidirectional(Q[:, :4], K[:, :4], V[:, :4])
    )
    assert np.max(causal_change) <= TOL and np.max(lab.change_causal) <= TOL
    assert np.max(np.abs(lab.change_bidirectional - bidi_change.max(axis=(0, 2)))) <= TOL
    assert np.min(lab.change_bidirectional) > 1e-6  # every earlier token changes
    assert lab.max_change_bidirectional == pytest.approx(float(bidi_change.max()), abs=TOL)


def test_groups_and_causal_mask():
    lab = li.inference_lab(li.InferenceSettings("a b c", d_model=12, heads=6, kv_heads=2))
    assert lab.groups == ((0, 1, 2), (3, 4, 5))
    assert lab.kv_head_of.tolist() == [0, 0, 0, 1, 1, 1]
    assert lab.causal_allowed.tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    # every row of weights sums to 1 and the future gets nothing
    assert np.allclose(lab.weights.sum(axis=2), 1.0, atol=TOL)
    assert np.all(lab.weights[:, ~lab.causal_allowed] == 0.0)


def mm(m, k, p):
    """FLOPs of [m, k] @ [k, p]: one multiply and one add for each of the m·p·k terms."""
    return 2 * m * k * p


@pytest.mark.parametrize(
    ("n", "d", "h", "g"), [(1, 16, 4, 2), (7, 16, 4, 4), (100, 64, 8, 1), (4096, 576, 9, 3)]
)
def test_flops_per_step_from_matrix_shapes(n, d, h, g):
    d_k = d // h
    new_token = mm(1, d, h * d_k) + 2 * mm(1, d, g * d_k)  # q, k, v of the new token
    cached = new_token + h * (mm(1, d_k, n) + mm(1, n, d_k))  # one row: scores, weighted sum
    every_token = mm(n, d, h * d_k) + 2 * mm(n, d, g * d_k)
    recompute = every_token + h * (mm(n, d_k, n) + mm(n, n, d_k))
    curve = li.flops_curve([n], d, h, g)
    assert curve.cached == (cached,) and curve.recompute == (recompute,)


def test_flops_grow_linearly_with_the_cache_and_quadratically_without():
    curve = li.flops_curve([2**k for k in range(10, 17)], 64, 8, 2)
    c, r = np.array(curve.cached, float), np.array(curve.recompute, float)
    assert np.all(np.abs(c[1:] / c[:-1] - 2) < 0.05)  # doubling n doubles the cached step
    assert np.all(r[-1] / r[-2] > 3.9)  # and quadruples the recompute once n ≫ d


def test_cache_bytes_equal_the_bytes_of_real_cache_arrays():
    # SmolLM2-135M: 30 layers, 3 KV heads, head_dim 64, 2048 tokens, 2 bytes: by hand 47,185,920
    size = li.cache_size(30, 2048, 9, 3, 64, 2)
    assert size.bytes == 47_185_920 and size.bytes_mha == 3 * 47_185_920
    assert size.saved == 2 * 47_185_920 and size.ratio == pytest.approx(1 / 3)
    layer = empty_layer_cache(3, 64, dtype=np.float16)
    layer = append_kv(layer, np.zeros((3, 5, 64), np.float16), np.zeros((3, 5, 64), np.float16))
    assert li.kv_cache_bytes(1, 5, 3, 64, 2) == layer.nbytes


def test_presets_are_the_published_shapes():
    shapes = {p.name: (p.layers, p.heads, p.kv_heads, p.head_dim) for p in li.PRESETS}
    assert shapes["SmolLM2-135M"] == (30, 9, 3, 64)
    assert shapes["GPT-2 small"] == (12, 12, 12, 768 // 12)
    assert shapes["Llama 2 70B"] == (80, 64, 8, 8192 // 64)
    assert shapes["Llama 2 7B"] == (32, 32, 32, 4096 // 32)
    assert shapes["Mistral 7B"] == (32, 32, 8, 128)
    assert all(p.heads % p.kv_heads == 0 for p in li.PRESETS)
    assert li.kv_choices(9) == (1, 3, 9) and li.kv_choices(12) == (1, 2, 3, 4, 6, 12)


def test_one_token():
    lab = li.inference_lab(li.InferenceSettings("solo"))
    assert lab.cache_gap <= TOL and lab.change_causal.size == 0 and lab.max_change_bidirectional == 0.0


@pytest.mark.parametrize(
    "kwargs",
    [dict(d_model=0), dict(d_model=16, heads=3), dict(heads=4, kv_heads=3), dict(kv_heads=0), dict(seed=-2)],
)
def test_bad_settings_are_refused_with_a_message(kwargs):
    with pytest.raises(AttentionConfigError):
        li.InferenceSettings("a b", **kwargs)


def test_blank_text_is_refused():
    with pytest.raises(AttentionConfigError):
        li.inference_lab(li.InferenceSettings("\n\t "))


def test_catalog_claims_hold():
    """What the inference and positions catalogs state, checked against the core."""
    from attention_core.gqa import kv_memory_ratio
    from attention_core.models.smollm2 import SMOLLM2_135M
    from attention_core.rope import rope_frequencies
    from attention_ui.i18n import translate

    # source_smollm2 says the preset comes from the GGUF file the decoder reads: the same shape
    (smol,) = [p for p in li.PRESETS if p.key == "smollm2"]
    c = SMOLLM2_135M
    assert (smol.layers, smol.heads, smol.kv_heads, smol.head_dim) == (
        c.n_layers,
        c.n_heads,
        c.n_kv_heads,
        c.head_dim,
    )
    for p in li.PRESETS:  # every preset names its source in both languages
        assert translate("en", f"inference.source_{p.key}") and translate("ja", f"inference.source_{p.key}")
    # q_mqa_meaning_why: with g = 1 the cache is 1/h of MHA's
    assert kv_memory_ratio(8, 1) == 1 / 8
    # positions.pair_help: pair 0 turns by 1 radian per position and turns fastest
    f = rope_frequencies(16, 10000.0)
    assert f[0] == 1.0 and np.all(np.diff(f) < 0)
    # inference.flops_note: recomputing does n times the cached step's work (dense n × n products)
    curve = li.flops_curve([1, 7, 4096], 16, 4, 2)
    assert all(r == n * c_ for n, c_, r in zip(curve.ns, curve.cached, curve.recompute, strict=True))


def test_results_are_read_only():
    from attention_core.labs import positions as lp

    lab = li.inference_lab(li.InferenceSettings("a b c"))
    pos = lp.positions_lab(lp.PositionsSettings("a b c"))
    arrays = [
        lab.full,
        lab.decoded,
        lab.weights,
        lab.change_bidirectional,
        pos.out_plain,
        pos.perm,
        pos.arrow_path,
    ]
    arrays += list(pos.scores.values()) + list(pos.extrapolation.values())
    assert not any(a.flags.writeable for a in arrays)

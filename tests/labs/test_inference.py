"""The inference lab's core against references written here: a naive loop over heads, steps and keys
for cached decoding, FLOPs counted from matrix shapes, cache bytes counted from real arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import AttentionConfigError
from attention_core.embeddings import embed
from attention_core.kv_cache import append_kv, empty_layer_cache
from attention_core.labs import inference as inf
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


def test_inference_settings_limits():
    from attention_core.labs import inference as inf

    lo, hi = inf.D_MODEL_RANGE
    h_hi = inf.HEADS_RANGE[1]
    assert inf.InferenceSettings("a", d_model=lo, heads=1, kv_heads=1).d_model == lo
    assert inf.InferenceSettings("a", d_model=hi, heads=1, kv_heads=1).d_model == hi
    assert inf.InferenceSettings("a", d_model=h_hi * 2, heads=h_hi, kv_heads=1).heads == h_hi
    for bad in (
        dict(d_model=lo - 1, heads=1),
        dict(d_model=hi + 1, heads=1),
        dict(d_model=h_hi * 4, heads=h_hi * 2),
    ):
        with pytest.raises(AttentionConfigError):
            inf.InferenceSettings("a", kv_heads=1, **bad)


def test_projection_weights_have_variance_one_over_d():
    from attention_core.labs import inference as inf

    W_Q, W_K, W_V = inf.projection_weights(64, 4, 2, 0)
    assert W_Q.shape == (64, 64) and W_K.shape == (64, 32) and W_V.shape == (64, 32)
    for W in (W_Q, W_K, W_V):
        assert 0.9 / 8 < W.std() < 1.1 / 8  # N(0, 1/64): standard deviation 1/8
    np.testing.assert_array_equal(W_Q, inf.projection_weights(64, 4, 2, 0)[0])
    assert not np.array_equal(W_Q, inf.projection_weights(64, 4, 2, 1)[0])


def test_inference_lab_of_two_tokens_and_its_fields():
    from attention_core.labs import inference as inf

    s = inf.InferenceSettings("a a", d_model=8, heads=2, kv_heads=1, seed=2)
    lab = inf.inference_lab(s)
    assert lab.settings is s and lab.tokenization is not None and lab.d_k == 4 and type(lab.d_k) is int
    assert lab.change_causal.shape == (1,) and lab.change_causal[0] == 0.0
    assert lab.change_bidirectional.shape == (1,) and lab.change_bidirectional[0] > 1e-6
    # the same word twice differs only by its position: the outputs of the two rows differ
    assert np.max(np.abs(lab.full[:, 0] - lab.full[:, 1])) > 1e-3
    cut = inf.inference_lab(inf.InferenceSettings("one two three four five", max_tokens=3))
    assert cut.tokens == ("one", "two", "three")
    assert inf.prefix_change(np.zeros((2, 0, 3)), np.zeros((2, 1, 3))).shape == (0,)


def test_flops_curve_counts_are_integers():
    from attention_core.labs import inference as inf

    c = inf.flops_curve([4, 8], 16, 4, 2)
    assert c.ns == (4, 8) and all(type(v) is int for v in c.cached + c.recompute)
    assert c.cached[0] == 2 * 16 * (4 + 2 * 2) * 4 + 4 * 4 * 4 * 4


def _shape(**kw):
    from attention_core.labs import inference as li

    base = dict(key="k", name="m", layers=4, heads=8, kv_heads=2, head_dim=16, source="s", context=100)
    return li.ModelShape(**(base | kw))


def test_model_shape_checks_and_windowed_layers():
    assert _shape().layers_windowed == 0 and _shape(window=10).layers_windowed == 4
    assert _shape(window=10, window_layers=3).layers_windowed == 3
    _shape(context=1, window=0, window_layers=0)  # the edges are accepted
    _shape(window_layers=4)
    for bad in (
        dict(kv_heads=3),
        dict(context=0),
        dict(window=-1),
        dict(window_layers=-1),
        dict(window_layers=5),
    ):
        with pytest.raises(ValueError, match="^m: "):
            _shape(**bad)


def test_flops_knee_and_tokens_held_by_hand():
    from attention_core.labs import inference as li

    assert li.flops_knee(64, 4, 2) == 64 * 8 / 8 == 64.0  # d(h + 2g) / 2h
    assert li.flops_knee(30, 3, 1) == 30 * 5 / 6
    assert (li.tokens_held(10, 0), li.tokens_held(10, 4), li.tokens_held(3, 4)) == (10, 4, 3)


def test_cache_size_with_some_windowed_layers_by_hand():
    """4 layers, 3 of them windowed at W = 5, n = 12, 2 KV heads of 16 values, 2 bytes:
    2 · (3·5 + 1·12) · 2 · 16 · 2 = 3456 bytes; MHA (8 KV heads) is 4 times that."""
    from attention_core.labs import inference as li

    s = li.cache_size(4, 12, 8, 2, 16, 2, window=5, window_layers=3)
    assert (s.bytes, s.bytes_mha, s.saved, s.held) == (3456, 4 * 3456, 3 * 3456, 5)
    assert s.ratio == 0.25
    assert li.cache_size(4, 12, 8, 2, 16, 2, window=5).bytes == 2 * 4 * 5 * 2 * 16 * 2  # all layers windowed
    assert li.cache_size(4, 12, 8, 2, 16, 2).bytes == 2 * 4 * 12 * 2 * 16 * 2  # no window
    with pytest.raises(AttentionConfigError):
        li.cache_size(4, 12, 8, 2, 16, 2, window=5, window_layers=5)


def test_cache_calculation_caps_n_and_sizes_every_bar():
    from attention_core.labs import inference as li

    shape = _shape(window=5, window_layers=3)
    calc = li.cache_calculation(shape, 500, 2, 2, 5)
    assert (calc.asked, calc.n, calc.window, calc.capped) == (500, 100, 5, True)
    per_g = lambda g: 2 * (3 * 5 + 1 * 100) * g * 16 * 2  # noqa: E731
    assert calc.size.bytes == per_g(2) and calc.bars == tuple((g, per_g(g)) for g in (1, 2, 4, 8))
    small = li.cache_calculation(shape, 40, 2, 2, 5)
    assert (small.n, small.capped) == (40, False)
    plain = li.cache_calculation(_shape(), 40, 4, 2, 10)  # no window of its own: the typed one, all layers
    assert plain.size.bytes == 2 * 4 * 10 * 4 * 16 * 2


def test_gemma3_270m_shape_by_hand():
    """Gemma 3 270M: 18 layers, 4 query heads over 1 KV head of 256, 32,768 positions, and 15 of the
    18 layers local with a 512-token window (five local layers before each global one)."""
    from attention_core.labs import inference as li

    s = li.gemma3_270m_shape()
    assert (s.key, s.name, s.layers, s.heads, s.kv_heads, s.head_dim) == (
        "gemma3_270m",
        "Gemma 3 270M",
        18,
        4,
        1,
        256,
    )
    assert (s.context, s.window, s.window_layers, s.layers_windowed) == (32_768, 512, 15, 15)
    assert s.source == "its GGUF file's metadata (the file this project runs)"


def test_cache_size_without_a_window_ignores_the_windowed_layer_count():
    from attention_core.labs import inference as li

    every = 2 * 4 * 12 * 2 * 16 * 2
    assert li.cache_size(4, 12, 8, 2, 16, 2, window=0, window_layers=5).bytes == every  # no window: no check
    assert li.cache_size(0, 12, 8, 2, 16, 2).bytes == 0  # no layers, no cache
    # a shape without a window of its own: the typed window applies to every layer, whatever window_layers says
    calc = li.cache_calculation(_shape(window_layers=3), 40, 4, 2, 10)
    assert calc.size.bytes == 2 * 4 * 10 * 4 * 16 * 2


def test_cache_gap_of_a_cache_that_forgets_is_large(monkeypatch):
    """A cache that keeps only the last two tokens (a bug, not a window the page claims) must show."""
    s = inf.InferenceSettings("the quick brown fox jumps over the lazy dog")
    assert inf.inference_lab(s).cache_gap <= TOL
    real_append = inf.append_kv

    def forgetful(cache, K_new, V_new):
        full = real_append(cache, K_new, V_new)
        return type(full)(K=full.K[:, -2:], V=full.V[:, -2:])

    monkeypatch.setattr(inf, "append_kv", forgetful)
    # one query row per step (m = 1), so the short cache is accepted: only the gap can tell
    lab = inf.inference_lab(s)
    assert lab.cache_gap > 1e-3


def test_cache_gap_of_a_wrong_divisor_is_large(monkeypatch):
    s = inf.InferenceSettings("a b c d e")
    real = inf.decode_attention
    monkeypatch.setattr(inf, "decode_attention", lambda q, cache, divisor: real(q, cache, divisor * 2))
    assert inf.inference_lab(s).cache_gap > 1e-3

"""attention_core/models/llama.py: the one layer loop (``layer_stack``) that the full pass, the
re-runs from a saved stream and the KV-cached step share, and a layer's mask (``layer_mask``).

The passes' numbers are checked against independent references elsewhere (tests/test_llama_generic.py,
tests/test_gemma_family.py, the golden tests against transformers and llama.cpp); here, on the tiny
Gemma-like model of tests/test_gemma_family.py, what the loop itself does: the order of the two
sub-layers, which layers run, and that every pass goes through it.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attention_core import kv_cache
from attention_core.models import llama as L
from attention_core.norms import rms_norm
from tests.test_gemma_family import IDS, WINDOW, tiny_gemma


def test_layer_stack_adds_attention_then_the_ffn_on_each_layer():
    w = tiny_gemma(seed=4)
    c = w.config
    x0 = L.embed(IDS, w)

    def attend(x, i):  # a stand-in attention: adds i + 1 everywhere, keeps (i, the stream it saw)
        return (i, x.copy()), np.full_like(x, i + 1.0)

    got = list(L.layer_stack(x0, w, attend, start=2))
    assert [kept[0] for kept, _, _ in got] == [2, 3, 4, 5]
    x = x0
    for i, (kept, ffn, after) in zip(range(2, c.n_layers), got, strict=True):
        np.testing.assert_array_equal(kept[1], x)  # attend sees the stream entering the layer
        mid = x + (i + 1.0)
        want_ffn = L.ffn_block(mid, w.layers[i], c.rms_eps, c.ffn_gate)  # the FFN reads x + attention
        np.testing.assert_allclose(ffn, want_ffn, atol=1e-12)
        np.testing.assert_allclose(after, mid + want_ffn, atol=1e-12)
        x = after
    assert list(L.layer_stack(x0, w, attend, start=c.n_layers)) == []


def test_every_pass_runs_through_the_one_loop(monkeypatch):
    w = tiny_gemma(seed=5)
    c = w.config
    runs: list[list[int]] = []  # per call of layer_stack: the layers whose FFN it ran
    real_stack, real_ffn = L.layer_stack, L.ffn_block

    def recorded_stack(x, weights, attend, start=0):
        runs.append([])
        yield from real_stack(x, weights, attend, start)

    def recorded_ffn(x, layer, eps, gate="silu"):
        runs[-1].append(next(i for i, lw in enumerate(w.layers) if lw is layer))
        return real_ffn(x, layer, eps, gate)

    monkeypatch.setattr(L, "layer_stack", recorded_stack)
    monkeypatch.setattr(L, "ffn_block", recorded_ffn)
    L.run_layers(IDS, w)
    L.run_from(L.embed(IDS, w), w, start=3)
    cache = kv_cache.empty_cache(c.n_layers, c.n_kv_heads, c.head_dim, dtype=np.float64)
    L.decode_layers(int(IDS[0]), cache, w)
    assert runs == [list(range(c.n_layers)), [3, 4, 5], list(range(c.n_layers))]


def test_layer_mask_without_and_with_an_experiment_mask():
    pos = np.arange(6)
    causal = np.tril(np.ones((6, 6), dtype=bool))
    band = np.array([[0 <= i - j < WINDOW for j in pos] for i in pos])
    assert np.array_equal(L.layer_mask(pos, None), causal)
    assert np.array_equal(L.layer_mask(pos, WINDOW), band)
    everything = np.ones((6, 6), dtype=bool)
    assert L.layer_mask(pos, None, everything) is everything  # a global layer takes it as given
    local = L.layer_mask(pos, WINDOW, everything)
    assert np.array_equal(local, band) and not local.flags.writeable  # AND-ed with the window
    # the window is over positions, not indices: positions 0, 2, 4 ... reach one key back with w = 3
    spread = L.layer_mask(2 * pos, WINDOW)
    assert np.array_equal(spread, np.array([[0 <= 2 * i - 2 * j < WINDOW for j in pos] for i in pos]))


@pytest.mark.parametrize("keep", ["all", "weights"])
def test_run_layers_shares_one_mask_per_window_and_run_from_too(keep):
    w = tiny_gemma(seed=6)
    traces, _ = L.run_layers(IDS, w, keep=keep)
    run = L.run_from(L.embed(IDS, w), w)
    for layers in (traces, run.layers):
        assert all(t.mask is layers[0].mask for t in layers[:5])  # the five local layers
        assert layers[5].mask is not layers[0].mask and not layers[5].mask.flags.writeable


def test_attention_sublayer_keeps_every_step_by_default():
    w = tiny_gemma(seed=7)
    x, pos = L.embed(IDS, w), np.arange(len(IDS))
    trace, out = L.attention_sublayer(x, w.layers[0], w.config, pos, 0)
    assert trace.Q is not None and trace.scores_raw is not None and trace.head_outputs is not None
    np.testing.assert_array_equal(trace.output, out)
    np.testing.assert_array_equal(out, L.attention_sublayer(x, w.layers[0], w.config, pos, 0, keep="all")[1])


def test_attention_sublayer_output_has_the_post_norm_only_where_the_layer_does():
    w = tiny_gemma(seed=8)
    layer, eps = w.layers[1], w.config.rms_eps
    heads = np.random.default_rng(8).standard_normal((4, 3, 8))  # [h, n, head_dim]
    mixed = L.steps.merge_heads(heads) @ layer.W_O.T  # [n, d_model]: the heads concatenated, then W_O
    np.testing.assert_allclose(
        L.attention_sublayer_output(heads, layer, eps), rms_norm(mixed, layer.post_attn_norm, eps)
    )
    plain = L.LlamaLayerWeights(
        **{f.name: getattr(layer, f.name) for f in dataclasses.fields(L.LlamaLayerWeights)}
    )
    np.testing.assert_array_equal(
        L.attention_sublayer_output(heads, plain, eps), mixed
    )  # Llama: no post-norm


def test_masked_attention_edits_its_layer_only():
    w = tiny_gemma(seed=9)
    x = L.embed(IDS, w)
    plain = L.run_from(x, w)
    edited = L.run_from(x, w, edits={2: np.zeros_like})  # layer 2's heads say nothing
    for i in range(2):
        np.testing.assert_array_equal(edited.layers[i].head_outputs, plain.layers[i].head_outputs)
    assert not np.any(edited.layers[2].head_outputs)
    np.testing.assert_array_equal(edited.resid[:3], plain.resid[:3])  # the stream before layer 2 ...
    assert not np.allclose(edited.resid[3], plain.resid[3])  # ... and after it, where the edit shows


def test_cached_attention_grows_each_layers_cache_by_one_token_and_trims_the_local_ones():
    w = tiny_gemma(seed=10)
    c = w.config
    cache = kv_cache.empty_cache(c.n_layers, c.n_kv_heads, c.head_dim, dtype=np.float64)
    attend = L.cached_attention(w, cache)
    x = L.embed(IDS[:1], w)
    for i in range(c.n_layers):
        (step, grown), out = attend(x, i)
        assert step.layer == i and step.position == 0 and grown.length == 1 and out.shape == x.shape
    for token in IDS[: WINDOW + 2]:  # two tokens past the window
        steps_out, cache, _ = L.decode_layers(int(token), cache, w)
    assert [layer.length for layer in cache.layers] == [WINDOW] * 5 + [WINDOW + 2]
    assert [s.first_position for s in steps_out] == [2] * 5 + [0]  # position 4 reads keys 2, 3, 4


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

"""attention_core/models/llama.py: the one layer loop (``layer_stack``) that the full pass, the
re-runs from a saved stream and the KV-cached step share, and a layer's mask (``layer_mask``).

The passes' numbers are checked against independent references elsewhere (tests/test_llama_generic.py,
tests/test_gemma_family.py, the golden tests against transformers and llama.cpp); here, on the tiny
Gemma-like model of tests/test_gemma_family.py, what the loop itself does: the order of the two
sub-layers, which layers run, and that every pass goes through it.
"""

from __future__ import annotations

import dataclasses

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

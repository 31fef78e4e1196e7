"""attention_core/models/llama.py: the one layer loop (``layer_stack``) that the full pass, the
re-runs from a saved stream and the KV-cached step share, and a layer's mask (``layer_mask``).

The passes' numbers are checked against independent references elsewhere (tests/test_llama_generic.py,
tests/test_gemma_family.py, the golden tests against transformers and llama.cpp); here, on the tiny
Gemma-like model of tests/test_gemma_family.py, what the loop itself does: the order of the two
sub-layers, which layers run, and that every pass goes through it.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import kv_cache
from attention_core.models import llama as L
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

"""The heads lab on Gemma 3: attribution through Gemma's norms, ablation, windows, induction with <bos>.

Most checks run on the tiny random Gemma-like model of tests/test_gemma_family.py (4 query heads
over 1 KV head, head_dim 8 ≠ d_model / heads, QK-norm, post-norms, GeGLU, √d embedding scale,
window 3 on the local layers); the reference is :func:`naive_gemma`, a float64 pass written here
from the formulas, one head at a time, which can knock a head out and take any mask. A few checks
run on the real Gemma 3 270M (loaded once per test process) and skip when it is not installed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.labs import heads as H
from attention_core.models import llama as L
from tests.test_gemma_family import IDS, tiny_gemma

TEXT = "The capital of France is"


def _rms(x, g, eps):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * np.asarray(g, np.float64)


def _rope_half(x, pos, base):
    """Rotate pairs (i, i + d/2) by pos · base^(−2i/d): ``[n, d] -> [n, d]``."""
    d = x.shape[-1]
    half = d // 2
    a = pos[:, None] * base ** (-2 * np.arange(half) / d)[None, :]
    lo, hi = x[:, :half], x[:, half:]
    return np.concatenate([lo * np.cos(a) - hi * np.sin(a), hi * np.cos(a) + lo * np.sin(a)], axis=1)


def _gelu_tanh(z):
    return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))


def _readout_last(x, w: L.LlamaWeights, vocab_ids=None) -> np.ndarray:
    """Final norm and the tied table in float64: ``[d] -> [V]`` (or ``[len(vocab_ids)]``)."""
    c = w.config
    h = _rms(np.asarray(x, np.float64), w.output_norm, c.rms_eps)
    if vocab_ids is not None:
        return np.asarray(w.embedding.rows(np.asarray(vocab_ids)), np.float64) @ h
    out = np.empty(c.vocab_size)
    for start in range(0, c.vocab_size, 8192):
        stop = min(start + 8192, c.vocab_size)
        out[start:stop] = np.asarray(w.embedding.rows(np.arange(start, stop)), np.float64) @ h
    return out


def naive_gemma(ids, w: L.LlamaWeights, ablate=None, mask=None, vocab_ids=None):
    """Float64 Gemma pass, one head at a time. ``ablate=(layer, head)`` sets that head's output to 0;
    ``mask(layer) -> [n, n]`` (default: causal, and within the layer's window). ``-> logits [V]``
    (only the ``vocab_ids`` rows when given: the real model's 262,144 rows in float64 are slow)."""
    c = w.config
    n, hd, group = len(ids), c.head_dim, c.n_heads // c.n_kv_heads
    pos = np.arange(n, dtype=np.float64)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    x = np.asarray(w.embedding.rows(np.asarray(ids)), np.float64) * c.embed_scale
    for li, lw in enumerate(w.layers):
        window = c.window_of(li)
        allowed = ((j <= i) & ((i - j < window) if window else True)) if mask is None else mask(li)
        base = c.rope_base_of(li)
        h = _rms(x, lw.attn_norm, c.rms_eps)
        outs = []
        for head in range(c.n_heads):
            g = head // group
            Wq = np.asarray(lw.W_Q, np.float64)[head * hd : (head + 1) * hd]
            Wk = np.asarray(lw.W_K, np.float64)[g * hd : (g + 1) * hd]
            Wv = np.asarray(lw.W_V, np.float64)[g * hd : (g + 1) * hd]
            q = _rope_half(_rms(h @ Wq.T, lw.q_norm, c.rms_eps), pos, base)
            k = _rope_half(_rms(h @ Wk.T, lw.k_norm, c.rms_eps), pos, base)
            s = np.where(allowed, q @ k.T / math.sqrt(c.query_pre_attn_scalar), -np.inf)
            s = np.exp(s - s.max(axis=1, keepdims=True))
            o = (s / s.sum(axis=1, keepdims=True)) @ (h @ Wv.T)
            outs.append(np.zeros_like(o) if ablate == (li, head) else o)
        attn = np.concatenate(outs, axis=1) @ np.asarray(lw.W_O, np.float64).T
        x = x + _rms(attn, lw.post_attn_norm, c.rms_eps)
        f = _rms(x, lw.ffn_norm, c.rms_eps)
        inner = _gelu_tanh(f @ np.asarray(lw.W_gate, np.float64).T) * (f @ np.asarray(lw.W_up, np.float64).T)
        x = x + _rms(inner @ np.asarray(lw.W_down, np.float64).T, lw.post_ffn_norm, c.rms_eps)
    return _readout_last(x[-1], w, vocab_ids)


def gemma_model(w: L.LlamaWeights, bos: int | None = None) -> H.HeadsModel:
    return H.HeadsModel(
        key="tiny-gemma", name="tiny-gemma", weights=w, encode=None, label=lambda ctx, i: f"t{i}",
        labels=lambda ids: tuple(f"t{i}" for i in ids), tokenize=None,
        ordinary_ids=np.arange(3, w.config.vocab_size), max_tokens=64, bos_id=bos,
    )  # fmt: skip


@pytest.fixture(scope="module")
def tg():
    return gemma_model(tiny_gemma(seed=7), bos=2)


@pytest.fixture(scope="module")
def tg_pass(tg):
    return H.run_pass(IDS, tg)


@pytest.fixture(scope="session")
def gemma():
    if not H.is_available("gemma3"):
        pytest.skip("optional model Gemma 3 270M missing (make model)")
    return H.load_model("gemma3")


@pytest.fixture(scope="session")
def gemma_pass(gemma):
    enc = gemma.encode(TEXT, False)
    return H.run_pass(enc.ids, gemma, enc.labels)


# --- the pass keeps the windows -----------------------------------------------------------------


def test_the_naive_pass_is_the_model(tg, tg_pass):
    """The reference itself: the same logits as the core's pass (and so as the plain-Python loop the
    family tests hold that pass to)."""
    np.testing.assert_allclose(tg_pass.logits, naive_gemma(IDS, tg.weights), atol=1e-9)


def test_run_from_keeps_each_layers_window(tg, tg_pass):
    layers, logits = L.run_layers(IDS, tg.weights)
    np.testing.assert_array_equal(tg_pass.logits, logits)
    for t in tg_pass.run.layers:
        w = tg.config.window_of(t.layer)
        assert t.window == w
        offsets = np.arange(len(IDS))[:, None] - np.arange(len(IDS))[None, :]
        expected = (offsets >= 0) & ((offsets < w) if w else True)
        np.testing.assert_array_equal(t.mask, expected)
    assert {t.window for t in tg_pass.run.layers} == {3, None}  # both kinds are in the 6 layers


def test_an_experiments_mask_is_anded_with_a_local_window(tg):
    """The sinks run's mask (first 1 + last 5 keys) meets local layers of window 3: they keep only
    keys both allow; the global layer takes the run's mask as it is."""
    n = len(IDS)
    run_mask = H.window_allowed(n, 5, sinks=1)
    run = L.run_from(L.embed(IDS, tg.weights), tg.weights, allowed=run_mask)
    local = run_mask & H.window_allowed(n, 3)

    def mask(li):
        return run_mask if tg.config.window_of(li) is None else local

    for t in run.layers:
        np.testing.assert_array_equal(t.mask, mask(t.layer))
    got = L.output_logits(run.final[-1], tg.weights)
    np.testing.assert_allclose(got, naive_gemma(IDS, tg.weights, mask=mask), atol=1e-9)
    # the broken variant: the run's mask alone on every layer is a different model
    alone = naive_gemma(IDS, tg.weights, mask=lambda li: run_mask)
    assert np.abs(got - alone).max() > 1e-3


# --- attribution through Gemma's norms ----------------------------------------------------------


def test_attribution_adds_up_on_tiny_gemma(tg, tg_pass):
    for token in (0, int(np.argmax(tg_pass.logits)), 28):
        att = H.attribution(tg_pass, tg.weights, token)
        assert att.heads.shape == (6, 4) and att.ffn.shape == (6,)
        assert abs(att.total - att.model_logit) <= 1e-9
        assert abs(att.total - naive_gemma(IDS, tg.weights)[token]) <= 1e-9


def test_one_heads_part_by_hand(tg, tg_pass):
    """Layer 1, head 2 at the last position: its output through its columns of W_O, times the
    post-attention norm's weight over the RMS of the whole attention output there, times the final
    norm's weight over the final stream's RMS, onto the token's row."""
    c, token, layer, head = tg.config, 5, 1, 2
    t, lw = tg_pass.run.layers[layer], tg.weights.layers[layer]
    hd = c.head_dim
    W_O = np.asarray(lw.W_O, np.float64)
    o = np.asarray(t.head_outputs[:, -1], np.float64)  # [h, hd]
    whole = sum(W_O[:, j * hd : (j + 1) * hd] @ o[j] for j in range(c.n_heads))
    mine = W_O[:, head * hd : (head + 1) * hd] @ o[head]
    post = np.asarray(lw.post_attn_norm) / math.sqrt(np.mean(whole**2) + c.rms_eps)
    final = np.asarray(tg_pass.run.final[-1], np.float64)
    read = np.asarray(tg.weights.output_norm) / math.sqrt(np.mean(final**2) + c.rms_eps)
    expected = float((mine * post * read) @ np.asarray(tg.weights.embedding.table[token], np.float64))
    att = H.attribution(tg_pass, tg.weights, token)
    assert att.heads[layer, head] == pytest.approx(expected, abs=1e-12)
    # the embedding's part carries the √d scale
    emb = np.asarray(tg.weights.embedding.table[IDS[-1]], np.float64) * math.sqrt(c.d_model)
    assert att.embedding == pytest.approx(
        float((emb * read) @ np.asarray(tg.weights.embedding.table[token])), abs=1e-12
    )


def test_a_post_norm_frozen_at_the_normed_output_does_not_add_up(tg, tg_pass):
    """The broken variant the old hook had: the post-attention scale taken from the output after
    the norm. The parts then miss the logit, so the identity test can fail."""
    c, token = tg.config, 5
    final = np.asarray(tg_pass.run.final[-1], np.float64)
    read = H.frozen_norm_scale(final, tg.weights.output_norm, c.rms_eps) * tg.weights.embedding.table[token]
    wrong = 0.0
    for t, lw in zip(tg_pass.run.layers, tg.weights.layers, strict=True):
        writes = H.head_writes(t.head_outputs[:, -1], lw.W_O)
        wrong += float(
            (writes * H.frozen_norm_scale(t.output[-1], lw.post_attn_norm, c.rms_eps)) @ read @ np.ones(4)
        )
    att = H.attribution(tg_pass, tg.weights, token)
    assert abs(wrong + att.ffn.sum() + att.embedding - att.model_logit) > 1e-3


# --- ablation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("layer, head", [(0, 0), (2, 3), (5, 1)])  # local, local, global
def test_ablation_matches_the_pass_with_the_head_zeroed(tg, tg_pass, layer, head):
    ab = H.ablate(tg_pass, tg.weights, layer, head)
    expected = naive_gemma(IDS, tg.weights, ablate=(layer, head))
    np.testing.assert_allclose(ab.logits, expected, atol=1e-9)
    assert np.abs(expected - tg_pass.logits).max() > 1e-4  # the head matters: the test can fail


def test_sweep_covers_every_head(tg, tg_pass):
    results = list(H.sweep(tg_pass, tg.weights))
    assert [(r.layer, r.head) for r in results] == [(li, h) for li in range(6) for h in range(4)]
    maps = H.sweep_maps(results, tg.config)
    assert maps.kl.shape == (6, 4) and (maps.kl >= 0).all()


# --- induction with <bos> first -----------------------------------------------------------------


def test_induction_reads_bos_first_and_scores_the_repeated_tokens(tg):
    ind = H.induction(tg, length=5, seed=3)
    ids = np.array(ind.ids)
    assert len(ids) == 10 and (ids[:5] == ids[5:]).all() and 2 not in ids
    fed = np.concatenate([[2], ids])
    run = L.run_from(L.embed(fed, tg.weights), tg.weights)
    for li, t in enumerate(run.layers):
        for h in range(4):
            wts = t.weights[h]  # [11, 11], row/column 0 = <bos>
            ind_loop = np.mean([wts[1 + i, 1 + i - 5 + 1] for i in range(5, 10)])
            prev_loop = np.mean([wts[1 + i, 1 + i - 1] for i in range(1, 10)])
            assert ind.induction[li, h] == pytest.approx(ind_loop, abs=1e-12)
            assert ind.previous[li, h] == pytest.approx(prev_loop, abs=1e-12)
    # losses: position p of the fed sequence predicts fed[p + 1]; the repeated tokens' targets only
    for k in (0, 4, 8):
        z = L.output_logits(run.final[1 + k], tg.weights).astype(np.float64)
        loss = np.log(np.exp(z - z.max()).sum()) + z.max() - z[ids[k + 1]]
        assert ind.losses[k] == pytest.approx(loss, abs=1e-6)  # the lab streams in float32


# --- the real Gemma 3 270M ----------------------------------------------------------------------


def test_gemma_model_shape(gemma, gemma_pass):
    c = gemma.config
    assert (c.n_layers, c.n_heads, c.n_kv_heads) == (18, 4, 1)
    assert gemma.bos_id == 2 and gemma_pass.ids[0] == 2 and gemma.max_tokens == 128
    assert gemma_pass.labels[0] == "<bos>"
    assert {gemma.config.window_of(t.layer) for t in gemma_pass.run.layers} == {512, None}


def test_gemma_attribution_adds_up(gemma, gemma_pass):
    for token in (int(np.argmax(gemma_pass.logits)), 9079):  # ␣the, ␣Paris
        att = H.attribution(gemma_pass, gemma.weights, token)
        assert att.heads.shape == (18, 4) and att.ffn.shape == (18,)
        assert abs(att.total - att.model_logit) <= 1e-4, (att.total, att.model_logit)


def test_gemma_logit_lens_last_layer_is_the_models_logits(gemma, gemma_pass):
    from attention_core.models import gemma3

    lens = H.logit_lens(gemma_pass, gemma.weights)
    own = gemma3.forward(gemma_pass.ids, keep="weights").logits
    np.testing.assert_allclose(lens.logits[-1], own, atol=1e-3)
    assert lens.top_ids[-1, 0] == int(np.argmax(own))


def test_gemma_ablation_matches_an_independent_pass(gemma, gemma_pass):
    ab = H.ablate(gemma_pass, gemma.weights, 5, 1)  # a global layer
    # the ablated top 20, the unablated top 20 and 2,000 seeded random ids
    rng = np.random.default_rng(26)
    top = np.argsort(-ab.logits)[:20]
    vocab_ids = np.unique(np.concatenate([top, np.argsort(-gemma_pass.logits)[:20],
                                          rng.integers(0, gemma.config.vocab_size, 2000)]))  # fmt: skip
    expected = naive_gemma(gemma_pass.ids, gemma.weights, ablate=(5, 1), vocab_ids=vocab_ids)
    np.testing.assert_allclose(ab.logits[vocab_ids], expected, atol=2e-3)
    assert np.abs(ab.logits - gemma_pass.logits).max() > 1e-2 and ab.kl > 0


def test_gemma_views_read_the_pass(gemma, gemma_pass):
    first = H.first_token_weights(gemma_pass)
    assert first.shape == (18, 4)
    t = gemma_pass.run.layers[3]
    np.testing.assert_allclose(first[3], t.weights[:, 1:, 0].mean(axis=1), atol=1e-6)
    pic = H.decoder_qk_picture(gemma_pass, 3, 2, gemma.config)
    n = gemma_pass.n
    assert pic.queries.shape == pic.keys.shape == (n, 2)
    assert pic.strongest.tolist() == t.weights[2].argmax(axis=1).tolist()


def test_gemma_not_installed_says_so(monkeypatch):
    from attention_core.models import gemma3

    def missing():
        raise gemma3.DecoderUnavailable("The optional library 'gguf' is not installed")

    monkeypatch.setattr(gemma3, "load_model", missing)
    with pytest.raises(H.ModelUnavailable, match="not installed"):
        H.load_model("gemma3")
    assert "gemma3" in H.install_command("gemma3")

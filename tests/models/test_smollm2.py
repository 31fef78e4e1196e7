"""SmolLM2's wrapper (attention_core/models/smollm2.py) on a tiny llama GGUF file written here, no
pretrained weights (issue 28: mutation testing).

The file: 2 layers at toy sizes and a byte-level BPE vocabulary of three control tokens, the byte
alphabet without bytes 04 and FF (so two bytes cannot be spelled, as six cannot in SmolLM2's) and
Ġc, at, Ġcat with their merges. It is loaded through the undecorated ``load_model``
(``__wrapped__``: the cached real model of other tests is never touched). References: the family's
pass (``llama.run_layers``), tokenisations and labels worked out by hand, greedy generation as
repeated full passes.
"""

from __future__ import annotations

import collections
import importlib.metadata
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from attention_core.models import byte_bpe
from attention_core.models import llama as L
from attention_core.models import smollm2 as S
from attention_ui.i18n import LANGUAGES, translate
from tests.tiny_gguf import add_q8_0, finish

gguf = pytest.importorskip("gguf", reason="optional: pip install -r requirements-model.txt")
pytest.importorskip("tokenizers", reason="optional: pip install -r requirements-model.txt")

D, H, HD, KV, FF, LAYERS = 32, 2, 16, 1, 8, 2
ALPHABET = byte_bpe.byte_alphabet()
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
BYTES = [b for b in range(256) if b not in (0x04, 0xFF)]
TOKENS = [*SPECIALS, *[ALPHABET[b] for b in BYTES], "Ġc", "at", "Ġcat"]
TYPES = [3, 3, 3, *[1] * (len(TOKENS) - 3)]
MERGES = ["Ġ c", "a t", "Ġc at"]
VOCAB = len(TOKENS)
ID = {t: i for i, t in enumerate(TOKENS)}


def byte_id(b: int) -> int:
    return ID[ALPHABET[b]]


def toy_config() -> L.LlamaConfig:
    return L.LlamaConfig(
        n_layers=LAYERS, d_model=D, n_heads=H, n_kv_heads=KV, head_dim=HD, d_ff=FF, vocab_size=VOCAB,
        rope_base=500.0, rms_eps=float(np.float32(1e-5)), context_length=64,
    )  # fmt: skip


def write_toy(path: Path, model="gpt2", pre="smollm", eos: int | None = 1) -> Path:
    rng = np.random.default_rng(5)
    w = gguf.GGUFWriter(str(path), "llama")
    for key, value in {
        "llama.block_count": LAYERS, "llama.embedding_length": D, "llama.attention.head_count": H,
        "llama.attention.head_count_kv": KV, "llama.feed_forward_length": FF, "llama.context_length": 64,
        "llama.vocab_size": VOCAB,
    }.items():  # fmt: skip
        w.add_uint32(key, value)
    w.add_float32("llama.rope.freq_base", 500.0)
    w.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
    w.add_string("tokenizer.ggml.model", model)
    w.add_string("tokenizer.ggml.pre", pre)
    if eos is not None:
        w.add_uint32("tokenizer.ggml.eos_token_id", eos)
    w.add_array("tokenizer.ggml.tokens", TOKENS)
    w.add_array("tokenizer.ggml.token_type", TYPES)
    w.add_array("tokenizer.ggml.merges", MERGES)

    def m(*shape):
        return (rng.standard_normal(shape) / math.sqrt(shape[-1])).astype(np.float32)

    def gain(k):
        return (1 + 0.2 * rng.standard_normal(k)).astype(np.float32)

    for i in range(LAYERS):
        for name, array in {
            "attn_norm": gain(D), "attn_q": m(H * HD, D), "attn_k": m(KV * HD, D), "attn_v": m(KV * HD, D),
            "attn_output": m(D, H * HD), "ffn_norm": gain(D), "ffn_gate": m(FF, D), "ffn_up": m(FF, D),
            "ffn_down": m(D, FF),
        }.items():  # fmt: skip
            w.add_tensor(f"blk.{i}.{name}.weight", array)
    w.add_tensor("output_norm.weight", gain(D))
    codes = np.stack([rng.integers(-100, 100, D, dtype=np.int8) for _ in range(VOCAB)])  # one block per row
    scales = np.array([[0.0005 * (1 + t % 5)] for t in range(VOCAB)])  # small logits: a spread distribution
    add_q8_0(w, "token_embd.weight", codes, scales)
    finish(w)
    return path


def load_toy(monkeypatch, path: Path, expected=None) -> S.SmolLM2:
    monkeypatch.setattr(S, "model_path", lambda: path)
    monkeypatch.setattr(S, "SMOLLM2_135M", toy_config() if expected is None else expected)
    monkeypatch.setattr(S, "load_tokenizer", S.load_tokenizer.__wrapped__)  # the real one stays cached
    return S.load_model.__wrapped__()


@pytest.fixture(scope="module")
def toy_file(tmp_path_factory) -> Path:
    return write_toy(tmp_path_factory.mktemp("smol") / "toy.gguf")


@pytest.fixture
def toy(monkeypatch, toy_file) -> S.SmolLM2:
    return load_toy(monkeypatch, toy_file)


# ------------------------------------------------------------------------------------ the load


def test_the_toy_model_loads(toy):
    assert toy.config == toy_config() and toy.eos_id == 1 and toy.vocab == tuple(TOKENS)
    assert toy.token_bytes[:3] == (None, None, None)  # control tokens stand for no text
    assert toy.token_bytes[ID["Ġcat"]] == b" cat" and toy.token_bytes[byte_id(0xE7)] == b"\xe7"
    assert toy.missing_bytes == frozenset({0x04, 0xFF})
    assert len(toy.weights.layers) == LAYERS


def test_eos_defaults_to_2(monkeypatch, tmp_path):
    assert load_toy(monkeypatch, write_toy(tmp_path / "e.gguf", eos=None)).eos_id == 2


@pytest.mark.parametrize("kwargs", [dict(model="llama"), dict(pre="gpt2")])
def test_only_smollms_tokenizer(monkeypatch, tmp_path, kwargs):
    with pytest.raises(ValueError, match="only the byte-level BPE tokenizer of SmolLM2"):
        load_toy(monkeypatch, write_toy(tmp_path / "t.gguf", **kwargs))


def test_another_model_is_refused(monkeypatch, toy_file):
    other = L.LlamaConfig(**(vars(toy_config()) | dict(rope_base=600.0)))
    with pytest.raises(ValueError, match="is not the expected SmolLM2-135M"):
        load_toy(monkeypatch, toy_file, expected=other)


def test_without_a_reader_library(monkeypatch, toy_file):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda m: None if m == "gguf" else real(m))
    monkeypatch.setattr(S, "model_path", lambda: toy_file)
    assert S.is_available() is False
    with pytest.raises(S.DecoderUnavailable, match="'gguf' is not installed.*Install the decoder model"):
        S.load_model.__wrapped__()


class FakeDist:
    def __init__(self, root: Path, names: list[str] | None, present=True):
        self._root = root
        self.files = None if names is None else [Path(n) for n in names]
        for n in names or ():
            if present:
                (root / n).parent.mkdir(parents=True, exist_ok=True)
                (root / n).write_bytes(b"GGUF")

    def locate_file(self, f):
        return self._root / f


@pytest.mark.parametrize(
    "files, present, found",
    [
        ([f"m/{S.MODEL_FILE}.txt", f"m/{S.MODEL_FILE}"], True, True),
        ([f"m/other-{S.MODEL_FILE}"], True, False),  # the name must match exactly
        ([f"m/{S.MODEL_FILE}"], False, False),  # listed but not on disk
        (None, True, False),  # no file list
    ],
)
def test_the_model_file_is_found_from_the_package(monkeypatch, tmp_path, files, present, found):
    dist = FakeDist(tmp_path, files, present)
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: dist)
    if found:
        assert S.model_path.__wrapped__() == tmp_path / "m" / S.MODEL_FILE
    else:
        with pytest.raises(S.DecoderUnavailable, match=f"installed but {S.MODEL_FILE} was not found"):
            S.model_path.__wrapped__()


def test_a_missing_package(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(S.DecoderUnavailable, match=f"The package {S.MODEL_DISTRIBUTION} is not installed"):
        S.model_path.__wrapped__()
    monkeypatch.setattr(S, "model_path", S.model_path.__wrapped__)
    assert S.is_available() is False


# ------------------------------------------------------------------------------------ text in


def test_encode_by_hand(toy):
    # " cat cat": GPT-2's rule gives " cat", " cat"; Ġ+c, a+t, Ġc+at make Ġcat twice
    enc = S.encode(" cat cat", model=toy)
    assert enc.ids == (ID["Ġcat"], ID["Ġcat"]) and enc.labels == ("\u2423cat", "\u2423cat")
    assert enc.total_tokens == 2 and enc.max_tokens == S.MAX_TOKENS and not enc.truncated
    assert [p.char for p in enc.parts[0]] == [" ", "c", "a", "t"]
    assert S.encode("cat", model=toy).ids == (byte_id(ord("c")), ID["at"])  # Ġc needs the space
    cut = S.encode(" cat cat", max_tokens=1, truncate=True, model=toy)
    assert cut.ids == (ID["Ġcat"],) and cut.labels == ("\u2423cat",) and len(cut.parts) == 1
    assert cut.total_tokens == 2 and cut.truncated and cut.max_tokens == 1
    with pytest.raises(S.DecoderInputError, match="2 tokens long; the decoder view takes at most 1"):
        S.encode(" cat cat", max_tokens=1, model=toy)
    assert S.encode(" cat cat", max_tokens=2, model=toy).n == 2
    for bad in (0, S.MAX_TOKENS + 1):
        with pytest.raises(ValueError, match="max_tokens must be between 1 and"):
            S.encode("cat", max_tokens=bad, model=toy)
    with pytest.raises(S.DecoderInputError, match="empty"):
        S.encode("   ", model=toy)


def test_characters_the_vocabulary_cannot_spell_are_removed_and_counted(toy):
    enc = S.encode("a\x04b\u00ff", model=toy)  # 04 has no token; ÿ is C3 BF, both spellable
    assert enc.removed_chars == 1 and enc.text == "ab\u00ff"
    assert enc.ids == (byte_id(ord("a")), byte_id(ord("b")), byte_id(0xC3), byte_id(0xBF))
    with pytest.raises(S.DecoderInputError, match="no character this model can read"):
        S.encode("\x04 \x04", model=toy)
    assert S.remove_unspellable("abc", frozenset()) == ("abc", 0)
    assert S.remove_unspellable("a\x04\x04b", frozenset({4})) == ("ab", 2)


def test_encode_cuts_overlong_text_only_when_asked(toy):
    text = "b" * (S.MAX_INPUT_CHARS + 3)
    with pytest.raises(S.DecoderInputError, match=f"{S.MAX_INPUT_CHARS + 3} characters long"):
        S.encode(text, model=toy)
    cut = S.encode(text, max_tokens=2, truncate=True, model=toy)
    assert cut.chars_cut == 3 and len(cut.text) == S.MAX_INPUT_CHARS and cut.ids == (byte_id(98),) * 2


def test_check_text():
    for bad, why in ((None, "string"), ("", "empty"), (" \n", "empty"), ("a\udc00", "surrogate")):
        with pytest.raises(S.DecoderInputError, match=why):
            S.check_text(bad)
    S.check_text("猫")


def test_labels_name_the_special_tokens(toy):
    ids = [1, byte_id(0xE7), byte_id(0x8C), byte_id(0xAB), 2, ID["Ġcat"]]
    labels, parts = S.labels_for_ids(ids, toy)
    assert labels == ("<|im_start|>", "猫 1/3", "猫 2/3", "猫 3/3", "<|im_end|>", "\u2423cat")
    assert parts[0] == () and parts[4] == () and parts[1][0].char == "猫"


# ------------------------------------------------------------------------------------ the pass


def test_forward_is_the_family_pass(toy):
    ids = [ID["Ġcat"], byte_id(ord("a")), ID["at"]]
    trace = S.forward(ids, toy)
    layers, logits = L.run_layers(np.array(ids), toy.weights)
    np.testing.assert_array_equal(trace.logits, logits)
    assert trace.ids == tuple(ids) and trace.labels == ("\u2423cat", "a", "at") and trace.n == 3
    assert trace.config is toy.config and trace.input is None and list(trace.kv_head_of) == [0, 0]
    stacked = trace.attentions
    assert stacked.shape == (LAYERS, H, 3, 3)
    for k, layer in enumerate(layers):
        np.testing.assert_array_equal(stacked[k], layer.weights)
    cache = trace.cache()
    assert [c.length for c in cache.layers] == [3, 3]
    np.testing.assert_array_equal(cache.layers[1].K, trace.layers[1].K)
    np.testing.assert_array_equal(cache.layers[0].V, trace.layers[0].V)
    assert S.forward(ids, toy, labels=["x", "y", "z"]).labels == ("x", "y", "z")


def test_run_text_generate_and_the_decode_steps(monkeypatch, toy):
    monkeypatch.setattr(S, "load_model", lambda: toy)
    trace = S.run_text(" cat cat")
    assert trace.ids == (ID["Ġcat"],) * 2 and trace.input.text == " cat cat"
    assert trace.labels == ("\u2423cat",) * 2 and trace.config is toy.config
    np.testing.assert_array_equal(trace.logits, S.forward(list(trace.ids), toy).logits)
    # cut inside 猫 (three byte tokens): the kept byte is labelled as encode read it, in the
    # context of the whole text (猫 1/3), not as a character still open (猀…猿 1/3)
    cut = S.run_text("a猫", max_tokens=2, truncate=True)
    assert cut.ids == (byte_id(ord("a")), byte_id(0xE7)) and cut.labels == ("a", "猫 1/3")
    with pytest.raises(S.DecoderInputError):
        S.run_text(" cat cat", max_tokens=1)
    assert S.run_text(" cat cat", max_tokens=1, truncate=True).ids == (ID["Ġcat"],)
    # greedy generation is the most probable token of the full pass, again and again
    _, steps = S.generate(" cat cat", 3)
    ids = list(trace.ids)
    for step in steps:
        want = int(np.argmax(S.forward(ids, toy).logits))
        assert step.token_id == want
        ids.append(want)
        np.testing.assert_allclose(step.logits, S.forward(ids, toy).logits, rtol=1e-5, atol=1e-4)
    # drawn with a seed: the same seed repeats the text
    a = [s.token_id for s in S.generate(" cat cat", 4, temperature=1.0, seed=3)[1]]
    b = [s.token_id for s in S.generate(" cat cat", 4, temperature=1.0, seed=3)[1]]
    assert a == b
    with pytest.raises(S.DecoderInputError, match=f"within {S.MAX_TOKENS} tokens"):
        S.generate(" cat cat", S.MAX_TOKENS - 1)
    assert len(S.generate(" cat cat", S.MAX_TOKENS - 2)[1]) == S.MAX_TOKENS - 2
    state = S.decode_step(S.start_state(trace), ID["at"])
    assert state.state.ids == (ID["Ġcat"], ID["Ġcat"], ID["at"])


def test_top_candidates_read_what_they_add(toy):
    logits = np.full(VOCAB, -4.0)
    logits[byte_id(0xAB)], logits[2], logits[ID["Ġcat"]] = 3.0, 2.0, 1.0
    context = [ID["Ġcat"], byte_id(0xE7), byte_id(0x8C)]
    got = S.top_candidates(logits, 3, context_ids=context, model=toy)
    z = np.exp(logits - logits.max())
    p = z / z.sum()
    assert [c.id for c in got] == [byte_id(0xAB), 2, ID["Ġcat"]]
    np.testing.assert_allclose([c.p for c in got], p[[byte_id(0xAB), 2, ID["Ġcat"]]], rtol=1e-12)
    assert [c.label for c in got] == ["猫 3/3", "<|im_end|>", "\u2423cat"]
    assert [c.special for c in got] == [None, "<|im_end|>", None]
    assert got[0].reading.completes == "猫" and got[1].reading is None and got[2].reading.text == "\u2423cat"
    # a special token in the context ends it: nothing is left to complete
    after_special = S.read_candidate([byte_id(0xE7), 1, byte_id(0x8C)], byte_id(0xAB), toy)
    assert after_special.completes is None
    assert S.candidate_label([byte_id(0xE7), 1], byte_id(0x8C), toy) == "\ufffd\u27e88C\u27e9"
    # a started character three tokens back: E7 8C, then the last byte
    assert S.read_candidate([byte_id(0xE7), byte_id(0x8C)], byte_id(0xAB), toy).completes == "猫"
    assert S.candidate_label([], 2, toy) == "<|im_end|>"


def test_is_available_with_the_file_and_both_libraries(monkeypatch, toy_file):
    monkeypatch.setattr(S, "model_path", lambda: toy_file)
    assert S.is_available() is True


def test_sampled_generation_is_one_generator_over_full_passes(monkeypatch, toy):
    """temperature 1, top_k 5, seed 3: each token drawn from the full pass's distribution with one
    np.random.default_rng(3) for the whole run (llama.next_token_probs and pick_token, themselves
    checked by hand in tests/models/test_llama.py)."""
    monkeypatch.setattr(S, "load_model", lambda: toy)
    _, steps = S.generate(" cat cat", 4, temperature=1.0, top_k=5, seed=3)
    rng = np.random.default_rng(3)
    ids = [ID["Ġcat"]] * 2
    for step in steps:
        probs = L.next_token_probs(S.forward(ids, toy).logits, 1.0, 5)
        want = L.pick_token(probs, rng)
        assert step.token_id == want
        ids.append(want)
    assert len(set(ids[2:])) > 1  # the draws are not all the most probable token
    # top_k's default keeps every token
    rng = np.random.default_rng(8)
    ids = [ID["Ġcat"]] * 2
    for step in S.generate(" cat cat", 4, temperature=1.0, seed=8)[1]:
        want = L.pick_token(L.next_token_probs(S.forward(ids, toy).logits, 1.0, 0), rng)
        assert step.token_id == want
        ids.append(want)
    greedy = [s.token_id for s in S.generate(" cat cat", 4)[1]]  # the default is greedy
    assert greedy != ids[2:]


def test_an_explicit_model_is_used_and_none_means_the_loaded_one(monkeypatch, toy):
    def no_loading():
        raise AssertionError("load_model was called")

    monkeypatch.setattr(S, "load_model", no_loading)
    context = [ID["Ġcat"], byte_id(0xE7), byte_id(0x8C)]
    logits = np.linspace(-1, 1, VOCAB)
    given = (
        S.encode(" cat", model=toy).labels,
        S.labels_for_ids([1, ID["Ġcat"]], toy),
        S.forward([ID["Ġcat"]], toy).labels,
        S.decode_step(S.start_state(S.forward([ID["Ġcat"]], toy)), ID["at"], toy).state.ids,
        S.read_candidate(context, byte_id(0xAB), toy).completes,
        S.candidate_label(context, byte_id(0xAB), toy),
        [(c.id, c.label, c.reading) for c in S.top_candidates(logits, 2, context, model=toy)],
    )
    monkeypatch.setattr(S, "load_model", lambda: toy)
    loaded = (
        S.encode(" cat").labels,
        S.labels_for_ids([1, ID["Ġcat"]]),
        S.forward([ID["Ġcat"]]).labels,
        S.decode_step(S.start_state(S.forward([ID["Ġcat"]])), ID["at"]).state.ids,
        S.read_candidate(context, byte_id(0xAB)).completes,
        S.candidate_label(context, byte_id(0xAB)),
        [(c.id, c.label, c.reading) for c in S.top_candidates(logits, 2, context)],
    )
    assert given == loaded and given[0] == ("\u2423cat",) and given[4] == "猫"


def test_top_candidates_pass_top_k_on(toy):
    logits = np.linspace(-1, 1, VOCAB)
    got = S.top_candidates(logits, 2, top_k=1, model=toy)
    assert got[0].id == VOCAB - 1 and got[0].p == 1.0 and got[1].p == 0.0


def test_decoder_limits_name_both_number_formats_of_the_file():
    """decoder.limits: the layer matrices are Q4_1, the embedding (also the output layer) Q8_0, ~21 %."""
    for lang, text in {lang: translate(lang, "decoder.limits") for lang in LANGUAGES}.items():
        assert "Q4_1" in text and "Q8_0" in text and "21 %" in text, lang
    pytest.importorskip("gguf", reason="optional: pip install -r requirements-model.txt")
    from attention_core.models import gguf_file, smollm2

    if not smollm2.is_available():
        pytest.skip("optional model missing")
    reader = gguf_file.open_reader(smollm2.model_path())
    params: collections.Counter[str] = collections.Counter()
    kinds = {}
    for name, tensor in gguf_file.tensor_names(reader).items():
        size = math.prod(gguf_file.tensor_shape(tensor))
        kinds[name] = gguf_file.quant_type_name(tensor)
        params[kinds[name]] += size
    assert kinds["token_embd.weight"] == "Q8_0" and "output.weight" not in kinds  # tied output layer
    matrices = {k for n, k in kinds.items() if n.startswith("blk.") and not n.endswith("norm.weight")}
    assert matrices == {"Q4_1"}
    share = params["Q8_0"] / sum(params.values())
    assert round(100 * share) == 21 and round(params["Q8_0"] / 1e6) == 28  # 49,152 × 576 = 28.3 M

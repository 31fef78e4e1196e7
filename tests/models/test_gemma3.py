"""Gemma 3's wrapper (attention_core/models/gemma3.py) on a tiny gemma3 GGUF file written here, no
pretrained weights (issue 28: mutation testing).

The file has Gemma 3's layout at toy sizes (6 layers, the sixth global, window 3; a SentencePiece
vocabulary of the 4 specials, the 256 byte tokens and five pieces). It is loaded through the
undecorated ``load_model`` (``__wrapped__``: the cached real model of other tests is never
touched) with ``model_path`` pointing at it and the expected config replaced by the toy one.
References: the family's pass (``llama.run_layers``, itself checked against a plain-Python pass in
tests/test_gemma_family.py), tokenisations worked out by hand from spm_bpe's rules, labels from
byte_bpe's rules, the softmax written here.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import math
from pathlib import Path

import numpy as np
import pytest

from attention_core.models import chunked_file
from attention_core.models import gemma3 as G
from attention_core.models import llama as L
from tests.tiny_gguf import add_q8_0, finish

gguf = pytest.importorskip("gguf", reason="optional: pip install -r requirements-model.txt")

D, H, HD, KV, FF, LAYERS, WINDOW = 32, 2, 16, 1, 8, 6, 3
PIECES = [("a", -1.0), ("b", -2.0), ("\u2581", -3.0), ("ab", -4.0), ("\u2581b", -5.0)]
TOKENS = ["<pad>", "<eos>", "<bos>", "<unk>", *[f"<0x{b:02X}>" for b in range(256)], *[p for p, _ in PIECES]]
TYPES = [3, 3, 3, 2, *[6] * 256, *[1] * len(PIECES)]
SCORES = [0.0] * 260 + [s for _, s in PIECES]
VOCAB = len(TOKENS)
ID = {t: i for i, t in enumerate(TOKENS)}


def byte_id(b: int) -> int:
    return 4 + b


def toy_config(**changes) -> L.LlamaConfig:
    numbers = dict(
        n_layers=LAYERS, d_model=D, n_heads=H, n_kv_heads=KV, head_dim=HD, d_ff=FF, vocab_size=VOCAB,
        global_rope_base=1000.0, rms_eps=float(np.float32(1e-6)), context_length=64, window=WINDOW,
    )  # fmt: skip
    return G.gemma3_config(**(numbers | changes))


def write_toy(path: Path, meta_changes=None, drop_keys=()) -> Path:
    rng = np.random.default_rng(11)
    w = gguf.GGUFWriter(str(path), "gemma3")
    meta = {
        "gemma3.block_count": LAYERS, "gemma3.embedding_length": D, "gemma3.attention.head_count": H,
        "gemma3.attention.head_count_kv": KV, "gemma3.attention.key_length": HD,
        "gemma3.attention.value_length": HD, "gemma3.feed_forward_length": FF, "gemma3.context_length": 64,
        "gemma3.attention.sliding_window": WINDOW, "tokenizer.ggml.bos_token_id": 2,
        "tokenizer.ggml.eos_token_id": 1,
    }  # fmt: skip
    meta |= meta_changes or {}
    for key, value in meta.items():
        if key in drop_keys:
            continue
        if isinstance(value, bool):
            w.add_bool(key, value)
        elif isinstance(value, str):
            w.add_string(key, value)
        else:
            w.add_uint32(key, value)
    w.add_float32("gemma3.rope.freq_base", 1000.0)
    w.add_float32("gemma3.attention.layer_norm_rms_epsilon", 1e-6)
    w.add_string("tokenizer.ggml.model", (meta_changes or {}).get("model", "llama"))
    w.add_bool("tokenizer.ggml.add_space_prefix", (meta_changes or {}).get("space_prefix", False))
    w.add_bool("tokenizer.ggml.add_bos_token", (meta_changes or {}).get("add_bos", True))
    w.add_array("tokenizer.ggml.tokens", TOKENS)
    w.add_array("tokenizer.ggml.scores", SCORES)
    w.add_array("tokenizer.ggml.token_type", TYPES)

    def m(*shape):
        return (rng.standard_normal(shape) / math.sqrt(shape[-1])).astype(np.float32)

    def gain(k):
        return (1 + 0.2 * rng.standard_normal(k)).astype(np.float32)

    for i in range(LAYERS):
        for name, array in {
            "attn_norm": gain(D), "attn_q": m(H * HD, D), "attn_k": m(KV * HD, D), "attn_v": m(KV * HD, D),
            "attn_output": m(D, H * HD), "ffn_norm": gain(D), "ffn_gate": m(FF, D), "ffn_up": m(FF, D),
            "ffn_down": m(D, FF), "attn_q_norm": gain(HD), "attn_k_norm": gain(HD),
            "post_attention_norm": gain(D), "post_ffw_norm": gain(D),
        }.items():  # fmt: skip
            w.add_tensor(f"blk.{i}.{name}.weight", array)
    w.add_tensor("output_norm.weight", gain(D))
    codes = np.stack([rng.integers(-100, 100, D, dtype=np.int8) for _ in range(VOCAB)])  # one block per row
    add_q8_0(w, "token_embd.weight", codes, np.array([[0.01 * (1 + t % 7)] for t in range(VOCAB)]))
    finish(w)
    return path


def load_toy(monkeypatch, path: Path, expected=None) -> G.Gemma3:
    monkeypatch.setattr(G, "model_path", lambda: path)
    monkeypatch.setattr(G, "GEMMA3_270M", toy_config() if expected is None else expected)
    monkeypatch.setattr(G, "load_tokenizer", G.load_tokenizer.__wrapped__)  # the real one stays cached
    return G.load_model.__wrapped__()


@pytest.fixture(scope="module")
def toy_file(tmp_path_factory) -> Path:
    return write_toy(tmp_path_factory.mktemp("gemma3") / "toy.gguf")


@pytest.fixture
def toy(monkeypatch, toy_file) -> G.Gemma3:
    return load_toy(monkeypatch, toy_file)


# ------------------------------------------------------------------------------------ the config


def test_layer_windows_one_global_in_six():
    assert G.gemma3_layer_windows(7, 4) == (4, 4, 4, 4, 4, None, 4)
    assert G.gemma3_layer_windows(12, 2)[11] is None and G.gemma3_layer_windows(12, 2)[10] == 2


def test_config_from_the_toy_metadata(toy_file):
    meta = G.gguf_file.read_metadata(G.gguf_file.open_reader(toy_file))
    c = G.config_from_metadata(meta)
    assert c == toy_config()
    assert (c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.head_dim, c.d_ff) == (LAYERS, D, H, KV, HD, FF)
    assert c.vocab_size == VOCAB and c.context_length == 64 and c.rms_eps == float(np.float32(1e-6))
    assert c.layer_windows == (3, 3, 3, 3, 3, None)
    assert c.layer_rope_bases == (10_000.0,) * 5 + (1000.0,) and c.divisor == 16.0
    assert c.embed_scale == math.sqrt(D) and c.qk_norm and c.post_norms and c.ffn_gate == "gelu_tanh"
    assert c.rope_layout == "half" and c.rope_base == 1000.0
    with pytest.raises(ValueError, match="expected a gemma3 file, the file says 'llama'"):
        G.config_from_metadata(meta | {"general.architecture": "llama"})
    with pytest.raises(ValueError, match="key_length = value_length"):
        G.config_from_metadata(meta | {"gemma3.attention.value_length": 8})
    with pytest.raises(ValueError, match="gemma3.attention.sliding_window"):
        G.config_from_metadata({k: v for k, v in meta.items() if k != "gemma3.attention.sliding_window"})


def test_keep_for():
    assert G.keep_for(128) == "all" and G.keep_for(129) == "weights"
    assert G.keep_for(5, "weights") == "weights" and G.keep_for(500, "all") == "all"
    with pytest.raises(ValueError, match="keep must be one of"):
        G.keep_for(5, "some")


# ------------------------------------------------------------------------------------ the load


def test_the_toy_model_loads(toy):
    assert toy.config == toy_config() and toy.bos_id == 2 and toy.eos_id == 1
    assert toy.vocab == tuple(TOKENS) and toy.token_types == bytes(TYPES)
    assert toy.missing_bytes == frozenset()
    assert len(toy.token_bytes) == VOCAB
    assert toy.token_bytes[2] is None and toy.token_bytes[ID["\u2581b"]] == b" b"
    assert toy.token_bytes[byte_id(0xE7)] == b"\xe7"
    assert toy.token_bytes[byte_id(0x41) : byte_id(0x43)] == [b"A", b"B"]
    assert len(toy.weights.layers) == LAYERS and toy.weights.layers[0].q_norm.shape == (HD,)


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(model="gpt2"), "SentencePiece BPE without a space prefix"),
        (dict(space_prefix=True), "SentencePiece BPE without a space prefix"),
        ({"tokenizer.ggml.bos_token_id": 3}, "BOS token"),
        (dict(add_bos=False), "BOS token"),
    ],
)
def test_a_file_the_wrapper_does_not_take(monkeypatch, tmp_path, changes, message):
    path = write_toy(tmp_path / "bad.gguf", meta_changes=changes)
    with pytest.raises(ValueError, match=message):
        load_toy(monkeypatch, path)


def test_another_model_is_refused(monkeypatch, toy_file):
    with pytest.raises(ValueError, match="is not the expected Gemma 3 270M"):
        load_toy(monkeypatch, toy_file, expected=toy_config(window=4))


def test_missing_ids_take_the_defaults(monkeypatch, tmp_path):
    path = write_toy(
        tmp_path / "d.gguf", drop_keys=("tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id")
    )
    model = load_toy(monkeypatch, path)
    assert model.bos_id == 2 and model.eos_id == 1


# ------------------------------------------------------------------------------------ text in


def test_encode_by_hand(toy):
    # "ab b" -> a b ▁ b; the best-scored pair is ab (-4, over ▁b at -5), then ▁b: [ab, ▁b]
    enc = G.encode("ab b", model=toy)
    assert enc.ids == (2, ID["ab"], ID["\u2581b"]) and enc.labels == ("<bos>", "ab", "\u2423b")
    assert enc.total_tokens == 3 and enc.n == 3 and not enc.truncated and enc.chars_cut == 0
    assert enc.max_tokens == 3 and enc.text == "ab b"
    assert enc.parts[0] == () and [p.char for p in enc.parts[1]] == ["a", "b"]
    assert [p.char for p in enc.parts[2]] == [" ", "b"]
    assert G.encode("", model=toy).ids == (2,)  # BOS alone
    cut = G.encode("ab b", max_tokens=2, truncate=True, model=toy)
    assert cut.ids == (2, ID["ab"]) and cut.total_tokens == 3 and cut.truncated and cut.max_tokens == 2
    with pytest.raises(G.DecoderInputError, match="3 tokens long .* at most 2"):
        G.encode("ab b", max_tokens=2, model=toy)
    assert G.encode("ab b", max_tokens=3, model=toy).ids == enc.ids
    for bad in (1, G.MAX_TOKENS + 1):
        with pytest.raises(ValueError, match="max_tokens must be between 2 and"):
            G.encode("a", max_tokens=bad, model=toy)
    assert G.encode("ab", max_tokens=G.MAX_TOKENS, model=toy).n == 2
    with pytest.raises(G.DecoderInputError, match="string"):
        G.encode(b"ab", model=toy)
    with pytest.raises(G.DecoderInputError, match="surrogate"):
        G.encode("a\ud800", model=toy)


def test_encode_cuts_overlong_text_only_when_asked(toy):
    text = "b" * (G.MAX_INPUT_CHARS + 2)
    with pytest.raises(G.DecoderInputError, match=f"{G.MAX_INPUT_CHARS + 2} characters long"):
        G.encode(text, model=toy)
    cut = G.encode(text, max_tokens=4, truncate=True, model=toy)
    assert cut.chars_cut == 2 and cut.truncated and cut.ids == (2, ID["b"], ID["b"], ID["b"])
    assert cut.total_tokens == 1 + G.MAX_INPUT_CHARS and len(cut.text) == G.MAX_INPUT_CHARS
    # a cut text alone makes a trace truncated, whatever the tokens
    exact = G.DecoderInput("b", (2, 5), ("<bos>", "b"), ((), ()), 2, 2, chars_cut=1)
    assert exact.truncated


def test_token_labels_of_a_character_in_three_byte_tokens(toy):
    ids = [2, byte_id(0xE7), byte_id(0x8C), byte_id(0xAB), ID["\u2581b"]]
    assert G.token_labels(ids, toy) == ("<bos>", "猫 1/3", "猫 2/3", "猫 3/3", "\u2423b")
    assert G.candidate_label([2, byte_id(0xE7), byte_id(0x8C)], byte_id(0xAB), toy) == "猫 3/3"
    assert G.candidate_label([2], 2, toy) == "<bos>"


# ------------------------------------------------------------------------------------ the pass


def test_forward_is_the_family_pass(toy):
    ids = [2, ID["ab"], ID["\u2581b"], ID["a"], byte_id(0x41)]
    trace = G.forward(ids, toy)
    layers, logits = L.run_layers(np.array(ids), toy.weights)
    np.testing.assert_array_equal(trace.logits, logits)
    assert trace.ids == tuple(ids) and trace.keep == "all" and trace.config is toy.config and trace.n == 5
    assert trace.labels == ("<bos>", "ab", "\u2423b", "a", "A") and trace.input is None
    assert list(trace.kv_head_of) == [0, 0]
    for a, b in zip(trace.layers, layers, strict=True):
        np.testing.assert_array_equal(a.weights, b.weights)
    assert G.forward(ids, toy, labels=["x"] * 5).labels == ("x",) * 5
    slim = G.forward(ids, toy, keep="weights")
    assert slim.keep == "weights" and slim.layers[0].Q is None
    np.testing.assert_array_equal(slim.logits, logits)
    with pytest.raises(G.DecoderInputError):
        G.forward([2] * (G.MAX_TOKENS + 1), toy)
    # the bytes held: every distinct array once (the local layers share one mask) plus the logits
    seen = {id(v): v.nbytes for t in trace.layers for v in vars(t).values() if isinstance(v, np.ndarray)}
    assert trace.nbytes == sum(seen.values()) + trace.logits.nbytes
    every = sum(v.nbytes for t in trace.layers for v in vars(t).values() if isinstance(v, np.ndarray))
    assert trace.nbytes < every + trace.logits.nbytes  # the shared mask counted once, not five times


def test_the_cache_of_a_trace_keeps_each_window(toy):
    ids = [2, ID["a"], ID["b"], ID["a"], ID["b"]]
    trace = G.forward(ids, toy)
    cache = trace.cache()
    assert [layer.length for layer in cache.layers] == [WINDOW] * 5 + [5]
    assert [layer.start for layer in cache.layers] == [2] * 5 + [0]
    np.testing.assert_array_equal(cache.layers[0].K, trace.layers[0].K[:, 2:])
    np.testing.assert_array_equal(cache.layers[5].V, trace.layers[5].V)


def test_run_text_and_the_decode_steps(monkeypatch, toy):
    monkeypatch.setattr(G, "load_model", lambda: toy)
    trace = G.run_text("ab b")
    assert trace.ids == (2, ID["ab"], ID["\u2581b"]) and trace.input.text == "ab b"
    assert trace.labels == trace.input.labels and trace.keep == "all"
    np.testing.assert_array_equal(trace.logits, G.forward(list(trace.ids), toy).logits)
    assert len(trace.layers) == LAYERS and trace.config is toy.config
    assert G.run_text("ab b", keep="weights").keep == "weights"
    with pytest.raises(G.DecoderInputError):
        G.run_text("ab b", max_tokens=2)
    assert G.run_text("ab b", max_tokens=2, truncate=True).ids == (2, ID["ab"])
    state = G.start_state(trace)
    for token in (ID["a"], byte_id(0x20), ID["b"]):
        state = G.decode_step(state, token).state
    full = G.forward(list(state.ids), toy)
    np.testing.assert_allclose(state.logits, full.logits, atol=1e-5)
    assert G.decode_step(state, ID["a"], toy).state.n == 7


def test_top_candidates_by_hand(toy):
    logits = np.full(VOCAB, -5.0)
    logits[ID["ab"]], logits[byte_id(0xAB)], logits[2] = 3.0, 2.0, 1.0
    got = G.top_candidates(logits, 3, context_ids=[2, byte_id(0xE7), byte_id(0x8C)], model=toy)
    z = np.exp(logits - logits.max())
    p = z / z.sum()
    assert [c.id for c in got] == [ID["ab"], byte_id(0xAB), 2]
    assert [c.label for c in got] == ["ab", "猫 3/3", "<bos>"]
    np.testing.assert_allclose([c.p for c in got], [p[ID["ab"]], p[byte_id(0xAB)], p[2]], rtol=1e-12)
    cold = G.top_candidates(logits, 2, temperature=0.5, top_k=2, model=toy)
    e = np.exp(np.array([3.0, 2.0]) / 0.5)
    np.testing.assert_allclose([c.p for c in cold], e / e.sum(), rtol=1e-12)


# ------------------------------------------------------------------------------------ the packages


class FakeDist:
    def __init__(self, name: str, root: Path, files: dict[str, bytes] | None):
        self.metadata = {"Name": name}
        self._root = root
        self.files = None if files is None else [Path(n) for n in files]
        for n, data in (files or {}).items():
            (root / n).parent.mkdir(parents=True, exist_ok=True)
            (root / n).write_bytes(data)

    def locate_file(self, f):
        return self._root / f


def fake_packages(monkeypatch, tmp_path, data: bytes, sums: str | None = None, drop=()):
    chunks = [data[:3], data[3:7], data[7:8], data[8:]]
    dists = {}
    sha = hashlib.sha256(data).hexdigest()
    main = {
        "gemma3/SHA256SUMS": (sums if sums is not None else f"{sha.upper()} *{G.MODEL_FILE}\n").encode(),
        "gemma3/GEMMA_TERMS.html": b"<html>terms</html>",
    }
    dists[G.MODEL_DISTRIBUTION] = FakeDist(G.MODEL_DISTRIBUTION, tmp_path / "main", main)
    for i, d in enumerate(G.CHUNK_DISTRIBUTIONS):
        dists[d] = FakeDist(d, tmp_path / d, {f"c/{G.MODEL_FILE}.part{i:02d}": chunks[i], "c/README": b"x"})

    def distribution(name):
        if name in drop or name not in dists:
            raise importlib.metadata.PackageNotFoundError(name)
        return dists[name]

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    monkeypatch.setenv(chunked_file.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(G, "MODEL_SIZE", len(data))
    return sha


def test_the_file_is_found_and_assembled_from_the_packages(monkeypatch, tmp_path):
    data = bytes(range(40))
    sha = fake_packages(monkeypatch, tmp_path, data)
    assert G.expected_sha256() == sha  # the listed digest, lower-cased
    assert [p.name for p in G.chunk_paths()] == [f"{G.MODEL_FILE}.part{i:02d}" for i in range(4)]
    assert G.terms_path().read_bytes() == b"<html>terms</html>"
    assert G.assembled_path() == tmp_path / "cache" / f"{sha[:16]}-{G.MODEL_FILE}"
    path = G.model_path.__wrapped__()
    assert path == G.assembled_path() and path.read_bytes() == data


def test_the_sums_file_must_list_the_model(monkeypatch, tmp_path):
    fake_packages(
        monkeypatch, tmp_path, b"0123456789", sums="ab *other.gguf\n  cd  gemma-3-270m-q4_k_m.gguf.bak\n"
    )
    with pytest.raises(G.DecoderUnavailable, match="SHA256SUMS does not list"):
        G.expected_sha256()


def test_a_wrong_digest_says_how_to_fix_it(monkeypatch, tmp_path):
    fake_packages(monkeypatch, tmp_path, b"0123456789", sums=f"{'0' * 64}  {G.MODEL_FILE}\n")
    with pytest.raises(
        G.DecoderUnavailable, match=f"could not be assembled in .*cache.*{chunked_file.CACHE_ENV}"
    ):
        G.model_path.__wrapped__()


def test_a_missing_package_is_named(monkeypatch, tmp_path):
    fake_packages(monkeypatch, tmp_path, b"0123456789", drop=(G.CHUNK_DISTRIBUTIONS[2],))
    with pytest.raises(
        G.DecoderUnavailable, match=f"The package {G.CHUNK_DISTRIBUTIONS[2]} is not installed"
    ):
        G.chunk_paths()
    with pytest.raises(G.DecoderUnavailable, match="Install Gemma 3 270M with: pip install"):
        G.chunk_paths()


def test_a_package_without_the_file_is_named(monkeypatch, tmp_path):
    fake_packages(monkeypatch, tmp_path, b"0123456789")
    empty = FakeDist("gemma3-empty", tmp_path / "e", None)
    with pytest.raises(G.DecoderUnavailable, match="gemma3-empty is installed but has no SHA256SUMS"):
        G._file_in(empty, "SHA256SUMS")
    listed_not_there = FakeDist("gemma3-gone", tmp_path / "g", {"x/SHA256SUMS": b""})
    (tmp_path / "g" / "x" / "SHA256SUMS").unlink()
    with pytest.raises(G.DecoderUnavailable, match="has no SHA256SUMS"):
        G._file_in(listed_not_there, "SHA256SUMS")


def test_is_available_without_a_package(monkeypatch, tmp_path):
    fake_packages(monkeypatch, tmp_path, b"0123456789", drop=(G.MODEL_DISTRIBUTION,))
    monkeypatch.setattr(G, "model_path", G.model_path.__wrapped__)
    assert G.is_available() is False
    fake_packages(monkeypatch, tmp_path, b"0123456789")
    assert G.is_available() is True


def test_without_the_reader_libraries(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda m: None if m == "gguf" else real(m))
    assert G.is_available() is False
    for load in (G.load_model.__wrapped__, G.load_tokenizer.__wrapped__):
        with pytest.raises(G.DecoderUnavailable, match="'gguf' is not installed"):
            load()
    # the tokenizer is plain Python: without `tokenizers` Gemma still loads
    monkeypatch.setattr(importlib.util, "find_spec", lambda m: None if m == "tokenizers" else real(m))
    assert G.is_available() is True


def test_the_sums_file_in_sha256sums_format(monkeypatch, tmp_path):
    """sha256sum writes "digest  name" (two spaces; a * before the name in binary mode)."""
    data = b"0123456789"
    sha = hashlib.sha256(data).hexdigest()
    fake_packages(monkeypatch, tmp_path, data, sums=f"{'1' * 64}  other.gguf\n{sha}  {G.MODEL_FILE}\n")
    assert G.expected_sha256() == sha


def test_an_explicit_model_is_used_and_none_means_the_loaded_one(monkeypatch, toy):
    """With ``model`` given nothing is loaded; without it the (cached) loaded model is used."""

    def no_loading():
        raise AssertionError("load_model was called")

    monkeypatch.setattr(G, "load_model", no_loading)
    context = [2, byte_id(0xE7), byte_id(0x8C)]
    logits = np.linspace(-1, 1, VOCAB)
    given = (
        G.encode("ab b", model=toy).ids,
        G.token_labels([2, ID["ab"]], toy),
        G.forward([2, ID["ab"]], toy).labels,
        G.decode_step(G.start_state(G.forward([2, ID["ab"]], toy)), ID["a"], toy).state.ids,
        G.candidate_label(context, byte_id(0xAB), toy),
        [(c.id, c.label) for c in G.top_candidates(logits, 2, context, model=toy)],
    )
    monkeypatch.setattr(G, "load_model", lambda: toy)
    loaded = (
        G.encode("ab b").ids,
        G.token_labels([2, ID["ab"]]),
        G.forward([2, ID["ab"]]).labels,
        G.decode_step(G.start_state(G.forward([2, ID["ab"]])), ID["a"]).state.ids,
        G.candidate_label(context, byte_id(0xAB)),
        [(c.id, c.label) for c in G.top_candidates(logits, 2, context)],
    )
    assert given == loaded
    assert given[1] == ("<bos>", "ab") and given[2] == ("<bos>", "ab") and given[4] == "猫 3/3"


def test_release_freed_heap_asks_glibc_on_linux_only(monkeypatch):
    import ctypes
    import sys

    calls = []

    class FakeLibc:
        def malloc_trim(self, pad):
            calls.append(pad)

    def fake_cdll(name):
        calls.append(name)
        return FakeLibc()

    monkeypatch.setattr(ctypes, "CDLL", fake_cdll)
    monkeypatch.setattr(sys, "platform", "linux")
    G.release_freed_heap()
    assert calls == ["libc.so.6", 0]  # trim everything: no padding kept
    calls.clear()
    monkeypatch.setattr(sys, "platform", "darwin")
    G.release_freed_heap()
    assert calls == []

    def no_glibc(name):
        raise OSError("not found")

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", no_glibc)
    assert G.release_freed_heap() is None  # musl and others: nothing to trim, no error

"""Fast checks of attention_core/models/ without the pretrained weights (issue 28: mutation testing).

- gguf_file and llama.weights_from_gguf on a tiny GGUF file written here with the ``gguf`` package's
  own writer; the 8-bit blocks are built byte by byte from the format's definition (a float16 scale,
  then 32 signed bytes), so the expected numbers are ``code · scale`` worked out here, and the
  metadata is compared with what was written and with the stock ``gguf.GGUFReader``;
- byte_bpe.build_tokenizer on a hand-made vocabulary of the 256 byte stand-ins plus four merges,
  with the tokenisations worked out by hand;
- llama's experiment entry points (run_from, attention_layer) against run_layers and the reference.
"""

from __future__ import annotations

import dataclasses
import math
import struct
from pathlib import Path

import numpy as np
import pytest

from attention_core.models import decoding as D
from attention_core.models import gemma3 as G
from attention_core.models import llama as L
from tests.test_gemma_family import IDS, WINDOW, naive_gemma_logits, tiny_gemma
from tests.tiny_gguf import add_q8_0, finish

gguf = pytest.importorskip("gguf", reason="optional: pip install -r requirements-model.txt")
from attention_core.models import gguf_file as F  # noqa: E402

# ------------------------------------------------------------------------------------ a tiny GGUF file

D_MODEL, N_HEADS, HEAD_DIM, N_KV, D_FF, VOCAB, N_LAYERS = 64, 2, 32, 1, 8, 3, 2
TOKENS = ["<s>", "猫", "▁cat"]
SCORES = [0.0, -1.5, -2.25]
TYPES = [3, 1, 1]


# codes and scales chosen so every product is exact: row t, column c -> (c % 23) - 11 + t
EMBED_CODES = np.array([[(c % 23) - 11 + t for c in range(D_MODEL)] for t in range(VOCAB)], dtype=np.int8)
EMBED_SCALES = np.array([[0.5, 0.25], [2.0, -1.0], [0.125, 4.0]], dtype=np.float16)


def layer_arrays(i: int, gemma: bool) -> dict[str, np.ndarray]:
    """Layer ``i``'s matrices, filled with numbers that name the tensor (so a mix-up shows)."""
    q, kv = N_HEADS * HEAD_DIM, N_KV * HEAD_DIM

    def m(tag: float, *shape):
        return (tag + np.arange(math.prod(shape), dtype=np.float32).reshape(shape) / 1024).astype(np.float32)

    arrays = {
        "attn_norm": m(1 + 10 * i, D_MODEL), "attn_q": m(2 + 10 * i, q, D_MODEL),
        "attn_k": m(3 + 10 * i, kv, D_MODEL), "attn_v": m(4 + 10 * i, kv, D_MODEL),
        "attn_output": m(5 + 10 * i, D_MODEL, q), "ffn_norm": m(6 + 10 * i, D_MODEL),
        "ffn_gate": m(7 + 10 * i, D_FF, D_MODEL), "ffn_up": m(8 + 10 * i, D_FF, D_MODEL),
        "ffn_down": m(9 + 10 * i, D_MODEL, D_FF),
    }  # fmt: skip
    if gemma:
        arrays |= {
            "attn_q_norm": m(100 + i, HEAD_DIM), "attn_k_norm": m(200 + i, HEAD_DIM),
            "post_attention_norm": m(300 + i, D_MODEL), "post_ffw_norm": m(400 + i, D_MODEL),
        }  # fmt: skip
    return arrays


def write_gguf(
    path: Path, gemma: bool = False, drop=(), replace=None, extra=None, embd_f32=False, big_endian=False
) -> Path:
    """A two-layer Llama (or, with ``gemma``, Llama plus Gemma's four norms) as a GGUF file."""
    endian = gguf.GGUFEndian.BIG if big_endian else gguf.GGUFEndian.LITTLE
    w = gguf.GGUFWriter(str(path), "llama", endianess=endian)
    w.add_uint32("llama.block_count", N_LAYERS)
    w.add_uint32("llama.embedding_length", D_MODEL)
    w.add_uint32("llama.attention.head_count", N_HEADS)
    w.add_uint32("llama.attention.head_count_kv", N_KV)
    w.add_uint32("llama.feed_forward_length", D_FF)
    w.add_uint32("llama.context_length", 16)
    w.add_float32("llama.rope.freq_base", 500.0)
    w.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
    w.add_string("general.name", "tiny 猫")
    w.add_array("tokenizer.ggml.tokens", TOKENS)
    w.add_array("tokenizer.ggml.scores", SCORES)
    w.add_array("tokenizer.ggml.token_type", TYPES)
    w.add_array("tokenizer.ggml.merges", ["▁ c", "c at"])
    w.add_array("test.nested", [[1, 2], [3, 4, 5]])  # an array of arrays: the reader's own way
    tensors = {f"blk.{i}.{k}.weight": v for i in range(N_LAYERS) for k, v in layer_arrays(i, gemma).items()}
    tensors["output_norm.weight"] = np.full(D_MODEL, 0.75, np.float32)
    tensors["test.half"] = np.array([0.5, -2.0, 1.5], np.float16)  # a float16 tensor
    tensors |= replace or {}
    tensors |= extra or {}
    for name, array in tensors.items():
        if name not in drop:
            w.add_tensor(name, array)
    if "token_embd.weight" not in drop:
        if embd_f32:
            w.add_tensor("token_embd.weight", np.ones((VOCAB, D_MODEL), np.float32))
        else:
            add_q8_0(w, "token_embd.weight", EMBED_CODES, EMBED_SCALES)
    finish(w)
    return path


@pytest.fixture(scope="module")
def tiny_file(tmp_path_factory) -> Path:
    return write_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf")


def test_metadata_is_what_was_written_and_what_the_stock_reader_reads(tiny_file):
    meta = F.read_metadata(F.open_reader(tiny_file))
    assert meta["tokenizer.ggml.tokens"] == TOKENS
    assert meta["tokenizer.ggml.scores"] == SCORES
    assert meta["tokenizer.ggml.token_type"] == TYPES
    assert meta["tokenizer.ggml.merges"] == ["▁ c", "c at"]
    assert meta["general.name"] == "tiny 猫" and meta["general.architecture"] == "llama"
    assert meta["llama.block_count"] == N_LAYERS and meta["llama.rope.freq_base"] == 500.0
    stock = gguf.GGUFReader(str(tiny_file), "r")
    assert set(meta) == set(stock.fields)
    for name, field in stock.fields.items():
        assert meta[name] == field.contents(), name
    # the string arrays are plain lists (a caller may change them without touching the reader)
    assert type(meta["tokenizer.ggml.tokens"]) is list
    skipped = F.read_metadata(F.open_reader(tiny_file), skip=("tokenizer.ggml.tokens", "general.name"))
    assert set(meta) - set(skipped) == {"tokenizer.ggml.tokens", "general.name"}
    assert skipped["tokenizer.ggml.merges"] == ["▁ c", "c at"]


def test_the_reader_keeps_a_plain_array_over_the_file(tiny_file):
    reader = F.open_reader(tiny_file)
    assert type(reader.data) is np.ndarray
    assert bytes(reader.data[:4]) == b"GGUF" and reader.data.size == tiny_file.stat().st_size
    assert not reader.data.flags.writeable  # opened read-only


def test_read_strings_by_the_format():
    # two GGUF strings: a little-endian uint64 length, then the UTF-8 bytes
    blob = b"xx" + struct.pack("<Q", 3) + "猫".encode() + struct.pack("<Q", 2) + b"ab" + b"tail"
    strings, end = F._read_strings(np.frombuffer(blob, np.uint8), 2, 2)
    assert strings == ["猫", "ab"] and end == 2 + 8 + 3 + 8 + 2


def test_tensor_shapes_are_numpy_order_and_dequantized_copies(tiny_file):
    tensors = F.tensor_names(F.open_reader(tiny_file))
    assert set(tensors) >= {"blk.1.attn_q.weight", "token_embd.weight", "output_norm.weight"}
    q = tensors["blk.0.attn_q.weight"]
    assert list(q.shape) == [D_MODEL, N_HEADS * HEAD_DIM]  # GGUF lists the fastest dimension first
    assert F.tensor_shape(q) == (N_HEADS * HEAD_DIM, D_MODEL)
    assert F.quant_type_name(q) == "F32"
    values = F.dequantize(q)
    np.testing.assert_array_equal(values, layer_arrays(0, False)["attn_q"])
    assert values.dtype == np.float32 and values.flags.c_contiguous and values.flags.writeable
    assert not np.shares_memory(values, q.data)
    embd = tensors["token_embd.weight"]
    assert F.quant_type_name(embd) == "Q8_0" and F.tensor_shape(embd) == (VOCAB, D_MODEL)
    by_hand = EMBED_CODES.astype(np.float32) * np.repeat(EMBED_SCALES.astype(np.float32), 32, axis=1)
    np.testing.assert_array_equal(F.dequantize(embd), by_hand)


def test_q8_0_blocks_are_the_codes_and_scales_written(tiny_file):
    tensors = F.tensor_names(F.open_reader(tiny_file))
    codes, scales = F.q8_0_blocks(tensors["token_embd.weight"])
    np.testing.assert_array_equal(codes, EMBED_CODES)
    np.testing.assert_array_equal(scales, EMBED_SCALES.astype(np.float32))
    assert codes.dtype == np.int8 and scales.dtype == np.float32 and scales.shape == (VOCAB, 2)
    assert codes.flags.writeable and scales.flags.writeable  # copies, not views of the map
    with pytest.raises(ValueError, match="blk.0.attn_q.weight is F32, not Q8_0"):
        F.q8_0_blocks(tensors["blk.0.attn_q.weight"])


def test_metadata_int():
    assert F.metadata_int({"a": np.uint32(7)}, "a") == 7 and type(F.metadata_int({"a": 7.0}, "a")) is int
    with pytest.raises(ValueError, match="'llama.block_count'"):
        F.metadata_int({}, "llama.block_count")


def test_config_and_weights_from_the_tiny_file(tiny_file):
    reader = F.open_reader(tiny_file)
    config = L.LlamaConfig.from_metadata(F.read_metadata(reader))
    got = (config.n_layers, config.d_model, config.n_heads, config.n_kv_heads, config.head_dim, config.d_ff)
    assert got == (N_LAYERS, D_MODEL, N_HEADS, N_KV, HEAD_DIM, D_FF) and config.vocab_size == VOCAB
    assert config.rope_base == 500.0 and config.rms_eps == float(np.float32(1e-5))
    w = L.weights_from_gguf(reader, config)
    assert len(w.layers) == N_LAYERS and w.config is config
    fields = {"attn_norm": "attn_norm", "W_Q": "attn_q", "W_K": "attn_k", "W_V": "attn_v",
              "W_O": "attn_output", "ffn_norm": "ffn_norm", "W_gate": "ffn_gate", "W_up": "ffn_up",
              "W_down": "ffn_down"}  # fmt: skip
    for i, layer in enumerate(w.layers):
        assert type(layer) is L.LlamaLayerWeights
        expected = layer_arrays(i, False)
        for field, name in fields.items():
            value = getattr(layer, field)
            np.testing.assert_array_equal(value, expected[name])
            assert not value.flags.writeable and value.flags.c_contiguous
    np.testing.assert_array_equal(w.output_norm, np.full(D_MODEL, 0.75, np.float32))
    assert isinstance(w.embedding, L.Embedding8bit)
    np.testing.assert_array_equal(w.embedding.codes, EMBED_CODES)
    np.testing.assert_array_equal(w.embedding.scales, EMBED_SCALES.astype(np.float32))
    assert not w.embedding.codes.flags.writeable and not w.embedding.scales.flags.writeable
    # the embedding rows as the file defines them: code · scale of its block
    rows = w.embedding.rows(np.array([2, 0]))
    assert rows[0, 5] == ((5 % 23) - 11 + 2) * 0.125 and rows[0, 40] == ((40 % 23) - 11 + 2) * 4.0
    assert rows[1, 33] == ((33 % 23) - 11) * 0.25


def test_gemma_norms_from_the_file(tmp_path):
    reader = F.open_reader(write_gguf(tmp_path / "g.gguf", gemma=True))
    base = L.LlamaConfig.from_metadata(F.read_metadata(reader))
    w = L.weights_from_gguf(reader, dataclasses.replace(base, qk_norm=True, post_norms=True))
    for i, layer in enumerate(w.layers):
        assert type(layer) is L.GemmaLayerWeights
        expected = layer_arrays(i, True)
        np.testing.assert_array_equal(layer.q_norm, expected["attn_q_norm"])
        np.testing.assert_array_equal(layer.k_norm, expected["attn_k_norm"])
        np.testing.assert_array_equal(layer.post_attn_norm, expected["post_attention_norm"])
        np.testing.assert_array_equal(layer.post_ffn_norm, expected["post_ffw_norm"])
    only_qk = L.weights_from_gguf(reader, dataclasses.replace(base, qk_norm=True))
    assert only_qk.layers[0].post_attn_norm is None and only_qk.layers[0].q_norm is not None
    only_post = L.weights_from_gguf(reader, dataclasses.replace(base, post_norms=True))
    assert only_post.layers[1].k_norm is None and only_post.layers[1].post_ffn_norm is not None
    # the same file read as plain Llama ignores the extra norms
    assert type(L.weights_from_gguf(reader, base).layers[0]) is L.LlamaLayerWeights
    # bytes: every array held, the None norms not counted
    n_float = N_LAYERS * sum(a.size for a in layer_arrays(0, False).values()) + D_MODEL
    assert L.weights_from_gguf(reader, base).nbytes == 4 * n_float + VOCAB * D_MODEL + 4 * VOCAB * 2
    assert only_qk.nbytes == L.weights_from_gguf(reader, base).nbytes + N_LAYERS * 2 * HEAD_DIM * 4


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(drop=("blk.1.ffn_down.weight",)), "lacks the tensor 'blk.1.ffn_down.weight'"),
        (dict(drop=("output_norm.weight",)), "lacks the tensor 'output_norm.weight'"),
        (dict(replace={"blk.0.attn_k.weight": np.zeros((D_MODEL, HEAD_DIM), np.float32)}),
         r"blk.0.attn_k.weight has shape \(64, 32\), expected \(32, 64\)"),
        (dict(extra={"output.weight": np.zeros((VOCAB, D_MODEL), np.float32)}), "separate output matrix"),
        (dict(drop=("token_embd.weight",)), "lacks a token_embd.weight"),
        (dict(embd_f32=True), "token_embd.weight is F32; only Q8_0"),
    ],
)  # fmt: skip
def test_weights_from_a_file_that_does_not_fit(tmp_path, kwargs, message):
    reader = F.open_reader(write_gguf(tmp_path / "bad.gguf", **kwargs))
    config = L.LlamaConfig.from_metadata(F.read_metadata(reader))
    with pytest.raises(ValueError, match=message):
        L.weights_from_gguf(reader, config)


def test_a_missing_gemma_norm_is_named(tmp_path):
    reader = F.open_reader(write_gguf(tmp_path / "g.gguf", gemma=True, drop=("blk.1.post_ffw_norm.weight",)))
    config = dataclasses.replace(L.LlamaConfig.from_metadata(F.read_metadata(reader)), post_norms=True)
    with pytest.raises(ValueError, match="blk.1.post_ffw_norm.weight"):
        L.weights_from_gguf(reader, config)
    with pytest.raises(ValueError, match="expected"):
        L.weights_from_gguf(reader, dataclasses.replace(config, post_norms=False, head_dim=16, n_heads=4))


def test_an_embedding_of_the_wrong_size_is_refused(tmp_path):
    reader = F.open_reader(write_gguf(tmp_path / "e.gguf"))
    config = dataclasses.replace(L.LlamaConfig.from_metadata(F.read_metadata(reader)), vocab_size=VOCAB + 1)
    with pytest.raises(ValueError, match=r"token_embd.weight of \[vocab, d_model\]"):
        L.weights_from_gguf(reader, config)


# ------------------------------------------------------------------------------------ llama's entry points


@pytest.mark.parametrize(
    "field, good, bad",
    [("query_pre_attn_scalar", 0.5, 0.0), ("layer_windows", (1, None), (0, None)),
     ("layer_rope_bases", (1.5, 10.0), (1.0, 10.0))],
)  # fmt: skip
def test_config_limits_at_their_edges(field, good, bad):
    base = dict(n_layers=2, d_model=8, n_heads=2, n_kv_heads=1, head_dim=4, d_ff=8, vocab_size=5,
                rope_base=10.0, rms_eps=1e-5, context_length=16)  # fmt: skip
    assert getattr(L.LlamaConfig(**base, **{field: good}), field) == good
    with pytest.raises(ValueError):
        L.LlamaConfig(**base, **{field: bad})


def test_8bit_matvec_is_float32_arithmetic():
    """The codes are widened to float32 and dotted with x in float32 (the docstring's contract).

    Row 0: code 3 at column 0 and -3 at column 32, both scales 1, x[0] = 1 + 2⁻²³, x[32] = 1. In
    float32, 3 · (1 + 2⁻²³) = 3 + 1.5 ulp rounds to 3 + 2 ulp = 3 + 2⁻²¹, so the row gives 2⁻²¹;
    exact (float64) arithmetic would give 3 · 2⁻²³. Row 1: x[0] as float64 1 + 2⁻³⁰ is 1 in float32,
    so code 1 and -1 give 0 (float64 would give 2⁻³⁰)."""
    codes = np.zeros((2, 64), np.int8)
    codes[0, 0], codes[0, 32], codes[1, 1], codes[1, 33] = 3, -3, 1, -1
    table = L.Embedding8bit(codes=codes, scales=np.ones((2, 2), np.float32))
    x = np.zeros(64)
    x[0], x[32], x[1], x[33] = 1 + 2.0**-23, 1.0, 1 + 2.0**-30, 1.0
    out = table.matvec(x)
    assert out.dtype == np.float32
    assert out[0] == 2.0**-21 and out[1] == 0.0


def test_embed_multiplies_by_any_scale_but_one():
    w = tiny_gemma()
    for scale in (2.0, 0.5):
        scaled = dataclasses.replace(w, config=dataclasses.replace(w.config, embed_scale=scale))
        np.testing.assert_array_equal(L.embed(np.array([4, 1]), scaled), w.embedding.table[[4, 1]] * scale)
    plain = dataclasses.replace(w, config=dataclasses.replace(w.config, embed_scale=1.0))
    np.testing.assert_array_equal(L.embed([4], plain), w.embedding.table[[4]])


def test_ffn_block_defaults_to_swiglu():
    w = tiny_weights_llama()
    x = np.random.default_rng(3).standard_normal((2, w.config.d_model))
    layer = w.layers[0]
    np.testing.assert_array_equal(L.swiglu_block(x, layer, 1e-5), L.swiglu_block(x, layer, 1e-5, "silu"))
    # SwiGLU by hand: W_down (silu(W_gate h) * W_up h), h = RMSNorm(x)
    h = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-5) * layer.ffn_norm
    g = h @ layer.W_gate.T
    want = ((g / (1 + np.exp(-g))) * (h @ layer.W_up.T)) @ layer.W_down.T
    np.testing.assert_allclose(L.ffn_block(x, layer, 1e-5), want, atol=1e-12)


def tiny_weights_llama() -> L.LlamaWeights:
    from tests.test_llama_generic import tiny_weights

    return tiny_weights(4, 2)


def test_attention_layer_makes_the_mask_of_its_layer():
    w = tiny_gemma(seed=2)
    x = L.embed(IDS, w)
    pos = np.arange(len(IDS))
    band = np.array([[0 <= i - j < WINDOW for j in pos] for i in pos])
    causal = np.array([[j <= i for j in pos] for i in pos])
    local = L.attention_layer(x, w.layers[0], w.config, pos, 0)  # no mask handed in
    glob = L.attention_layer(x, w.layers[5], w.config, pos, 5)
    assert np.array_equal(local.mask, band) and np.array_equal(glob.mask, causal)
    # the same as the full pass's first layer, which hands its shared mask in
    first = L.run_layers(IDS, w)[0][0]
    np.testing.assert_array_equal(local.weights, first.weights)
    np.testing.assert_array_equal(local.output, first.output)
    assert local.Q is not None and local.scores_raw is not None  # keep="all" by default
    # every head vector's length before QK-norm
    np.testing.assert_allclose(local.k_lengths_pre, np.linalg.norm(local.K_pre, axis=-1), atol=1e-12)
    np.testing.assert_allclose(local.q_lengths_pre, np.linalg.norm(local.Q_pre, axis=-1), atol=1e-12)


def test_a_head_edit_changes_what_w_o_receives():
    w = tiny_gemma(seed=2)
    x = L.embed(IDS, w)
    pos = np.arange(len(IDS))
    plain = L.attention_layer(x, w.layers[0], w.config, pos, 0)
    seen = []

    def zero_head_1(H):
        seen.append(H.copy())
        out = H.copy()
        out[1] = 0.0
        return out

    edited = L.attention_layer(x, w.layers[0], w.config, pos, 0, head_edit=zero_head_1)
    np.testing.assert_array_equal(seen[0], plain.head_outputs)  # the edit saw the real heads
    assert np.all(edited.head_outputs[1] == 0)
    np.testing.assert_array_equal(edited.head_outputs[0], plain.head_outputs[0])
    # output = PostNorm(concat(heads) W_Oᵀ), with head 1 zero
    lw = w.layers[0]
    merged = np.concatenate(list(edited.head_outputs), axis=-1) @ lw.W_O.T
    want = merged / np.sqrt(np.mean(merged**2, axis=-1, keepdims=True) + w.config.rms_eps) * lw.post_attn_norm
    np.testing.assert_allclose(edited.output, want, atol=1e-12)
    assert np.max(np.abs(edited.output - plain.output)) > 1e-3


def test_keep_weights_keeps_no_per_step_array():
    w = tiny_gemma(seed=2)
    x = L.embed(IDS, w)
    pos = np.arange(len(IDS))
    slim, out = L.attention_sublayer(x, w.layers[0], w.config, pos, 0, keep="weights")
    for name in ("Q_pre", "Q", "K_pre", "scores_raw", "scores_scaled", "head_outputs", "output",
                 "Q_normed", "K_normed"):  # fmt: skip
        assert getattr(slim, name) is None, name
    full = L.attention_layer(x, w.layers[0], w.config, pos, 0)
    np.testing.assert_array_equal(out, full.output)  # the sub-layer's output is still returned
    np.testing.assert_array_equal(full.K_normed.shape, (1, len(IDS), 8))
    # a plain Llama layer has no QK-norm: nothing after it is kept
    lw = tiny_weights_llama()
    plain = L.attention_layer(L.embed(IDS[:4] % 23, lw), lw.layers[0], lw.config, np.arange(4), 0)
    assert plain.Q_normed is None and plain.K_normed is None and plain.Q is not None


def test_run_from_reaches_the_full_pass():
    w = tiny_gemma(seed=3)
    traces, logits = L.run_layers(IDS, w)
    run = L.run_from(L.embed(IDS, w), w)
    assert run.start == 0 and run.resid.shape == (7, len(IDS), 12) and run.ffn_out.shape == (6, len(IDS), 12)
    np.testing.assert_allclose(L.output_logits(run.final[-1], w), naive_gemma_logits(IDS, w), atol=1e-10)
    np.testing.assert_allclose(L.output_logits(run.final[-1], w), logits, atol=1e-12)
    for a, b in zip(run.layers, traces, strict=True):
        np.testing.assert_array_equal(a.mask, b.mask)
    # from a later layer on the saved stream: the same end, and the stream is the sum of its parts
    later = L.run_from(run.resid[4], w, start=4)
    assert later.start == 4 and len(later.layers) == 2 and later.resid.shape[0] == 3
    np.testing.assert_allclose(later.final, run.final, atol=1e-12)
    attn_4 = later.layers[0].output
    np.testing.assert_allclose(later.resid[1], run.resid[4] + attn_4 + later.ffn_out[0], atol=1e-12)
    assert not later.resid.flags.writeable and not later.ffn_out.flags.writeable
    # nothing left to run: no FFN outputs, the stream as it was
    done = L.run_from(run.final, w, start=6)
    assert done.ffn_out.shape == (0, len(IDS), 12) and np.array_equal(done.final, run.final)
    assert L.run_from(L.embed(IDS, w), w, keep=False).layers == ()


def test_run_from_ands_an_experiment_mask_with_each_window():
    w = tiny_gemma(seed=3)
    n = len(IDS)
    pos = np.arange(n)
    everything = np.ones((n, n), dtype=bool)  # not even causal
    run = L.run_from(L.embed(IDS, w), w, allowed=everything)
    band = np.array([[0 <= i - j < WINDOW for j in pos] for i in pos])
    for t in run.layers[:5]:
        assert np.array_equal(t.mask, band)  # a local layer never reads further back than its window
    assert np.array_equal(run.layers[5].mask, everything)  # a global layer takes the mask as given
    # positions are passed on: to RoPE (a shift rotates every q) and to the window (positions
    # 0, 2, 4 ...: a window of 3 reaches one key back)
    plain = L.run_from(L.embed(IDS, w), w)
    shifted = L.run_from(L.embed(IDS, w), w, positions=pos + 3)
    assert np.max(np.abs(shifted.layers[0].Q - plain.layers[0].Q)) > 1e-3
    spread = L.run_from(L.embed(IDS, w), w, positions=2 * pos)
    assert np.array_equal(
        spread.layers[0].mask, np.array([[0 <= 2 * i - 2 * j < 3 for j in pos] for i in pos])
    )
    # an edit on one layer reaches that layer only
    edited = L.run_from(L.embed(IDS, w), w, edits={2: lambda H: np.zeros_like(H)})
    assert np.all(edited.layers[2].head_outputs == 0) and np.any(edited.layers[1].head_outputs != 0)


def test_decode_steps_name_their_layer_and_keep_the_qk_norm():
    w = tiny_gemma(seed=6)
    traces, logits = L.run_layers(IDS[:-1], w)
    state = D.start_state(G.DecoderTrace(tuple(int(i) for i in IDS[:-1]), (), traces, logits, w.config))
    steps, _, _ = L.decode_layers(int(IDS[-1]), state.cache, w)
    assert [s.layer_kind for s in steps] == ["local"] * 5 + ["global"]
    assert [s.window for s in steps] == [WINDOW] * 5 + [None]
    c, s, lw = w.config, steps[0], w.layers[0]
    rms_q = np.sqrt(np.mean(s.q_pre**2, axis=-1, keepdims=True) + c.rms_eps)
    rms_k = np.sqrt(np.mean(s.k_pre**2, axis=-1, keepdims=True) + c.rms_eps)
    np.testing.assert_allclose(s.q_normed, s.q_pre / rms_q * lw.q_norm, atol=1e-12)
    np.testing.assert_allclose(s.k_normed, s.k_pre / rms_k * lw.k_norm, atol=1e-12)
    lw2 = tiny_weights_llama()
    t2, logits2 = L.run_layers(np.array([1, 2]), lw2)
    plain = L.decode_layers(3, D.start_state(G.DecoderTrace((1, 2), (), t2, logits2, lw2.config)).cache, lw2)[
        0
    ]
    assert plain[0].q_normed is None and plain[0].k_normed is None and plain[0].layer_kind == "global"


# ------------------------------------------------------------------------------------ byte-level BPE


def test_byte_bpe_tokenizer_on_a_hand_made_vocabulary():
    """The 256 byte stand-ins (ids 0..255 in byte order) plus Ġc, at, Ġcat and 12.

    " cat 12": the digits are cut apart first (" cat ", "1", "2"), GPT-2's rule splits " cat " into
    " cat" and " ", bytes become stand-ins (Ġcat, Ġ, 1, 2), and the merges Ġ+c, then Ġc+at make Ġcat:
    ids 258, 32, 49, 50. Without the digit step " 12" would be one piece and 1+2 would merge to 12.
    """
    from attention_core.models import byte_bpe as B

    pytest.importorskip("tokenizers")
    alphabet = B.byte_alphabet()
    tokens = [alphabet[b] for b in range(256)] + ["Ġc", "at", "Ġcat", "12"]
    tk = B.build_tokenizer(tokens, ["Ġ c", "a t", "Ġc at", "1 2"])
    assert tk.encode(" cat 12").ids == [258, 32, 49, 50]
    assert tk.encode("cats").ids == [99, 257, 115]  # c, at, s: Ġc needs the space
    assert tk.encode("猫").ids == [0xE7, 0x8C, 0xAB]  # one token per byte of E7 8C AB
    assert tk.decode([258, 32, 49, 50]) == " cat 12" and tk.decode([0xE7, 0x8C, 0xAB]) == "猫"
    # the merge order is the list's: with Ġc+at missing, Ġcat is never reached
    assert B.build_tokenizer(tokens, ["Ġ c", "a t"]).encode(" cat").ids == [256, 257]
    assert B.build_tokenizer(tokens, ["Ġ c", "a t"], pre="smollm").encode("12").ids == [49, 50]
    with pytest.raises(ValueError, match="unknown pre-tokenizer 'gpt2'"):
        B.build_tokenizer(tokens, [], pre="gpt2")
    with pytest.raises(ValueError, match="duplicate"):
        B.build_tokenizer([*tokens, "at"], [])
    for bad in ("ab", " b", "a ", ""):
        with pytest.raises(ValueError, match="two tokens separated by one space"):
            B.build_tokenizer(tokens, [bad])


# ------------------------------------------------------------------------------------ what the mutation run found


def test_the_fields_keep_the_readers_own_parts(tiny_file):
    """For an array the fast path keeps the reader's parts: item type and count as the stock reader
    reads them, and a string array's raw bytes (per string a uint64 length, then UTF-8)."""
    ours = F.open_reader(tiny_file).fields
    stock = gguf.GGUFReader(str(tiny_file), "r").fields
    for name in (
        "tokenizer.ggml.tokens",
        "tokenizer.ggml.scores",
        "tokenizer.ggml.token_type",
        "test.nested",
    ):
        assert ours[name].types == stock[name].types, name
        for k in (3, 4):  # [item type uint32], [count uint64]
            assert ours[name].parts[k].dtype == stock[name].parts[k].dtype
            assert ours[name].parts[k].tolist() == stock[name].parts[k].tolist()
    raw = b"".join(struct.pack("<Q", len(t.encode())) + t.encode() for t in TOKENS)
    assert bytes(ours["tokenizer.ggml.tokens"].parts[5]) == raw
    assert ours["tokenizer.ggml.scores"].parts[5].tolist() == SCORES


def test_a_big_endian_file_is_read_by_the_readers_own_way(tmp_path):
    path = write_gguf(tmp_path / "be.gguf", big_endian=True)
    reader = F.open_reader(path)
    assert reader.byte_order == "S"  # the file's byte order is not this machine's
    meta = F.read_metadata(reader)
    assert meta["tokenizer.ggml.tokens"] == TOKENS and meta["tokenizer.ggml.scores"] == SCORES
    assert meta["llama.block_count"] == N_LAYERS and meta["test.nested"] == [1, 2, 3, 4, 5]
    stock = gguf.GGUFReader(str(path), "r")
    assert {k: f.contents() for k, f in stock.fields.items()} == meta


def test_read_metadata_of_the_stock_reader(tiny_file):
    meta = F.read_metadata(gguf.GGUFReader(str(tiny_file), "r"))
    assert meta["tokenizer.ggml.tokens"] == TOKENS and meta["llama.context_length"] == 16


def test_a_float16_tensor_is_dequantized_to_float32(tiny_file):
    values = F.dequantize(F.tensor_names(F.open_reader(tiny_file))["test.half"])
    assert values.dtype == np.float32 and values.tolist() == [0.5, -2.0, 1.5]


def test_attention_layer_uses_the_mask_it_is_handed():
    w = tiny_gemma(seed=2)
    n = len(IDS)
    only_itself = np.eye(n, dtype=bool)
    t = L.attention_layer(L.embed(IDS, w), w.layers[5], w.config, np.arange(n), 5, allowed=only_itself)
    assert t.mask is only_itself
    np.testing.assert_array_equal(t.weights, np.broadcast_to(only_itself, (4, n, n)).astype(float))


def test_run_from_past_the_last_layer_keeps_the_dtype():
    w = tiny_gemma(seed=3, dtype=np.float32)
    x = L.embed(IDS, w)
    assert x.dtype == np.float32
    done = L.run_from(x, w, start=w.config.n_layers)
    assert done.ffn_out.shape == (0, len(IDS), 12) and done.ffn_out.dtype == np.float32

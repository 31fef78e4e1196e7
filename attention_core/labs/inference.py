"""Lab "Inference": the KV cache, and MHA / GQA / MQA.

One attention layer with ``h`` query heads and ``g`` key/value heads (``g`` divides ``h``;
``d_k = d_v = d_model / h``; random projections from the seed) over the learner's tokens (token
vectors plus the sinusoidal encoding). The steps:

- :func:`project_qkv`: ``X [n, d]`` -> ``Q [h, n, d_k]``, ``K [g, n, d_k]``, ``V [g, n, d_k]``;
- :func:`causal_pass`: every row at once with the causal mask (:func:`attention_core.gqa.grouped_attention`);
- :func:`decode_with_cache`: one token at a time: append its k and v to the cache
  (:func:`attention_core.kv_cache.append_kv`), one query row against every cached key
  (:func:`attention_core.kv_cache.decode_attention`);
- :func:`prefix_change`: how much the outputs of the first ``n − 1`` tokens change when token ``n``
  is appended, with a causal and with a bidirectional mask (the cache is valid only when they never change);
- :func:`step_flops_cached` / :func:`step_flops_recompute`: FLOPs of one decoding step;
- :func:`kv_cache_bytes`: ``2 · layers · n · kv_heads · d_k · bytes`` (:func:`attention_core.kv_cache.cache_bytes`).

FLOPs follow the multi-head lab's convention: 2 per multiply-add; the softmax and the output
projection ``W_O`` are left out (they add the same kind of term to both ways of decoding).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..arrays import read_only
from ..config import AttentionConfigError
from ..embeddings import embed
from ..gqa import grouped_attention, kv_memory_ratio, query_heads_of
from ..kv_cache import append_kv, cache_bytes, decode_attention, empty_layer_cache
from ..steps import build_mask, project_heads
from ..tokenizer import DEFAULT_MAX_TOKENS, Tokenization, tokenize_sentence

D_MODEL_RANGE = (1, 128)
HEADS_RANGE = (1, 16)
DTYPE_BYTES = {"float32": 4, "float16 / bfloat16": 2, "int8": 1}


@dataclass(frozen=True)
class ModelShape:
    """The attention shape of a public model, for the cache calculator, with where it comes from.

    A new preset is one more line in :data:`PRESETS` plus its ``inference.source_<key>`` text in
    both catalogs. A model with sliding-window attention gives its window; if only some of its
    layers use it (local layers between global ones), ``window_layers`` says how many."""

    key: str  # names the source's text in the page's catalog (``inference.source_<key>``)
    name: str
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    source: str  # where the numbers are written down
    context: int  # the longest input the model takes (tokens): the calculator's n stops there
    window: int = 0  # sliding window W (0: none): a windowed layer keeps K and V of the last W tokens
    window_layers: int | None = None  # how many layers use the window (None: all of them)

    def __post_init__(self) -> None:
        if self.heads % self.kv_heads or self.context < 1 or self.window < 0:
            raise ValueError(f"{self.name}: kv_heads must divide heads, context ≥ 1 and window ≥ 0")
        if self.window_layers is not None and not 0 <= self.window_layers <= self.layers:
            raise ValueError(f"{self.name}: window_layers must be from 0 to {self.layers}")

    @property
    def layers_windowed(self) -> int:
        """Layers that use the window (0 when the model has none)."""
        if not self.window:
            return 0
        return self.layers if self.window_layers is None else self.window_layers


def gemma3_270m_shape() -> ModelShape:
    """Gemma 3 270M's preset from the core's config (:data:`attention_core.models.gemma3.GEMMA3_270M`),
    which ``gemma3.load_model`` checks equal to the config its GGUF file's metadata gives
    (``config_from_metadata``), so no number is typed here: layers, heads, KV heads, head_dim,
    context length, window and how many layers use it."""
    from ..models.gemma3 import GEMMA3_270M as c  # relative: the core imports only NumPy at module level

    windowed = sum(1 for layer in range(c.n_layers) if c.window_of(layer) is not None)
    window = max((c.window_of(layer) or 0) for layer in range(c.n_layers))
    return ModelShape(
        "gemma3_270m", "Gemma 3 270M", c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim,
        "its GGUF file's metadata (the file this project runs)", context=c.context_length, window=window,
        window_layers=windowed,
    )  # fmt: skip


PRESETS: tuple[ModelShape, ...] = (
    ModelShape("gpt2", "GPT-2 small", 12, 12, 12, 64, "config.json of openai-community/gpt2 (n_layer 12, n_head 12, n_embd 768, n_positions 1024)", context=1024),
    ModelShape("smollm2", "SmolLM2-135M", 30, 9, 3, 64, "its GGUF file's metadata (the file this project runs; llama.context_length 8192)", context=8192),
    ModelShape("llama2_7b", "Llama 2 7B", 32, 32, 32, 128, "Llama 2 paper and config.json (hidden 4096, 32 heads, 32 KV heads, 4096 positions)", context=4096),
    ModelShape("llama2_70b", "Llama 2 70B", 80, 64, 8, 128, "Llama 2 paper (GQA) and config.json (hidden 8192, 64 heads, 8 KV heads, 4096 positions)", context=4096),
    ModelShape("mistral_7b", "Mistral 7B", 32, 32, 8, 128, "Mistral 7B paper, Table 1 (n_heads 32, n_kv_heads 8, head_dim 128, window_size 4096, context_len 8192)", context=8192, window=4096),
    gemma3_270m_shape(),
)  # fmt: skip


_ro = read_only  # every array of a result is frozen: results are cached and shared


@dataclass(frozen=True)
class InferenceSettings:
    """What the page asks for, validated once."""

    text: str
    d_model: int = 16
    heads: int = 4
    kv_heads: int = 2
    seed: int = 0
    max_tokens: int = DEFAULT_MAX_TOKENS

    def __post_init__(self) -> None:
        if not D_MODEL_RANGE[0] <= self.d_model <= D_MODEL_RANGE[1]:
            raise AttentionConfigError(f"d_model must be from {D_MODEL_RANGE[0]} to {D_MODEL_RANGE[1]}.")
        if not HEADS_RANGE[0] <= self.heads <= HEADS_RANGE[1] or self.d_model % self.heads:
            raise AttentionConfigError(
                f"The number of heads must divide d_model = {self.d_model} (and be at most {HEADS_RANGE[1]})."
            )
        if self.kv_heads < 1 or self.heads % self.kv_heads:
            raise AttentionConfigError(
                f"The key/value heads must divide the query heads ({self.heads}), got {self.kv_heads}."
            )
        if self.seed < 0:
            raise AttentionConfigError("The seed must not be negative.")


# --- the steps --------------------------------------------------------------------------------------


def projection_weights(d_model: int, heads: int, kv_heads: int, seed: int) -> tuple[np.ndarray, ...]:
    """``W_Q [d, h·d_k]``, ``W_K [d, g·d_k]``, ``W_V [d, g·d_k]``, entries ~ N(0, 1/d), from ``seed``."""
    d_k = d_model // heads
    rng = np.random.default_rng((int(seed), 0x1CAC4E))
    W_Q = rng.standard_normal((d_model, heads * d_k)) / math.sqrt(d_model)
    W_K = rng.standard_normal((d_model, kv_heads * d_k)) / math.sqrt(d_model)
    W_V = rng.standard_normal((d_model, kv_heads * d_k)) / math.sqrt(d_model)
    return W_Q, W_K, W_V


def project_qkv(X: np.ndarray, W_Q, W_K, W_V, heads: int, kv_heads: int) -> tuple[np.ndarray, ...]:
    """``X [n, d]`` -> ``Q [h, n, d_k]``, ``K [g, n, d_k]``, ``V [g, n, d_k]``."""
    return project_heads(X, W_Q, heads), project_heads(X, W_K, kv_heads), project_heads(X, W_V, kv_heads)


def causal_pass(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
    """Every row at once with the causal mask: ``-> GroupedAttention`` (``head_outputs [h, n, d_k]``)."""
    n = Q.shape[1]
    return grouped_attention(Q, K, V, build_mask("causal", n), math.sqrt(Q.shape[2]))


def decode_with_cache(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
    """Token by token: step ``t`` appends ``K[:, t]``, ``V[:, t]`` to the cache and attends with the one
    query row ``Q[:, t]``. ``-> (outputs [h, n, d_k], cache length after each step)``."""
    g, n, d_k = K.shape
    cache = empty_layer_cache(g, d_k, V.shape[2], dtype=K.dtype)
    rows, lengths = [], []
    for t in range(n):
        cache = append_kv(cache, K[:, t : t + 1], V[:, t : t + 1])
        step = decode_attention(Q[:, t : t + 1], cache, math.sqrt(d_k))  # weights [h, 1, t+1]
        rows.append(step.head_outputs[:, 0])
        lengths.append(cache.length)
    return np.stack(rows, axis=1), tuple(lengths)


def bidirectional_outputs(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Every token sees every token (no mask): ``-> [h, n, d_k]``."""
    return grouped_attention(Q, K, V, None, math.sqrt(Q.shape[2])).head_outputs


def prefix_change(outputs_prefix: np.ndarray, outputs_full: np.ndarray) -> np.ndarray:
    """Per earlier token, the largest change of its output (any head, any coordinate) when one token
    is appended: ``[h, n−1, d], [h, n, d] -> [n−1]``."""
    m = outputs_prefix.shape[1]
    if m == 0:
        return np.zeros(0)
    return np.max(np.abs(outputs_full[:, :m] - outputs_prefix), axis=(0, 2))


def step_flops_cached(n: int, d_model: int, heads: int, kv_heads: int, d_k: int) -> int:
    """One decoding step with a cache of ``n`` tokens (the new one included): project the new token
    (``2·d·(h + 2g)·d_k``), one query row against ``n`` keys (``h·2·n·d_k``) and values (``h·2·n·d_k``)."""
    return 2 * d_model * (heads + 2 * kv_heads) * d_k + 4 * heads * n * d_k


def flops_knee(d_model: int, heads: int, kv_heads: int) -> float:
    """The n where the two terms of :func:`step_flops_cached` are equal, ``2d(h+2g)d_k = 4hn·d_k``:
    ``n = d(h + 2g) / (2h)``. Below it projecting the new token dominates (the line is nearly flat),
    well above it the ``n`` term does (slope 1 on a log–log chart; the recompute line's ``n²`` term
    takes over at the same n, slope 2)."""
    return d_model * (heads + 2 * kv_heads) / (2 * heads)


def step_flops_recompute(n: int, d_model: int, heads: int, kv_heads: int, d_k: int) -> int:
    """The same step without a cache, by running the causal pass on all ``n`` tokens again: project
    every token (``n · 2·d·(h + 2g)·d_k``) and the full ``n × n`` products (``h·2·n²·d_k`` twice)."""
    return n * 2 * d_model * (heads + 2 * kv_heads) * d_k + 4 * heads * n * n * d_k


@dataclass(frozen=True)
class FlopsCurve:
    """FLOPs of one decoding step for context lengths ``ns`` (the counts are exact integers)."""

    ns: tuple[int, ...]
    cached: tuple[int, ...]
    recompute: tuple[int, ...]


def flops_curve(ns, d_model: int, heads: int, kv_heads: int) -> FlopsCurve:
    """:func:`step_flops_cached` and :func:`step_flops_recompute` for each ``n`` in ``ns``."""
    d_k = d_model // heads
    ns = tuple(int(n) for n in ns)
    return FlopsCurve(
        ns,
        tuple(step_flops_cached(n, d_model, heads, kv_heads, d_k) for n in ns),
        tuple(step_flops_recompute(n, d_model, heads, kv_heads, d_k) for n in ns),
    )


def kv_cache_bytes(layers: int, n: int, kv_heads: int, d_k: int, bytes_per_value: int) -> int:
    """``2 · layers · n · kv_heads · d_k · bytes`` (K and V of every layer)."""
    return cache_bytes(layers, n, kv_heads, d_k, bytes_per_value)


@dataclass(frozen=True)
class CacheSize:
    """The calculator's answer for one shape, and what MHA would need."""

    bytes: int
    bytes_mha: int  # the same model with kv_heads = heads
    ratio: float  # bytes / bytes_mha = g / h
    saved: int  # bytes_mha − bytes
    held: int = 0  # tokens a windowed layer keeps: min(n, W) (n when there is no window)


def tokens_held(n: int, window: int) -> int:
    """Tokens whose K and V a layer keeps: all ``n``, or the last ``W`` with a sliding window
    (a rolling buffer: token ``t`` overwrites slot ``t mod W``)."""
    return min(n, window) if window else n


def cache_size(
    layers: int, n: int, heads: int, kv_heads: int, d_k: int, bytes_per_value: int,
    window: int = 0, window_layers: int | None = None,
) -> CacheSize:  # fmt: skip
    """The cache of ``n`` tokens with ``kv_heads`` KV heads, against MHA's ``heads``. With a sliding
    window ``W`` the ``window_layers`` windowed layers (default: all) keep only ``min(n, W)`` tokens."""
    ratio = kv_memory_ratio(heads, kv_heads)  # checks that kv_heads divides heads
    held = tokens_held(n, window)
    local = (layers if window_layers is None else window_layers) if window else 0
    if not 0 <= local <= layers:
        raise AttentionConfigError(f"window_layers must be from 0 to {layers}.")

    def total(g: int) -> int:
        return kv_cache_bytes(local, held, g, d_k, bytes_per_value) + kv_cache_bytes(
            layers - local, n, g, d_k, bytes_per_value
        )

    b, b_mha = total(kv_heads), total(heads)
    return CacheSize(b, b_mha, ratio, b_mha - b, held)


@dataclass(frozen=True)
class CacheCalculation:
    """The calculator for one model shape: ``n`` is the typed length capped at the model's context
    (its cache never holds more), the window applies to the shape's windowed layers (all layers
    when the shape has no window of its own), and the bars are every valid number of KV heads."""

    shape: ModelShape
    asked: int
    n: int
    window: int
    size: CacheSize  # with the chosen KV heads
    bars: tuple[tuple[int, int], ...]  # (KV heads g, bytes) for every divisor of h

    @property
    def capped(self) -> bool:
        return self.asked > self.shape.context


def cache_calculation(
    shape: ModelShape, asked: int, kv_heads: int, bytes_per_value: int, window: int
) -> CacheCalculation:
    n = min(asked, shape.context)
    local = shape.window_layers if shape.window else None

    def size(g: int) -> CacheSize:
        return cache_size(shape.layers, n, shape.heads, g, shape.head_dim, bytes_per_value, window, local)

    bars = tuple((g, size(g).bytes) for g in kv_choices(shape.heads))
    return CacheCalculation(shape, asked, n, window, size(kv_heads), bars)


def kv_choices(heads: int) -> tuple[int, ...]:
    """Every valid number of KV heads for ``heads`` query heads: its divisors, MQA (1) to MHA (h)."""
    return tuple(g for g in range(1, heads + 1) if heads % g == 0)


# --- what the page shows ----------------------------------------------------------------------------


@dataclass(frozen=True)
class InferenceLab:
    """Everything the inference page shows for one sentence and setting."""

    settings: InferenceSettings
    tokenization: Tokenization
    tokens: tuple[str, ...]
    d_k: int
    full: np.ndarray  # [h, n, d_k] causal pass, all rows at once
    decoded: np.ndarray  # [h, n, d_k] token by token with the cache
    cache_lengths: tuple[int, ...]  # cache length after each step: 1, 2, ..., n
    cache_gap: float  # max |decoded − full|
    weights: np.ndarray  # [h, n, n] causal weights of every query head
    kv_head_of: np.ndarray  # [h] the KV head each query head reads
    groups: tuple[tuple[int, ...], ...]  # the query heads sharing each KV head
    causal_allowed: np.ndarray  # [n, n] the causal mask (True = may attend)
    change_causal: np.ndarray  # [n−1] prefix_change with the causal mask
    change_bidirectional: np.ndarray  # [n−1] without a mask

    @property
    def max_change_causal(self) -> float:
        return float(self.change_causal.max()) if self.change_causal.size else 0.0

    @property
    def max_change_bidirectional(self) -> float:
        return float(self.change_bidirectional.max()) if self.change_bidirectional.size else 0.0


def inference_lab(settings: InferenceSettings) -> InferenceLab:
    """Run every step of the page on ``settings.text``."""
    s = settings
    tok = tokenize_sentence(s.text, max_tokens=s.max_tokens)
    tokens = tok.tokens
    X = embed(tokens, s.d_model, s.seed, positional=True)
    Q, K, V = project_qkv(X, *projection_weights(s.d_model, s.heads, s.kv_heads, s.seed), s.heads, s.kv_heads)
    full = causal_pass(Q, K, V)
    decoded, lengths = decode_with_cache(Q, K, V)
    # appending token n: outputs of tokens 0 .. n-2 with n-1 tokens vs with n tokens
    # (one token: nothing before it to change)
    if len(tokens) > 1:
        change_causal = prefix_change(
            causal_pass(Q[:, :-1], K[:, :-1], V[:, :-1]).head_outputs, full.head_outputs
        )
        bidi = bidirectional_outputs(Q[:, :-1], K[:, :-1], V[:, :-1])
        change_bidi = prefix_change(bidi, bidirectional_outputs(Q, K, V))
    else:
        change_causal = change_bidi = np.zeros(0)
    return InferenceLab(
        settings=s,
        tokenization=tok,
        tokens=tokens,
        d_k=s.d_model // s.heads,
        full=_ro(full.head_outputs),
        decoded=_ro(decoded),
        cache_lengths=lengths,
        cache_gap=float(np.max(np.abs(decoded - full.head_outputs))),
        weights=_ro(full.weights),
        kv_head_of=_ro(full.kv_head_of),
        groups=query_heads_of(s.heads, s.kv_heads),
        causal_allowed=_ro(build_mask("causal", len(tokens))),
        change_causal=_ro(change_causal),
        change_bidirectional=_ro(change_bidi),
    )

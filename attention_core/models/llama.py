"""A Llama-architecture decoder in NumPy, one small pure function per step, every attention step kept.

Generic over the numbers (layers, heads, KV heads, head_dim, RoPE base) and over where the weights
come from: :mod:`.smollm2` fills :class:`LlamaWeights` from a GGUF file; a lab can fill it with
random matrices. Layer (pre-norm, residual stream ``x [n, d_model]``)::

    h = RMSNorm(x)
    Q, K, V = h W_Qᵀ, h W_Kᵀ, h W_Vᵀ, cut into heads        [h, n, d], [g, n, d], [g, n, d]
    Q, K = RoPE(Q), RoPE(K)                                 (pairs as config.rope_layout says)
    weights = softmax(causal_mask(Q K[kv_head_of]ᵀ / √d))    [h, n, n]   (query head j reads KV head j // (h/g))
    x = x + concat(weights V[kv_head_of]) W_Oᵀ
    x = x + SwiGLU(RMSNorm(x))

and after the last layer ``logits = RMSNorm(x[-1]) · embeddingᵀ`` (tied embeddings). Matrices are
``[out, in]`` as PyTorch and GGUF store them, used as ``x @ W.T`` (a view: no copy).
:func:`run_layers` is the full pass; :func:`decode_layers` is one new token against a KV cache.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from .. import steps
from ..arrays import read_only
from ..ffn import swiglu
from ..gqa import grouped_attention, kv_head_of
from ..kv_cache import KVCache, append_kv, decode_attention
from ..norms import rms_norm
from ..rope import ROPE_LAYOUTS, rope_cos_sin, rotate_pairs
from . import gguf_file

EMBED_CHUNK_ROWS = 1024  # rows of an 8-bit embedding table expanded at once for the logits


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
    rope_layout: str = "interleaved"  # a GGUF file's W_Q/W_K row order (see attention_core.rope)

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
        if self.rope_layout not in ROPE_LAYOUTS:
            raise ValueError(f"rope_layout must be one of {ROPE_LAYOUTS}")

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


_ro = partial(read_only, contiguous=True)  # C order keeps the products on the BLAS fast path


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


@dataclass(frozen=True)
class DenseEmbedding:
    """A float token-embedding table ``[vocab, d]`` (for weights that are not stored 8-bit)."""

    table: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.table.shape)  # type: ignore[return-value]

    @property
    def nbytes(self) -> int:
        return int(self.table.nbytes)

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """``[n] -> [n, d]``."""
        return self.table[ids]

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """``table @ x``: ``[d] -> [vocab]``."""
        return self.table @ x


@dataclass(frozen=True, eq=False)
class LlamaWeights:
    config: LlamaConfig
    embedding: Embedding8bit | DenseEmbedding  # also the output layer (tied)
    layers: tuple[LlamaLayerWeights, ...]
    output_norm: np.ndarray  # [d_model]

    @property
    def nbytes(self) -> int:
        total = self.embedding.nbytes + self.output_norm.nbytes
        for layer in self.layers:
            total += sum(getattr(layer, f).nbytes for f in LlamaLayerWeights.__dataclass_fields__)
        return total


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


HeadEdit = Callable[[np.ndarray], np.ndarray]  # a layer's head outputs [h, n, d] -> [h, n, d]


def _freeze_all(obj) -> None:
    for name in obj.__dataclass_fields__:
        value = getattr(obj, name)
        if isinstance(value, np.ndarray):
            value.setflags(write=False)


def attention_layer(
    x: np.ndarray, layer: LlamaLayerWeights, config: LlamaConfig, positions: np.ndarray, index: int,
    allowed: np.ndarray | None = None, head_edit: HeadEdit | None = None,
) -> DecoderLayerTrace:  # fmt: skip
    """One layer's attention sub-layer on ``x [n, d_model]`` at ``positions [n]``, every step kept.

    Two optional hooks for experiments (the plain pass uses neither): ``allowed [n, n]`` replaces the
    causal mask (a sliding window, say); ``head_edit`` rewrites the heads' outputs ``[h, n, d]``
    before they are concatenated and multiplied by W_O (an ablation); the trace keeps the edited ones.
    """
    c = config
    h = rms_norm(x, layer.attn_norm, c.rms_eps)  # [n, d_model]
    Q_pre = project_heads(h, layer.W_Q, c.n_heads)  # [9, n, 64]
    K_pre = project_heads(h, layer.W_K, c.n_kv_heads)  # [3, n, 64]
    V = project_heads(h, layer.W_V, c.n_kv_heads)  # [3, n, 64]
    cos, sin = rope_cos_sin(positions, c.head_dim, c.rope_base)  # [n, 32] each
    Q = rotate_pairs(Q_pre, cos, sin, c.rope_layout)
    K = rotate_pairs(K_pre, cos, sin, c.rope_layout)
    mask = causal_allowed(len(positions)) if allowed is None else allowed
    att = grouped_attention(Q, K, V, mask, c.divisor)
    head_outputs = att.head_outputs if head_edit is None else head_edit(att.head_outputs)
    trace = DecoderLayerTrace(
        layer=index, Q_pre=Q_pre, Q=Q, K_pre=K_pre, K=K, V=V,
        scores_raw=att.scores_raw, scores_scaled=att.scores_scaled, mask=mask, weights=att.weights,
        head_outputs=head_outputs, output=attention_output(head_outputs, layer.W_O),
        kv_head_of=att.kv_head_of, divisor=c.divisor,
    )  # fmt: skip
    _freeze_all(trace)
    return trace


def run_layers(ids: np.ndarray, weights: LlamaWeights) -> tuple[tuple[DecoderLayerTrace, ...], np.ndarray]:
    """The full pass over ``ids [n]`` at positions ``0..n-1``: every layer's trace, and the logits of
    the token after the last position ``[vocab]``."""
    c = weights.config
    positions = np.arange(len(ids))
    x = embed(ids, weights)  # [n, d_model]
    traces = []
    for i, layer in enumerate(weights.layers):
        trace = attention_layer(x, layer, c, positions, i)
        x = x + trace.output
        x = x + swiglu_block(x, layer, c.rms_eps)
        traces.append(trace)
    return tuple(traces), _ro(output_logits(x[-1], weights))


@dataclass(frozen=True, eq=False)
class ResidualRun:
    """Layers ``start..`` run on a residual stream: what the interpretability views read.

    ``resid [L - start + 1, n, d_model]``: the stream entering layer ``start + k`` (the last entry is
    the stream after the last layer); ``ffn_out [L - start, n, d_model]``: each layer's FFN output
    (added to the stream); ``layers``: each layer's attention trace (empty when not kept).
    """

    start: int
    resid: np.ndarray
    ffn_out: np.ndarray
    layers: tuple[DecoderLayerTrace, ...]

    @property
    def final(self) -> np.ndarray:
        """The stream after the last layer ``[n, d_model]``."""
        return self.resid[-1]


def run_from(
    x: np.ndarray, weights: LlamaWeights, start: int = 0, positions: np.ndarray | None = None,
    allowed: np.ndarray | None = None, edits: dict[int, HeadEdit] | None = None, keep: bool = True,
) -> ResidualRun:  # fmt: skip
    """The same layers as :func:`run_layers`, from layer ``start`` on a saved stream ``x [n, d_model]``.

    ``allowed`` replaces the causal mask in every layer run, ``edits[layer]`` edits that layer's head
    outputs (see :func:`attention_layer`); ``keep=False`` keeps no attention trace (a long text's
    [h, n, n] arrays would not fit). ``run_from(embed(ids), w)`` reaches the same stream as
    :func:`run_layers` by the same operations.
    """
    c = weights.config
    positions = np.arange(len(x)) if positions is None else positions
    edits = edits or {}
    resid, ffn_out, traces = [x], [], []
    for i in range(start, c.n_layers):
        layer = weights.layers[i]
        trace = attention_layer(x, layer, c, positions, i, allowed, edits.get(i))
        x = x + trace.output
        ffn = swiglu_block(x, layer, c.rms_eps)
        x = x + ffn
        resid.append(x)
        ffn_out.append(ffn)
        if keep:
            traces.append(trace)
    empty = np.zeros((0, *x.shape), x.dtype)
    return ResidualRun(
        start=start, resid=_ro(np.stack(resid)), ffn_out=_ro(np.stack(ffn_out) if ffn_out else empty),
        layers=tuple(traces),
    )  # fmt: skip


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


def decode_layers(
    token_id: int, cache: KVCache, weights: LlamaWeights
) -> tuple[tuple[DecodeLayerStep, ...], KVCache, np.ndarray]:
    """One new token at position ``cache.length``: per layer compute only its q, k, v, append k and v
    to that layer's cache, and attend with one query row against the cache.

    ``-> (each layer's step, the grown cache, the next token's logits [vocab])``.
    """
    c = weights.config
    position = cache.length
    x = embed(np.array([token_id]), weights)  # [1, d_model]
    cos, sin = rope_cos_sin(np.array([position]), c.head_dim, c.rope_base)
    new_layers, steps_out = [], []
    for i, layer in enumerate(weights.layers):
        h = rms_norm(x, layer.attn_norm, c.rms_eps)  # [1, d_model]
        q_pre = project_heads(h, layer.W_Q, c.n_heads)  # [h, 1, d]
        k_pre = project_heads(h, layer.W_K, c.n_kv_heads)  # [g, 1, d]
        v = project_heads(h, layer.W_V, c.n_kv_heads)
        q = rotate_pairs(q_pre, cos, sin, c.rope_layout)
        k = rotate_pairs(k_pre, cos, sin, c.rope_layout)
        layer_cache = append_kv(cache.layers[i], k, v)
        att = decode_attention(q, layer_cache, c.divisor)  # weights [h, 1, n+1]
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
        new_layers.append(layer_cache)
    return tuple(steps_out), KVCache(tuple(new_layers)), _ro(output_logits(x[-1], weights))


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

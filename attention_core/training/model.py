"""A tiny Transformer for the training lab, forward and backward, on a whole batch at once.

    x⁰ = E[tokens] + P[positions]                       (P left out when positions are off)
    attention only:  xˡ⁺¹ = xˡ + Attn(xˡ)
    with the FFN:    h = xˡ + Attn(LN₁(xˡ)),  xˡ⁺¹ = h + FFN(LN₂(h))     (Pre-LN, as the block lab)
    logits = x^L W_U + b_U                              (LN_f(x^L) first when the FFN is on)

Attention is the core's layer: the forward pass is :func:`attention_core.trace.attend` (with a
batch axis) and its backward pass :func:`attention_core.backward.layer_backward`, the same steps
the playground shows. The FFN is ``ReLU(x W_in + b_in) W_out + b_out`` (:func:`attention_core.ffn.relu`),
LayerNorm is :func:`attention_core.norms.standardise` times γ plus β. The loss is the mean
cross-entropy over the scored positions.

All parameters live in one flat float64 vector (each matrix is a view into it), so that Adam
updates them in a few whole-vector operations.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from ..backward import layer_backward
from ..ffn import relu
from ..norms import standardise
from ..steps import log_softmax
from ..trace import AttentionParams, AttentionTrace, attend

FF_MULT = 4  # d_ff = 4 · d_model, as in the block lab


@dataclass(frozen=True)
class ModelShape:
    """The sizes of one tiny Transformer."""

    vocab_in: int
    vocab_out: int
    n: int  # context length (the position table's rows)
    d_model: int
    heads: int
    d_k: int  # per head; d_v = d_k
    layers: int
    ffn: bool
    positions: bool

    @property
    def d_ff(self) -> int:
        return FF_MULT * self.d_model


def parameter_shapes(shape: ModelShape) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape, in the order they are stored and drawn."""
    d, h, k = shape.d_model, shape.heads, shape.d_k
    out: dict[str, tuple[int, ...]] = {"E": (shape.vocab_in, d)}
    if shape.positions:
        out["P"] = (shape.n, d)
    for layer in range(shape.layers):
        p = f"{layer}."
        if shape.ffn:
            out[p + "ln1_g"], out[p + "ln1_b"] = (d,), (d,)
        out[p + "W_Q"], out[p + "W_K"], out[p + "W_V"], out[p + "W_O"] = (
            (h, d, k),
            (h, d, k),
            (h, d, k),
            (h * k, d),
        )
        if shape.ffn:
            out[p + "ln2_g"], out[p + "ln2_b"] = (d,), (d,)
            out[p + "W_in"], out[p + "b_in"] = (d, shape.d_ff), (shape.d_ff,)
            out[p + "W_out"], out[p + "b_out"] = (shape.d_ff, d), (d,)
    if shape.ffn:
        out["lnf_g"], out["lnf_b"] = (d,), (d,)
    out["W_U"], out["b_U"] = (d, shape.vocab_out), (shape.vocab_out,)
    return out


class Params:
    """One flat vector and a view per named parameter (``params["0.W_Q"]`` is ``[h, d, d_k]``).

    Not frozen: the optimiser writes into ``flat``. :meth:`frozen_copy` gives a read-only snapshot.
    """

    def __init__(self, shape: ModelShape, flat: np.ndarray) -> None:
        self.shape = shape
        self.flat = flat
        self.views: dict[str, np.ndarray] = {}
        start = 0
        for name, s in parameter_shapes(shape).items():
            size = int(np.prod(s))
            self.views[name] = flat[start : start + size].reshape(s)
            start += size
        if start != flat.size:
            raise ValueError("the flat vector does not match the model's shape")

    def __getitem__(self, name: str) -> np.ndarray:
        return self.views[name]

    def zeros_like(self) -> Params:
        return Params(self.shape, np.zeros_like(self.flat))

    def frozen_copy(self) -> Params:
        flat = self.flat.copy()
        flat.setflags(write=False)
        return Params(self.shape, flat)


def init_model(shape: ModelShape, seed: int) -> Params:
    """Draw every matrix from ``default_rng(seed)`` in :func:`parameter_shapes` order.

    Embeddings ~ N(0, 1) (unit-variance rows, so the scores' spread is what the √d_k argument
    assumes); a matrix read by ``x @ W`` ~ N(0, 1/fan_in); biases 0, LayerNorm γ = 1 and β = 0.
    """
    rng = np.random.default_rng(seed)
    params = Params(shape, np.zeros(sum(int(np.prod(s)) for s in parameter_shapes(shape).values())))
    for name, s in parameter_shapes(shape).items():
        base = name.split(".")[-1]
        if base in ("E", "P"):
            params[name][...] = rng.standard_normal(s)
        elif base.startswith("W_"):
            fan_in = s[-2] if base != "W_O" else s[0]
            params[name][...] = rng.standard_normal(s) / np.sqrt(fan_in)
        elif base.endswith("_g"):
            params[name][...] = 1.0
    return params


@dataclass(frozen=True)
class LayerCache:
    """One layer's forward intermediates, kept for the backward pass."""

    x: np.ndarray  # [B, n, d] the layer's input
    attention: AttentionTrace  # batched: weights [B, h, n, n], output [B, n, d]
    ln1: tuple[np.ndarray, np.ndarray] | None  # (x̂, std) of LN₁ (FFN on)
    h: np.ndarray  # [B, n, d] after the attention's residual
    ln2: tuple[np.ndarray, np.ndarray] | None
    ffn_in: np.ndarray | None  # [B, n, d] LN₂(h)
    hidden_pre: np.ndarray | None  # [B, n, d_ff] before the ReLU
    hidden: np.ndarray | None  # [B, n, d_ff] after it


@dataclass(frozen=True)
class Forward:
    """The whole forward pass of a batch."""

    tokens: np.ndarray  # [B, n]
    layers: tuple[LayerCache, ...]
    final: np.ndarray  # [B, n, d] what the unembedding reads (after LN_f with the FFN)
    lnf: tuple[np.ndarray, np.ndarray] | None
    logits: np.ndarray  # [B, n, vocab_out]

    def weights(self) -> np.ndarray:
        """Every head's attention map: ``[B, L, h, n, n]``."""
        return np.stack([c.attention.weights for c in self.layers], axis=1)


def layer_norm_forward(
    x: np.ndarray, g: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """``LN(x) = x̂ γ + β``: ``[..., d] -> [..., d]`` and (x̂, std) for the backward pass."""
    x_hat, std = standardise(x)
    return x_hat * g + b, (x_hat, std)


def layer_norm_backward(
    dy: np.ndarray, cache: tuple[np.ndarray, np.ndarray], g: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Back through LayerNorm: ``dy [..., d] -> dx [..., d], dγ [d], dβ [d]``.

    With ``ĝ = dy γ``: ``dx = (ĝ − mean(ĝ) − x̂ · mean(ĝ x̂)) / std`` (the mean and the spread
    that were divided out take their share of the gradient back).
    """
    x_hat, std = cache
    d = dy.shape[-1]
    dg = np.sum((dy * x_hat).reshape(-1, d), axis=0)
    db = np.sum(dy.reshape(-1, d), axis=0)
    g_hat = dy * g
    dx = (
        g_hat - g_hat.mean(axis=-1, keepdims=True) - x_hat * np.mean(g_hat * x_hat, axis=-1, keepdims=True)
    ) / std
    return dx, dg, db


def attention_params(params: Params, layer: int) -> AttentionParams:
    p = f"{layer}."
    return AttentionParams(
        W_Q=params[p + "W_Q"], W_K=params[p + "W_K"], W_V=params[p + "W_V"], W_O=params[p + "W_O"]
    )


def forward(
    params: Params,
    tokens: np.ndarray,
    allowed: np.ndarray,
    divisor: float,
    ablate: Collection[tuple[int, int]] = (),
) -> Forward:
    """The model on ``tokens [B, n]`` with the attention mask ``allowed [n, n]``.

    ``ablate``: ``(layer, head)`` pairs whose output is zeroed (their rows of W_O read as 0), the rest unchanged.
    """
    s = params.shape
    tokens = np.asarray(tokens, dtype=np.intp)
    n = tokens.shape[1]
    x = params["E"][tokens]  # [B, n, d]
    if s.positions:
        x = x + params["P"][:n]
    caches = []
    for layer in range(s.layers):
        p = f"{layer}."
        ln1 = ln2 = ffn_in = hidden_pre = hidden = None
        attn_in = x
        if s.ffn:
            attn_in, ln1 = layer_norm_forward(x, params[p + "ln1_g"], params[p + "ln1_b"])
        ap = attention_params(params, layer)
        zeroed = [h for lay, h in ablate if lay == layer]
        if zeroed:
            W_O = np.array(ap.W_O)
            for head in zeroed:
                W_O[head * s.d_k : (head + 1) * s.d_k] = 0.0
            ap = AttentionParams(W_Q=ap.W_Q, W_K=ap.W_K, W_V=ap.W_V, W_O=W_O)
        att = attend(attn_in, ap, allowed, divisor)
        h = x + att.output  # [B, n, d]
        out = h
        if s.ffn:
            ffn_in, ln2 = layer_norm_forward(h, params[p + "ln2_g"], params[p + "ln2_b"])
            hidden_pre = ffn_in @ params[p + "W_in"] + params[p + "b_in"]  # [B, n, d_ff]
            hidden = relu(hidden_pre)
            out = h + hidden @ params[p + "W_out"] + params[p + "b_out"]
        caches.append(LayerCache(x, att, ln1, h, ln2, ffn_in, hidden_pre, hidden))
        x = out
    lnf = None
    final = x
    if s.ffn:
        final, lnf = layer_norm_forward(x, params["lnf_g"], params["lnf_b"])
    logits = final @ params["W_U"] + params["b_U"]  # [B, n, vocab_out]
    return Forward(tokens, tuple(caches), final, lnf, logits)


EVAL_CHUNK = 64  # sequences per forward pass when only the logits are wanted: bounds the peak memory


def logits_of(
    params: Params,
    tokens: np.ndarray,
    allowed: np.ndarray,
    divisor: float,
    ablate: Collection[tuple[int, int]] = (),
) -> np.ndarray:
    """``[B, n, vocab_out]`` for any number of sequences, :data:`EVAL_CHUNK` at a time (the same
    numbers as one pass: every sequence is computed on its own)."""
    parts = [
        forward(params, tokens[i : i + EVAL_CHUNK], allowed, divisor, ablate).logits
        for i in range(0, len(tokens), EVAL_CHUNK)
    ]
    return np.concatenate(parts, axis=0)


def cross_entropy(logits: np.ndarray, targets: np.ndarray, scored: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean ``−log p(target)`` over the scored positions, and its gradient ``dlogits [B, n, V]``.

    ``dlogits = (softmax − one_hot(target)) / count`` at scored positions, 0 elsewhere.
    """
    logp = log_softmax(logits)
    count = max(int(scored.sum()), 1)
    picked = np.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]  # [B, n]
    loss = -float(np.sum(picked[scored])) / count
    dlogits = np.exp(logp)
    np.put_along_axis(
        dlogits, targets[..., None], np.take_along_axis(dlogits, targets[..., None], axis=-1) - 1.0, axis=-1
    )
    dlogits *= (scored / count)[..., None]
    return loss, dlogits


def accuracy(logits: np.ndarray, targets: np.ndarray, scored: np.ndarray) -> float:
    """The share of scored positions whose largest logit is the target."""
    hits = (logits.argmax(axis=-1) == targets) & scored
    return float(hits.sum() / max(int(scored.sum()), 1))


def backward(
    params: Params, fwd: Forward, dlogits: np.ndarray, grads: Params, layer_grads: list | None = None
) -> Params:
    """Every parameter's gradient, written into ``grads`` (a :class:`Params` of the same shape).

    ``layer_grads``: a list that receives each attention layer's :class:`~attention_core.backward.LayerGrads`
    (last layer first), for an experiment that reads the gradient at the scores.
    """
    s = params.shape
    d = s.d_model
    grads.flat[...] = 0.0
    rows = dlogits.reshape(-1, s.vocab_out)
    grads["W_U"][...] = fwd.final.reshape(-1, d).T @ rows
    grads["b_U"][...] = rows.sum(axis=0)
    dx = dlogits @ params["W_U"].T  # [B, n, d]
    if s.ffn:
        dx, grads["lnf_g"][...], grads["lnf_b"][...] = layer_norm_backward(dx, fwd.lnf, params["lnf_g"])
    for layer in range(s.layers - 1, -1, -1):
        c = fwd.layers[layer]
        p = f"{layer}."
        if s.ffn:
            dhidden = dx @ params[p + "W_out"].T  # [B, n, d_ff]
            grads[p + "W_out"][...] = c.hidden.reshape(-1, s.d_ff).T @ dx.reshape(-1, d)
            grads[p + "b_out"][...] = dx.reshape(-1, d).sum(axis=0)
            dpre = dhidden * (c.hidden_pre > 0)  # ReLU passes the gradient where it was on
            grads[p + "W_in"][...] = c.ffn_in.reshape(-1, d).T @ dpre.reshape(-1, s.d_ff)
            grads[p + "b_in"][...] = dpre.reshape(-1, s.d_ff).sum(axis=0)
            dh, grads[p + "ln2_g"][...], grads[p + "ln2_b"][...] = layer_norm_backward(
                dpre @ params[p + "W_in"].T, c.ln2, params[p + "ln2_g"]
            )
            dx = dx + dh  # the residual adds both paths
        g = layer_backward(c.attention, dx)  # the attention layer's own backward pass
        if layer_grads is not None:
            layer_grads.append(g)
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            grads[p + name][...] = getattr(g, "d" + name)
        if s.ffn:
            dattn_in, grads[p + "ln1_g"][...], grads[p + "ln1_b"][...] = layer_norm_backward(
                g.dX, c.ln1, params[p + "ln1_g"]
            )
        else:
            dattn_in = g.dX
        dx = dx + dattn_in
    flat_dx = dx.reshape(-1, d)
    np.add.at(grads["E"], fwd.tokens.reshape(-1), flat_dx)
    if s.positions:
        grads["P"][: fwd.tokens.shape[1]] += dx.sum(axis=0)
    return grads

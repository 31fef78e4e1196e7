"""The backward pass of the 2017 multi-head attention layer, one small pure function per step.

Each function undoes one forward step of :mod:`attention_core.steps`, in reverse order: it takes
the gradient of the loss with respect to that step's output (``d<name>``, the same shape as the
output) and returns the gradients with respect to its inputs. Shapes as in ``steps``; where a shape
starts with ``...``, leading batch axes are allowed (the training lab's batches), and a weight's
gradient is then summed over the batch and the tokens.

The playground's loss is ``L = ½‖O − Y‖²`` (summed over every entry) against an invented target
``Y = default_rng(target_seed).standard_normal(O.shape)``: there is no right answer for a random
layer, so the target is made up only so that there is a gradient to follow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import steps
from .arrays import read_only
from .trace import AttentionTrace, attend

# --------------------------------------------------------------------------------------------
# The steps, from the output back to the input
# --------------------------------------------------------------------------------------------


def half_squared_error(output: np.ndarray, Y: np.ndarray) -> float:
    """``L = ½ Σ (O − Y)²`` over every entry: ``[..., n, d_model], same -> scalar``."""
    diff = output - Y
    return 0.5 * float(np.sum(diff * diff))


def half_squared_error_backward(output: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``dL/dO = O − Y``: ``[..., n, d_model] -> same``."""
    return output - Y


def output_projection_backward(
    dO: np.ndarray, concat: np.ndarray, W_O: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Back through ``O = concat W_O (+ b_O)``.

    ``dO [..., n, d_model], concat [..., n, h*d_v], W_O [h*d_v, d_model]`` ->
    ``dconcat = dO W_Oᵀ [..., n, h*d_v]``, ``dW_O = concatᵀ dO [h*d_v, d_model]`` (summed over the
    batch and the tokens) and ``db_O = Σ dO [d_model]``.
    """
    d_model = dO.shape[-1]
    dconcat = dO @ W_O.T
    rows = dO.reshape(-1, d_model)  # every token of every example is one row
    dW_O = concat.reshape(-1, concat.shape[-1]).T @ rows
    return dconcat, dW_O, rows.sum(axis=0)


def merge_heads_backward(dconcat: np.ndarray, heads: int) -> np.ndarray:
    """Concatenation only moves numbers, so its gradient is cut back into the head slices:
    ``[..., n, h*d_v] -> [..., h, n, d_v]``."""
    return steps.split_heads(dconcat, heads)


def weighted_sum_backward(
    dhead: np.ndarray, weights: np.ndarray, V: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Back through ``head = weights V``.

    ``dhead [..., h, n_q, d_v], weights [..., h, n_q, n_k], V [..., h, n_k, d_v]`` ->
    ``dweights = dhead Vᵀ [..., h, n_q, n_k]`` and ``dV = weightsᵀ dhead [..., h, n_k, d_v]``.
    """
    dweights = dhead @ np.swapaxes(V, -1, -2)
    dV = np.swapaxes(weights, -1, -2) @ dhead
    return dweights, dV


def softmax_backward(dweights: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Back through a row's softmax: ``g ↦ p ⊙ (g − Σ p g)`` (the Jacobian ``diag(p) − p pᵀ`` times g).

    ``dweights (g) [..., n_q, n_k], weights (p) [..., n_q, n_k] -> [..., n_q, n_k]``. ``Σ p g`` is
    the row's p-weighted mean of g: a cell gains gradient only by how far its g is from that mean,
    scaled by its own weight. A masked cell has p = 0, so it gets exactly 0; so does a row whose
    keys are all masked (all p = 0), and a saturated row (one p near 1, the rest near 0) passes
    back almost nothing.
    """
    mean_g = np.sum(weights * dweights, axis=-1, keepdims=True)  # [..., n_q, 1]
    return weights * (dweights - mean_g)


def mask_backward(dmasked: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Back through ``where(allowed, scores, −∞)``: a masked cell's output does not depend on its
    score, so its gradient is exactly 0. ``[..., n_q, n_k], [n_q, n_k] -> [..., n_q, n_k]``."""
    return np.where(allowed, dmasked, 0.0)


def scale_backward(dscaled: np.ndarray, divisor: float) -> np.ndarray:
    """Back through ``scores / divisor``: ``[..., n_q, n_k] -> same``, divided by the same divisor."""
    return dscaled / divisor


def raw_scores_backward(draw: np.ndarray, Q: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Back through ``Q Kᵀ``.

    ``draw [..., h, n_q, n_k], Q [..., h, n_q, d_k], K [..., h, n_k, d_k]`` ->
    ``dQ = draw K [..., h, n_q, d_k]`` (query i collects the keys its row scored, each times that
    cell's gradient) and ``dK = drawᵀ Q [..., h, n_k, d_k]``.
    """
    dQ = draw @ K
    dK = np.swapaxes(draw, -1, -2) @ Q
    return dQ, dK


def project_backward(
    dQ: np.ndarray, X: np.ndarray, W: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Back through the per-head projection ``Q = X W (+ b)``.

    ``dQ [..., h, n, d], X [..., n, d_model], W [h, d_model, d]`` -> ``dX = Σ_h dQ_h W_hᵀ
    [..., n, d_model]``, ``dW = Xᵀ dQ [h, d_model, d]`` and ``db = Σ dQ [h, d]`` (both summed over
    the batch and the tokens).
    """
    h, d_model, d = W.shape
    dQ_wide = steps.merge_heads(dQ)  # [..., n, h*d]: every head's columns side by side
    W_wide = np.swapaxes(W, 0, 1).reshape(d_model, h * d)  # [d_model, h*d], the same order
    dX = dQ_wide @ W_wide.T  # one product sums over the heads
    rows = dQ_wide.reshape(-1, h * d)
    dW = (X.reshape(-1, d_model).T @ rows).reshape(d_model, h, d).swapaxes(0, 1)
    return dX, dW, rows.sum(axis=0).reshape(h, d)


# --------------------------------------------------------------------------------------------
# The whole layer
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayerGrads:
    """The gradient of a loss with respect to every input and intermediate of one attention pass.

    Each ``d<name>`` has the shape of the trace's ``<name>`` (leading batch axes included); weight
    gradients have the weight's shape. ``db_*`` are None when the layer has no such bias. All
    arrays are read-only.
    """

    dO: np.ndarray  # [..., n, d_model] the gradient arriving at the output
    dW_O: np.ndarray  # [h*d_v, d_model]
    dconcat: np.ndarray  # [..., n, h*d_v]
    dhead_outputs: np.ndarray  # [..., h, n, d_v]
    dweights: np.ndarray  # [..., h, n, n] g: with respect to the softmax's output
    dscores: np.ndarray  # [..., h, n, n] with respect to the softmax's input (after scale and mask)
    draw_scores: np.ndarray  # [..., h, n, n] with respect to Q Kᵀ before the scaling
    dQ: np.ndarray  # [..., h, n, d_k]
    dK: np.ndarray  # [..., h, n, d_k]
    dV: np.ndarray  # [..., h, n, d_v]
    dW_Q: np.ndarray  # [h, d_model, d_k]
    dW_K: np.ndarray  # [h, d_model, d_k]
    dW_V: np.ndarray  # [h, d_model, d_v]
    dX: np.ndarray  # [..., n, d_model] with respect to the layer's input X
    db_Q: np.ndarray | None  # [h, d_k]
    db_K: np.ndarray | None  # [h, d_k]
    db_V: np.ndarray | None  # [h, d_v]
    db_O: np.ndarray | None  # [d_model]


@dataclass(frozen=True)
class AttentionGrads(LayerGrads):
    """:class:`LayerGrads` for the playground's loss ``L = ½‖O − Y‖²``, with the loss and the
    invented target ``Y [n, d_model]``."""

    loss: float
    Y: np.ndarray


def _grad_fields(trace: AttentionTrace, dO: np.ndarray) -> dict:
    """Every step backwards, in the reverse order of :func:`attention_core.trace.attend`."""
    p = trace.params
    h = trace.heads
    dconcat, dW_O, db_O = output_projection_backward(dO, trace.concat, p.W_O)  # [..., n, h*d_v]
    dhead = merge_heads_backward(dconcat, h)  # [..., h, n, d_v]
    dweights, dV = weighted_sum_backward(dhead, trace.weights, trace.V)  # [..., h, n, n], [..., h, n, d_v]
    dmasked = softmax_backward(dweights, trace.weights)  # [..., h, n, n]
    dscaled = mask_backward(dmasked, trace.mask)  # [..., h, n, n]
    draw = scale_backward(dscaled, trace.divisor)  # [..., h, n, n]
    dQ, dK = raw_scores_backward(draw, trace.Q, trace.K)  # [..., h, n, d_k] each
    dX_Q, dW_Q, db_Q = project_backward(dQ, trace.X, p.W_Q)
    dX_K, dW_K, db_K = project_backward(dK, trace.X, p.W_K)
    dX_V, dW_V, db_V = project_backward(dV, trace.X, p.W_V)
    dX = dX_Q + dX_K + dX_V  # X feeds all three projections  [..., n, d_model]
    arrays = {
        "dO": dO, "dW_O": dW_O, "dconcat": dconcat, "dhead_outputs": dhead, "dweights": dweights,
        "dscores": dmasked, "draw_scores": draw, "dQ": dQ, "dK": dK, "dV": dV,
        "dW_Q": dW_Q, "dW_K": dW_K, "dW_V": dW_V, "dX": dX,
        "db_Q": db_Q if p.b_Q is not None else None, "db_K": db_K if p.b_K is not None else None,
        "db_V": db_V if p.b_V is not None else None, "db_O": db_O if p.b_O is not None else None,
    }  # fmt: skip
    return {k: None if v is None else read_only(v) for k, v in arrays.items()}


def layer_backward(trace: AttentionTrace, dO: np.ndarray) -> LayerGrads:
    """The gradients of one pass (a trace, batched or not) given ``dO = dL/dO [..., n, d_model]``."""
    return LayerGrads(**_grad_fields(trace, np.asarray(dO, dtype=float)))


def invented_target(shape: tuple[int, ...], target_seed: int) -> np.ndarray:
    """The made-up target ``Y = default_rng(target_seed).standard_normal(shape)``."""
    return np.random.default_rng(target_seed).standard_normal(shape)


def attention_grads(trace: AttentionTrace, target_seed: int = 0) -> AttentionGrads:
    """Every gradient of ``L = ½‖O − Y‖²`` for the playground's trace (Y from ``target_seed``)."""
    Y = invented_target(trace.output.shape, target_seed)
    fields = _grad_fields(trace, half_squared_error_backward(trace.output, Y))
    return AttentionGrads(**fields, loss=half_squared_error(trace.output, Y), Y=read_only(Y))


# --------------------------------------------------------------------------------------------
# Facts the page shows, computed from the learner's numbers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScaleComparison:
    """The same weights, input and target, with the scores divided by ``divisor``."""

    divisor: float
    loss: float
    dscores_norm: float  # ‖dL/d(softmax input)‖ over every head
    draw_scores_norm: float  # ‖dL/d(Q Kᵀ)‖
    mean_max_weight: float  # the mean, over heads and rows with an allowed key, of the row's largest weight


@dataclass(frozen=True)
class QueryDecomposition:
    """``dQ_i = Σ_j c_j k_j`` with ``c_j = p_ij (g_ij − Σ_k p_ik g_ik) / divisor`` for one query row."""

    head: int
    query: int
    p: np.ndarray  # [n] the row's weights
    g: np.ndarray  # [n] dL/d(weights) on that row
    mean_g: float  # Σ_k p_ik g_ik, the row's p-weighted mean of g
    coefficients: np.ndarray  # [n] c_j (0 for a masked key)
    terms: np.ndarray  # [n, d_k] c_j k_j
    dQ_row: np.ndarray  # [d_k] the gradient the backward pass computed
    residual: float  # max |Σ_j c_j k_j − dQ_row|: rounding only


@dataclass(frozen=True)
class GradFacts:
    masked_cells: int  # cells masked, over all heads
    masked_max_abs_dweights: float  # g there is not 0 in general ...
    masked_max_abs_dscores: float  # ... but the gradient past the softmax is exactly 0
    masked_max_abs_draw_scores: float
    d_k: int
    scaled: ScaleComparison  # divided by √d_k
    unscaled: ScaleComparison  # divided by 1
    query: QueryDecomposition

    @property
    def gradient_ratio(self) -> float:
        """‖d scores‖ with the 1/√d_k over without it (inf when the unscaled one is exactly 0)."""
        if self.unscaled.dscores_norm == 0:
            return math.inf
        return self.scaled.dscores_norm / self.unscaled.dscores_norm


def _compare_scale(trace: AttentionTrace, divisor: float, Y: np.ndarray) -> ScaleComparison:
    t = attend(trace.X, trace.params, trace.mask, divisor)
    g = layer_backward(t, half_squared_error_backward(t.output, Y))
    live = ~t.fully_masked_rows  # rows with at least one allowed key
    return ScaleComparison(
        divisor=float(divisor),
        loss=half_squared_error(t.output, Y),
        dscores_norm=float(np.linalg.norm(g.dscores)),
        draw_scores_norm=float(np.linalg.norm(g.draw_scores)),
        mean_max_weight=float(t.weights.max(axis=-1)[..., live].mean()) if live.any() else 0.0,
    )


def query_decomposition(
    trace: AttentionTrace, grads: LayerGrads, head: int, query: int
) -> QueryDecomposition:
    """dQ for one query row as a sum over the keys it attends to (see :class:`QueryDecomposition`).

    ``p``, ``g`` and ``dQ_row`` are views of the (read-only) trace and gradients, not copies.
    """
    _check_row(trace, head, query)
    p = trace.weights[head, query]
    g = grads.dweights[head, query]
    mean_g = float(np.dot(p, g))
    coefficients = p * (g - mean_g) / trace.divisor
    terms = coefficients[:, None] * trace.K[head]
    dQ_row = grads.dQ[head, query]
    return QueryDecomposition(
        head=head, query=query, p=p, g=g, mean_g=mean_g, coefficients=read_only(coefficients),
        terms=read_only(terms), dQ_row=dQ_row,
        residual=float(np.max(np.abs(terms.sum(axis=0) - dQ_row))),
    )  # fmt: skip


def gradient_facts(
    trace: AttentionTrace, grads: AttentionGrads, head: int = 0, query: int | None = None
) -> GradFacts:
    """The page's three facts: masked cells get exactly 0; ‖d scores‖ with and without the
    1/√d_k (same weights, same X, same Y); dQ of ``query`` (default: the last row) decomposed."""
    masked = ~trace.mask  # [n, n]
    d_k = trace.Q.shape[-1]

    def masked_max(a: np.ndarray) -> float:
        return float(np.max(np.abs(a[:, masked]))) if masked.any() else 0.0

    return GradFacts(
        masked_cells=int(masked.sum()) * trace.heads,
        masked_max_abs_dweights=masked_max(grads.dweights),
        masked_max_abs_dscores=masked_max(grads.dscores),
        masked_max_abs_draw_scores=masked_max(grads.draw_scores),
        d_k=d_k,
        scaled=_compare_scale(trace, math.sqrt(d_k), grads.Y),
        unscaled=_compare_scale(trace, 1.0, grads.Y),
        query=query_decomposition(trace, grads, head, trace.n - 1 if query is None else query),
    )


@dataclass(frozen=True)
class GradCell:
    """One cell's arithmetic past the softmax: ``dscore = p_ij (g_ij − Σ_k p_ik g_ik)``."""

    head: int
    query: int
    key: int
    p: np.ndarray  # [n] the row's weights
    g: np.ndarray  # [n] the row's dL/d(weights)
    sum_pg: float  # Σ_k p_ik g_ik
    p_cell: float
    g_cell: float
    dscore: float  # p_ij (g_ij − Σ p g), the gradient at the softmax's input
    draw_score: float  # dscore / divisor, the gradient at Q Kᵀ
    divisor: float
    masked: bool


def _check_index(name: str, value: int, size: int) -> None:
    if not 0 <= value < size:
        raise ValueError(f"{name} must be between 0 and {size - 1}, got {value}")


def _check_row(trace: AttentionTrace, head: int, query: int) -> None:
    if trace.Q.ndim != 3:
        raise ValueError("one row is read from an unbatched trace")
    _check_index("head", head, trace.heads)
    _check_index("query", query, trace.n)


def explain_grad_cell(trace: AttentionTrace, grads: LayerGrads, head: int, query: int, key: int) -> GradCell:
    """The numbers behind ``grads.dscores[head, query, key]`` (``p``, ``g``: views of the read-only rows)."""
    _check_row(trace, head, query)
    _check_index("key", key, trace.n)
    p = trace.weights[head, query]
    g = grads.dweights[head, query]
    sum_pg = float(np.dot(p, g))
    return GradCell(
        head=head, query=query, key=key, p=p, g=g, sum_pg=sum_pg,
        p_cell=float(p[key]), g_cell=float(g[key]), dscore=float(grads.dscores[head, query, key]),
        draw_score=float(grads.draw_scores[head, query, key]), divisor=trace.divisor,
        masked=not bool(trace.mask[query, key]),
    )  # fmt: skip

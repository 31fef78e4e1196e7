"""Lab "Where the mask goes": mask builders, the classic mistakes, and a leakage measure.

Convention everywhere: ``allowed[i, j]`` is True when query i may use key j.

Sliding window of width w (causal): query i sees keys i − w + 1, …, i (itself and the w − 1
keys before it, fewer near the start). w = 1 is "only itself"; w ≥ n equals the causal mask.

The attention variants take one head's ``Q [n_q, d_k]``, ``K [n_k, d_k]``, ``V [n_k, d_v]`` (a
leading head axis also works) and return a :class:`MaskedAttention`:

- ``correct``: −∞ added to the masked scores *before* softmax (the right way).
- ``zero_values``: softmax over every key, then for query i the value rows of the keys it may not
  see are replaced by 0 before the weighted sum: out_i = Σ_j w_ij · [allowed_ij] · v_j.
- ``zero_weights``: softmax over every key, then the masked weights are set to 0 and the row is
  *not* renormalised. Its output is identical to ``zero_values`` (same sum, grouped differently);
  both let forbidden keys leak in through the softmax denominator, and rows sum to less than 1.
- ``renormalise``: as ``zero_weights`` but each row is divided by its new sum. Mathematically
  this *is* the correct mask (exp(s_ij)/Σ_allowed exp(s_ij')); only floating-point rounding differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import steps
from ..arrays import read_only
from ..config import MASK_KINDS, PAD_TOKEN, AttentionConfig
from ..embeddings import embed
from ..trace import AttentionParams, AttentionTrace, trace_tokens

LAB_MASK_KINDS = MASK_KINDS + ("sliding",)
CAUSAL_KINDS = ("causal", "causal+padding", "sliding")  # kinds that hide the future
METHODS = ("correct", "zero_values", "zero_weights", "renormalise")
# The lab's layer: small enough that the leakage map (2·n layer runs) stays instant.
D_MODEL, HEADS = 16, 2
ROUNDING_LEVEL = 1e-12  # below this a movement is floating-point rounding, not information


_ro = read_only


def sliding_window_mask(n: int, window: int) -> np.ndarray:
    """Causal sliding window ``[n, n]``: allowed[i, j] ⇔ i − window < j ≤ i."""
    if n < 1 or window < 1:
        raise ValueError("n and window must be positive")
    positions = np.arange(n)
    return steps.window_allowed(positions, positions, window)


def allowed_mask(kind: str, n: int, n_pad: int = 0, window: int = 2) -> np.ndarray:
    """Boolean ``[n, n]`` mask for one of :data:`LAB_MASK_KINDS` (``window`` only for "sliding")."""
    if kind == "sliding":
        return sliding_window_mask(n, window)
    return steps.build_mask(kind, n, n_pad)


@dataclass(frozen=True)
class LabMask:
    """Both forms of a mask: the boolean picture and the matrix M added to the scores."""

    kind: str
    n: int
    n_pad: int
    window: int | None  # only for "sliding"
    allowed: np.ndarray  # [n, n] bool, True = may attend
    additive: np.ndarray  # [n, n] 0 where allowed, −inf where masked
    allowed_per_query: np.ndarray  # [n] int, how many keys each query sees

    @property
    def masked_cells(self) -> int:
        """How many of the n² query–key pairs the mask hides."""
        return int((~self.allowed).sum())


def mask_matrices(kind: str, n: int, n_pad: int = 0, window: int = 2) -> LabMask:
    """The boolean mask and its additive form M for the mask picker."""
    allowed = allowed_mask(kind, n, n_pad, window)
    return LabMask(
        kind=kind,
        n=n,
        n_pad=n_pad,
        window=window if kind == "sliding" else None,
        allowed=_ro(allowed),
        additive=_ro(steps.additive_mask(allowed)),
        allowed_per_query=_ro(allowed.sum(axis=1)),
    )


@dataclass(frozen=True)
class MaskedAttention:
    """The result of one masking method on one head.

    ``softmax_weights`` is what softmax produced; ``effective_weights`` is what actually multiplies
    the value rows (out = effective_weights @ V). They differ for the wrong methods.
    """

    method: str
    scores: np.ndarray  # [..., n_q, n_k] scaled scores (before any mask)
    softmax_weights: np.ndarray  # [..., n_q, n_k]
    effective_weights: np.ndarray  # [..., n_q, n_k]
    output: np.ndarray  # [..., n_q, d_v]
    row_sums: np.ndarray  # [..., n_q] sum of effective weights (1 when correct, unless fully masked)


def _scaled(Q, K, divisor):
    return steps.scale(
        steps.raw_scores(np.asarray(Q, float), np.asarray(K, float)), divisor
    )  # [.., n_q, n_k]


def _result(method, scores, sm, eff, V) -> MaskedAttention:
    out = eff @ np.asarray(V, float)  # [.., n_q, d_v]
    return MaskedAttention(method, _ro(scores), _ro(sm), _ro(eff), _ro(out), _ro(eff.sum(axis=-1)))


def attention_correct(Q, K, V, allowed, divisor: float) -> MaskedAttention:
    """softmax(QKᵀ/divisor + M) V: masked keys get −∞ before softmax, hence weight exactly 0."""
    s = _scaled(Q, K, divisor)
    w = steps.softmax(steps.apply_mask(s, allowed))
    return _result("correct", s, w, w, V)


def attention_zero_values(Q, K, V, allowed, divisor: float) -> MaskedAttention:
    """Mistake: softmax over all keys, then zero, for each query i, the value rows it may not see.

    out_i = Σ_j w_ij · (v_j if allowed[i, j] else 0), with w = softmax(QKᵀ/divisor) unmasked.
    """
    s = _scaled(Q, K, divisor)
    w = steps.softmax(s)
    eff = w * np.asarray(allowed, bool)  # the per-query zeroed V, folded into the weights
    return _result("zero_values", s, w, eff, V)


def attention_zero_weights_after_softmax(
    Q, K, V, allowed, divisor: float, renormalise: bool = False
) -> MaskedAttention:
    """Mistake: softmax over all keys, then set masked weights to 0 (optionally renormalise rows).

    Without renormalising the rows no longer sum to 1 and forbidden keys still shape the
    denominator. With renormalising, the result equals the correct mask up to rounding. A row with
    no allowed key gets all zeros (as the core softmax does).
    """
    s = _scaled(Q, K, divisor)
    w = steps.softmax(s)
    eff = w * np.asarray(allowed, bool)
    if renormalise:
        total = eff.sum(axis=-1, keepdims=True)
        eff = np.where(total > 0, eff / np.where(total > 0, total, 1.0), 0.0)
    return _result("renormalise" if renormalise else "zero_weights", s, w, eff, V)


def attention_renormalise_after_softmax(Q, K, V, allowed, divisor: float) -> MaskedAttention:
    """Softmax over all keys, zero the masked weights, divide each row by its sum (= correct)."""
    return attention_zero_weights_after_softmax(Q, K, V, allowed, divisor, renormalise=True)


def masked_attention(method: str, Q, K, V, allowed, divisor: float) -> MaskedAttention:
    """Dispatch by name, one of :data:`METHODS`."""
    if method == "correct":
        return attention_correct(Q, K, V, allowed, divisor)
    if method == "zero_values":
        return attention_zero_values(Q, K, V, allowed, divisor)
    if method == "zero_weights":
        return attention_zero_weights_after_softmax(Q, K, V, allowed, divisor)
    if method == "renormalise":
        return attention_renormalise_after_softmax(Q, K, V, allowed, divisor)
    raise ValueError(f"unknown method {method!r}; use one of {METHODS}")


def multihead_output(
    X, params: AttentionParams, allowed, divisor: float, method: str = "correct"
) -> np.ndarray:
    """Full multi-head layer output ``[n, d_model]`` with the chosen masking method in every head."""
    X = np.asarray(X, float)
    Q = steps.project(X, params.W_Q, params.b_Q)  # [h, n, d_k]
    K = steps.project(X, params.W_K, params.b_K)  # [h, n, d_k]
    V = steps.project(X, params.W_V, params.b_V)  # [h, n, d_v]
    heads = masked_attention(method, Q, K, V, allowed, divisor).output  # [h, n, d_v]
    return steps.output_projection(steps.merge_heads(heads), params.W_O, params.b_O)  # [n, d_model]


@dataclass(frozen=True)
class Leakage:
    """How far each position's output moves when the input row at ``position`` is replaced.

    With a causal mask, positions before ``position`` must not move at all (moved == 0 exactly).
    """

    method: str
    position: int
    before: np.ndarray  # [n, d_model] layer output with the original X
    after: np.ndarray  # [n, d_model] layer output with row `position` replaced
    moved: np.ndarray  # [n] max |after − before| per position
    max_earlier: float  # largest movement among positions < `position` (0 when position == 0)
    earlier_unchanged: bool  # np.array_equal on the rows before `position`

    @property
    def verdict(self) -> str:
        """``"zero"`` (earlier outputs bit-for-bit unchanged), ``"rounding"`` (moved less than
        :data:`ROUNDING_LEVEL`) or ``"leak"`` (a later token reached an earlier output)."""
        if self.earlier_unchanged:
            return "zero"
        return "rounding" if self.max_earlier < ROUNDING_LEVEL else "leak"


def leakage(
    X,
    params: AttentionParams,
    position: int,
    method: str = "correct",
    allowed=None,
    divisor: float | None = None,
    replacement=None,
    seed: int = 0,
) -> Leakage:
    """Replace token ``position``'s input vector and measure how every output row moves.

    ``allowed`` defaults to the causal mask, ``divisor`` to √d_k, ``replacement`` to a fresh
    N(0, 1) vector from ``default_rng(seed)``.
    """
    X = np.asarray(X, float)
    n, d_model = X.shape
    if not 0 <= position < n:
        raise ValueError("position must index a row of X")
    if allowed is None:
        allowed = steps.build_mask("causal", n)
    if divisor is None:
        divisor = float(np.sqrt(params.W_Q.shape[2]))
    if replacement is None:
        replacement = np.random.default_rng(seed).standard_normal(d_model)
    X2 = X.copy()
    X2[position] = np.asarray(replacement, float)
    before = multihead_output(X, params, allowed, divisor, method)
    after = multihead_output(X2, params, allowed, divisor, method)
    moved = np.max(np.abs(after - before), axis=1)  # [n]
    return Leakage(
        method=method,
        position=position,
        before=_ro(before),
        after=_ro(after),
        moved=_ro(moved),
        max_earlier=float(moved[:position].max()) if position else 0.0,
        earlier_unchanged=bool(np.array_equal(before[:position], after[:position])),
    )


@dataclass(frozen=True)
class LeakageMatrix:
    """``moved[c, i]``: how far output row i moves when input row c is replaced (for a heatmap).

    With a correct causal mask every entry with i < c (an output *before* the changed token) is
    exactly 0; only outputs at or after the changed position may move.
    """

    method: str
    moved: np.ndarray  # [n changed, n outputs]
    leaks: np.ndarray  # [n changed, n outputs] bool: i < c and moved > 0 (a future token reached the past)
    total_leaks: int


def leakage_matrix(
    X,
    params: AttentionParams,
    method: str = "correct",
    allowed=None,
    divisor: float | None = None,
    seed: int = 0,
) -> LeakageMatrix:
    """:func:`leakage` for every changed position c (replacement drawn from ``default_rng((seed, c))``)."""
    X = np.asarray(X, float)
    n, d_model = X.shape
    rows = []
    for c in range(n):
        repl = np.random.default_rng((seed, c)).standard_normal(d_model)
        rows.append(leakage(X, params, c, method, allowed, divisor, repl).moved)
    moved = np.array(rows)  # [n, n]
    earlier = np.arange(n)[None, :] < np.arange(n)[:, None]  # output i before changed c
    leaks = earlier & (moved > 0)
    return LeakageMatrix(method, _ro(moved), _ro(leaks), int(leaks.sum()))


# --- the lab on a sentence ----------------------------------------------------------------------


@dataclass(frozen=True)
class MaskLabSettings:
    """What the Masks page asks for: a sentence, its [PAD]s, a mask kind, a seed and a head."""

    sentence: tuple[str, ...]  # the sentence's tokens, without the [PAD]s
    n_pad: int
    kind: str  # one of LAB_MASK_KINDS
    window: int  # the sliding window's width (only "sliding" uses it)
    seed: int
    head: int = 0

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.sentence + (PAD_TOKEN,) * self.n_pad

    @property
    def leak_kind(self) -> str:
        """The mask the leakage test uses: the chosen one if it hides the future, else causal."""
        return self.kind if self.kind in CAUSAL_KINDS else "causal"


def lab_layer(sentence: tuple[str, ...], n_pad: int, seed: int) -> AttentionTrace:
    """The lab's layer (d_model = D_MODEL, HEADS heads, seeded) on the sentence plus its [PAD]s.

    Its X, parameters, Q, K, V and divisor are what every masking method starts from; its own
    attention is unmasked and not used.
    """
    return trace_tokens(sentence, AttentionConfig(d_model=D_MODEL, heads=HEADS, pad=n_pad, seed=seed))


@dataclass(frozen=True)
class MethodSummary:
    """One masking method against the correct one, on one head."""

    method: str
    row_sum_min: float  # smallest row sum of the effective weights (1 when correct, unless fully masked)
    row_sum_max: float
    forbidden_weight: float  # total effective weight on masked keys (0 when correct)
    max_diff: float  # largest |output − the correct output|


@dataclass(frozen=True)
class MaskLab:
    """Everything the Masks page shows for one setting (arrays read-only)."""

    settings: MaskLabSettings
    mask: LabMask  # the chosen kind
    all_masks: tuple[LabMask, ...]  # every kind of LAB_MASK_KINDS, for the side-by-side view
    masked_scores: np.ndarray  # [n, n] the head's scaled scores, −∞ where masked
    methods: tuple[MaskedAttention, ...]  # one per METHODS entry, on the chosen head
    summary: tuple[MethodSummary, ...]  # one per METHODS entry


def mask_lab(settings: MaskLabSettings) -> MaskLab:
    """The chosen mask, every kind of mask, and the four masking methods on the chosen head."""
    s = settings
    layer = lab_layer(s.sentence, s.n_pad, s.seed)
    n = layer.n
    masks = tuple(mask_matrices(kind, n, s.n_pad, s.window) for kind in LAB_MASK_KINDS)
    mask = masks[LAB_MASK_KINDS.index(s.kind)]
    Q, K, V = layer.Q[s.head], layer.K[s.head], layer.V[s.head]  # [n, d_k], [n, d_k], [n, d_v]
    methods = tuple(masked_attention(m, Q, K, V, mask.allowed, layer.divisor) for m in METHODS)
    correct = methods[0].output  # [n, d_v]
    summary = tuple(
        MethodSummary(
            r.method,
            float(r.row_sums.min()),
            float(r.row_sums.max()),
            float(np.where(mask.allowed, 0.0, r.effective_weights).sum()),
            float(np.max(np.abs(r.output - correct))),
        )
        for r in methods
    )
    masked_scores = _ro(steps.apply_mask(methods[0].scores, mask.allowed))  # [n, n]
    return MaskLab(s, mask, masks, masked_scores, methods, summary)


def swap_leakage(settings: MaskLabSettings, position: int, replacement: str) -> tuple[Leakage, ...]:
    """Swap the token at ``position`` for ``replacement`` and measure, per method in METHODS, how
    every output moves under :attr:`MaskLabSettings.leak_kind`.

    The new input row is the swapped sentence embedded exactly as the layer embeds its own: the
    replacement's vector plus the position's encoding.
    """
    s = settings
    layer = lab_layer(s.sentence, s.n_pad, s.seed)
    tokens = s.tokens
    swapped = tokens[:position] + (replacement,) + tokens[position + 1 :]
    row = embed(swapped, D_MODEL, s.seed, positional=True)[position]  # [d_model]
    allowed = allowed_mask(s.leak_kind, len(tokens), s.n_pad, s.window)
    return tuple(
        leakage(layer.X, layer.params, position, m, allowed, layer.divisor, replacement=row) for m in METHODS
    )


def leakage_map(settings: MaskLabSettings, method: str) -> LeakageMatrix:
    """:func:`leakage_matrix` of the lab's layer under :attr:`MaskLabSettings.leak_kind`."""
    s = settings
    layer = lab_layer(s.sentence, s.n_pad, s.seed)
    allowed = allowed_mask(s.leak_kind, layer.n, s.n_pad, s.window)
    return leakage_matrix(layer.X, layer.params, method, allowed, layer.divisor, seed=s.seed)

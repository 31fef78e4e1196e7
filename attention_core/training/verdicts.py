"""What each experiment's numbers say, decided by named conditions with named margins.

Every function here is pure: numbers in, the name of one verdict out. Each verdict is one sentence
on the page (``training.x_<experiment>_<verdict>`` in both languages), so a verdict can only claim
what its condition tested; :func:`verdicts` lists an experiment's verdicts in the page's order. The
margins are set so that a result that only just goes the expected way is not called clear.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import experiments as X

# --- a training run ------------------------------------------------------------------------------


def diverged(losses: Sequence[float]) -> bool:
    """The run ended above where it started: the mean of its last 10 % of losses is above its first
    loss (lr 1.0 takes the previous-token task from 3.2 to 6 nats)."""
    return len(losses) > 0 and X.tail_mean(np.asarray(losses)) > float(losses[0])


# --- 1. √d_k -------------------------------------------------------------------------------------

GRAD_RATIO = 1.5  # the division changes the gradient at the scores when one is 1.5 times the other
SATURATION_GAP = 0.1  # undivided rows are closer to a single weight of 1: the largest weight 0.1 higher
SPEED_RATIO = 0.75  # one run is faster when it reaches LOSS_LEVEL in at most 3/4 of the other's steps


def sqrt_grad(ratios: Sequence[float], max_scaled: Sequence[float], max_unscaled: Sequence[float]) -> str:
    """``saturated``: the gradient at the scores is at least GRAD_RATIO times larger with the division on
    every seed, and every seed's undivided rows have a largest weight SATURATION_GAP higher; ``larger``:
    larger on every seed without that; ``smaller``: smaller by the same ratio on every seed; ``mixed``."""
    if all(r >= GRAD_RATIO for r in ratios):
        saturated = all(u - s >= SATURATION_GAP for s, u in zip(max_scaled, max_unscaled, strict=True))
        return "saturated" if saturated else "larger"
    if all(r * GRAD_RATIO <= 1 for r in ratios):
        return "smaller"
    return "mixed"


def _sooner(a: int | None, b: int | None) -> bool:
    """``a`` reached the level and ``b`` did not, or ``a`` took at most SPEED_RATIO of ``b``'s steps."""
    return a is not None and (b is None or a <= SPEED_RATIO * b)


def sqrt_speed(steps_scaled: Sequence[int | None], steps_unscaled: Sequence[int | None]) -> str:
    """From the steps each run took to reach LOSS_LEVEL: ``faster`` (divided sooner on every seed),
    ``slower`` (undivided sooner on every seed), ``unreached`` (no run reached it), ``mixed``."""
    pairs = list(zip(steps_scaled, steps_unscaled, strict=True))
    if all(s is None and u is None for s, u in pairs):
        return "unreached"
    if all(_sooner(s, u) for s, u in pairs):
        return "faster"
    if all(_sooner(u, s) for s, u in pairs):
        return "slower"
    return "mixed"


def sqrt_final(final_scaled: Sequence[float], final_unscaled: Sequence[float]) -> str:
    """``both_low``: after the last step both runs of every seed are below LOSS_LEVEL (the division
    changed how fast the loss fell, not where it ended); ``apart`` otherwise."""
    low = all(max(s, u) < X.LOSS_LEVEL for s, u in zip(final_scaled, final_unscaled, strict=True))
    return "both_low" if low else "apart"


# --- 2. the leaky mask ---------------------------------------------------------------------------

LEAK_GAP = 0.2  # positions 0 … n−2 lose at least 20 points of accuracy when the future is hidden
READS_FUTURE = 0.5  # … and put at least half their weight, on average, on later positions
HONEST_LAST = 0.9  # the last position (no future inside its window in training) is right this often
GENERATION_GAP = 0.2  # the full-window prompt generates at least 20 points more of the text


def leaky_reading(visible: Sequence[float], prefix: Sequence[float], future: Sequence[float]) -> str:
    """The leaky model at positions 0 … n−2: ``reads_future`` (hiding the future costs LEAK_GAP and
    the mean weight on later positions is READS_FUTURE), ``needs_future`` (the cost without that
    weight), ``no_leak`` (hiding the future costs less than LEAK_GAP)."""
    gap = float(np.mean(visible[:-1])) - float(np.mean(prefix[:-1]))
    if gap < LEAK_GAP:
        return "no_leak"
    return "reads_future" if float(np.mean(future[:-1])) >= READS_FUTURE else "needs_future"


def leaky_generation(short: float, full: float, last: float) -> str:
    """The leaky model's generations: ``full_works`` (the full-window prompt generates GENERATION_GAP
    more of the text than the short one, and the last position is right HONEST_LAST of the time),
    ``full_better`` (the gap without that), ``alike`` (no such gap)."""
    if full - short < GENERATION_GAP:
        return "alike"
    return "full_works" if last >= HONEST_LAST else "full_better"


def causal_sealed(visible: Sequence[float], prefix: Sequence[float], future: Sequence[float]) -> str:
    """The causal model: ``sealed`` when hiding the future changes no position's accuracy and no
    weight falls on a later position, as the mask guarantees; ``broken`` otherwise (a bug)."""
    same = np.array_equal(np.asarray(visible), np.asarray(prefix))
    return "sealed" if same and float(np.max(future)) == 0.0 else "broken"


# --- 3. heads specialise -------------------------------------------------------------------------

TAKES_WEIGHT = 0.5  # a head takes a relation: a mean weight of at least 0.5 on its key …
TAKES_MARGIN = 0.2  # … and at least 0.2 above the other head's
ABLATION_COST = 0.2  # zeroing that head costs its relation at least 20 points of accuracy …
ABLATION_SPARE = 0.05  # … and the other relation less than 5
TARGET_ACCURACY = 0.9  # a run that gets fewer of the pairs right is weak


def taker(scores: Sequence[float]) -> int | None:
    """The head that takes a relation, from the two heads' mean weights on its key; None if neither."""
    a, b = float(scores[0]), float(scores[1])
    for head, mine, other in ((0, a, b), (1, b, a)):
        if mine >= TAKES_WEIGHT and mine - other >= TAKES_MARGIN:
            return head
    return None


def ablation_confirms(lost: np.ndarray, head: int, mine: int, other: int) -> bool:
    """Zeroing ``head`` costs relation ``mine`` ABLATION_COST and relation ``other`` less than
    ABLATION_SPARE (``lost [2, 3]``: per head, the pair, the previous half, the first half)."""
    return lost[head, mine] >= ABLATION_COST and lost[head, other] < ABLATION_SPARE


def heads_split(previous: Sequence[float], first: Sequence[float], lost: np.ndarray) -> str:
    """``confirmed``: different heads take the two relations and zeroing each costs only its own;
    ``maps_only``: different heads take them, but a zeroing does not show it; ``shared``: one head
    takes both; ``unclaimed``: no head takes at least one of them."""
    hp, hf = taker(previous), taker(first)
    if hp is None or hf is None:
        return "unclaimed"
    if hp == hf:
        return "shared"
    lost = np.asarray(lost)
    ok = ablation_confirms(lost, hp, 1, 2) and ablation_confirms(lost, hf, 2, 1)
    return "confirmed" if ok else "maps_only"


def heads_accuracy(accuracy: float) -> str:
    return "reached" if accuracy >= TARGET_ACCURACY else "weak"


# --- 4. induction heads need two layers -----------------------------------------------------------

TARGET_INDUCTION = 0.5  # the two-layer model's best induction score …
DEPTH_GAP = 0.2  # two layers beat one by at least 20 points
SHORTCUT_GAP = 0.3  # one layer is 30 points better where a position allows one segment length than all
CIRCUIT_ACCURACY = 0.2  # zeroing the previous-token heads costs at least 20 points …
CIRCUIT_SCORE = 0.2  # … and lowers the induction head's score by at least 0.2
STEEP_SHARE = 0.25  # a drop: the moving mean falls by a quarter of its range within PHASE_SPAN steps


def induction_targets(accuracy: float, induction: float) -> str:
    return "reached" if accuracy >= TARGET_ACCURACY and induction >= TARGET_INDUCTION else "not_reached"


def induction_depth(one: float, two: float) -> str:
    return "gap" if two - one >= DEPTH_GAP else "no_gap"


def one_layer_shortcut(by_lengths: Sequence[float]) -> str:
    """``shortcut``: the one-layer model is SHORTCUT_GAP more accurate where a query's position allows
    a single segment length (the first entry) than where it allows all of them (the last)."""
    one, all_ = float(by_lengths[0]), float(by_lengths[-1])
    return "shortcut" if one - all_ >= SHORTCUT_GAP else "no_shortcut"


def induction_circuit(accuracy: float, without: float, score: float, score_without: float) -> str:
    """Zeroing layer 0's previous-token heads: ``both`` (the accuracy falls CIRCUIT_ACCURACY and the
    induction score CIRCUIT_SCORE), ``accuracy`` or ``score`` (only that one), ``neither``."""
    acc = accuracy - without >= CIRCUIT_ACCURACY
    ind = score - score_without >= CIRCUIT_SCORE
    return {(True, True): "both", (True, False): "accuracy", (False, True): "score"}.get(
        (acc, ind), "neither"
    )


def phase(p: X.PhaseChange) -> str:
    """``plateau_drop``: a flat stretch (:data:`~.experiments.FLAT_SHARE`) and after it a fall of at
    least STEEP_SHARE of the range within PHASE_SPAN steps; ``drop_only``: that fall without a flat
    stretch before it; ``no_drop``: no such fall; ``too_short``: no fall could be measured."""
    if math.isnan(p.span):  # the curve is shorter than one fall
        return "too_short"
    fall = p.drop_from - p.drop_to
    if not (fall > 0 and fall >= STEEP_SHARE * p.span):
        return "no_drop"
    return "plateau_drop" if p.plateau_start is not None else "drop_only"


# --- 5. positions --------------------------------------------------------------------------------

POSITIONS_GAP = 0.2  # positions on beat positions off by at least 20 points
BASELINE_MARGIN = 0.05  # within 5 points of the multiset baseline (512 sequences' sampling noise)
EQUIVARIANT_TOL = 1e-6  # without positions, a permuted batch's outputs match to rounding


def positions_gap(on: float, off: float) -> str:
    return "gap" if on - off >= POSITIONS_GAP else "no_gap"


def positions_baseline(off: float, baseline: float) -> str:
    """Without positions against the best a model knowing only the input's letters can expect:
    ``at``, ``below`` (it did not learn that much) or ``above`` (more than possible: a bug)."""
    if off > baseline + BASELINE_MARGIN:
        return "above"
    return "below" if off < baseline - BASELINE_MARGIN else "at"


def equivariance(error: float) -> str:
    return "equivariant" if error <= EQUIVARIANT_TOL else "not_equivariant"


# --- every experiment ----------------------------------------------------------------------------


def sqrt_verdicts(r: X.SqrtDkResult) -> tuple[str, ...]:
    s = r.seeds
    return (
        "grad_" + sqrt_grad(list(r.grad_ratio), [x.max_weight_scaled for x in s], [x.max_weight_unscaled for x in s]),
        "speed_" + sqrt_speed([x.steps_scaled for x in s], [x.steps_unscaled for x in s]),
        "final_" + sqrt_final([x.loss_scaled for x in s], [x.loss_unscaled for x in s]),
    )  # fmt: skip


def leaky_verdicts(r: X.LeakyResult) -> tuple[str, ...]:
    k, c = r.leaky, r.causal
    return (
        "reading_" + leaky_reading(k.visible, k.prefix, k.future_weight),
        "generation_" + leaky_generation(k.short.accuracy, k.full.accuracy, float(k.prefix[-1])),
        "causal_" + causal_sealed(c.visible, c.prefix, c.future_weight),
    )


def heads_verdicts(r: X.HeadsResult) -> tuple[str, ...]:
    return (
        "split_" + heads_split(r.previous_score, r.first_score, r.accuracy_lost),
        "accuracy_" + heads_accuracy(r.accuracy),
    )


def induction_verdicts(r: X.InductionResult) -> tuple[str, ...]:
    two, one = r.two, r.one
    score = float(two.induction[r.induction_head])
    return (
        "targets_" + induction_targets(two.accuracy, score),
        "depth_" + induction_depth(one.accuracy, two.accuracy),
        "one_layer_" + one_layer_shortcut(one.by_lengths),
        "circuit_" + induction_circuit(two.accuracy, r.accuracy_without_previous_heads, score,
                                       r.induction_without_previous_heads),
        "phase_" + phase(two.phase),
    )  # fmt: skip


def positions_verdicts(r: X.PositionsResult) -> tuple[tuple[str, str], ...]:
    """``(task, verdict)`` pairs: each task's gap and baseline, then the equivariance of both."""
    by = {(x.task, x.positions): x for x in r.runs}
    out = []
    for task in ("reverse", "sort"):
        on, off = by[(task, True)], by[(task, False)]
        out.append((task, "gap_" + positions_gap(on.accuracy, off.accuracy)))
        out.append((task, "baseline_" + positions_baseline(off.accuracy, off.baseline)))
    worst = max(by[(t, False)].equivariance_error for t in ("reverse", "sort"))
    out.append(("", equivariance(worst)))
    return tuple(out)


# Every verdict each experiment can give, in the page's order: one sentence each, in both languages.
OUTCOMES = {
    "sqrt_dk": ("grad_saturated", "grad_larger", "grad_smaller", "grad_mixed", "speed_faster", "speed_slower",
                "speed_mixed", "speed_unreached", "final_both_low", "final_apart"),
    "leaky_mask": ("reading_reads_future", "reading_needs_future", "reading_no_leak", "generation_full_works",
                   "generation_full_better", "generation_alike", "causal_sealed", "causal_broken"),
    "heads_specialise": ("split_confirmed", "split_maps_only", "split_shared", "split_unclaimed", "accuracy_reached",
                         "accuracy_weak"),
    "induction_layers": ("targets_reached", "targets_not_reached", "depth_gap", "depth_no_gap", "one_layer_shortcut",
                         "one_layer_no_shortcut", "circuit_both", "circuit_accuracy", "circuit_score",
                         "circuit_neither", "phase_plateau_drop", "phase_drop_only", "phase_no_drop",
                         "phase_too_short"),
    "positions": ("gap_gap", "gap_no_gap", "baseline_at", "baseline_below", "baseline_above", "equivariant",
                  "not_equivariant"),
}  # fmt: skip

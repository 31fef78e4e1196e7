"""Every verdict of the training lab's experiments, from made-up numbers (no training): each
condition on both sides of its margin, each experiment's verdicts from a result that goes the
expected way, and the same result with one number broken, which must change the verdict.
Expected verdicts are read off the conditions written in the issue (41), not from the code."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attention_core.training import experiments as X
from attention_core.training import verdicts as V

# --- a training run ------------------------------------------------------------------------------


def test_diverged_when_the_end_is_above_the_start():
    assert V.diverged([3.2, 4.0, 5.0, 6.0])  # the last 10 % (one point): 6 > 3.2
    assert not V.diverged([3.2, 2.0, 1.0, 0.5])
    assert not V.diverged([3.0, 3.0])  # equal is not above
    assert not V.diverged([3.0])  # one step: its only loss is its start
    assert not V.diverged([])
    # the mean of the last 10 %: 20 losses, the last 2 are 2.9 and 3.2 (mean 3.05 > 3.0)
    assert V.diverged([3.0] + [1.0] * 17 + [2.9, 3.2])
    assert not V.diverged([3.0] + [1.0] * 17 + [2.7, 3.2])  # mean 2.95


# --- 1. √d_k -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ratios, ws, wu, verdict",
    [
        ([2.4, 2.2, 2.1], [0.63, 0.61, 0.64], [0.94, 0.94, 0.95], "saturated"),
        ([1.5, 1.5], [0.5, 0.5], [0.625, 0.625], "saturated"),  # both margins reached
        ([1.5, 1.6], [0.5, 0.5], [0.625, 0.59375], "larger"),  # one seed's rows only 0.094 closer to one-hot
        ([1.5, 1.49], [0.6, 0.6], [0.9, 0.9], "mixed"),
        ([0.5, 0.6], [0.6, 0.6], [0.9, 0.9], "smaller"),
        ([1 / 1.5, 0.2], [0.6, 0.6], [0.9, 0.9], "smaller"),
        ([0.7, 0.2], [0.6, 0.6], [0.9, 0.9], "mixed"),  # 0.7 × 1.5 > 1
        ([2.0, math.inf], [0.6, 0.6], [0.9, 0.9], "saturated"),  # an undivided gradient of 0
    ],
)
def test_sqrt_grad(ratios, ws, wu, verdict):
    assert V.sqrt_grad(ratios, ws, wu) == verdict


@pytest.mark.parametrize(
    "scaled, unscaled, verdict",
    [
        ([23, 27, 29], [44, 77, 49], "faster"),
        ([30], [40], "faster"),  # 30 = 0.75 × 40
        ([31], [40], "mixed"),
        ([23, None], [44, None], "mixed"),  # seed 1: neither reached the level
        ([23, 50], [44, None], "faster"),  # an undivided run that never got there is slower
        ([44, 77], [23, 27], "slower"),
        ([None, None], [23, 27], "slower"),
        ([None, None], [None, None], "unreached"),
        ([23, 77], [44, 27], "mixed"),
    ],
)
def test_sqrt_speed(scaled, unscaled, verdict):
    assert V.sqrt_speed(scaled, unscaled) == verdict


def test_sqrt_verdicts_refuse_seeds_that_do_not_pair_up():
    with pytest.raises(ValueError):
        V.sqrt_grad([2.0, 2.0], [0.5, 0.5], [0.9])
    with pytest.raises(ValueError):
        V.sqrt_speed([20, 30], [40])
    with pytest.raises(ValueError):
        V.sqrt_final([0.0], [0.0, 0.0])


def test_sqrt_grad_saturation_margin_is_inclusive():
    assert V.sqrt_grad([2.0], [0.0], [0.1]) == "saturated"  # 0.1 − 0.0 is the margin exactly


def test_sqrt_final():
    assert V.sqrt_final([0.0003, 0.0003], [0.001, 0.0015]) == "both_low"
    assert V.sqrt_final([0.0003, 0.0003], [0.001, 0.1]) == "apart"  # 0.1 is not below 0.1
    assert V.sqrt_final([0.5], [0.001]) == "apart"


def _sqrt_seed(seed, g_s, g_u, w_s, w_u, l_s, l_u, n_s, n_u) -> X.SqrtDkSeed:
    return X.SqrtDkSeed(seed, g_s, g_u, w_s, w_u, l_s, l_u, n_s, n_u, 0.2, 1.5, None, None)


SQRT = X.SqrtDkResult(
    X.SqrtDkSettings(),
    (
        _sqrt_seed(0, 0.029, 0.012, 0.63, 0.94, 0.0003, 0.0009, 23, 44),
        _sqrt_seed(1, 0.033, 0.015, 0.61, 0.94, 0.0003, 0.0015, 27, 77),
        _sqrt_seed(2, 0.028, 0.013, 0.64, 0.95, 0.0004, 0.0011, 29, 49),
    ),
    False,
)


def test_sqrt_verdicts_and_a_broken_seed():
    assert V.sqrt_verdicts(SQRT) == ("grad_saturated", "speed_faster", "final_both_low")
    slow = dataclasses.replace(SQRT.seeds[1], steps_scaled=70, grad_scaled=0.015, loss_scaled=0.2)
    broken = dataclasses.replace(SQRT, seeds=(SQRT.seeds[0], slow, SQRT.seeds[2]))
    assert V.sqrt_verdicts(broken) == ("grad_mixed", "speed_mixed", "final_apart")
    # the speed is read from the steps to the level, not from where the loss ended
    later = tuple(dataclasses.replace(x, loss_scaled=0.05, loss_unscaled=0.01) for x in SQRT.seeds)
    assert V.sqrt_verdicts(dataclasses.replace(SQRT, seeds=later))[1:] == ("speed_faster", "final_both_low")
    slower = tuple(
        dataclasses.replace(x, steps_scaled=x.steps_unscaled, steps_unscaled=x.steps_scaled)
        for x in SQRT.seeds
    )
    assert V.sqrt_verdicts(dataclasses.replace(SQRT, seeds=slower))[1] == "speed_slower"


# --- 2. the leaky mask ---------------------------------------------------------------------------

N = 16
LEAKY_VISIBLE = np.ones(N)
LEAKY_PREFIX = np.r_[np.full(N - 1, 0.3), 1.0]
LEAKY_NEXT = np.full(N - 1, 0.2)
LEAKY_FUTURE = np.r_[np.full(N - 1, 0.6), 0.0]


@pytest.mark.parametrize(
    "visible, prefix, weight, verdict",
    [
        (LEAKY_VISIBLE, LEAKY_PREFIX, LEAKY_FUTURE, "reads_future"),
        (LEAKY_VISIBLE, LEAKY_PREFIX, np.r_[np.full(N - 1, 0.5), 0.0], "reads_future"),
        (LEAKY_VISIBLE, LEAKY_PREFIX, np.r_[np.full(N - 1, 0.49), 0.0], "needs_future"),
        # the last position (always 0: its window ends there) is not part of the mean
        (LEAKY_VISIBLE, LEAKY_PREFIX, np.r_[np.full(N - 1, 0.49), 1.0], "needs_future"),
        (
            LEAKY_VISIBLE / 2,
            np.r_[np.full(N - 1, 0.3), 1.0],
            LEAKY_FUTURE,
            "reads_future",
        ),  # a gap of 20 points
        (LEAKY_VISIBLE / 2, np.r_[np.full(N - 1, 0.3125), 1.0], LEAKY_FUTURE, "no_leak"),  # 18.75
        # the last position is not part of the gap: its future is outside the window in training too
        (LEAKY_VISIBLE, np.r_[np.full(N - 1, 0.9), 0.0], LEAKY_FUTURE, "no_leak"),
        (np.full(N, 0.57), np.full(N, 0.37), LEAKY_FUTURE, "reads_future"),  # a gap of 0.2 in floats exactly
        # positions 0 … n−2, all of them: position n−2 alone tips each mean over its margin
        (
            np.r_[np.full(N - 2, 0.9), 1.0, 0.5],
            np.r_[np.full(N - 1, 0.705), 0.5],
            LEAKY_FUTURE,
            "reads_future",
        ),
        (LEAKY_VISIBLE, np.r_[np.full(N - 2, 0.85), 0.0, 1.0], LEAKY_FUTURE, "reads_future"),
        (LEAKY_VISIBLE, LEAKY_PREFIX, np.r_[np.full(N - 2, 0.49), 0.8, 0.0], "reads_future"),
    ],
)
def test_leaky_reading(visible, prefix, weight, verdict):
    assert V.leaky_reading(visible, prefix, weight) == verdict


@pytest.mark.parametrize(
    "short, full, last, verdict",
    [
        (0.02, 1.0, 1.0, "full_works"),
        (0.3, 0.5, 0.9, "full_works"),  # both margins exactly (0.5 − 0.3 is 0.2 in floats)
        (0.02, 1.0, 0.89, "full_better"),
        (0.3125, 0.5, 1.0, "alike"),
        (0.9, 0.1, 1.0, "alike"),
    ],
)
def test_leaky_generation(short, full, last, verdict):
    assert V.leaky_generation(short, full, last) == verdict


def test_causal_sealed():
    acc = np.full(N, 0.95)
    assert V.causal_sealed(acc, acc.copy(), np.zeros(N)) == "sealed"
    assert V.causal_sealed(acc, np.r_[acc[:-1], 0.9], np.zeros(N)) == "broken"
    assert V.causal_sealed(acc, acc.copy(), np.r_[np.zeros(N - 1), 1e-9]) == "broken"


def _gen(accuracy: float) -> X.Generation:
    return X.Generation("the ", "x" * 49, "y" * 49, accuracy, accuracy)


def _leaky_run(mask, visible, prefix, future, short, full) -> X.LeakyRun:
    future = np.asarray(future)
    return X.LeakyRun(mask, None, 0.1, np.asarray(visible), np.asarray(prefix), future[:-1] / 3, future,
                      _gen(short), _gen(full))  # fmt: skip


LEAKY = X.LeakyResult(
    X.LeakySettings(text="the cat sat on the mat and the dog sat on the rug"),
    _leaky_run("causal", np.full(N, 0.95), np.full(N, 0.95), np.zeros(N), 0.04, 0.1),
    _leaky_run("none", LEAKY_VISIBLE, LEAKY_PREFIX, LEAKY_FUTURE, 0.02, 1.0),
    False,
)


def test_leaky_verdicts_and_a_broken_run():
    assert V.leaky_verdicts(LEAKY) == ("reading_reads_future", "generation_full_works", "causal_sealed")
    # the leaky model's last position wrong, the causal model's prefix different: both verdicts change
    leaky = dataclasses.replace(LEAKY.leaky, prefix=np.r_[LEAKY_PREFIX[:-1], 0.5])
    causal = dataclasses.replace(LEAKY.causal, prefix=np.r_[np.full(N - 1, 0.95), 0.5])
    broken = dataclasses.replace(LEAKY, leaky=leaky, causal=causal)
    assert V.leaky_verdicts(broken) == ("reading_reads_future", "generation_full_better", "causal_broken")
    same = dataclasses.replace(LEAKY, leaky=dataclasses.replace(LEAKY.leaky, prefix=LEAKY_VISIBLE))
    assert V.leaky_verdicts(same)[0] == "reading_no_leak"


# --- 3. heads specialise -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "scores, head",
    [([0.99, 0.11], 0), ([0.22, 0.97], 1), ([0.5, 0.3], 0), ([0.49, 0.1], None), ([0.6, 0.41], None),
     ([0.3, 0.3], None), ([0.75, 0.5], 0), ([0.5, 0.75], 1)],
)  # fmt: skip
def test_taker(scores, head):
    assert V.taker(scores) == head


# per head: (pair, previous half, first half) accuracy lost
CLEAN = np.array([[0.76, 0.76, 0.0], [0.73, 0.0, 0.73]])


@pytest.mark.parametrize(
    "previous, first, lost, verdict",
    [
        ([0.99, 0.11], [0.11, 0.99], CLEAN, "confirmed"),
        ([0.11, 0.99], [0.99, 0.11], CLEAN[::-1], "confirmed"),  # head 1 previous, head 0 first
        ([0.99, 0.11], [0.11, 0.99], np.array([[0.2, 0.2, 0.049], [0.2, 0.049, 0.2]]), "confirmed"),
        ([0.99, 0.11], [0.11, 0.99], np.array([[0.2, 0.19, 0.0], [0.7, 0.0, 0.7]]), "maps_only"),
        ([0.99, 0.11], [0.11, 0.99], np.array([[0.7, 0.7, 0.05], [0.7, 0.0, 0.7]]), "maps_only"),
        ([0.99, 0.11], [0.11, 0.99], np.array([[0.7, 0.7, 0.0], [0.7, 0.05, 0.7]]), "maps_only"),
        ([0.99, 0.11], [0.11, 0.99], np.array([[0.7, 0.7, 0.0], [0.7, 0.0, 0.19]]), "maps_only"),
        ([0.99, 0.11], [0.11, 0.99], CLEAN[::-1], "maps_only"),  # the zeroings say the opposite
        ([0.6, 0.1], [0.55, 0.1], CLEAN, "shared"),
        ([0.30, 0.29], [0.11, 0.99], CLEAN, "unclaimed"),  # 0.30 against 0.29: no head takes it
        ([0.99, 0.11], [0.45, 0.1], CLEAN, "unclaimed"),
    ],
)
def test_heads_split(previous, first, lost, verdict):
    assert V.heads_split(previous, first, lost) == verdict


def test_heads_accuracy():
    assert (V.heads_accuracy(0.9), V.heads_accuracy(0.899)) == ("reached", "weak")


HEADS = X.HeadsResult(
    X.HeadsSettings(), None, np.array([0.99, 0.11]), np.array([0.11, 0.99]), 1.0, 1.0, 1.0,
    np.array([[0.24, 0.24, 1.0], [0.27, 1.0, 0.27]]), None,
)  # fmt: skip


def test_heads_verdicts_and_a_broken_head():
    assert np.allclose(HEADS.accuracy_lost, CLEAN)
    assert V.heads_verdicts(HEADS) == ("split_confirmed", "accuracy_reached")
    close = dataclasses.replace(HEADS, previous_score=np.array([0.30, 0.29]), accuracy=0.5)
    assert V.heads_verdicts(close) == ("split_unclaimed", "accuracy_weak")
    # the maps split, but zeroing head 0 costs nothing: no longer confirmed
    idle = dataclasses.replace(HEADS, ablated=np.array([[1.0, 1.0, 1.0], [0.27, 1.0, 0.27]]))
    assert V.heads_verdicts(idle)[0] == "split_maps_only"


# --- 4. induction --------------------------------------------------------------------------------


def test_induction_targets_and_depth():
    assert V.induction_targets(0.9, 0.5) == "reached"
    assert V.induction_targets(0.899, 0.9) == V.induction_targets(0.99, 0.499) == "not_reached"
    assert V.induction_depth(0.42, 0.99) == "gap"
    assert V.induction_depth(0.3, 0.5) == "gap"  # 20 points (0.5 − 0.3 is 0.2 in floats)
    assert V.induction_depth(0.3125, 0.5) == V.induction_depth(0.99, 0.9) == "no_gap"


def test_one_layer_shortcut():
    assert V.one_layer_shortcut([1.0, 0.99, 0.8, 0.5, 0.4, 0.3, 0.3]) == "shortcut"
    assert V.one_layer_shortcut([0.75, 0.5, 0.4, 0.4375]) == "shortcut"  # 31.25 points
    assert V.one_layer_shortcut([0.6875, 0.5, 0.4, 0.4375]) == "no_shortcut"  # 25
    assert V.one_layer_shortcut([0.3, 0.3, 0.9]) == "no_shortcut"  # the last entry, not the best
    assert V.one_layer_shortcut([0.9, 0.7, 0.55]) == "shortcut"  # … nor the one before it
    assert V.one_layer_shortcut([0.5, 0.3, 0.2]) == "shortcut"  # 0.5 − 0.2 is 0.3 in floats: inclusive


@pytest.mark.parametrize(
    "acc, without, score, score_without, verdict",
    [
        (0.998, 0.27, 0.99, 0.12, "both"),
        (0.5, 0.3, 0.5, 0.3, "both"),  # both margins exactly (0.5 − 0.3 is 0.2 in floats)
        (0.5, 0.3125, 0.5, 0.3, "score"),
        (0.5, 0.3, 0.5, 0.3125, "accuracy"),
        (0.995, 0.85, 0.98, 0.75, "score"),  # 14.5 points: the accuracy moved less than 20
        (0.99, 0.5, 0.98, 0.81, "accuracy"),
        (0.99, 0.95, 0.98, 0.95, "neither"),
    ],
)
def test_induction_circuit(acc, without, score, score_without, verdict):
    assert V.induction_circuit(acc, without, score, score_without) == verdict


def _phase_of(plateau: bool, drop_from: float = 2.4, drop_to: float = 0.7) -> X.PhaseChange:
    start, end, loss = (70, 250, 3.1) if plateau else (None, None, math.nan)
    return X.PhaseChange(4.0, 280, 330, drop_from, drop_to, start, end, loss, 0.02)


def test_phase():
    assert V.phase(_phase_of(True)) == "plateau_drop"
    assert V.phase(_phase_of(False)) == "drop_only"
    assert V.phase(_phase_of(True, 2.0, 1.0)) == "plateau_drop"  # a quarter of the range (4) exactly
    assert V.phase(_phase_of(True, 2.0, 1.0625)) == "no_drop"
    assert V.phase(_phase_of(False, 2.4, 2.5)) == "no_drop"
    assert V.phase(dataclasses.replace(_phase_of(False), span=0.0, drop_from=1.0, drop_to=1.0)) == "no_drop"
    assert V.phase(X.NO_PHASE) == "too_short"


def _depth(layers, accuracy, induction, previous, phase, by_lengths) -> X.InductionDepth:
    return X.InductionDepth(layers, None, accuracy, np.array(induction), np.array(previous), phase,
                            np.array(by_lengths))  # fmt: skip


INDUCTION = X.InductionResult(
    X.InductionSettings(),
    _depth(1, 0.30, [[0.2, 0.3]], [[0.1, 0.1]], _phase_of(False), [1.0, 0.99, 0.8, 0.6, 0.4, 0.3, 0.25]),
    _depth(2, 1.0, [[0.1, 0.1], [0.99, 0.4]], [[0.8, 0.2], [0.1, 0.1]], _phase_of(True), [1.0] * 7),
    (0,), (1, 0), 0.27, 0.12, False,
)  # fmt: skip


def test_induction_verdicts_and_a_broken_run():
    assert V.induction_verdicts(INDUCTION) == (
        "targets_reached", "depth_gap", "one_layer_shortcut", "circuit_both", "phase_plateau_drop")  # fmt: skip
    two = dataclasses.replace(INDUCTION.two, accuracy=0.45, phase=_phase_of(False))
    one = dataclasses.replace(INDUCTION.one, by_lengths=np.full(7, 0.3))
    broken = dataclasses.replace(INDUCTION, one=one, two=two, induction_without_previous_heads=0.9)
    assert V.induction_verdicts(broken) == (
        "targets_not_reached", "depth_no_gap", "one_layer_no_shortcut", "circuit_neither",
        "phase_drop_only")  # fmt: skip
    # the score of the head named, not the best in layer 1
    other = dataclasses.replace(INDUCTION, induction_head=(1, 1))
    assert V.induction_verdicts(other)[0] == "targets_not_reached"


# --- 5. positions --------------------------------------------------------------------------------


def test_positions_conditions():
    assert (V.positions_gap(1.0, 0.27), V.positions_gap(0.5, 0.3), V.positions_gap(0.5, 0.3125)) == (
        "gap", "gap", "no_gap")  # fmt: skip
    assert V.positions_baseline(0.27, 0.26) == "at"
    assert V.positions_baseline(0.3, 0.25) == V.positions_baseline(0.2, 0.25) == "at"  # 5 points exactly
    assert V.positions_baseline(0.3125, 0.25) == "above"
    assert V.positions_baseline(0.1875, 0.25) == "below"
    assert (V.equivariance(1e-6), V.equivariance(2e-6)) == ("equivariant", "not_equivariant")


def _positions(off_reverse=0.27, off_sort=0.25, err=1.8e-15) -> X.PositionsResult:
    runs = (
        X.PositionsRun("reverse", True, None, 1.0, 25.7, 0.27),
        X.PositionsRun("reverse", False, None, off_reverse, err, 0.27),
        X.PositionsRun("sort", True, None, 0.96, 253.0, 0.25),
        X.PositionsRun("sort", False, None, off_sort, 1e-15, 0.25),
    )
    return X.PositionsResult(X.PositionsSettings(), runs, 1 / 16, False)


def test_positions_verdicts_and_a_broken_run():
    assert V.positions_verdicts(_positions()) == (
        ("reverse", "gap_gap"), ("reverse", "baseline_at"), ("sort", "gap_gap"), ("sort", "baseline_at"),
        ("", "equivariant"))  # fmt: skip
    broken = V.positions_verdicts(_positions(off_reverse=0.9, off_sort=0.1, err=0.5))
    assert broken == (
        ("reverse", "gap_no_gap"), ("reverse", "baseline_above"), ("sort", "gap_gap"), ("sort", "baseline_below"),
        ("", "not_equivariant"))  # fmt: skip


# --- every branch is reached by the cases above -----------------------------------------------------


def test_every_outcome_is_reached_by_a_case_above():
    reached = {
        "sqrt_dk": {"grad_" + V.sqrt_grad(*a) for a in (([2], [0.6], [0.9]), ([2], [0.6], [0.6]), ([0.5], [0.6], [0.9]),
                                                          ([1], [0.6], [0.9]))}
        | {"speed_" + V.sqrt_speed(*a) for a in (([1], [9]), ([9], [1]), ([5], [5]), ([None], [None]))}
        | {"final_" + V.sqrt_final(*a) for a in (([0.0], [0.0]), ([1.0], [0.0]))},
        "leaky_mask": set(V.leaky_verdicts(LEAKY)) | set(V.leaky_verdicts(dataclasses.replace(
            LEAKY, leaky=dataclasses.replace(LEAKY.leaky, prefix=LEAKY_VISIBLE)))) | {
            "reading_needs_future", "generation_full_better", "generation_alike", "causal_broken"},
        "heads_specialise": {"split_" + V.heads_split(p, f, CLEAN) for p, f in (
            ([0.99, 0.1], [0.1, 0.99]), ([0.6, 0.1], [0.55, 0.1]), ([0.3, 0.3], [0.1, 0.9]))}
        | {"split_maps_only", "accuracy_reached", "accuracy_weak"},
        "induction_layers": set(V.induction_verdicts(INDUCTION)) | {
            "targets_not_reached", "depth_no_gap", "one_layer_no_shortcut", "circuit_accuracy", "circuit_score",
            "circuit_neither", "phase_drop_only", "phase_no_drop", "phase_too_short"},
        "positions": {v for _, v in V.positions_verdicts(_positions())
                      + V.positions_verdicts(_positions(off_reverse=0.9, off_sort=0.1, err=0.5))} | {"baseline_at"},
    }  # fmt: skip
    for name, outcomes in V.OUTCOMES.items():
        assert reached[name] == set(outcomes), name

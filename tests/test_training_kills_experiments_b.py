"""Tests written from mutation testing of attention_core/training/experiments.py, its second half
(the heads, induction and positions experiments and their helpers): each one fails for a small
change that the other tests let pass. Expected values come from hand arithmetic or plain loops
over the model's own forward pass (attention_core.training.model), never from the experiment code.

Everything is tiny (a few steps, d_model 8) and seeded, so the file runs in a few seconds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.training import experiments as X
from attention_core.training import model as M
from attention_core.training.tasks import PAIR_VOCAB

# --- plain-loop helpers ----------------------------------------------------------------------------


class Labels:
    """An ``on_progress`` that records each run's label once, in order."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, label, progress) -> None:
        assert progress.step >= 1
        if not self.seen or self.seen[-1] != label:
            self.seen.append(label)


class StopAt:
    """A ``should_stop`` that answers True on call ``at`` (and, ``stays``, on every later call too,
    as the worker's Stop button does: its flag stays set once pressed)."""

    def __init__(self, at: int, stays: bool) -> None:
        self.at, self.stays, self.calls = at, stays, 0

    def __call__(self) -> bool:
        self.calls += 1
        return self.calls >= self.at if self.stays else self.calls == self.at


def _guesses(logits: np.ndarray) -> list[list[int]]:
    """The first largest logit of every position, by a loop (``argmax``'s tie rule)."""
    out = []
    for row in logits:
        guesses = []
        for position in row:
            values = [float(v) for v in position]
            guesses.append(values.index(max(values)))
        out.append(guesses)
    return out


def _share(guesses, targets, scored, key) -> float:
    hits = total = 0
    for b, row in enumerate(guesses):
        for i, g in enumerate(row):
            if scored[b, i]:
                total += 1
                hits += key(g) == key(int(targets[b, i]))
    return hits / max(total, 1)


WHOLE = (lambda c: c, lambda c: c // PAIR_VOCAB, lambda c: c % PAIR_VOCAB)  # pair, previous half, first half


def _without_head(params: M.Params, layer: int, head: int, d_k: int) -> M.Params:
    """A copy of ``params`` with that head's rows of W_O set to zero by hand."""
    frozen = params.frozen_copy()
    edited = M.Params(frozen.shape, frozen.flat.copy())
    edited[f"{layer}.W_O"][head * d_k : (head + 1) * d_k] = 0.0
    return edited


def _final_batch(run):
    """The final accuracy's sequences (train's module doc: 512 fresh ones from ``(seed, 4)``)."""
    return run.task.held_out(np.random.default_rng((run.settings.seed, 4)), 512)


# --- _pair_accuracies: the pair and each half, over the scored positions only -------------------------


def _pair_logits(guesses: list[int]) -> np.ndarray:
    logits = np.zeros((1, len(guesses), PAIR_VOCAB**2))
    for i, g in enumerate(guesses):
        logits[0, i, g] = 1.0
    return logits


def test_pair_accuracies_count_each_half_on_the_scored_positions():
    # targets: (previous 0, first 0), (2, 3), (4, 1); guesses: 0 (right, but not scored), 15 = (2, 3)
    # both right, 29 = (4, 5) only the previous half right
    targets = np.array([[0, 2 * PAIR_VOCAB + 3, 4 * PAIR_VOCAB + 1]])
    logits = _pair_logits([0, 15, 29])
    scored = np.array([[False, True, True]])
    assert X._pair_accuracies(logits, targets, scored) == (0.5, 1.0, 0.5)
    one = np.array([[False, False, True]])  # one scored position: a share of 1 or of 0, never 1/2
    assert X._pair_accuracies(logits, targets, one) == (0.0, 1.0, 0.0)
    first_only = _pair_logits([0, 15, 5 * PAIR_VOCAB + 1])  # (5, 1): the first half right only
    assert X._pair_accuracies(first_only, targets, one) == (0.0, 0.0, 1.0)
    nothing = np.zeros((1, 3), dtype=bool)  # nothing scored: 0, not a division by zero
    assert X._pair_accuracies(logits, targets, nothing) == (0.0, 0.0, 0.0)


# --- heads_specialise ----------------------------------------------------------------------------------

HEADS = X.HeadsSettings(steps=3, seed=1, d_model=8, lr=1e-2)


def test_heads_experiment_by_hand():
    """One test per experiment run: mutmut picks the tests of a mutant by the functions each test
    itself calls, so the checks of one run sit in the test that makes it."""
    labels = Labels()
    r = X.heads_specialise(HEADS, on_progress=labels)
    _heads_settings(r, labels.seen)
    _heads_accuracies_and_ablations(r)
    _heads_scores(r)


def _heads_settings(r, labels):
    assert r.settings == HEADS and labels == ["heads"]
    s = r.run.settings
    assert (s.task, s.layers, s.heads, s.d_model, s.seed, s.lr) == ("previous_first", 1, 2, 8, 1, 1e-2)
    assert r.run.steps_done == 3 and not r.run.stopped


def _heads_accuracies_and_ablations(r):
    run = r.run
    batch = _final_batch(run)
    divisor = run.settings.divisor
    full = _guesses(M.logits_of(run.params, batch.tokens, run.allowed, divisor))
    expected = [_share(full, batch.targets, batch.scored, key) for key in WHOLE]
    assert expected[0] == run.final_accuracy  # the same 512 sequences as the run's final accuracy
    assert (r.accuracy, r.previous_accuracy, r.first_accuracy) == tuple(expected)
    assert len(set(expected)) == 3  # the three numbers differ, so a swapped field shows
    rows = []
    for h in range(2):
        params = _without_head(run.params, 0, h, run.settings.head_dim)
        g = _guesses(M.logits_of(params, batch.tokens, run.allowed, divisor))
        rows.append([_share(g, batch.targets, batch.scored, key) for key in WHOLE])
    assert r.ablated.tolist() == rows
    assert rows[0] != expected and rows[1] != expected  # zeroing either head changes something
    assert not r.ablated.flags.writeable


def _heads_scores(r):
    """previous_score and first_score: the mean over the first 64 of the 512 sequences."""
    run = r.run
    tokens = _final_batch(run).tokens[:64]
    w = M.forward(run.params, tokens, run.allowed, run.settings.divisor).weights()  # [64, 1, 2, n, n]
    n = run.task.n
    for h in range(2):
        prev = sum(float(w[b, 0, h, i, i - 1]) for b in range(64) for i in range(1, n)) / (64 * (n - 1))
        first = sum(float(w[b, 0, h, i, 0]) for b in range(64) for i in range(1, n)) / (64 * (n - 1))
        assert r.previous_score[h] == pytest.approx(prev, rel=1e-12)
        assert r.first_score[h] == pytest.approx(first, rel=1e-12)
    np.testing.assert_array_equal(r.maps, run.attention[0])
    assert r.maps.shape == (2, n, n)
    assert not (r.previous_score.flags.writeable or r.first_score.flags.writeable or r.maps.flags.writeable)


def test_heads_stops_when_asked():
    r = X.heads_specialise(HEADS, should_stop=StopAt(2, stays=True))
    assert r.run.stopped and r.run.steps_done == 1


# --- phase_change --------------------------------------------------------------------------------------


def test_phase_change_of_a_short_curve_is_its_middle_and_its_ends():
    # 5 points < 3 windows of 2: the middle step 5 // 2 = 2, the first and the last loss
    assert X.phase_change(np.array([5.0, 4.0, 3.5, 1.0, 0.5]), window=2) == X.PhaseChange(2, 5.0, 0.5)


def test_phase_change_from_exactly_three_windows_on_measures_the_fall():
    # 6 points = 3 windows of 2. Moving means 4, 2.5, 1, 1, 1; falls over 2 steps 3, 1.5, 0; the first
    # tenth is 6 // 10 = 0 points. Steepest at t = 0: drop step 0 + 2, means 4 before and 1 after.
    assert X.phase_change(np.array([4.0, 4.0, 1.0, 1.0, 1.0, 1.0]), window=2) == X.PhaseChange(2, 4.0, 1.0)


def test_phase_change_skips_the_first_tenth_only():
    # 40 points, window 2: 12 ×5, 5 ×20, 1 ×15. Moving means m[t] (steps t, t+1): 12 up to t = 3,
    # 8.5 at 4, 5 from 5 to 23, 3 at 24, 1 after. Falls m[t] − m[t+2]: 7 at t = 3 (the largest, but
    # inside the first tenth, t < 4), 3.5 at t = 4, 4 at t = 23. So the fall at t = 23: drop step 25.
    curve = np.array([12.0] * 5 + [5.0] * 20 + [1.0] * 15)
    assert X.phase_change(curve, window=2) == X.PhaseChange(25, 5.0, 1.0)
    # 60 points with the default window of 20: 3 for 30 steps, then 1. The means of 20 are 3 up to
    # t = 10, fall by 0.1 a step to 1 at t = 30. Over 20 steps the largest fall, 2, is the one from
    # t = 10 (3) to t = 30 (1): drop step 30.
    p = X.phase_change([3.0] * 30 + [1.0] * 30)
    assert p.drop_step == 30
    assert (p.loss_before, p.loss_after) == (pytest.approx(3.0, abs=1e-12), pytest.approx(1.0, abs=1e-12))


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= 52, reason="long double is float64 here")
def test_phase_change_reads_the_curve_as_float64():
    """The curve is rounded to float64 before the means. With u = 2⁻⁵², long doubles 1 + 0.9u and
    1 + 0.4u round to 1 + u and 1; their mean (1 + u + 1) / 2 = 1 + u/2 is a tie that rounds to the
    even 1. Averaged as long doubles first it would be 1 + 0.65u, which rounds to 1 + u."""
    u = np.longdouble(2.0) ** -52
    curve = np.array([1 + 0.9 * u, 1 + 0.4 * u, 0, 0, 0, 0], dtype=np.longdouble)
    # 6 points = 3 windows of 2: means 1, 0.5, 0, 0, 0; the steepest fall is from t = 0 to t = 2
    assert X.phase_change(curve, window=2) == X.PhaseChange(2, 1.0, 0.0)


def test_phase_change_of_an_empty_curve():
    """A run stopped before its first step has no losses: no fall to find, and no error."""
    p = X.phase_change(np.array([]))
    assert p.drop_step == 0 and math.isnan(p.loss_before) and math.isnan(p.loss_after)


# --- induction_layers ----------------------------------------------------------------------------------

INDUCTION = X.InductionSettings(steps=3, seed=1, d_model=8, heads=4, lr=1e-2)


def test_induction_experiment_by_hand():
    labels = Labels()
    r = X.induction_layers(INDUCTION, on_progress=labels)
    _induction_settings(r, labels.seen)
    _induction_heads_and_ablation(r)


def _induction_settings(r, labels):
    assert r.settings == INDUCTION and labels == ["1 layer", "2 layers"] and not r.stopped
    for depth, layers in ((r.one, 1), (r.two, 2)):
        s = depth.run.settings
        assert depth.layers == layers
        assert (s.task, s.layers, s.heads, s.d_model, s.seed, s.lr) == ("induction", layers, 4, 8, 1, 1e-2)
        assert depth.run.steps_done == 3
        assert depth.accuracy == depth.run.final_accuracy
        np.testing.assert_array_equal(depth.induction, depth.run.induction)
        np.testing.assert_array_equal(depth.previous_token, depth.run.previous_token)
        # 3 losses, shorter than three windows: the middle step 3 // 2 and the first and last loss
        losses = depth.run.losses
        assert depth.phase == X.PhaseChange(1, float(losses[0]), float(losses[2]))


def _first_largest(values) -> int:
    values = [float(v) for v in values]
    return values.index(max(values))


def _induction_heads_and_ablation(r):
    """The strongest heads, and the previous-token head zeroed by hand."""
    two = r.two
    # the rows differ in their strongest head, so reading the wrong layer shows
    assert _first_largest(two.previous_token[0]) != _first_largest(two.previous_token[1])
    assert _first_largest(two.induction[0]) != _first_largest(two.induction[1])
    assert r.previous_head == (0, _first_largest(two.previous_token[0]))
    assert r.induction_head == (1, _first_largest(two.induction[1]))
    run = two.run
    divisor = run.settings.divisor
    batch = _final_batch(run)
    guesses = _guesses(M.logits_of(run.params, batch.tokens, run.allowed, divisor))
    assert _share(guesses, batch.targets, batch.scored, WHOLE[0]) == run.final_accuracy
    zeroed = _without_head(run.params, 0, r.previous_head[1], run.settings.head_dim)
    guesses = _guesses(M.logits_of(zeroed, batch.tokens, run.allowed, divisor))
    expected = _share(guesses, batch.targets, batch.scored, WHOLE[0])
    assert r.accuracy_without_previous_head == expected != run.final_accuracy
    # the repeated sample (10 tokens and the same again): query i of the repeat, key i − 10 + 1
    w = M.forward(zeroed, run.repeated[None], run.allowed, divisor).weights()[0]  # [2, 4, 20, 20]
    h = r.induction_head[1]
    score = sum(float(w[1, h, i, i - 9]) for i in range(10, 20)) / 10
    assert len(run.repeated) == 20
    assert r.induction_without_previous_head == pytest.approx(score, rel=1e-12)
    assert abs(score - float(two.induction[1, h])) > 1e-6  # the zeroed head mattered


def test_induction_stopped_in_either_run_says_so():
    once = X.induction_layers(INDUCTION, should_stop=StopAt(3, stays=False))  # the 1-layer run's step 3
    assert once.stopped and once.one.run.steps_done == 2 and once.two.run.steps_done == 3
    # Stop pressed stays pressed: the 2-layer run then ends before its first step
    held = X.induction_layers(INDUCTION, should_stop=StopAt(3, stays=True))
    assert held.stopped and held.one.run.steps_done == 2 and held.two.run.steps_done == 0


# --- positions and equivariance_error ------------------------------------------------------------------

POSITIONS = X.PositionsSettings(steps=2, seed=1, lr=1e-2, layers=2, ffn=True)


def _equivariance_loop(run, seed: int) -> float:
    """16 sequences and a permutation of their positions, both from ``default_rng((seed, 5))``; the
    largest |f(πx)[i] − f(x)[π(i)]| by a loop."""
    rng = np.random.default_rng((seed, 5))
    tokens = run.task.batch(rng, 16).tokens
    perm = rng.permutation(run.task.n)
    divisor = run.settings.divisor
    base = M.forward(run.params, tokens, run.allowed, divisor).logits
    moved = M.forward(run.params, tokens[:, perm], run.allowed, divisor).logits
    worst = 0.0
    for b in range(16):
        for i in range(run.task.n):
            for v in range(base.shape[-1]):
                worst = max(worst, abs(float(moved[b, i, v]) - float(base[b, perm[i], v])))
    return worst


def test_positions_experiment_by_hand():
    labels = Labels()
    r = X.positions(POSITIONS, on_progress=labels)
    _positions_settings(r, labels.seen)
    _positions_equivariance(r)


def _positions_settings(r, labels):
    assert r.settings == POSITIONS and not r.stopped
    assert labels == [
        "reverse, positions on", "reverse, positions off", "sort, positions on", "sort, positions off",
    ]  # fmt: skip
    for p in r.runs:
        s = p.run.settings
        assert (s.task, s.positions) == (p.task, p.positions)
        assert (s.total_steps, s.seed, s.lr, s.layers, s.ffn) == (2, 1, 1e-2, 2, True)
        assert s.mask == "none"  # set off by name (the settings say so), not left to the task
        assert p.run.steps_done == 2 and p.accuracy == p.run.final_accuracy


def _positions_equivariance(r):
    for p in r.runs:
        assert p.equivariance_error == _equivariance_loop(p.run, 1)
    on = r.runs[0]
    assert on.positions and on.equivariance_error != _equivariance_loop(on.run, 0)
    assert X.equivariance_error(on.run) == _equivariance_loop(on.run, 0)  # the default seed is 0


def test_positions_stopped_says_so():
    r = X.positions(X.PositionsSettings(steps=2), should_stop=StopAt(2, stays=True))
    assert r.stopped and [p.run.steps_done for p in r.runs] == [1, 0, 0, 0]

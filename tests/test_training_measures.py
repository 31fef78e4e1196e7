"""The numbers the experiments' verdicts read (issue 41), each against hand arithmetic or a plain
loop over the model's own forward pass: steps to a loss level, the loss at an early step, the
leaky-mask experiment's per-position accuracies and weights, the segment lengths a query's position
allows, the previous-token heads zeroed together, the best a model without positions can expect,
and the run's loss after its last update and its repeated-input maps."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from attention_core.steps import build_mask
from attention_core.training import experiments as X
from attention_core.training import model as M
from attention_core.training import train as TR
from attention_core.training.tasks import INDUCTION_SEGMENT, make_task

# --- √d_k: steps to a level, the loss at a step ------------------------------------------------------


def test_moving_mean_by_hand():
    assert X.moving_mean([1.0, 2.0, 3.0, 6.0], 2).tolist() == [1.5, 2.5, 4.5]
    assert X.moving_mean([1.0, 2.0], 3).size == 0


LONG = np.finfo(np.longdouble).nmant > 52


@pytest.mark.skipif(not LONG, reason="long double is float64 here")
def test_the_curve_is_read_as_float64():
    """With u = 2⁻⁵², long doubles 1 + 0.9u and 1 + 0.4u round to 1 + u and 1; their mean in float64,
    1 + u/2, is a tie that rounds to the even 1. Averaged as long doubles first it is 1 + 0.65u."""
    u = np.longdouble(2.0) ** -52
    curve = np.array([1 + 0.9 * u, 1 + 0.4 * u], dtype=np.longdouble)
    assert X.moving_mean(curve, 2).tolist() == [1.0] and X.moving_mean(curve, 2).dtype == np.float64
    assert X.loss_at(curve, step=2, window=2) == 1.0


def test_steps_to_level_by_hand():
    # means of 2: 1.5, 0.55, 0.1, 0.05: below 0.1 first at entry 3, the mean of steps 4 and 5
    losses = [2.0, 1.0, 0.1, 0.1, 0.0]
    assert X.steps_to_level(losses, level=0.1, window=2) == 5
    assert X.steps_to_level(losses, level=0.11, window=2) == 4  # 0.1 < 0.11: steps 3 and 4
    assert X.steps_to_level(losses, level=0.01, window=2) is None
    assert X.steps_to_level([0.05] * 4) is None  # shorter than the 5-step mean
    assert X.steps_to_level([0.05] * 5) == 5
    assert (X.LOSS_LEVEL, X.LEVEL_WINDOW, X.EARLY_STEP) == (0.1, 5, 20)


def test_loss_at_by_hand():
    losses = np.arange(1.0, 31.0)  # step k has loss k
    assert X.loss_at(losses) == 18.0  # steps 16 … 20
    assert X.loss_at(losses, step=3, window=2) == 2.5
    assert math.isnan(X.loss_at(losses[:19]))  # no step 20
    assert X.loss_at(losses[:20]) == 18.0  # step 20 is the last
    assert math.isnan(X.loss_at(losses, step=1, window=2))  # no step 0
    assert X.loss_at(losses, step=2, window=2) == 1.5  # steps 1 and 2: the first window


# --- the leaky mask: every window, each position with and without its future ---------------------------

TEXT = "abcabdabe"


@pytest.fixture(scope="module")
def leaky_run():
    return TR.train(
        TR.TrainSettings(task="text", text=TEXT, mask="none", steps=30, d_model=8, heads=2, lr=0.02)
    )


def test_text_windows_are_every_start():
    task = make_task("text", TEXT)
    w = task.text_windows()
    ids = task.text_ids
    assert w.tokens.shape == (len(TEXT), 16)
    for s in range(len(TEXT)):
        assert w.tokens[s].tolist() == [ids[(s + i) % len(ids)] for i in range(16)]
        assert w.targets[s].tolist() == [ids[(s + i + 1) % len(ids)] for i in range(16)]


def _first_max(row) -> int:
    values = [float(v) for v in row]
    return values.index(max(values))


def test_position_accuracy_against_a_loop(leaky_run):
    run = leaky_run
    ids, n, d = run.task.text_ids, run.task.n, run.settings.divisor
    visible, prefix = X.position_accuracy(run)
    vis, pre = np.zeros(n), np.zeros(n)
    for s in range(len(ids)):
        window = [ids[(s + i) % len(ids)] for i in range(n + 1)]
        full = M.forward(run.params, np.array([window[:n]]), build_mask("none", n), d).logits[0]
        for i in range(n):
            vis[i] += _first_max(full[i]) == window[i + 1]
            part = M.forward(run.params, np.array([window[: i + 1]]), build_mask("none", i + 1), d).logits[0]
            pre[i] += _first_max(part[i]) == window[i + 1]
    np.testing.assert_array_equal(visible, vis / len(ids))
    np.testing.assert_array_equal(prefix, pre / len(ids))
    assert prefix[-1] == visible[-1]  # the last position's prefix is the whole window
    assert not visible.flags.writeable and not prefix.flags.writeable


def test_next_weight_against_a_loop(leaky_run):
    run = leaky_run
    ids, n = run.task.text_ids, run.task.n
    w = np.zeros((2, n - 1))
    for s in range(len(ids)):
        window = np.array([[ids[(s + i) % len(ids)] for i in range(n)]])
        maps = M.forward(run.params, window, run.allowed, run.settings.divisor).weights()[0, 0]  # [h, n, n]
        for h in range(2):
            for i in range(n - 1):
                w[h, i] += maps[h, i, i + 1] / len(ids)
    got = X.next_weight(run)
    np.testing.assert_allclose(got, w.max(axis=0), rtol=1e-12)
    assert (w[0] != w[1]).any()  # two heads that differ: the larger is taken per position


def test_future_weight_against_a_loop(leaky_run):
    run = leaky_run
    ids, n = run.task.text_ids, run.task.n
    w = np.zeros((2, n))
    for s in range(len(ids)):
        window = np.array([[ids[(s + i) % len(ids)] for i in range(n)]])
        maps = M.forward(run.params, window, run.allowed, run.settings.divisor).weights()[0, 0]  # [h, n, n]
        for h in range(2):
            for i in range(n):
                w[h, i] += sum(maps[h, i, j] for j in range(i + 1, n)) / len(ids)
    got = X.future_weight(run)
    np.testing.assert_allclose(got, w.max(axis=0), rtol=1e-12, atol=1e-15)
    assert got[-1] == 0.0 and got[0] > X.next_weight(run)[0]  # position 0 reads more than its next one


def test_a_causal_model_reads_nothing_ahead():
    run = TR.train(TR.TrainSettings(task="text", text=TEXT, steps=5, d_model=8, heads=2))
    visible, prefix = X.position_accuracy(run)
    np.testing.assert_array_equal(visible, prefix)
    assert X.next_weight(run).tolist() == [0.0] * 15 and X.future_weight(run).tolist() == [0.0] * 16


# --- induction: lengths a position allows, accuracy by them, the heads zeroed ----------------------------


def test_lengths_possible_by_enumeration():
    lo, hi = INDUCTION_SEGMENT
    for n in (20, 12):
        for i in range(n):
            assert X.lengths_possible(n, i) == sum(1 for m in range(lo, hi + 1) if i >= n - m), (n, i)
    assert (
        X.lengths_possible(20, 10) == 1 and X.lengths_possible(20, 18) == 7 and X.lengths_possible(20, 9) == 0
    )


def test_accuracy_by_lengths_against_a_loop():
    run = TR.train(
        TR.TrainSettings(task="induction", layers=1, heads=2, d_model=16, steps=40, seed=2, lr=0.01)
    )
    test = run.task.held_out(np.random.default_rng((2, 4)), TR.FINAL_HELD_OUT)
    logits = M.logits_of(run.params, test.tokens, run.allowed, run.settings.divisor)
    hits, totals = np.zeros(7), np.zeros(7)
    n = run.task.n
    for b in range(len(test.tokens)):
        for i in range(n):
            if test.scored[b, i]:
                k = sum(1 for m in range(4, 11) if i >= n - m)
                totals[k - 1] += 1
                hits[k - 1] += _first_max(logits[b, i]) == test.targets[b, i]
    np.testing.assert_allclose(X.accuracy_by_lengths(run), hits / totals, rtol=1e-12)
    assert totals.min() > 0


def test_previous_heads():
    assert X.previous_heads(np.array([0.76, 0.7, 0.53, 0.1])) == (0, 1, 2)
    assert X.previous_heads(np.array([0.2, 0.5])) == (1,)  # 0.5 reaches the threshold
    assert X.previous_heads(np.array([0.5, 0.7])) == (0, 1)  # … with a stronger head beside it
    assert X.previous_heads(np.array([0.3, 0.49, 0.1])) == (1,)  # none does: the strongest alone


def test_two_heads_zeroed_together_is_zeroing_both_rows():
    run = TR.train(TR.TrainSettings(task="previous", heads=4, d_model=8, d_k=2, steps=3))
    tokens = run.task.batch(np.random.default_rng(0), 2).tokens
    edited = M.Params(run.params.shape, run.params.flat.copy())
    edited["0.W_O"][0:2] = 0.0
    edited["0.W_O"][4:6] = 0.0
    got = M.forward(run.params, tokens, run.allowed, run.settings.divisor, ((0, 0), (0, 2))).logits
    np.testing.assert_array_equal(got, M.forward(edited, tokens, run.allowed, run.settings.divisor).logits)
    # a pair naming another layer changes nothing in this one-layer model
    same = M.forward(run.params, tokens, run.allowed, run.settings.divisor, ((1, 0),)).logits
    np.testing.assert_array_equal(
        same, M.forward(run.params, tokens, run.allowed, run.settings.divisor).logits
    )


# --- positions: the best a model knowing only its letter and the input's letters can expect ------------


def _brute_baseline(task: str, multiset: tuple[int, ...], vocab: int) -> float:
    """The best over every rule g(own letter) -> answer, of the accuracy averaged over every order
    of ``multiset`` (each order equally likely), by enumeration."""
    orders = list(itertools.permutations(multiset))
    n = len(multiset)
    letters = sorted(set(multiset))
    best = 0.0
    for answers in itertools.product(range(vocab), repeat=len(letters)):
        g = dict(zip(letters, answers, strict=True))
        right = 0
        for x in orders:
            target = x[::-1] if task == "reverse" else tuple(sorted(x))
            right += sum(g[x[i]] == target[i] for i in range(n))
        best = max(best, right / (len(orders) * n))
    return best


@pytest.mark.parametrize("task", ["reverse", "sort"])
@pytest.mark.parametrize("multiset", [(0, 0, 1, 2), (0, 1, 2, 3), (1, 1, 1, 2), (0, 0, 1, 1), (2, 2, 2, 2)])
def test_multiset_baseline_is_the_best_rule(task, multiset):
    rng = np.random.default_rng(len(multiset))
    tokens = np.array([rng.permutation(multiset)])  # any order: the baseline depends on the letters only
    assert X.multiset_baseline(task, tokens, 4) == pytest.approx(
        _brute_baseline(task, multiset, 4), abs=1e-12
    )


def test_multiset_baseline_averages_the_inputs_and_refuses_other_tasks():
    tokens = np.array([[0, 0, 1, 2], [0, 1, 2, 3]])
    assert X.multiset_baseline("sort", tokens, 4) == pytest.approx((2 / 4 + 1 / 4) / 2)
    # reverse, (0 0 1 2): a 0 sees {0, 1, 2} (1/3), 1 sees {0, 0, 2} (2/3), 2 sees {0, 0, 1} (2/3)
    assert X.multiset_baseline("reverse", tokens[:1], 4) == pytest.approx((1 / 3 + 1 / 3 + 2 / 3 + 2 / 3) / 4)
    with pytest.raises(ValueError):
        X.multiset_baseline("previous", tokens, 4)


# --- a run: the loss after its last update, the repeated input's maps ----------------------------------


def test_final_loss_is_the_final_models_loss_on_the_final_sequences():
    run = TR.train(TR.TrainSettings(task="previous", steps=1, d_model=8, heads=1, d_k=8, seed=3))
    test = run.task.held_out(np.random.default_rng((3, 4)), TR.FINAL_HELD_OUT)
    logits = M.logits_of(run.params, test.tokens, run.allowed, run.settings.divisor)
    total = count = 0.0
    for b in range(len(test.tokens)):
        for i in range(run.task.n):
            if test.scored[b, i]:
                row = logits[b, i] - logits[b, i].max()
                total -= row[test.targets[b, i]] - math.log(np.exp(row).sum())
                count += 1
    assert run.final_loss == pytest.approx(total / count, rel=1e-12)
    assert run.final_loss != run.losses[0]  # after the update, on other sequences


def test_repeated_attention_holds_the_scores():
    run = TR.train(TR.TrainSettings(task="induction", layers=2, heads=2, d_model=8, steps=3))
    maps, m = run.repeated_attention, len(run.repeated) // 2
    assert maps.shape == (2, 2, 2 * m, 2 * m) and not maps.flags.writeable
    for layer in range(2):
        for h in range(2):
            ind = sum(maps[layer, h, i, i - m + 1] for i in range(m, 2 * m)) / m
            prev = sum(maps[layer, h, i, i - 1] for i in range(1, 2 * m)) / (2 * m - 1)
            assert run.induction[layer, h] == pytest.approx(ind, rel=1e-12)
            assert run.previous_token[layer, h] == pytest.approx(prev, rel=1e-12)

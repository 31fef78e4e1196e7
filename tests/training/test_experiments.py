"""Tests written from mutation testing of attention_core/training/experiments.py, its first half
(the √d_k and leaky-mask experiments and their helpers): each one fails for a small change that
every other test let pass. Expected values come from hand arithmetic, plain loops or a naive
re-implementation of the one-layer, attention-only model below, never from the function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.training import experiments as X
from attention_core.training import model as M
from attention_core.training import train as TR
from attention_core.training.model import init_model
from attention_core.training.tasks import PAIR_VOCAB

# --- a naive one-layer, attention-only model (per sequence, per head, per row) -------------------


def _softmax_row(row: np.ndarray) -> np.ndarray:
    m = max(v for v in row if v != -math.inf)
    e = np.array([math.exp(v - m) if v != -math.inf else 0.0 for v in row])
    return e / e.sum()


def _naive_forward(params, tokens: list[int], causal: bool, divisor: float):
    """One sequence through ``x + Attn(x)``, then ``W_U`` and ``b_U``: (x, V per head, weights per
    head [h, n, n], logits [n, vocab])."""
    s = params.shape
    n = len(tokens)
    x = np.array([params["E"][t] + (params["P"][i] if s.positions else 0.0) for i, t in enumerate(tokens)])
    out = np.zeros_like(x)
    weights, values = [], []
    for h in range(s.heads):
        Q, K, V = x @ params["0.W_Q"][h], x @ params["0.W_K"][h], x @ params["0.W_V"][h]
        w = np.zeros((n, n))
        for i in range(n):
            row = [(float(Q[i] @ K[j]) / divisor) if (j <= i or not causal) else -math.inf for j in range(n)]
            w[i] = _softmax_row(np.array(row))
        out += (w @ V) @ params["0.W_O"][h * s.d_k : (h + 1) * s.d_k]
        weights.append(w)
        values.append(V)
    logits = (x + out) @ params["W_U"] + params["b_U"]
    return x, values, np.array(weights), logits


def _naive_score_gradient(settings: TR.TrainSettings) -> tuple[float, float, float]:
    """‖dL/d(softmax input)‖, the mean largest weight per row and the loss, on the batch drawn
    from ``default_rng((seed, 1))`` (train.py's module doc: the training batches' generator)."""
    task = settings.make_task()
    params = init_model(settings.model_shape(task), settings.seed)
    batch = task.batch(np.random.default_rng((settings.seed, 1)), settings.batch)
    causal = settings.mask_kind == "causal"
    count = int(batch.scored.sum())
    total_sq, maxes, loss = 0.0, [], 0.0
    for b in range(settings.batch):
        _, values, w, logits = _naive_forward(params, list(batch.tokens[b]), causal, settings.divisor)
        dlogits = np.zeros_like(logits)
        for i in range(logits.shape[0]):
            p = _softmax_row(logits[i])
            if batch.scored[b, i]:
                t = batch.targets[b, i]
                loss -= math.log(p[t]) / count
                dlogits[i] = p / count
                dlogits[i, t] -= 1.0 / count
        dout = dlogits @ params["W_U"].T  # the residual's attention part reads the same gradient
        for h in range(params.shape.heads):
            k = params.shape.d_k
            dhead = dout @ params["0.W_O"][h * k : (h + 1) * k].T
            dw = dhead @ values[h].T
            for i in range(dw.shape[0]):
                ds = w[h, i] * (dw[i] - float(dw[i] @ w[h, i]))  # softmax's Jacobian on one row
                total_sq += float(ds @ ds)
                maxes.append(float(w[h, i].max()))
    return math.sqrt(total_sq), sum(maxes) / len(maxes), loss


TINY = dict(task="previous", layers=1, d_model=8, batch=3, seed=5)


@pytest.mark.parametrize("scale", ["sqrt", "none"])
def test_score_gradient_is_the_naive_gradient_at_the_softmax_input(scale):
    settings = TR.TrainSettings(heads=2, scale=scale, **TINY)
    norm, max_weight, loss = _naive_score_gradient(settings)
    got = X.score_gradient(settings)
    assert got == pytest.approx((norm, max_weight), rel=1e-9)
    # the batch is the first training batch: training's first loss is the naive model's loss on it
    first = TR.train(TR.TrainSettings(heads=2, scale=scale, steps=1, **TINY))
    assert first.losses[0] == pytest.approx(loss, rel=1e-9)


def test_score_gradient_on_a_text_task_with_the_mask_off():
    settings = TR.TrainSettings(task="text", text="abcab", mask="none", heads=1, d_model=4, batch=2, seed=2)
    norm, max_weight, _ = _naive_score_gradient(settings)
    assert X.score_gradient(settings) == pytest.approx((norm, max_weight), rel=1e-9)
    assert max_weight < 1.0  # no row of an unmasked map is one-hot here, so the mean is not trivially 1


# --- tail_mean ---------------------------------------------------------------------------------


def test_tail_mean_is_the_mean_of_the_last_tenth_rounded_and_at_least_one_point():
    assert X.tail_mean(np.arange(20.0)) == 18.5  # the last 2 of 20: (18 + 19) / 2
    assert X.tail_mean(np.arange(19.0)) == 17.5  # 1.9 rounds to 2 points: (17 + 18) / 2
    assert X.tail_mean(np.arange(3.0)) == 2.0  # 0.3 rounds to 0: still the last point
    assert X.tail_mean(np.array([4.0])) == 4.0
    assert X.tail_mean(np.arange(10.0), share=0.5) == 7.0  # (5 + 6 + 7 + 8 + 9) / 5
    assert X.tail_mean(np.arange(10.0), 1.0) == 4.5  # the whole curve


# --- follow_share -------------------------------------------------------------------------------


def _naive_follow(text: list[int], ids: list[int], start: int, context: int) -> float:
    """Each scored position: is (its ``context`` predecessors, itself) a window of the text read
    round and round? Windows found by scanning the text written out often enough to hold each."""
    long = text * (context + 2)
    windows = [long[s : s + context + 1] for s in range(len(text))]
    scored = [i for i in range(start, len(ids)) if i >= context]
    if not scored:
        return 0.0
    return sum(ids[i - context : i + 1] in windows for i in scored) / len(scored)


def test_follow_share_by_hand():
    text = [0, 1, 2, 3]
    # the window (2, 3, 0, 1) exists only round the end of the text
    assert X.follow_share(text, [2, 3, 0, 1], 3) == 1.0
    assert X.follow_share(text, [2, 3, 0, 2], 3) == 0.0
    # start before the context: only positions with a whole context count (positions 3 and 4 here)
    assert X.follow_share(text, [0, 1, 2, 3, 3], 0) == 0.5
    assert X.follow_share(text, [0, 1, 2], 0) == 0.0  # no position has three predecessors
    assert X.follow_share(text, [0, 1, 2, 3], 4) == 0.0  # nothing after start
    assert X.follow_share(text, [1, 2, 1, 2], 1, context=1) == pytest.approx(
        2 / 3
    )  # 1-2 yes, 2-1 no, 1-2 yes


def test_follow_share_against_a_naive_scan():
    rng = np.random.default_rng(7)
    for _ in range(30):
        text = [int(v) for v in rng.integers(0, 3, size=int(rng.integers(1, 7)))]
        ids = [int(v) for v in rng.integers(0, 3, size=int(rng.integers(0, 10)))]
        start, context = int(rng.integers(0, 6)), int(rng.integers(0, 4))
        assert X.follow_share(text, ids, start, context) == pytest.approx(
            _naive_follow(text, ids, start, context)
        ), (text, ids, start, context)
    text, ids = [0, 1, 0, 2], [0, 1, 0, 2, 0, 1, 0, 1]
    assert X.follow_share(text, ids, 2) == pytest.approx(_naive_follow(text, ids, 2, X.FOLLOW_CONTEXT))


# --- generate and _generation -------------------------------------------------------------------

TEXT = "abacabadabacabae"  # 16 characters, as many as the text task's context


def _naive_generate(run, prompt: list[int], length: int) -> list[int]:
    ids = list(prompt)
    n = run.task.n
    for _ in range(length):
        context = ids[max(0, len(ids) - n) :]  # the last n ids: nothing before them is read
        logits = _naive_forward(
            run.params, context, run.settings.mask_kind == "causal", run.settings.divisor
        )[3]
        ids.append(int(np.argmax(logits[-1])))
    return ids[len(prompt) :]


@pytest.fixture(scope="module")
def text_runs():
    return {
        mask: TR.train(
            TR.TrainSettings(task="text", text=TEXT, mask=mask, heads=2, d_model=8, steps=3, seed=1)
        )
        for mask in ("causal", "none")
    }


@pytest.mark.parametrize("mask", ["causal", "none"])
def test_generate_reads_only_the_last_n_ids(text_runs, mask):
    run = text_runs[mask]
    assert run.task.n == 16
    prompt = [int(v) for v in run.task.text_ids[:5]]
    got = X.generate(run, prompt, 20)  # 25 ids in all: the context slides past the prompt
    assert got == _naive_generate(run, prompt, 20) and len(got) == 20
    assert X.generate(run, prompt, 0) == []
    long = [int(v) for v in run.task.text_ids] * 2  # a prompt longer than the context
    assert X.generate(run, long, 3) == _naive_generate(run, long, 3)


def test_generation_goes_once_round_the_text(text_runs):
    run = text_runs["none"]
    text = TEXT
    g = X._generation(run, 4)
    ids = list(run.task.text_ids)
    out = _naive_generate(run, ids[:4], len(text))
    labels = run.task.labels_in
    assert g.prompt == "abac" and g.expected == text[4:] + text[:4]
    assert g.generated == "".join(labels[i] for i in out)
    assert g.accuracy == pytest.approx(
        sum(a == b for a, b in zip(g.generated, g.expected, strict=True)) / len(text)
    )
    assert g.follows == pytest.approx(_naive_follow(ids, ids[:4] + out, 4, 3))


def test_generation_with_a_prompt_longer_than_the_text(text_runs):
    run = text_runs["causal"]
    g = X._generation(run, 40)
    assert g.prompt == TEXT and g.expected == TEXT  # all of it given, then once round again
    assert len(g.generated) == 16


# --- sqrt_dk ---------------------------------------------------------------------------------------


def test_sqrt_dk_reports_each_run_and_its_settings():
    reports = []  # (label, steps done, steps asked for, the losses so far)
    s = X.SqrtDkSettings(d_k=4, task="reverse", steps=3, seeds=(2, 0), lr=0.01)
    r = X.sqrt_dk(
        s, on_progress=lambda label, p: reports.append((label, p.step, p.steps, np.array(p.losses)))
    )
    labels = [label for label, *_ in reports]
    assert list(dict.fromkeys(labels)) == [
        "scaled, seed 2",
        "unscaled, seed 2",
        "scaled, seed 0",
        "unscaled, seed 0",
    ]
    assert r.settings == s and not r.stopped and [row.seed for row in r.seeds] == [2, 0]
    for row in r.seeds:
        for run, divisor, name in ((row.run_scaled, 2.0, "scaled"), (row.run_unscaled, 1.0, "unscaled")):
            st = run.settings
            assert (st.task, st.layers, st.heads, st.d_model, st.d_k) == ("reverse", 1, 1, 4, 4)
            assert (st.total_steps, st.seed, st.lr, st.divisor, st.mask_kind) == (
                3,
                row.seed,
                0.01,
                divisor,
                "none",
            )
            assert run.steps_done == 3
            # the run's last report: all 3 steps, and the curve the run kept
            label, step, steps, losses = [x for x in reports if x[0] == f"{name}, seed {row.seed}"][-1]
            assert (step, steps) == (3, 3) and losses.tolist() == run.losses.tolist()
        assert (row.grad_scaled, row.max_weight_scaled) == pytest.approx(
            _naive_score_gradient(row.run_scaled.settings)[:2], rel=1e-9)  # fmt: skip
        assert (row.grad_unscaled, row.max_weight_unscaled) == pytest.approx(
            _naive_score_gradient(row.run_unscaled.settings)[:2], rel=1e-9)  # fmt: skip
        # 3 steps: the last 10 % rounds to no point, so the last loss
        assert row.loss_scaled == row.run_scaled.losses[2] and row.loss_unscaled == row.run_unscaled.losses[2]
        # 3 steps: shorter than the 5-step mean, and than step 20
        assert (row.steps_scaled, row.steps_unscaled) == (None, None)
        assert math.isnan(row.early_scaled) and math.isnan(row.early_unscaled)


def test_sqrt_dk_rows_carry_each_runs_own_steps_to_the_level_and_early_loss(monkeypatch):
    """Which run's curve each field is read from (the functions themselves: test_training_measures.py)."""
    monkeypatch.setattr(X, "steps_to_level", lambda losses: ("steps", float(losses[0])))
    monkeypatch.setattr(X, "loss_at", lambda losses: ("early", float(losses[-1])))
    r = X.sqrt_dk(X.SqrtDkSettings(d_k=4, steps=3, seeds=(1,)))
    (row,) = r.seeds
    assert row.steps_scaled == ("steps", row.run_scaled.losses[0])
    assert row.steps_unscaled == ("steps", row.run_unscaled.losses[0])
    assert row.early_scaled == ("early", row.run_scaled.losses[-1])
    assert row.early_unscaled == ("early", row.run_unscaled.losses[-1])
    assert row.run_scaled.losses[0] != row.run_unscaled.losses[0]


def test_sqrt_dk_stops_after_the_run_that_was_stopped():
    asked = []

    def stop() -> bool:  # asked before every step: the 5th question is the unscaled run's 2nd step
        asked.append(1)
        return len(asked) >= 5

    r = X.sqrt_dk(X.SqrtDkSettings(d_k=4, steps=3, seeds=(0, 1)), should_stop=stop)
    assert r.stopped and len(r.seeds) == 1
    (row,) = r.seeds
    assert row.run_scaled.steps_done == 3 and not row.run_scaled.stopped
    assert row.run_unscaled.steps_done == 1 and row.run_unscaled.stopped
    assert row.loss_unscaled == row.run_unscaled.losses[0]


def test_sqrt_dk_stopped_by_the_scaled_run_alone():
    asked = []

    def stop() -> bool:  # the scaled run of seed 0 stops after 1 step; the unscaled one is never stopped
        asked.append(1)
        return len(asked) == 2

    r = X.sqrt_dk(X.SqrtDkSettings(d_k=4, steps=3, seeds=(0, 1)), should_stop=stop)
    assert r.stopped and len(r.seeds) == 1
    assert r.seeds[0].run_scaled.stopped and not r.seeds[0].run_unscaled.stopped


def test_grad_ratio_is_scaled_over_unscaled_and_infinite_over_zero():
    def row(g_s: float, g_u: float) -> X.SqrtDkSeed:
        return X.SqrtDkSeed(0, g_s, g_u, 0.5, 0.9, 1.0, 2.0, None, None, math.nan, math.nan, None, None)

    r = X.SqrtDkResult(X.SqrtDkSettings(), (row(1.0, 4.0), row(3.0, 0.0), row(0.0, 2.0)), False)
    assert r.grad_ratio.tolist() == [0.25, math.inf, 0.0]


def test_sqrt_dk_without_seeds_trains_nothing_and_was_not_stopped():
    r = X.sqrt_dk(X.SqrtDkSettings(seeds=()), should_stop=lambda: True)
    assert r.seeds == () and r.stopped is False and r.grad_ratio.tolist() == []


# --- leaky_mask -------------------------------------------------------------------------------------


def test_leaky_mask_reports_both_runs_with_their_numbers():
    labels = []
    s = X.LeakySettings(text="abcabd", steps=3, seed=4, prompt=2, lr=0.02)
    r = X.leaky_mask(s, on_progress=lambda label, p: labels.append(label))
    assert list(dict.fromkeys(labels)) == ["causal", "none"]
    assert r.settings == s and not r.stopped
    for lr_run, mask in ((r.causal, "causal"), (r.leaky, "none")):
        st = lr_run.run.settings
        assert lr_run.mask == mask and st.mask_kind == mask
        assert (st.task, st.text, st.total_steps, st.seed, st.lr) == ("text", "abcabd", 3, 4, 0.02)
        assert lr_run.final_loss == lr_run.run.losses[2]  # 3 steps: the last one
        g = lr_run.short
        assert g.prompt == "ab" and g.expected == "cabdab"
        out = _naive_generate(lr_run.run, [0, 1], 6)
        assert g.generated == "".join("abcd"[i] for i in out)
        full = lr_run.full  # the window is 16 long: the whole text (6) is the prompt
        assert full.prompt == "abcabd" and full.expected == "abcabd"
        assert full.generated == "".join(
            "abcd"[i] for i in _naive_generate(lr_run.run, [0, 1, 2, 0, 1, 3], 6)
        )
        assert lr_run.visible.shape == lr_run.prefix.shape == (16,) and lr_run.next_weight.shape == (15,)
        np.testing.assert_array_equal(lr_run.future_weight, X.future_weight(lr_run.run))
        np.testing.assert_array_equal(lr_run.next_weight, X.next_weight(lr_run.run))


@pytest.mark.parametrize("stop_at", [2, 5])
def test_leaky_mask_is_stopped_when_either_run_is(stop_at):
    asked = []

    def stop() -> bool:  # 2: the causal run's 2nd step; 5: the unmasked run's 2nd step
        asked.append(1)
        return len(asked) == stop_at

    r = X.leaky_mask(X.LeakySettings(text="abcabd", steps=3), should_stop=stop)
    assert r.stopped
    assert (r.causal.run.stopped, r.leaky.run.stopped) == (stop_at == 2, stop_at == 5)


# --------------------------------------------------------------------------------------------------
# Tests written from mutation testing of attention_core/training/experiments.py, its second half
# (the heads, induction and positions experiments and their helpers): each one fails for a small
# change that the other tests let pass. Expected values come from hand arithmetic or plain loops
# over the model's own forward pass (attention_core.training.model), never from the experiment code.
#
# Everything is tiny (a few steps, d_model 8) and seeded, so the file runs in a few seconds.

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


def _phase(curve, **kw):
    return X.phase_change(np.asarray(curve, dtype=float), **kw)


def test_phase_change_of_a_curve_too_short_for_one_fall():
    """A run stopped before its first step, or one shorter than a window and a fall: nothing measured."""
    for curve in ([], [3.0] * 5, [3.0] * 6):  # window 2 and k 5: 6 means (7 losses) make one fall
        p = _phase(curve, window=2, k=5)
        assert math.isnan(p.span) and p.plateau_start is None and (p.drop_start, p.drop_end) == (0, 0)
        assert p == X.NO_PHASE
    p = _phase([3.0] * 6 + [1.0], window=2, k=5)  # means 3 3 3 3 3 2: the one fall, from step 2 to 7
    assert (p.span, p.drop_start, p.drop_end, p.drop_from, p.drop_to) == (1.0, 2, 7, 3.0, 2.0)


def test_phase_change_by_hand():
    """window 2, k 2, flat 0.1. Losses 9 9 9 9 9 5 1 1 1: means (steps 1-2 … 8-9) 9 9 9 9 7 3 1 1,
    range 8. Falls over 2 means: 0 0 2 6 6 2: the first largest, 6, at t = 3 (from the mean of steps
    4-5 to that of 6-7). Before it, windows that end by t = 3: t = 0, 1 (falls 0 and 0 < 0.8): the
    plateau from step 0 + 2 to step 1 + 2 + 2, at 9 nats; the flattest fall 0."""
    p = _phase([9, 9, 9, 9, 9, 5, 1, 1, 1], window=2, k=2, flat=0.1)
    assert p == X.PhaseChange(8.0, 5, 7, 9.0, 3.0, 2, 5, 9.0, 0.0)


def test_phase_change_without_a_plateau():
    """A steady fall then a steeper one: no 2-step window falls by less than 10 % of the range."""
    p = _phase([10, 9, 8, 7, 6, 2, 0, 0], window=1, k=2, flat=0.1)  # range 10; falls 2 2 2 5 6 2
    assert (p.drop_start, p.drop_end, p.drop_from, p.drop_to) == (5, 7, 6.0, 0.0)
    assert p.plateau_start is None and p.plateau_end is None and math.isnan(p.plateau_loss)
    assert p.flattest == pytest.approx(0.2)  # windows t = 0, 1, 2 (ending by t = 4): falls 2, 2, 2


def test_phase_change_takes_the_longest_flat_stretch_and_the_flat_share_as_given():
    # means = losses (window 1). Flat windows (fall < 0.5): t = 0, 3, 4, 5; the longest run 3..5
    curve = [10, 10, 8, 8, 8, 8, 8, 0, 0]
    p = _phase(curve, window=1, k=1, flat=0.05)  # range 10: falls 0 2 0 0 0 0 8 0
    assert (p.drop_start, p.plateau_start, p.plateau_end, p.plateau_loss) == (7, 3, 7, 8.0)
    assert _phase(curve, window=1, k=1, flat=0.0).plateau_start is None  # strict: a fall of 0 is not < 0


def test_phase_change_when_the_drop_comes_first():
    """The steepest fall from the first mean: no window ends before it, so no plateau and no flattest."""
    p = _phase([4.0, 0.0, 0.0, 0.0, 0.0], window=1, k=1)
    assert (p.drop_start, p.drop_from, p.drop_to) == (1, 4.0, 0.0)
    assert p.plateau_start is None and math.isnan(p.flattest)


def test_phase_change_plateau_level_is_its_mean_and_flattest_a_share_below_one_nat():
    # window 1, k 2, flat 0.1, range 5: falls 0.2 0.2 0.2 3.7 4.6 1 0; the drop from t = 4; windows
    # t = 0 … 2 end by it, all flat: the plateau from step 1 to 5, its level the mean of 5 … 4.6
    p = _phase([5.0, 4.9, 4.8, 4.7, 4.6, 1.0, 0.0, 0.0, 0.0], window=1, k=2, flat=0.1)
    assert (p.plateau_start, p.plateau_end, p.drop_start) == (1, 5, 5)
    assert p.plateau_loss == pytest.approx(4.8) and p.flattest == pytest.approx(0.2 / 5)
    small = _phase(np.array([9, 9, 9, 9, 9, 5, 1, 1, 1]) / 10, window=2, k=2, flat=0.1)  # a range of 0.8
    assert small.flattest == 0.0 and small.plateau_start == 2


def test_phase_change_of_a_flat_curve():
    p = _phase([2.0] * 10, window=2, k=2)
    assert p.span == 0 and p.plateau_start is None and math.isnan(p.flattest)


def test_phase_change_defaults_are_the_lab_s():
    """20-step means, falls over 50 steps: 3 for 120 steps, then 1. The means (steps t+1 … t+20) are 3
    up to t = 100, 1 from t = 120. The largest fall over 50, 2, first from t = 70 (step 90) to step
    140. Windows that end by t = 70 start at t <= 20: all fall 0, so a plateau from step 20 to 90."""
    p = _phase([3.0] * 120 + [1.0] * 100)
    assert (p.drop_start, p.drop_end, p.plateau_start, p.plateau_end) == (90, 140, 20, 90)
    assert p.drop_from == pytest.approx(3.0) and p.drop_to == pytest.approx(1.0)
    assert p.plateau_loss == pytest.approx(3.0) and p.flattest == 0.0
    # 4 % of the range (about 2): a slope of 0.06 per 50 steps is flat, one of 0.1 is not
    for fall, flat in ((0.06, True), (0.1, False)):
        p = _phase(list(3.0 - np.arange(170) * fall / 50) + [1.0] * 100)
        assert (p.plateau_start is not None) is flat, fall


def test_longest_run():
    assert X._longest_run(np.array([], dtype=int)) is None
    assert X._longest_run(np.array([4])) == (4, 4)
    assert X._longest_run(np.array([0, 1, 5, 6, 7, 9])) == (5, 7)
    assert X._longest_run(np.array([0, 1, 3, 4])) == (0, 1)  # the earliest of equal lengths


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
        assert depth.phase == X.NO_PHASE  # 3 losses: shorter than one mean and one fall
        assert depth.by_lengths.shape == (7,)


def _first_largest(values) -> int:
    values = [float(v) for v in values]
    return values.index(max(values))


def _induction_heads_and_ablation(r):
    """The strongest heads, and the previous-token head zeroed by hand."""
    two = r.two
    # the rows differ in their strongest head, so reading the wrong layer shows
    assert _first_largest(two.previous_token[0]) != _first_largest(two.previous_token[1])
    assert _first_largest(two.induction[0]) != _first_largest(two.induction[1])
    strong = [h for h in range(4) if float(two.previous_token[0, h]) >= 0.5]
    assert r.previous_heads == (tuple(strong) or (_first_largest(two.previous_token[0]),))
    assert r.induction_head == (1, _first_largest(two.induction[1]))
    run = two.run
    divisor = run.settings.divisor
    batch = _final_batch(run)
    guesses = _guesses(M.logits_of(run.params, batch.tokens, run.allowed, divisor))
    assert _share(guesses, batch.targets, batch.scored, WHOLE[0]) == run.final_accuracy
    zeroed = run.params
    for head in r.previous_heads:
        zeroed = _without_head(zeroed, 0, head, run.settings.head_dim)
    guesses = _guesses(M.logits_of(zeroed, batch.tokens, run.allowed, divisor))
    expected = _share(guesses, batch.targets, batch.scored, WHOLE[0])
    assert r.accuracy_without_previous_heads == expected != run.final_accuracy
    # the repeated sample (10 tokens and the same again): query i of the repeat, key i − 10 + 1
    w = M.forward(zeroed, run.repeated[None], run.allowed, divisor).weights()[0]  # [2, 4, 20, 20]
    h = r.induction_head[1]
    score = sum(float(w[1, h, i, i - 9]) for i in range(10, 20)) / 10
    assert len(run.repeated) == 20
    assert r.induction_without_previous_heads == pytest.approx(score, rel=1e-12)
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
        # the baseline of the sequences the final accuracy is measured on (train's module doc: (seed, 4))
        assert p.baseline == X.multiset_baseline(p.task, _final_batch(p.run).tokens, 16)
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


def test_phase_change_finds_a_plateau_before_the_steepest_fall():
    curve = np.concatenate(
        [np.linspace(5, 3, 20), np.full(100, 3.0), np.linspace(3, 0.5, 10), np.full(70, 0.5)]
    )
    p = X.phase_change(curve)
    assert 70 <= p.drop_start <= 130 and p.drop_from == pytest.approx(3.0, abs=0.2) and p.drop_to < 1.0
    assert (
        p.plateau_start is not None
        and p.plateau_end <= p.drop_start
        and p.plateau_loss == pytest.approx(3.0, abs=0.05)
    )


def test_follow_share_counts_continuations_the_text_allows():
    text = [0, 1, 2, 0, 1, 3]  # cyclic: 0 1 2 0 1 3 0 1 2 ...
    assert X.follow_share(text, [0, 1, 2, 0, 1, 3], 2, context=2) == 1.0
    assert X.follow_share(text, [0, 1, 2, 2, 2], 2, context=2) == pytest.approx(
        1 / 3
    )  # "0 1 2" yes; "1 2 2", "2 2 2" no


def test_heads_experiment_reports_each_head_and_what_ablating_costs():
    r = X.heads_specialise(X.HeadsSettings(steps=4, d_model=16))
    assert r.previous_score.shape == r.first_score.shape == (2,) and r.ablated.shape == (2, 3)
    np.testing.assert_allclose(
        r.accuracy_lost, np.array([r.accuracy, r.previous_accuracy, r.first_accuracy]) - r.ablated
    )
    assert 0 <= r.accuracy <= min(r.previous_accuracy, r.first_accuracy) <= 1


def test_positions_off_makes_the_layer_permutation_equivariant():
    r = X.positions(X.PositionsSettings(steps=3))
    assert [(p.task, p.positions) for p in r.runs] == [
        ("reverse", True),
        ("reverse", False),
        ("sort", True),
        ("sort", False),
    ]
    off = [p.equivariance_error for p in r.runs if not p.positions]
    on = [p.equivariance_error for p in r.runs if p.positions]
    assert max(off) < 1e-10 < min(on)
    assert r.uniform_guess == 1 / 16


def test_sqrt_dk_measures_both_divisors_on_the_same_weights():
    r = X.sqrt_dk(X.SqrtDkSettings(d_k=32, steps=3, seeds=(0,)))
    (s,) = r.seeds
    assert s.run_scaled.settings.divisor == math.sqrt(32) and s.run_unscaled.settings.divisor == 1.0
    assert s.grad_scaled > s.grad_unscaled and s.max_weight_unscaled > s.max_weight_scaled  # the saturation
    assert s.run_scaled.losses[0] != s.run_unscaled.losses[0]
    assert r.grad_ratio.tolist() == [s.grad_scaled / s.grad_unscaled]


def test_leaky_mask_runs_both_masks_and_generates_from_its_own_output():
    r = X.leaky_mask(X.LeakySettings(text="abcabd", steps=3))
    assert (r.causal.run.settings.mask_kind, r.leaky.run.settings.mask_kind) == ("causal", "none")
    g = r.causal.short
    assert g.prompt == "abca" and len(g.generated) == len(g.expected) == 6 and g.expected == "bdabca"
    ids = X.generate(r.causal.run, [0, 1, 2, 0], 6)
    assert "".join(r.causal.run.task.labels_in[i] for i in ids) == g.generated


def test_induction_experiment_compares_one_and_two_layers():
    r = X.induction_layers(X.InductionSettings(steps=3, d_model=16, heads=2))
    assert r.one.induction.shape == (1, 2) and r.two.induction.shape == (2, 2)
    assert r.induction_head[0] == 1
    assert int(np.argmax(r.two.previous_token[0])) in r.previous_heads

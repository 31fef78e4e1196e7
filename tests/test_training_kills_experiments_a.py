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
from attention_core.training import train as TR
from attention_core.training.model import init_model

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

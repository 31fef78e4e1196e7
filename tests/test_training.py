"""The training lab's core (attention_core/training/): the whole model's gradient against central
finite differences in float64, the tasks against loops written from their definitions, Adam
against the update worked by hand, and the training loop's promises (same seed, same bits; Stop
keeps what was trained; progress reported; bad settings refused with a reason key)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.labs import heads as H
from attention_core.steps import build_mask
from attention_core.training import model as M
from attention_core.training import tasks as T
from attention_core.training import train as TR
from attention_core.training.optim import Adam

EPS = 1e-6
TOLERANCE = 1e-6


def _perturbed_model(shape: M.ModelShape, seed: int = 1) -> M.Params:
    params = M.init_model(shape, seed)
    # γ = 1 and zero biases at initialisation: nudge every entry, so no parameter sits at a special value
    params.flat[...] += 0.1 * np.random.default_rng(seed + 10).standard_normal(params.flat.size)
    return params


def model_fd_errors(shape: M.ModelShape, mask: str, divisor: float = 1.7) -> dict[str, float]:
    """Per parameter: ‖finite differences − backward‖ / max(‖·‖, ‖·‖, 1e-3) of the mean cross-entropy."""
    params = _perturbed_model(shape)
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, shape.vocab_in, (3, shape.n))
    targets = rng.integers(0, shape.vocab_out, (3, shape.n))
    scored = rng.random((3, shape.n)) > 0.3
    allowed = build_mask(mask, shape.n)

    def loss() -> float:
        return M.cross_entropy(M.forward(params, tokens, allowed, divisor).logits, targets, scored)[0]

    fwd = M.forward(params, tokens, allowed, divisor)
    _, dlogits = M.cross_entropy(fwd.logits, targets, scored)
    grads = M.backward(params, fwd, dlogits, params.zeros_like())
    fd = params.zeros_like()
    for i in range(params.flat.size):
        old = params.flat[i]
        params.flat[i] = old + EPS
        up = loss()
        params.flat[i] = old - EPS
        down = loss()
        params.flat[i] = old
        fd.flat[i] = (up - down) / (2 * EPS)
    return {
        name: float(
            np.linalg.norm(fd[name] - grads[name])
            / max(np.linalg.norm(fd[name]), np.linalg.norm(grads[name]), 1e-3)
        )
        for name in M.parameter_shapes(shape)
    }


@pytest.mark.parametrize(
    "ffn, positions, mask", [(False, True, "causal"), (True, True, "none"), (True, False, "causal")]
)
def test_whole_model_gradient_matches_finite_differences(ffn, positions, mask):
    layers = 1 if ffn and not positions else 2  # fewer parameters where two layers add nothing new
    shape = M.ModelShape(
        vocab_in=5, vocab_out=4, n=4, d_model=6, heads=2, d_k=3, layers=layers, ffn=ffn, positions=positions
    )
    errors = model_fd_errors(shape, mask)
    assert ("P" in errors) == positions and ("0.W_in" in errors) == ffn and (f"{layers - 1}.W_Q" in errors)
    assert max(errors.values()) <= TOLERANCE, {k: v for k, v in errors.items() if v > TOLERANCE}


def test_the_model_check_fails_when_a_backward_step_is_wrong(monkeypatch):
    shape = M.ModelShape(
        vocab_in=5, vocab_out=4, n=4, d_model=6, heads=2, d_k=3, layers=1, ffn=True, positions=True
    )
    right = M.layer_norm_backward

    def no_spread_term(dy, cache, g):  # LayerNorm's backward without the x̂ · mean(ĝ x̂) term
        dx, dg, db = right(dy, cache, g)
        x_hat, std = cache
        return dx + x_hat * np.mean(dy * g * x_hat, axis=-1, keepdims=True) / std, dg, db

    monkeypatch.setattr(M, "layer_norm_backward", no_spread_term)
    errors = model_fd_errors(shape, "causal")
    assert errors["E"] > 1e-3 and errors["0.W_Q"] > 1e-3
    assert errors["W_U"] <= TOLERANCE  # read after the last norm's backward: untouched


def test_cross_entropy_and_accuracy_from_their_definitions():
    logits = np.array([[[2.0, 0.0, -1.0], [0.0, 3.0, 0.0]]])
    targets = np.array([[0, 2]])
    scored = np.array([[True, True]])
    loss, dlogits = M.cross_entropy(logits, targets, scored)
    p0 = np.exp(logits[0, 0]) / np.exp(logits[0, 0]).sum()
    p1 = np.exp(logits[0, 1]) / np.exp(logits[0, 1]).sum()
    assert loss == pytest.approx(-(math.log(p0[0]) + math.log(p1[2])) / 2, rel=1e-12)
    np.testing.assert_allclose(dlogits[0, 0], (p0 - [1, 0, 0]) / 2, rtol=1e-12)
    assert M.accuracy(logits, targets, scored) == 0.5
    assert M.accuracy(logits, targets, np.array([[True, False]])) == 1.0
    _, d = M.cross_entropy(logits, targets, np.array([[False, True]]))
    assert not d[0, 0].any()


def test_adam_two_steps_by_hand():
    opt = Adam(2, lr=0.1)
    theta = np.array([1.0, -2.0])
    g1, g2 = np.array([0.5, -4.0]), np.array([-1.0, 2.0])
    opt.step(theta, g1)
    # step 1: m̂ = g, v̂ = g², so every parameter moves by lr · sign(g) (up to ε)
    np.testing.assert_allclose(theta, [1.0 - 0.1, -2.0 + 0.1], rtol=1e-7)
    after_one = theta.copy()
    opt.step(theta, g2)
    m = 0.9 * 0.1 * g1 + 0.1 * g2
    v = 0.999 * 0.001 * g1**2 + 0.001 * g2**2
    step = 0.1 * (m / (1 - 0.9**2)) / (np.sqrt(v / (1 - 0.999**2)) + 1e-8)
    np.testing.assert_allclose(theta, after_one - step, rtol=1e-12)


# ------------------------------------------------------------------------------------------
# Tasks, against loops written from the definitions
# ------------------------------------------------------------------------------------------


def test_previous_reverse_sort_and_pairs_answers():
    rng = np.random.default_rng(0)
    for name, offset in (
        ("previous", 1),
        ("previous", 3),
        ("reverse", 1),
        ("sort", 1),
        ("previous_first", 1),
    ):
        task = T.make_task(name, offset=offset)
        b = task.batch(rng, 4)
        assert b.tokens.shape == b.targets.shape == b.scored.shape == (4, task.n)
        assert b.tokens.min() >= 0 and b.tokens.max() < task.vocab_in
        for row, target, scored in zip(b.tokens.tolist(), b.targets.tolist(), b.scored.tolist(), strict=True):
            n = len(row)
            for i in range(n):
                if name == "previous":
                    assert scored[i] == (i >= offset)
                    if i >= offset:
                        assert target[i] == row[i - offset]
                elif name == "reverse":
                    assert scored[i] and target[i] == row[n - 1 - i]
                elif name == "sort":
                    assert scored[i] and target[i] == sorted(row)[i]
                else:
                    assert scored[i] == (i >= 1)
                    if i >= 1:
                        assert target[i] == row[i - 1] * T.PAIR_VOCAB + row[0]
                        assert (
                            task.labels_out[target[i]] == task.labels_in[row[i - 1]] + task.labels_in[row[0]]
                        )


def test_induction_rows_are_filler_segment_segment():
    task = T.make_task("induction")
    b = task.batch(np.random.default_rng(1), 64)
    n = task.n
    lengths = set()
    for row, target, scored in zip(b.tokens.tolist(), b.targets.tolist(), b.scored.tolist(), strict=True):
        # the segment length m: the shortest period of the tail that matches the text before it
        m = next(
            m
            for m in range(T.INDUCTION_SEGMENT[0], T.INDUCTION_SEGMENT[1] + 1)
            if row[n - m :] == row[n - 2 * m : n - m]
        )
        lengths.add(m)
        assert len(set(row[: n - m])) == n - m  # filler and segment: no token twice
        for i in range(n):
            assert scored[i] == (n - m <= i <= n - 2)
            if scored[i]:
                assert target[i] == row[i + 1]
                j = row.index(row[i])  # the earlier occurrence of this token ...
                assert j == i - m and row[j + 1] == target[i]  # ... and what followed it is the answer
    assert len(lengths) >= 4  # the segment length varies, so no fixed offset finds the answer


def test_text_task_wraps_round_and_takes_japanese():
    text = "ねこがねた。"
    task = T.make_task("text", text=text)
    assert task.labels_in == tuple(sorted(set(text))) and task.vocab_in == 5
    b = task.batch(np.random.default_rng(0), 3)
    ids = [task.labels_in.index(c) for c in text]
    for row, target in zip(b.tokens.tolist(), b.targets.tolist(), strict=True):
        start = next(
            s for s in range(len(text)) if all(row[i] == ids[(s + i) % len(text)] for i in range(task.n))
        )
        assert target == [ids[(start + i + 1) % len(text)] for i in range(task.n)]
    held = task.held_out(np.random.default_rng(0), 99)
    # every character of the text is predicted once: windows start 0, n, 2n, ...
    assert held.tokens.shape == (math.ceil(len(text) / task.n), task.n)
    sample = task.sample(np.random.default_rng(0))
    assert "".join(task.labels_in[i] for i in sample.tokens[0][: len(text)]) == text


@pytest.mark.parametrize(
    "kwargs, key",
    [
        ({"task": "nope"}, "task"),
        ({"task": "text", "text": "  "}, "text_empty"),
        ({"task": "text", "text": "a" * (T.MAX_TEXT_CHARS + 1)}, "text_long"),
        ({"steps": 0}, "steps"),
        ({"steps": TR.MAX_STEPS + 1}, "steps"),
        ({"layers": 3}, "layers"),
        ({"heads": 5}, "heads"),
        ({"d_model": 65}, "d_model"),
        ({"d_model": 30, "heads": 4}, "d_model_heads"),
        ({"d_k": 65}, "d_k"),
        ({"scale": "cube"}, "scale"),
        ({"scale": 0.0}, "divisor"),
        ({"mask": "padding"}, "mask"),
        ({"lr": 0.0}, "lr"),
        ({"lr": float("nan")}, "lr"),
        ({"seed": -1}, "seed"),
        ({"batch": 0}, "batch"),
        ({"offset": 5}, "offset"),
        ({"positions": 1}, "positions"),
    ],
)
def test_bad_settings_are_refused_with_a_reason_key(kwargs, key):
    with pytest.raises(TR.TrainSettingsError) as err:
        TR.TrainSettings(**kwargs)
    assert err.value.key == key and str(err.value)


def test_settings_resolve_their_defaults():
    s = TR.TrainSettings(task="induction", heads=4, d_model=64)
    assert (s.head_dim, s.divisor, s.mask_kind, s.total_steps) == (
        16,
        4.0,
        "causal",
        TR.DEFAULT_STEPS["induction"],
    )
    assert TR.TrainSettings(task="reverse").mask_kind == "none"
    assert TR.TrainSettings(scale=2.5).divisor == 2.5 and TR.TrainSettings(scale="none").divisor == 1.0


# ------------------------------------------------------------------------------------------
# The loop
# ------------------------------------------------------------------------------------------

TINY = {"d_model": 16, "heads": 2, "lr": 1e-2, "batch": 16}


def test_same_seed_same_losses_to_the_bit_and_another_seed_differs():
    a = TR.train(TR.TrainSettings(task="induction", layers=2, steps=12, **TINY))
    b = TR.train(TR.TrainSettings(task="induction", layers=2, steps=12, **TINY))
    c = TR.train(TR.TrainSettings(task="induction", layers=2, steps=12, seed=1, **TINY))
    assert a.losses.tobytes() == b.losses.tobytes() and a.accuracy.tobytes() == b.accuracy.tobytes()
    assert a.params.flat.tobytes() == b.params.flat.tobytes()
    assert a.losses[0] != c.losses[0]


def test_the_previous_token_task_is_learned_and_the_head_says_so():
    run = TR.train(TR.TrainSettings(task="previous", steps=80, **TINY))
    assert run.losses[-5:].mean() < 0.2 * run.losses[:5].mean()
    assert run.final_accuracy > 0.95 and run.accuracy[-1] > 0.95
    assert run.previous_token.max() > 0.8
    # the scores are the heads page's, on the run's own repeated sample
    ind, prev = TR.head_scores(run.params, run.repeated, run.allowed, run.settings.divisor)
    w = M.forward(run.params, run.repeated[None], run.allowed[:12, :12], run.settings.divisor).weights()[0]
    assert np.array_equal(prev, H.previous_token_scores(w)) and np.array_equal(ind, H.induction_scores(w, 6))
    assert TR.induction_scores is H.induction_scores and TR.previous_token_scores is H.previous_token_scores
    assert np.array_equal(run.induction, ind) and np.array_equal(run.previous_token, prev)
    assert run.snapshots.shape == (len(run.snapshot_steps), 1, 2, 12, 12)
    assert run.snapshot_steps[0] == 0 and run.snapshot_steps[-1] == 80
    np.testing.assert_array_equal(run.snapshots[-1], run.attention)
    assert not np.allclose(run.snapshots[0], run.attention)  # the maps changed while it learned


def test_stop_keeps_what_was_trained_and_progress_is_reported():
    seen = []
    calls = iter(range(1000))

    def stop() -> bool:
        return next(calls) >= 7  # asked before each step: 7 steps run

    run = TR.train(
        TR.TrainSettings(task="previous", steps=50, **TINY), on_progress=seen.append, should_stop=stop
    )
    assert run.stopped and run.steps_done == 7 and len(run.losses) == len(run.accuracy) == 7
    assert run.snapshot_steps[-1] == 7
    full = TR.train(TR.TrainSettings(task="previous", steps=7, **TINY))
    assert run.losses.tobytes() == full.losses.tobytes()  # the same 7 steps
    np.testing.assert_array_equal(run.attention, full.attention)
    assert seen[0].step == 1 and len(seen[0].losses) == 1 and seen[0].steps == 50
    assert all(len(p.losses) == len(p.accuracy) == p.step for p in seen)
    whole = []
    TR.train(TR.TrainSettings(task="previous", steps=5, **TINY), on_progress=whole.append)
    assert whole[-1].step == 5 and whole[-1].attention.shape == (1, 2, 12, 12)


# ------------------------------------------------------------------------------------------
# The experiments (tiny step counts: structure and the computed facts, not the learning)
# ------------------------------------------------------------------------------------------

from attention_core.training import experiments as X  # noqa: E402


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


def test_ablating_a_head_is_zeroing_its_rows_of_w_o():
    run = TR.train(TR.TrainSettings(task="previous", steps=3, **TINY))
    tokens = run.task.batch(np.random.default_rng(0), 2).tokens
    W_O = run.params["0.W_O"]
    ablated = M.forward(run.params, tokens, run.allowed, run.settings.divisor, ablate=((0, 1),))
    edited = run.params.frozen_copy()
    flat = edited.flat.copy()
    p = M.Params(edited.shape, flat)
    p["0.W_O"][8:16] = 0.0  # head 1's d_v = 8 rows
    np.testing.assert_array_equal(
        ablated.logits, M.forward(p, tokens, run.allowed, run.settings.divisor).logits
    )
    assert W_O[8:16].any()  # the run's own weights are untouched


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

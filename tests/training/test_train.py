"""The trainer's settings and loop (attention_core/training/train.py) at the edges the mutation run
found unpinned: every setting's accepted bounds and the first value past them (with the reason key
and values the page's catalog reads), what the settings resolve to, and the loop against a naive
loop written here from the module doc's recipe (its seeds, Adam, the held-out batch), including the
snapshot schedule, Stop, and when progress is reported (on a fake clock, so no wall time is read).
Tiny models and few steps throughout; every expected value is worked out here, not read back."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest

from attention_core.labs import heads as H
from attention_core.steps import build_mask
from attention_core.training import model as M
from attention_core.training import tasks as T
from attention_core.training import train as TR
from attention_core.training.optim import Adam

TINY = {"d_model": 4, "heads": 2, "lr": 0.05, "batch": 4}
BIG_SEED = 2**63 - 1


# ------------------------------------------------------------------------------------------
# Settings
# ------------------------------------------------------------------------------------------

# name, lowest and highest whole number accepted (from the limits)
WHOLE = [
    ("layers", 1, 2),
    ("heads", 1, 4),
    ("d_model", 4, 64),
    ("d_k", 1, 64),
    ("steps", 1, 20_000),
    ("seed", 0, BIG_SEED),
    ("batch", 1, 256),
]


@pytest.mark.parametrize("name, lo, hi", WHOLE)
def test_whole_number_settings_take_both_bounds(name, lo, hi):
    base = {"d_model": 64, "heads": 1} if name != "d_model" else {"heads": 1}
    for value in (lo, hi):
        s = TR.TrainSettings(**(base | {name: value}))
        assert getattr(s, name) == value


@pytest.mark.parametrize("name, lo, hi", WHOLE)
def test_whole_number_settings_refuse_past_the_bounds_and_non_integers(name, lo, hi):
    base = {"d_model": 64, "heads": 1} if name != "d_model" else {"heads": 1}
    for bad in (lo - 1, hi + 1, True, False, float(lo), str(lo)):
        with pytest.raises(TR.TrainSettingsError) as err:
            TR.TrainSettings(**(base | {name: bad}))
        assert err.value.key == name
        assert err.value.values == {"lo": lo, "hi": hi, "value": bad}
        assert type(err.value.values["value"]) is type(bad)
        assert str(err.value) == f"{name} must be a whole number from {lo} to {hi} (got {bad!r})."
        assert isinstance(err.value, ValueError)


def test_d_model_must_split_into_heads_unless_d_k_is_set():
    with pytest.raises(TR.TrainSettingsError) as err:
        TR.TrainSettings(d_model=30, heads=4)
    assert err.value.key == "d_model_heads" and err.value.values == {"d_model": 30, "heads": 4}
    assert "30" in str(err.value) and "4" in str(err.value)
    s = TR.TrainSettings(d_model=30, heads=4, d_k=8)
    assert s.head_dim == 8 and type(s.head_dim) is int
    assert TR.TrainSettings(d_model=32, heads=2, d_k=5).head_dim == 5
    default = TR.TrainSettings(d_model=32, heads=4)
    assert default.head_dim == 8 and type(default.head_dim) is int
    assert default.to_dict()["d_k"] == 8 and type(default.to_dict()["d_k"]) is int


@pytest.mark.parametrize(
    "scale, divisor",
    [("sqrt", 3.0), ("none", 1.0), (1e-6, 1e-6), (1e6, 1e6), (3, 3.0), (2.5, 2.5)],
)
def test_scales_accepted_and_the_divisor_they_give(scale, divisor):
    s = TR.TrainSettings(d_model=18, heads=2, scale=scale)  # d_k = 9: √9 = 3
    assert s.divisor == divisor and type(s.divisor) is float


@pytest.mark.parametrize(
    "scale, key",
    [
        ("SQRT", "scale"),
        ("None", "scale"),
        ("", "scale"),
        (True, "divisor"),
        (False, "divisor"),
        (None, "divisor"),
        ([2.0], "divisor"),
        (9e-7, "divisor"),
        (1_000_001.0, "divisor"),
        (-2.0, "divisor"),
        (math.inf, "divisor"),
        (math.nan, "divisor"),
    ],
)
def test_scales_refused(scale, key):
    with pytest.raises(TR.TrainSettingsError) as err:
        TR.TrainSettings(scale=scale)
    assert err.value.key == key and str(err.value)
    if key == "divisor":
        assert err.value.values == {"lo": 1e-6, "hi": 1e6}


@pytest.mark.parametrize("lr", [1e-5, 1.0, 1, 0.5])
def test_learning_rates_accepted_at_the_bounds(lr):
    assert TR.TrainSettings(lr=lr).lr == lr


@pytest.mark.parametrize(
    "lr", [True, False, None, "0.1", [0.1], 9.9e-6, 1.0000001, 2, math.inf, -math.inf, math.nan]
)
def test_learning_rates_refused(lr):
    with pytest.raises(TR.TrainSettingsError) as err:
        TR.TrainSettings(lr=lr)
    assert err.value.key == "lr" and err.value.values == {"lo": 1e-5, "hi": 1.0}
    assert str(err.value) == "The learning rate must be between 1e-05 and 1."


def test_masks_and_the_mask_each_task_defaults_to():
    assert TR.TrainSettings(mask="causal").mask == "causal"
    assert TR.TrainSettings(task="reverse", mask="causal").mask_kind == "causal"
    assert TR.TrainSettings(task="previous", mask="none").mask_kind == "none"
    defaults = {"previous": "causal", "reverse": "none", "sort": "none", "induction": "causal"}
    for task, kind in defaults.items():
        assert TR.TrainSettings(task=task).mask_kind == kind
    assert TR.TrainSettings(task="text", text="ab").mask_kind == "causal"
    for bad in ("Causal", "padding", "", 0):
        with pytest.raises(TR.TrainSettingsError) as err:
            TR.TrainSettings(mask=bad)
        assert err.value.key == "mask"


@pytest.mark.parametrize("name", ["positions", "ffn"])
def test_switches_take_only_booleans(name):
    assert getattr(TR.TrainSettings(**{name: True}), name) is True
    assert getattr(TR.TrainSettings(**{name: False}), name) is False
    for bad in (1, 0, None, "yes"):
        with pytest.raises(TR.TrainSettingsError) as err:
            TR.TrainSettings(**{name: bad})
        assert err.value.key == name and str(err.value) == f"{name} must be True or False."


def test_tasks_offsets_and_texts():
    for task in ("previous", "reverse", "sort", "induction", "previous_first"):
        assert TR.TrainSettings(task=task).make_task().name == task
    with pytest.raises(TR.TrainSettingsError) as err:
        TR.TrainSettings(task="Previous")
    assert err.value.key == "task" and err.value.values == {"task": "Previous"}
    s = TR.TrainSettings(task="previous", offset=3)
    assert s.make_task().offset == 3 and s.make_task().n == 12
    assert TR.TrainSettings(task="previous", offset=4).make_task().offset == 4
    for bad in (0, 5, True):
        with pytest.raises(TR.TrainSettingsError) as err:
            TR.TrainSettings(task="previous", offset=bad)
        assert err.value.key == "offset" and err.value.values == {"limit": 4}
    text = TR.TrainSettings(task="text", text="abca").make_task()
    assert text.labels_in == ("a", "b", "c") and text.text_ids == (0, 1, 2, 0)
    with pytest.raises(TR.TrainSettingsError) as err:
        TR.TrainSettings(task="text")
    assert err.value.key == "text_empty"
    with pytest.raises(TR.TrainSettingsError) as err:
        TR.TrainSettings(task="text", text="x" * 401)
    assert err.value.key == "text_long" and err.value.values == {"limit": 400}


def test_steps_resolve_to_the_tasks_default_or_the_number_given():
    assert TR.TrainSettings(steps=7).total_steps == 7
    assert TR.TrainSettings(task="previous").total_steps == 150
    assert TR.TrainSettings(task="sort").total_steps == 800


def test_the_model_shape_and_the_plain_dict():
    s = TR.TrainSettings(
        task="reverse", layers=2, heads=4, d_model=8, d_k=3, scale="none", lr=0.5, steps=9,
        seed=7, batch=3, offset=2, positions=False, ffn=True,
    )  # fmt: skip
    assert s.model_shape() == M.ModelShape(
        vocab_in=16, vocab_out=16, n=8, d_model=8, heads=4, d_k=3, layers=2, ffn=True, positions=False
    )
    # another task's sizes when one is handed in
    assert s.model_shape(T.make_task("induction")) == M.ModelShape(
        vocab_in=24, vocab_out=24, n=20, d_model=8, heads=4, d_k=3, layers=2, ffn=True, positions=False
    )
    assert s.to_dict() == {
        "task": "reverse", "text": "", "layers": 2, "heads": 4, "d_model": 8, "d_k": 3, "scale": "none",
        "divisor": 1.0, "mask": "none", "positions": False, "ffn": True, "lr": 0.5, "steps": 9, "seed": 7,
        "batch": 3, "offset": 2,
    }  # fmt: skip
    d = TR.TrainSettings(task="text", text="hi", scale=2.0).to_dict()
    assert (d["text"], d["d_k"], d["divisor"], d["mask"], d["steps"], d["seed"]) == (
        "hi",
        16,
        2.0,
        "causal",
        500,
        0,
    )


# ------------------------------------------------------------------------------------------
# The loop, against a naive one written from the module doc
# ------------------------------------------------------------------------------------------


def naive_run(
    task_name: str, steps: int, seed: int, *, text: str = "", mask: str | None = None, **kw
) -> dict:
    """The recipe of train.py's doc, step by step: weights from (seed, 0), batches from (seed, 1),
    the held-out batch of 32 from (seed, 2), the sample then the repeated sample from (seed, 3),
    512 fresh sequences from (seed, 4) for the final accuracy; Adam; the maps after every step."""
    task = T.make_task(task_name, text)
    d_model, heads, layers = kw.get("d_model", 4), kw.get("heads", 2), kw.get("layers", 1)
    shape = M.ModelShape(
        vocab_in=task.vocab_in, vocab_out=task.vocab_out, n=task.n, d_model=d_model, heads=heads,
        d_k=d_model // heads, layers=layers, ffn=kw.get("ffn", False), positions=True,
    )  # fmt: skip
    allowed = build_mask(mask or task.default_mask, task.n)
    divisor = math.sqrt(d_model // heads)
    params = M.init_model(shape, seed)
    first = np.random.default_rng((seed, 0)).standard_normal((task.vocab_in, d_model))
    assert np.array_equal(params["E"], first)  # the doc's (seed, 0) is init_model's seed
    adam = Adam(params.flat.size, kw.get("lr", 0.05))
    data = np.random.default_rng((seed, 1))
    held = task.held_out(np.random.default_rng((seed, 2)), 32)
    sample_rng = np.random.default_rng((seed, 3))
    sample = task.sample(sample_rng)
    repeated = task.repeated_sample(sample_rng)[0]

    def maps():
        return M.forward(params, sample.tokens, allowed, divisor).weights()[0]

    losses, accs, all_maps = [], [], [maps()]
    for _ in range(steps):
        b = task.batch(data, kw.get("batch", 4))
        fwd = M.forward(params, b.tokens, allowed, divisor)
        loss, dlogits = M.cross_entropy(fwd.logits, b.targets, b.scored)
        grads = M.backward(params, fwd, dlogits, params.zeros_like())
        adam.step(params.flat, grads.flat)
        held_logits = M.forward(params, held.tokens, allowed, divisor).logits
        hits = (held_logits.argmax(-1) == held.targets) & held.scored
        losses.append(loss)
        accs.append(hits.sum() / held.scored.sum())
        all_maps.append(maps())
    last = task.held_out(np.random.default_rng((seed, 4)), 512)
    logits = np.concatenate(
        [M.forward(params, last.tokens[i : i + 1], allowed, divisor).logits for i in range(len(last.tokens))]
    )
    final_acc = ((logits.argmax(-1) == last.targets) & last.scored).sum() / last.scored.sum()
    m = len(repeated) // 2
    w = M.forward(params, repeated[None], allowed[: 2 * m, : 2 * m], divisor).weights()[0]
    induction = np.zeros(w.shape[:2])
    previous = np.zeros(w.shape[:2])
    for layer in range(w.shape[0]):
        for h in range(w.shape[1]):
            induction[layer, h] = np.mean([w[layer, h, i, i - m + 1] for i in range(m, 2 * m)])
            previous[layer, h] = np.mean([w[layer, h, i, i - 1] for i in range(1, 2 * m)])
    out_logits = M.forward(params, sample.tokens, allowed, divisor).logits[0]
    return dict(
        losses=np.array(losses), accuracy=np.array(accs), final_accuracy=final_acc, maps=all_maps,
        sample=sample, repeated=repeated, induction=induction, previous=previous,
        predictions=out_logits.argmax(-1), flat=params.flat.copy(), allowed=allowed,
    )  # fmt: skip


def assert_matches_naive(run: TR.TrainRun, ref: dict) -> None:
    np.testing.assert_allclose(run.losses, ref["losses"], rtol=1e-12, atol=0)
    np.testing.assert_allclose(run.accuracy, ref["accuracy"], rtol=1e-12, atol=0)
    assert run.final_accuracy == pytest.approx(ref["final_accuracy"], rel=1e-12)
    np.testing.assert_array_equal(run.sample, ref["sample"].tokens[0])
    np.testing.assert_array_equal(run.sample_targets, ref["sample"].targets[0])
    np.testing.assert_array_equal(run.sample_scored, ref["sample"].scored[0])
    np.testing.assert_array_equal(run.repeated, ref["repeated"])
    np.testing.assert_array_equal(run.sample_predictions, ref["predictions"])
    np.testing.assert_allclose(run.params.flat, ref["flat"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(run.attention, ref["maps"][run.steps_done], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(run.induction, ref["induction"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(run.previous_token, ref["previous"], rtol=1e-9, atol=1e-12)
    for step, snap in zip(run.snapshot_steps, run.snapshots, strict=True):
        np.testing.assert_allclose(snap, ref["maps"][step], rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(run.allowed, ref["allowed"])
    for a in (run.losses, run.accuracy, run.snapshots, run.attention, run.sample, run.induction):
        assert not a.flags.writeable


@pytest.mark.parametrize(
    "task, kw",
    [
        ("previous", {"seed": 3}),
        ("induction", {"seed": 11, "layers": 2, "ffn": True}),
        ("text", {"seed": 5, "text": "abcabd", "mask": "none"}),
    ],
)
def test_the_loop_follows_the_documented_recipe(task, kw):
    steps, kw = 4, dict(kw)
    settings = TR.TrainSettings(task=task, steps=steps, **TINY, **kw)
    run = TR.train(settings)
    text, mask = kw.pop("text", ""), kw.pop("mask", None)
    seed = kw.pop("seed")
    ref = naive_run(task, steps, seed, text=text, mask=mask, **kw)
    assert run.steps_done == steps and run.stopped is False and run.settings is settings
    assert run.task == settings.make_task()
    assert list(run.snapshot_steps) == [0, 1, 2, 3, 4] and run.snapshots.shape[0] == 5
    assert_matches_naive(run, ref)


@pytest.mark.parametrize(
    "steps, every, expected",
    [
        (5, None, [0, 1, 2, 3, 4, 5]),  # at most 60 maps: one after every step
        (59, None, list(range(60))),  # 60 maps exactly
        (60, None, list(range(0, 61, 2))),  # ceil(60 / 59) = 2
        (119, None, [*range(0, 118, 3), 119]),  # ceil(119 / 59) = 3, and the final model
        (10, 4, [0, 4, 8, 10]),
        (6, 3, [0, 3, 6]),
        (3, 1, [0, 1, 2, 3]),
    ],
)
def test_the_snapshot_schedule(steps, every, expected):
    run = TR.train(TR.TrainSettings(steps=steps, **TINY), snapshot_every=every)
    assert run.snapshot_steps.tolist() == expected
    assert run.snapshots.shape == (len(expected), 1, 2, 12, 12)
    assert len(run.snapshots) <= 60


def test_the_snapshots_are_the_maps_at_their_steps():
    run = TR.train(TR.TrainSettings(steps=10, seed=2, **TINY), snapshot_every=4)
    ref = naive_run("previous", 10, 2)
    assert run.snapshot_steps.tolist() == [0, 4, 8, 10]
    assert_matches_naive(run, ref)


@pytest.mark.parametrize("every", [0, -1])
def test_snapshot_every_below_one_is_refused(every):
    with pytest.raises(ValueError, match="at least 1"):
        TR.train(TR.TrainSettings(steps=2, **TINY), snapshot_every=every)


def stop_after(k: int):
    asked = []

    def should_stop() -> bool:
        asked.append(len(asked))
        return len(asked) > k  # the (k+1)-th question, before step k+1: stop

    return should_stop, asked


def test_stop_between_snapshots_adds_the_model_it_stopped_with():
    stop, asked = stop_after(7)
    run = TR.train(TR.TrainSettings(steps=20, seed=4, **TINY), should_stop=stop, snapshot_every=3)
    assert run.stopped is True and run.steps_done == 7 and len(asked) == 8
    assert run.snapshot_steps.tolist() == [0, 3, 6, 7]
    assert_matches_naive(run, naive_run("previous", 7, 4))


def test_stop_on_a_snapshot_step_adds_nothing_twice():
    stop, asked = stop_after(6)
    run = TR.train(TR.TrainSettings(steps=20, seed=4, **TINY), should_stop=stop, snapshot_every=3)
    assert run.stopped is True and run.steps_done == 6 and len(asked) == 7
    assert run.snapshot_steps.tolist() == [0, 3, 6]
    assert_matches_naive(run, naive_run("previous", 6, 4))


def test_stop_before_the_first_step_keeps_the_initial_model():
    stop, asked = stop_after(0)
    seen = []
    run = TR.train(TR.TrainSettings(steps=5, seed=1, **TINY), should_stop=stop, on_progress=seen.append)
    assert run.stopped is True and run.steps_done == 0 and len(asked) == 1 and seen == []
    assert run.losses.shape == (0,) and run.accuracy.shape == (0,)
    assert run.snapshot_steps.tolist() == [0]
    assert_matches_naive(run, naive_run("previous", 0, 1))


def test_a_stop_that_never_says_yes_is_asked_before_every_step():
    stop, asked = stop_after(100)
    run = TR.train(TR.TrainSettings(steps=5, **TINY), should_stop=stop)
    assert run.stopped is False and run.steps_done == 5 and len(asked) == 5


class FakeClock:
    """perf_counter for train.py: the given readings, one per call."""

    def __init__(self, readings: list[float]) -> None:
        self.readings = list(readings)

    def perf_counter(self) -> float:
        return self.readings.pop(0)


def test_progress_after_the_first_step_every_fifth_of_a_second_and_after_the_last(monkeypatch):
    # readings: the start, one after each of the 6 steps, the end
    clock = FakeClock([0.125, 0.2, 0.3, 0.4, 0.5, 0.55, 0.7, 1.0])
    monkeypatch.setattr(TR, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    seen = []
    run = TR.train(TR.TrainSettings(steps=6, seed=8, **TINY), on_progress=seen.append)
    # step 1: the first; 0.3 − 0.2 < 0.2: none; 0.4 − 0.2 = 0.2: one; then none until the last step
    assert [p.step for p in seen] == [1, 3, 6]
    assert [p.steps for p in seen] == [6, 6, 6]
    assert [p.seconds for p in seen] == pytest.approx([0.075, 0.275, 0.575])
    assert run.seconds == pytest.approx(0.875) and clock.readings == []
    ref = naive_run("previous", 6, 8)
    for p in seen:
        np.testing.assert_allclose(p.losses, ref["losses"][: p.step], rtol=1e-12, atol=0)
        np.testing.assert_allclose(p.accuracy, ref["accuracy"][: p.step], rtol=1e-12, atol=0)
        np.testing.assert_allclose(p.attention, ref["maps"][p.step], rtol=1e-9, atol=1e-12)
        assert not p.losses.flags.writeable and not p.accuracy.flags.writeable


def test_progress_waits_for_the_fifth_of_a_second(monkeypatch):
    clock = FakeClock([5.0, 5.0, 5.125, 5.1875, 5.25, 5.5])  # the start, 4 steps, the end
    monkeypatch.setattr(TR, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    seen = []
    TR.train(TR.TrainSettings(steps=4, **TINY), on_progress=seen.append, snapshot_every=2)
    assert [p.step for p in seen] == [1, 4]  # 5.25 − 5.0 = 0.25 comes with the last step anyway
    assert [p.seconds for p in seen] == [0.0, 0.25]
    # the latest snapshot's maps: after step 0 (initial) at step 1, the final ones at step 4
    ref = naive_run("previous", 4, 0)
    np.testing.assert_allclose(seen[0].attention, ref["maps"][0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(seen[1].attention, ref["maps"][4], rtol=1e-9, atol=1e-12)


def test_head_scores_on_a_repeated_sample_shorter_than_the_context():
    run = TR.train(TR.TrainSettings(steps=2, seed=6, **TINY))
    rep = np.array([3, 9, 1, 14, 3, 9, 1, 14])  # m = 4 in a 12-token model
    ind, prev = TR.head_scores(run.params, rep, run.allowed, run.settings.divisor)
    w = M.forward(run.params, rep[None], build_mask("causal", 8), math.sqrt(2)).weights()[0]
    assert ind.shape == prev.shape == (1, 2)
    for h in range(2):
        assert ind[0, h] == pytest.approx(np.mean([w[0, h, i, i - 3] for i in range(4, 8)]), rel=1e-12)
        assert prev[0, h] == pytest.approx(np.mean([w[0, h, i, i - 1] for i in range(1, 8)]), rel=1e-12)


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


SMALL_RUN = {"d_model": 16, "heads": 2, "lr": 1e-2, "batch": 16}


def test_same_seed_same_losses_to_the_bit_and_another_seed_differs():
    a = TR.train(TR.TrainSettings(task="induction", layers=2, steps=12, **SMALL_RUN))
    b = TR.train(TR.TrainSettings(task="induction", layers=2, steps=12, **SMALL_RUN))
    c = TR.train(TR.TrainSettings(task="induction", layers=2, steps=12, seed=1, **SMALL_RUN))
    assert a.losses.tobytes() == b.losses.tobytes() and a.accuracy.tobytes() == b.accuracy.tobytes()
    assert a.params.flat.tobytes() == b.params.flat.tobytes()
    assert a.losses[0] != c.losses[0]


def test_the_previous_token_task_is_learned_and_the_head_says_so():
    run = TR.train(TR.TrainSettings(task="previous", steps=80, **SMALL_RUN))
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
        TR.TrainSettings(task="previous", steps=50, **SMALL_RUN), on_progress=seen.append, should_stop=stop
    )
    assert run.stopped and run.steps_done == 7 and len(run.losses) == len(run.accuracy) == 7
    assert run.snapshot_steps[-1] == 7
    full = TR.train(TR.TrainSettings(task="previous", steps=7, **SMALL_RUN))
    assert run.losses.tobytes() == full.losses.tobytes()  # the same 7 steps
    np.testing.assert_array_equal(run.attention, full.attention)
    assert seen[0].step == 1 and len(seen[0].losses) == 1 and seen[0].steps == 50
    assert all(len(p.losses) == len(p.accuracy) == p.step for p in seen)
    whole = []
    TR.train(TR.TrainSettings(task="previous", steps=5, **SMALL_RUN), on_progress=whole.append)
    assert whole[-1].step == 5 and whole[-1].attention.shape == (1, 2, 12, 12)


def test_ablating_a_head_is_zeroing_its_rows_of_w_o():
    run = TR.train(TR.TrainSettings(task="previous", steps=3, **SMALL_RUN))
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

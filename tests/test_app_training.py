"""The training lab page in AppTest, both languages: it opens on its settings, trains a tiny model in
a real worker process (polled as the page's fragment would), shows the curves, the maps at every
snapshot, the measured patterns against the guess and the questions; broken input gets a message."""

from __future__ import annotations

import time

import pytest
from apptest_pages import chart_spec, messages, no_exception, open_page, texts

from attention_core.training import tasks
from attention_core.training.train import HELD_OUT, TrainSettings
from attention_ui.i18n import catalog
from attention_ui.training import cached, patterns
from attention_ui.training.settings import DEFAULTS, read_settings

PAGE = "app_pages/training.py"
# a tiny model: 1 head of 8, 60 steps of the previous-token task (about a second, mostly the worker's start)
TINY = dict(training_d_model=8, training_heads=1, training_d_k=8, training_steps=60, training_seed=5)


def train(at, limit: float = 60.0):
    at.button(key="training_train").click().run()
    no_exception(at)
    end = time.monotonic() + limit
    while "training_chart_curves" not in {el.proto.id.rsplit("-", 1)[-1] for el in at.get("plotly_chart")}:
        assert time.monotonic() < end, "the run did not finish"
        time.sleep(0.2)
        at.run()
        no_exception(at)
    return at


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_opens_on_its_settings_with_every_label(lang):
    at = open_page(PAGE, lang=lang, **TINY)
    msgs = catalog(lang)
    assert at.title[0].value == msgs["training.title"]
    assert msgs["training.not_trained"] in [i.value for i in at.info]
    assert [b.label for b in at.button if b.key == "training_train"] == [msgs["training.train"]]
    for kind in ("number_input", "selectbox", "toggle", "radio"):
        for w in at.get(kind):
            assert w.label.strip(), f"a {kind} without a label: {w.key}"
    assert msgs["training.h_experiments"] in [h.value for h in at.header]


def test_the_numbers_the_page_states_are_the_cores():
    at = open_page(PAGE, training_task="induction", **TINY)
    lo, hi = tasks.INDUCTION_SEGMENT
    assert f"{tasks.INDUCTION_LENGTH} letters from A–X" in "\n".join(c.value for c in at.sidebar.caption)
    assert f"segment of {lo} to {hi} random letters" in "\n".join(c.value for c in at.sidebar.caption)
    page = texts(at)
    assert (
        f"a batch of {TrainSettings().batch} examples" in page and f"measured on {HELD_OUT} examples" in page
    )


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_train_shows_curves_maps_reveal_and_questions(lang):
    state = TINY | {"training_seed": 5 if lang == "en" else 6}  # a run of its own in each language
    at = open_page(PAGE, lang=lang, training_guess="previous", **state)
    msgs = catalog(lang)
    train(at)
    fig = chart_spec(at, "training_chart_curves")
    assert len(fig["data"][0]["y"]) == 60 and len(fig["data"][1]["y"]) == 60
    steps = at.select_slider(key="training_snapshot").options
    assert steps[0] == "0" and steps[-1] == "60"  # from the random weights to the end
    maps = chart_spec(at, "training_chart_maps")
    assert sum(tr.get("name") == "values" for tr in maps["data"]) == 1  # 1 layer × 1 head
    at.select_slider(key="training_snapshot").set_value(0).run()
    start = chart_spec(at, "training_chart_maps")
    assert start["data"][0]["z"] != maps["data"][0]["z"]  # the map changed with training
    settings, _ = read_settings(
        {k.removeprefix("training_"): v for k, v in (DEFAULTS | state).items()} | {"text": ""}
    )
    run = cached.runner().result(settings)
    learned = patterns.head_patterns(run).pattern[0][0]
    verdict = "training.reveal_right" if learned == "previous" else "training.reveal_wrong"
    assert msgs[verdict].format(guess=msgs["training.pattern_previous"]) in texts(at)
    assert at.radio(key="training_q_accuracy") is not None
    assert at.radio(key="training_guess").disabled  # locked once the run exists
    # 12 letters: the repeated sample is 6 and the same 6 again; induction reads queries 6 … 11 only
    assert msgs["training.reveal_how"].format(n1=11, m=6, last=11) in [c.value for c in at.caption]


def test_broken_input_gets_a_message():
    at = open_page(PAGE, training_task="text", training_text="   ", **TINY)
    assert catalog("en")["training.err_text_empty"] in messages(at)["error"]
    linked = open_page(PAGE, params={"layers": "9", "heads": "2"}, **TINY)
    assert any("layers" in i for i in messages(linked)["info"])
    assert linked.number_input(key="training_heads").value == 2


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_presenter_mode_and_the_link(lang):
    msgs = catalog(lang)
    at = open_page(PAGE, lang=lang, **TINY)
    assert msgs["presenter.start"] in [b.label for b in at.sidebar.button]
    assert any(
        msgs["playground.share_copy"] in el.proto.body for el in at.get("html")
    )  # the copy-link button
    assert at.query_params["steps"] == "60" and at.query_params["d_model"] == "8"  # what the link holds
    slide = open_page(PAGE, lang=lang, training_present=True, **TINY)
    assert [h.value for h in slide.header][0] == msgs["training.h_predict"]  # one section per slide
    assert msgs["training.h_train"] not in [h.value for h in slide.header]


def chart_ids(at) -> set[str]:
    return {el.proto.id.rsplit("-", 1)[-1] for el in at.get("plotly_chart")}


def test_a_second_learner_on_the_same_settings_starts_at_guess_first():
    """Issue 41: one session's run never locks another's guess, nor shows itself unasked."""
    state = TINY | {"training_seed": 9}
    first = open_page(PAGE, training_guess="previous", **state)
    train(first)
    assert first.radio(key="training_guess").disabled
    second = open_page(PAGE, **state)  # a new browser session, the same settings
    msgs = catalog("en")
    assert (
        not second.radio(key="training_guess").disabled and second.radio(key="training_guess").value is None
    )
    assert "training_chart_curves" not in chart_ids(second) and "training_chart_maps" not in chart_ids(second)
    assert msgs["training.h_reveal"] not in [h.value for h in second.header]
    assert msgs["training.ready_elsewhere"] in [i.value for i in second.info]
    second.radio(key="training_guess").set_value("self").run()
    second.button(key="training_train").click().run()  # the kept run, at once: no new job
    no_exception(second)
    assert "training_chart_curves" in chart_ids(second) and second.radio(key="training_guess").disabled
    guess = msgs["training.pattern_self"]
    assert any(
        guess in m.value for m in second.markdown if m.value.startswith(msgs["training.reveal_right"][:8])
    )
    assert "training_job_train" not in second.session_state  # no worker started for it


def test_one_step_and_a_diverged_run_say_so():
    one = open_page(PAGE, **(TINY | {"training_steps": 1, "training_seed": 11}))
    train(one)
    page = texts(one)
    assert "**1 step**" in page and "the curve shows no change" in page
    assert "3.891 to 3.891" not in page
    wild = open_page(PAGE, **(TINY | {"training_lr": 1.0, "training_seed": 5}))
    train(wild)
    warning = " ".join(w.value for w in wild.warning)
    assert "this run diverged" in warning and "smaller learning rate than 1" in warning
    calm = open_page(PAGE, **(TINY | {"training_seed": 5}))  # the same run at lr 0.003 did not diverge
    train(calm)
    assert not [w for w in calm.warning if "diverged" in w.value]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_page_says_why_it_keeps_its_own_letters(lang):
    msgs = catalog(lang)
    at = open_page(PAGE, lang=lang, **TINY)
    captions = [c.value for c in at.sidebar.caption]
    assert msgs["training.own_example"] in captions
    text = open_page(PAGE, lang=lang, training_task="text", **TINY)
    assert msgs["training.own_example"] not in [c.value for c in text.sidebar.caption]

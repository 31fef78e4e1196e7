"""WCAG points the app controls outside the figures (issue 18): the page language, page titles,
headings, the chart toolbar, learner context carried across pages. Figures' contrast is in
tests/test_colour_access.py; the rendered pages are checked with axe-core in tests/browser/test_axe_browser.py."""

from __future__ import annotations

import json

import pytest

from attention_ui.i18n import LANGUAGES, Translator, translate
from tests.apptest_pages import open_page


def _lang_scripts(at) -> list[str]:
    return [el.proto.body for el in at.get("html") if "documentElement.lang" in el.proto.body]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_declares_its_language(lang):
    at = open_page("app_pages/masks.py", lang=lang)
    scripts = _lang_scripts(at)
    assert scripts == [f"<script>document.documentElement.lang = {json.dumps(lang)};</script>"]


def test_the_language_script_follows_a_language_switch():
    at = open_page("app_pages/masks.py", lang="en")
    at.session_state["lang"] = "ja"
    at.run()
    assert _lang_scripts(at) == ['<script>document.documentElement.lang = "ja";</script>']


@pytest.mark.parametrize("lang", LANGUAGES)
def test_page_titles_name_the_page_and_the_app(lang):
    t = Translator(lang)
    title = t("app.page_title", page=t("app.nav_masks"))
    assert t("app.nav_masks") in title and "Attention Lab" in title
    assert title != t("app.page_title", page=t("app.nav_quiz"))


# ---------------------------------------------------------------- the chart toolbar


def _chart_configs(at) -> list[dict]:
    return [json.loads(el.proto.config) for el in at.get("plotly_chart")]


def test_every_lab_chart_gets_the_small_toolbar_in_japanese():
    at = open_page("app_pages/masks.py", lang="ja")
    configs = _chart_configs(at)
    assert configs
    t = Translator("ja")
    for config in configs:
        assert {"zoom2d", "pan2d", "lasso2d", "select2d", "autoScale2d"} <= set(
            config["modeBarButtonsToRemove"]
        )
        assert config["locale"] == "ja"
        words = config["locales"]["ja"]["dictionary"]
        assert words["Download plot as a PNG"] == t("charts.plotly_download_png")
        assert words["Reset axes"] == t("charts.plotly_reset_axes")


def test_english_charts_keep_plotlys_own_words_and_page_settings_add_to_the_toolbar():
    from attention_ui import kit

    assert "locale" not in kit.chart_config("en")
    merged = kit.chart_config("ja", {"displayModeBar": False, "toImageButtonOptions": {"scale": 2}})
    assert merged["displayModeBar"] is False and merged["toImageButtonOptions"] == {"scale": 2}
    assert merged["modeBarButtonsToRemove"] == list(kit.CHART_TOOLBAR_REMOVED)
    for lang in LANGUAGES:
        t = Translator(lang)
        assert all(t(key) != key for key in kit.PLOTLY_WORDS.values())  # every word is in the catalog


def test_lab_charts_drawn_in_streamlits_theme_get_readable_text():
    """Streamlit's theme paints ticks #808495 (3.7:1); the kit sets AA colours on the figure itself."""
    from attention_ui.figures import base

    at = open_page("app_pages/multihead.py", lang="en")
    checked = 0
    for el in at.get("plotly_chart"):
        layout = json.loads(el.proto.spec)["layout"]
        axes = [v for k, v in layout.items() if k.startswith(("xaxis", "yaxis"))]
        for axis in axes:
            assert axis["tickfont"]["color"] == base.AXIS_TEXT_COLOR
            checked += 1
    assert checked


# ---------------------------------------------------------------- the learner's context across pages


def test_share_context_follows_the_learner_and_keeps_a_lab_edit():
    from attention_ui.kit import share_context

    shared = {"masks_text": "learner_text"}
    state = {"masks_text": "lab default"}
    share_context(state, shared)  # first visit, nothing shared yet: the page keeps its default
    assert state["masks_text"] == "lab default" and "learner_text" not in state
    state["learner_text"] = "my own sentence"  # set in the playground
    share_context(state, shared)
    assert state["masks_text"] == "my own sentence"
    state["masks_text"] = "edited in the lab"  # the learner changes it here …
    share_context(state, shared)
    assert state["learner_text"] == "edited in the lab"  # … and it carries back
    state["masks_text"] = "kept"
    share_context(state, shared)
    state["learner_text"] = "kept"
    share_context(state, {"masks_text": "learner_text"}, {"masks_text": lambda v: False})
    assert state["masks_text"] == "kept"
    state["learner_text"] = "refused"
    share_context(state, shared, {"masks_text": lambda v: v != "refused"})
    assert state["masks_text"] == "kept"  # a value the page cannot use is not taken


def test_labs_start_from_the_playgrounds_sentence_and_d_model():
    at = open_page("app_pages/playground.py", lang="en")
    at.text_area(key="pg_text").input("a dog ran home").run()
    at.number_input(key="pg_d_model").set_value(32).run()
    at.switch_page("app_pages/masks.py").run()
    assert not at.exception
    assert at.text_area(key="masks_text").value == "a dog ran home"
    at.switch_page("app_pages/multihead.py").run()
    assert not at.exception
    assert at.text_area(key="multihead_text").value == "a dog ran home"
    assert at.number_input(key="multihead_d_model").value == 32
    # the lab's controls sit in the sidebar, like the playground's
    assert at.sidebar.text_area(key="multihead_text")
    at.text_area(key="multihead_text").input("the lab's own").run()
    at.switch_page("app_pages/masks.py").run()
    assert at.text_area(key="masks_text").value == "the lab's own"  # and back: the latest edit wins


def test_seed_heads_and_mask_carry_where_the_lab_can_take_them():
    at = open_page("app_pages/playground.py", lang="en")

    def go(page: str) -> None:  # as the sidebar menu does: the new page starts with an empty query
        at.query_params.clear()
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception

    at.number_input(key="pg_d_model").set_value(32).run()
    at.number_input(key="pg_heads").set_value(4).run()
    at.number_input(key="pg_seed").set_value(5).run()
    at.selectbox(key="pg_mask").set_value("causal").run()
    go("multihead")
    s = at.session_state
    assert (s["multihead_d_model"], s["multihead_heads"], s["multihead_seed"]) == (32, 4, 5)
    assert at.query_params["seed"] in ("5", ["5"]) and at.query_params["heads"] in ("4", ["4"])
    go("masks")
    assert (at.session_state["masks_kind"], at.session_state["masks_seed"]) == ("causal", 5)
    at.selectbox(key="masks_kind").set_value("sliding").run()  # a mask only this lab has
    go("block")
    assert (
        at.session_state["block_mask"] == "none" and at.session_state["block_seed"] == 5
    )  # "sliding" refused
    go("playground")
    assert at.session_state["pg_mask"] == "causal"  # the playground cannot draw "sliding" either
    go("multihead")
    # 4 heads no longer divide it: the lab adjusts
    at.number_input(key="multihead_d_model").set_value(30).run()
    go("playground")
    assert at.session_state["pg_d_model"] == 30
    # 4 heads came from the playground itself; with the lab's d_model the playground says what to change
    assert at.session_state["pg_heads"] == 4
    assert [e.value for e in at.error] and "30" in at.error[0].value and "4" in at.error[0].value


def test_a_labs_url_holds_the_shared_context_and_is_read_once():
    from attention_ui.kit import context_query, read_context_url

    shared = {"multihead_text": "learner_text", "multihead_d_model": "learner_d_model"}
    accepts = {"multihead_d_model": lambda v: 1 <= v <= 128}
    state = {"multihead_text": "default", "multihead_d_model": 16}
    query = {"text": "猫 <b>が</b>", "d_model": "32", "lang": "ja"}
    assert read_context_url(state, query, shared, accepts, "mark") == []
    assert (
        state["multihead_text"] == state["learner_text"] == "猫 <b>が</b>"
        and state["multihead_d_model"] == 32
    )
    written = context_query(state, shared, "ja")
    assert written == {"text": "猫 <b>が</b>", "d_model": "32", "lang": "ja"}
    state["mark"] = written
    state["multihead_text"] = "edited"  # the learner edits; the URL the page wrote is not read back over it
    assert (
        read_context_url(state, written, shared, accepts, "mark") == []
        and state["multihead_text"] == "edited"
    )
    assert read_context_url(state, {}, shared, accepts, "mark") == []  # reached from the menu
    bad = {"text": "", "d_model": "4096", "lang": "en"}
    assert read_context_url(state, bad, shared, accepts, "mark") == ["text", "d_model"]
    assert state["multihead_text"] == "edited" and state["multihead_d_model"] == 32
    for raw in ("-1", "1e3", "３２", "9" * 7, " 32"):
        assert read_context_url(state, {"d_model": raw}, shared, accepts, "mark") == ["d_model"], raw
    long = {"multihead_text": "x" * 2001, "multihead_d_model": 8}
    assert "text" not in context_query(long, shared, "en")  # too long to read back: not written


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_link_to_a_lab_opens_on_its_sentence_and_the_lab_writes_it(lang):
    sentence = "the dog chased a ball" if lang == "en" else "犬がボールを追いかけた"
    for page, key in (
        ("masks", "masks_text"),
        ("block", "block_text"),
        ("positions", "positions_text"),
        ("inference", "inference_text"),
    ):
        at = open_page(f"app_pages/{page}.py", lang=None, params={"text": sentence, "lang": lang})
        assert at.text_area(key=key).value == sentence, page
        assert at.query_params["text"] == [sentence] or at.query_params["text"] == sentence
        assert not at.warning, (page, [w.value for w in at.warning])
    at = open_page("app_pages/multihead.py", lang=None, params={"d_model": "100000", "lang": lang})
    assert at.number_input(key="multihead_d_model").value == 16  # out of range: the lab's own value stays
    assert any(w.value == translate(lang, "app.url_ignored", names="d_model") for w in at.warning)

"""Issue 4 through AppTest: URL state both ways, malformed links, language, presenter mode,
cell explainer, example sentences and downloads."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_ui.i18n import translate
from tests.apptest_pages import charts, open_page, z
from tests.test_app_playground import assert_healthy


def headings(at: AppTest) -> list[str]:
    return [h.value for h in at.title] + [h.value for h in at.get("header")] + [h.value for h in at.subheader]


def test_url_round_trip_reproduces_the_same_trace():
    at = open_page()
    at.text_area(key="pg_text").input("a dog chased a ball").run()
    at.number_input(key="pg_d_model").set_value(24).run()
    at.number_input(key="pg_heads").set_value(3).run()
    at.selectbox(key="pg_mask").select("causal").run()
    at.selectbox(key="pg_scale").select("custom").run()
    at.number_input(key="pg_divisor").set_value(3.5).run()
    at.number_input(key="pg_seed").set_value(42).run()
    at.radio(key="pg_head").set_value(2).run()
    assert_healthy(at)
    params = dict(at.query_params)
    assert params["text"] == "a dog chased a ball" and params["heads"] == "3" and params["div"] == "3.5"
    assert params["mask"] == "causal" and params["seed"] == "42" and params["head"] == "2"
    before = charts(at)

    other = open_page(params=params, lang=None)
    assert_healthy(other)
    assert not other.warning, [w.value for w in other.warning]
    after = charts(other)
    for name in ("pg_chart_weights", "pg_chart_raw", "pg_chart_output", "pg_chart_all_heads"):
        np.testing.assert_array_equal(z(after[name]), z(before[name]))
    # head 2 of 3 is shown, and independently: its weights are a softmax of scores / 3.5 under a causal mask
    raw = z(after["pg_chart_raw"])
    scaled = np.where(np.tril(np.ones((5, 5), bool)), raw / 3.5, -np.inf)
    expect = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    expect /= expect.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np.nan_to_num(z(after["pg_chart_weights"])), expect, atol=1e-12)
    assert other.radio(key="pg_head").value == 2
    assert dict(other.query_params) == params  # the URL is left as it was


def test_malformed_url_falls_back_with_a_notice_listing_the_parameters():
    at = open_page(
        params={"d_model": "abc", "heads": "99", "mask": "<script>", "seed": "5", "bogus": "1", "div": "nan"},
        lang=None,
    )
    assert_healthy(at)
    notice = " ".join(w.value for w in at.warning)
    for name in ("d_model", "heads", "mask", "bogus", "div"):
        assert name.replace("_", "\\_") in notice
    assert "seed" not in notice.split(":")[-1]
    s = at.session_state
    assert (s["pg_d_model"], s["pg_heads"], s["pg_mask"], s["pg_seed"]) == (16, 2, "none", 5)
    assert "bogus" not in at.query_params and at.query_params["seed"] == "5"  # the URL is cleaned up
    # the notice goes once the learner changes something
    at.number_input(key="pg_seed").set_value(6).run()
    assert not at.warning


@pytest.mark.parametrize(
    "params",
    [
        {"text": "x" * 5000},
        {"step": "-1", "present": "1"},
        {"head": "7"},
        {"lang": "xx"},
        {"text": "\x00"},
        {"heads": ["2", "3"], "d_model": "15"},
    ],
)
def test_odd_urls_never_raise(params):
    at = open_page(params=params, lang=None)
    assert not at.exception


def test_language_from_the_url_and_the_switch_keeps_the_view():
    at = open_page(params={"lang": "ja", "text": "猫がマットの上に座った。", "heads": "4"}, lang=None)
    assert at.title[0].value == translate("ja", "playground.title")
    assert z(charts(at)["pg_chart_weights"]).shape == (12, 12)  # one token per kana/kanji and the 。
    at.session_state["lang"] = "en"
    at.run()
    assert at.title[0].value == translate("en", "playground.title")
    assert (
        at.text_area(key="pg_text").value == "猫がマットの上に座った。" and at.session_state["pg_heads"] == 4
    )
    assert at.query_params["lang"] == "en"


def test_presenter_navigation_changes_step_and_url():
    at = open_page()
    at.button(key="pg_present_start").click().run()
    assert_healthy_presenter(at, 1)
    at.button(key="pg_present_next").click().run()
    at.button(key="pg_present_next").click().run()
    assert_healthy_presenter(at, 3)
    at.button(key="pg_present_prev").click().run()
    assert_healthy_presenter(at, 2)
    assert at.button(key="pg_present_prev").disabled is False
    at.button(key="pg_present_exit").click().run()
    assert "present" not in at.query_params and "step" not in at.query_params
    assert len(charts(at)) > 10  # every step again


def assert_healthy_presenter(at: AppTest, step: int) -> None:
    assert not at.exception, at.exception
    assert at.query_params["present"] == "1" and at.query_params["step"] == str(step)
    title = f"{step}. "
    shown = [h for h in headings(at) if h[:3].strip()[:-1].isdigit()]
    assert len(shown) == 1 and shown[0].startswith(title), shown
    assert not [box for box in at.text_area if box.key == "pg_text"]  # controls tucked away


def test_presenter_opens_from_a_link_at_its_step():
    at = open_page(params={"present": "1", "step": "7"}, lang=None)
    assert_healthy_presenter(at, 7)
    assert "pg_chart_weights" in charts(at)
    at.button(key="pg_present_next").click().run()
    assert_healthy_presenter(at, 8)
    last = open_page(params={"present": "1", "step": "11"}, lang=None)
    assert last.button(key="pg_present_next").disabled


def test_cell_explainer_opens_on_demand_and_shows_the_arithmetic_of_the_chosen_cell():
    at = open_page()
    at.selectbox(key="pg_mask").select("causal").run()
    # closed by default: no arithmetic, no tables, no extra chart until asked for
    assert not [s for s in at.selectbox if s.key in ("pg_cell_q", "pg_cell_k", "pg_row_q")]
    assert not at.dataframe and "pg_chart_row_output" not in charts(at)
    at.toggle(key="pg_explain_cell").set_value(True).run()
    at.toggle(key="pg_explain_row").set_value(True).run()
    at.selectbox(key="pg_cell_q").select(3).run()
    at.selectbox(key="pg_cell_k").select(1).run()
    assert_healthy(at)
    weights = z(charts(at)["pg_chart_weights"])
    raw = z(charts(at)["pg_chart_raw"])
    text = "\n".join(m.value for m in at.markdown)
    assert f"{raw[3, 1]:.4g}" in text  # the dot product
    assert f"{raw[3, 1] / math.sqrt(8):.4g}" in text  # divided by √8
    assert f"{weights[3, 1]:.4g}" in text  # the weight
    # a masked cell says −∞ and 0
    at.selectbox(key="pg_cell_k").select(5).run()
    text = "\n".join(m.value for m in at.markdown)
    assert r"S''_{3,5} = " in text and r"+ (-\infty) = -\infty" in text
    assert r"A_{3,5} = 0 \div" in text and text.count("= 0$") >= 1
    # the row output panel: contributions add up to the head output row
    frames = [df.value for df in at.dataframe]
    out = z(charts(at)["pg_chart_head_out"])
    assert any(f.shape[0] == 7 and np.allclose(f.iloc[-1, 1:].to_numpy(float), out[0]) for f in frames)


def test_example_sentences_include_japanese_and_fill_the_box():
    at = open_page()
    options = at.selectbox(key="pg_example_pick").options
    assert "私は昨日図書館で本を読んだ。" in options and "the cat sat on the mat" in options
    at.selectbox(key="pg_example_pick").select("私は昨日図書館で本を読んだ。").run()
    assert at.text_area(key="pg_text").value == "私は昨日図書館で本を読んだ。"
    ticks = charts(at)["pg_chart_weights"]["layout"]["xaxis"]["ticktext"]
    assert ticks[:4] == ["私", "は", "昨", "日"] and ticks[-1] == "。"
    assert at.query_params["text"] == "私は昨日図書館で本を読んだ。"


def test_every_chart_has_alt_text_and_one_export_menu_replaces_per_table_downloads():
    at = open_page(
        params={"mask": "causal"}, lang=None
    )  # with a mask, so the mask and masked-score maps are drawn too
    at.toggle(key="pg_tables").set_value(True).run()
    assert_healthy(at)
    for el in at.get("plotly_chart"):
        assert el.proto.alt.strip()
        spec = json.loads(el.proto.spec)
        assert spec  # parses
    keys = sorted(
        getattr(el, "key", "") or el.proto.id.rsplit("-", 1)[-1] for el in at.get("download_button")
    )
    # one menu, not one button per table; with it the take-home files (issue 45)
    assert keys == ["pg_dl_csv", "pg_dl_json", "pg_dl_lesson", "pg_dl_npz", "pg_tk_quiz", "pg_tk_scorm"]


def test_presenter_language_toggle_switches_language_and_keeps_the_step():
    at = open_page(params={"present": "1", "step": "3", "heads": "4", "lang": "en"}, lang=None)
    assert_healthy_presenter(at, 3)
    toggle = at.button(key="pg_present_lang")
    assert toggle.label == "日本語"  # names the language it switches to
    toggle.click().run()
    assert_healthy_presenter(at, 3)
    assert at.session_state["lang"] == "ja" and at.query_params["lang"] == "ja"
    assert any(h == "3. " + translate("ja", "playground.step_raw") for h in headings(at))
    assert at.button(key="pg_present_next").label == translate("ja", "playground.present_next")
    assert at.session_state["pg_heads"] == 4  # the rest of the view is kept
    at.button(key="pg_present_lang").click().run()
    assert_healthy_presenter(at, 3)
    assert at.session_state["lang"] == "en"
    assert any(h == "3. " + translate("en", "playground.step_raw") for h in headings(at))

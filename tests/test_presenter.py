"""Presenter mode (issue 18): projector figures, a stable slide, a real "nothing masked" slide,
entering at step 1, the H1, and the constant key script."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attention_ui.figures import heatmaps
from attention_ui.i18n import translate
from attention_ui.playground import presenter
from attention_ui.playground.projector import projector_figure
from tests.apptest_pages import charts, open_page

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]

# The keys presenter mode takes (a clicker sends some of them), as the key script spells them.
PRESENTER_KEYS = ("ArrowRight", "ArrowDown", "PageDown", '" "', "ArrowLeft", "ArrowUp", "PageUp", "Home", "End",
                  "Escape")  # fmt: skip


def test_projector_figure_has_large_type_and_fills_its_box():
    values = np.arange(36, dtype=float).reshape(6, 6) / 36
    fig = heatmaps.attention_heatmap(values, TOKENS, kind="weights")
    page_size = fig.data[0].textfont.size
    big = projector_figure(fig, square=True)
    assert fig.layout.height and big.layout.height is None  # the page's box decides
    assert big.data[0].textfont.size >= 18 and big.data[0].texttemplate
    assert big.layout.xaxis.tickfont.size >= 18 and big.layout.yaxis.tickfont.size >= 18
    assert big.layout.yaxis.scaleanchor == "x"  # square cells
    assert big.data[0].colorbar.tickfont.size >= 18
    assert fig.data[0].textfont.size == page_size  # the page's figure is left alone
    assert all(t.textfont.size >= 18 for t in big.data if t.texttemplate)  # the white-number layer too
    wide = projector_figure(heatmaps.attention_heatmap(np.zeros((12, 12)), [str(i) for i in range(12)]))
    assert 18 <= wide.data[0].textfont.size < big.data[0].textfont.size
    assert wide.layout.yaxis.scaleanchor is None


def test_projector_panels_keep_room_for_their_titles():
    weights = np.full((2, 6, 6), 1 / 6)
    fig = projector_figure(heatmaps.heads_small_multiples(weights, TOKENS, head_title="head {h}"))
    titles = fig.layout.annotations
    assert [a.text for a in titles] == ["head 0", "head 1"]
    assert all(a.font.size >= 18 for a in titles)
    assert fig.layout.margin.t >= titles[0].font.size + 10  # drawn above the plot, inside the chart
    single = projector_figure(heatmaps.attention_heatmap(weights[0], TOKENS, kind="weights"))
    assert single.layout.margin.t <= 10  # no titles: the map keeps the room


def test_key_script_is_constant_apart_from_the_step_numbers():
    a, b = presenter.keys_script(3), presenter.keys_script(4)
    assert (
        "const STEP = 3, LAST = 11, OVERLAY = false;" in a
        and "const STEP = 4, LAST = 11, OVERLAY = false;" in b
    )
    assert a.replace("STEP = 3", "STEP = 4") == b
    for key in PRESENTER_KEYS:
        assert key in a
    # the join-code slide: drawn over the step (its flag), and the button that opens it (a press
    # right after a click on it closes the slide, even before the run has drawn it)
    over = presenter.keys_script(3, overlay=True)
    assert over == a.replace("OVERLAY = false", "OVERLAY = true")
    assert 'window.__alPresenterOpeners = ".st-key-cls_present_code";' in a


def test_the_key_scripts_openers_are_widget_keys_only():
    from attention_ui import presenter as kit_presenter

    assert 'window.__alPresenterOpeners = "";' in kit_presenter.keys_script("mk", 1, 3)
    with pytest.raises(ValueError):
        kit_presenter.keys_script("mk", 1, 3, openers=('x"; alert(1); "',))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_home_and_end_buttons_jump_to_the_first_and_last_step(lang):
    at = open_page(lang=lang)
    at.button(key="pg_present_start").click().run()
    assert at.button(key="pg_present_first").disabled and not at.button(key="pg_present_last").disabled
    at.button(key="pg_present_last").click().run()
    assert at.title[0].value.startswith("11. ") and at.query_params["step"] == "11"
    assert at.button(key="pg_present_last").disabled and at.button(key="pg_present_next").disabled
    at.button(key="pg_present_first").click().run()
    assert at.title[0].value.startswith("1. ") and at.query_params["step"] == "1"


def slide_state(at):
    headings = [h.value for h in at.title]
    return headings, at.selectbox(key="pg_head")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_entering_starts_at_step_1_with_an_h1_and_a_fixed_head_picker(lang):
    at = open_page(lang=lang, pg_step=6)
    at.button(key="pg_present_start").click().run()
    headings, picker = slide_state(at)
    assert headings == [f"1. {translate(lang, 'playground.step_x')}"]
    assert at.query_params["step"] == "1"
    assert picker.disabled  # step 1 does not depend on the head, but the picker keeps its place
    at.button(key="pg_present_next").click().run()
    headings, picker = slide_state(at)
    assert headings[0].startswith("2. ") and not picker.disabled
    picker.select(1).run()
    assert at.session_state["pg_head"] == 1 and at.query_params["head"] == "1"
    assert not at.main.radio  # no radio pushing the heading down
    at.button(key="pg_present_exit").click().run()
    at.button(key="pg_present_start").click().run()
    assert at.title[0].value.startswith("1. ")  # re-entering starts again at step 1


def test_nothing_masked_slides_show_a_map_and_say_why():
    at = open_page(params={"present": "1", "step": "5", "mask": "none"}, lang=None)
    assert "pg_chart_mask" in charts(at)
    assert translate("en", "playground.present_mask_nothing_masked") in [i.value for i in at.info]
    at.button(key="pg_present_next").click().run()
    drawn = charts(at)
    assert "pg_chart_masked" in drawn
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert all(t["textfont"]["size"] >= 18 for t in spec["data"] if t.get("texttemplate"))
    assert translate("en", "playground.masked_nothing_masked", step=4) in [i.value for i in at.info]


def test_the_slides_controls_keep_the_focus_on_the_settings_the_table_marks_presenter():
    """The controls row's settings (the head picker) come from the playground's table: a setting marked
    ``presenter`` is one the key script keeps the focus on, and the row draws it under its table key."""
    from attention_ui.playground.settings import TABLE

    assert TABLE.presenter_keys == ("pg_head",)
    script = presenter.keys_script(3)
    for key in TABLE.presenter_keys:
        assert f".st-key-{key}" in script


# page, prefix, whether its state lives in its URL (so it gets the copy-link button)
PRESENTED = [
    ("scaling", "scaling", False),
    ("masks", "masks", True),
    ("multihead", "multihead", True),
    ("cost", "cost", True),
    ("block", "block", True),
    ("lookalikes", "lookalikes", True),
    ("positions", "positions", True),
    ("inference", "inference", True),
    ("decoder", "decoder", True),
    ("heads", "heads", True),
]


def main_headings(at) -> list[str]:
    return [h.value for h in at.main.header]


def position(at) -> str:
    return next(
        m.value for m in at.main.markdown if m.value.startswith("**") and ("of" in m.value or "/" in m.value)
    )


@pytest.mark.parametrize(("page", "prefix", "linked"), PRESENTED)
def test_presenter_mode_shows_the_page_section_by_section_in_both_languages(page, prefix, linked):
    from attention_ui.i18n import translate
    from tests.apptest_pages import no_exception, open_page

    at = open_page(f"app_pages/{page}.py")
    headings = main_headings(at)
    sidebar = " ".join(el.proto.body for el in at.sidebar.get("html"))
    assert ("al-copy-link" in sidebar) == linked  # the copy-link button where the state is in the URL
    at.button(key=f"{prefix}_present_start").click().run()
    no_exception(at)
    assert len(at.main.title) == 0  # no page title: a slide starts with its section
    slides = [main_headings(at)]
    while not at.button(key=f"{prefix}_present_next").disabled:
        assert len(slides) < 12
        at.button(key=f"{prefix}_present_next").click().run()
        no_exception(at)
        slides.append(main_headings(at))
    assert len(slides) >= 4 and all(slides)  # every slide has its heading
    assert sum(slides, []) == headings  # the slides are the page, section by section, in order
    assert position(at) == translate("en", "presenter.position", step=len(slides), total=len(slides))
    at.button(key=f"{prefix}_present_lang").click().run()  # the other language, the same slide
    no_exception(at)
    assert at.session_state["lang"] == "ja"
    assert position(at) == translate("ja", "presenter.position", step=len(slides), total=len(slides))
    assert len(main_headings(at)) == len(slides[-1]) and main_headings(at) != slides[-1]
    at.button(key=f"{prefix}_present_first").click().run()
    assert at.button(key=f"{prefix}_present_prev").disabled
    assert position(at) == translate("ja", "presenter.position", step=1, total=len(slides))
    at.button(key=f"{prefix}_present_exit").click().run()
    no_exception(at)
    assert len(main_headings(at)) == len(headings) and at.main.title  # the whole page, in Japanese


def test_the_presenters_key_script_serves_any_page_and_only_takes_a_page_prefix():
    from attention_ui import presenter

    a = presenter.keys_script("mk", 2, 4)
    assert 'window.__alPresenterPrefix = "mk";' in a and "const STEP = 2, LAST = 4, OVERLAY = false;" in a
    for key in PRESENTER_KEYS:
        assert key in a
    with pytest.raises(ValueError):
        presenter.keys_script('x"; alert(1); "', 1, 2)

"""Issue 24, points 6-10: a phone-ready app (sidebar, toolbar, crowded text) and presenter mode on
every page. Figures and layout as data, pages through AppTest; tests/browser/test_issue24_browser.py
checks the drawn result in Chromium."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from attention_ui import kit
from attention_ui.figures import base, heatmaps

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


# --- 7: Plotly's toolbar never covers data ----------------------------------------------------------


def plot_top(fig) -> float:
    return fig.layout.margin.t


def test_a_chart_gets_an_empty_strip_for_the_toolbar_and_keeps_its_plot_size():
    fig = heatmaps.attention_heatmap(np.eye(6), TOKENS)
    top, height = fig.layout.margin.t, fig.layout.height
    base.toolbar_room(fig)
    assert fig.layout.margin.t == top + base.TOOLBAR_PX
    assert fig.layout.height == height + base.TOOLBAR_PX  # the plot area is as tall as before
    base.toolbar_room(fig)  # twice adds nothing
    assert fig.layout.margin.t == top + base.TOOLBAR_PX


def test_the_toolbar_strip_is_at_least_as_tall_as_plotlys_toolbar():
    # measured in Chromium: the toolbar starts 2 px below the figure's top and is 25.6 px tall
    assert base.TOOLBAR_PX >= 2 + 26


def test_every_chart_the_kit_draws_has_the_strip(monkeypatch):
    drawn = []
    monkeypatch.setattr(kit.st, "plotly_chart", lambda fig, **kw: drawn.append((fig, kw)))
    monkeypatch.setattr(kit, "translator", lambda: kit.Translator("en"))
    kit.chart(heatmaps.attention_heatmap(np.eye(6), TOKENS), "x_chart_a", "alt", theme=None)
    kit.chart(go.Figure(layout=dict(height=300, margin=dict(t=0))), "x_chart_b", "alt")
    assert [fig.layout.margin.t >= base.TOOLBAR_PX for fig, _ in drawn] == [True, True]
    # a chart without a toolbar needs no strip
    kit.chart(go.Figure(layout=dict(margin=dict(t=0))), "x_chart_c", "alt", config={"displayModeBar": False})
    assert drawn[-1][0].layout.margin.t == 0


def test_a_title_and_a_legend_above_the_plot_move_below_the_strip():
    fig = go.Figure(
        go.Bar(x=[1, 2], y=[1, 2], name="a"),
        layout=dict(
            height=300,
            margin=dict(t=90),
            title=dict(text="title", y=0.98, yanchor="top"),
            legend=dict(orientation="h", yanchor="bottom", y=1.02),
        ),
    )
    base.toolbar_room(fig)
    height = fig.layout.height
    title_from_top = (1 - fig.layout.title.y) * height
    assert title_from_top >= base.TOOLBAR_PX  # a top-anchored title starts below the strip
    assert fig.layout.legend.yref == "container" and fig.layout.legend.yanchor == "top"
    assert (
        1 - fig.layout.legend.y
    ) * height >= base.TOOLBAR_PX + base.TITLE_BAND_PX - 1e-6  # below the title
    auto = go.Figure(layout=dict(height=200, margin=dict(t=40), title=dict(text="auto")))
    base.toolbar_room(auto)
    assert (1 - auto.layout.title.y) * auto.layout.height == pytest.approx(base.TOOLBAR_PX + 20)


# --- 6: on a phone the sidebar gets out of the way ---------------------------------------------------


def html_bodies(at) -> list[str]:
    return [el.proto.body for el in at.get("html")] + [el.proto.body for el in at.sidebar.get("html")]


def test_the_app_closes_the_sidebar_on_a_narrow_screen_after_navigation_and_the_sentence():
    from attention_ui import narrow_screen
    from tests.apptest_pages import open_page

    script = narrow_screen.sidebar_script()
    assert "const NARROW_PX = 768;" in script  # Streamlit's breakpoint, where the sidebar overlays the page
    for hook in ("stSidebarNavLink", '"change"', "Enter", 'aria-expanded") === "true"'):
        assert hook in script
    at = open_page("app_pages/masks.py")
    assert any("__alNarrowSidebar" in body for body in html_bodies(at))


# --- 8: cut or crowded text --------------------------------------------------------------------------


def test_named_dimensions_turn_when_crowded_and_the_margin_has_room_for_it():
    names = [f"h{i}·{j}" for i in range(2) for j in range(8)]
    fig = heatmaps.feature_heatmap(np.zeros((6, 16)), TOKENS, dim_names=names, dim_title="dimension")
    assert fig.layout.xaxis.tickangle is None  # Plotly's "auto": upright where they would run together
    upright = max(base.text_px(name) for name in names)
    assert fig.layout.margin.b >= upright + base.TICK_PAD_PX + base.TITLE_BAND_PX
    plain = heatmaps.feature_heatmap(np.zeros((6, 16)), TOKENS)
    plot = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert plot == plain.layout.height - plain.layout.margin.t - plain.layout.margin.b  # rows keep their size


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_decoders_generated_rows_are_at_least_as_tall_as_their_axis_title(lang):
    from attention_ui.figures import decoder as fdc
    from attention_ui.i18n import translate

    title = translate(lang, "decoder.axis_new")  # "generated token (query)" was cut to "generated token (q"
    for steps in (1, 2, 3):
        rows = [np.full(3 + s, 1 / (3 + s)) for s in range(steps)]
        fig = fdc.generated_rows(rows, [f"t{i}" for i in range(3 + steps)], 3, query_title=title)
        plot = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
        assert plot >= base.text_px(title, base.TITLE_FONT_PX), steps


def catalog_strings(lang: str):
    import json
    from pathlib import Path

    for path in sorted(
        (Path(__file__).resolve().parents[1] / "attention_ui" / "locales" / lang).glob("*.json")
    ):
        for key, text in json.loads(path.read_text(encoding="utf-8")).items():
            if isinstance(text, str) and not key.startswith("hover_"):
                yield f"{path.stem}.{key}", text


@pytest.mark.parametrize(
    ("lang", "hover", "tap"), [("en", "hover", "tap"), ("ja", "カーソルを合わせ", "タップ")]
)
def test_text_that_says_hover_also_says_tap(lang, hover, tap):
    said = {key: text for key, text in catalog_strings(lang) if hover in text.lower()}
    assert said  # the playground's intro says it
    assert [key for key, text in said.items() if tap not in text] == []


def test_a_page_link_in_the_text_wraps_instead_of_being_cut():
    from tests.apptest_pages import open_page

    at = open_page("app_pages/path.py")
    css = [body for body in html_bodies(at) if "stPageLink-NavLink" in body]
    assert css and "white-space: normal" in css[0] and "text-overflow: clip" in css[0]


# --- 9: presenter mode and the copy-link button on every page ----------------------------------------

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


def test_the_guided_path_keeps_its_progress_in_the_url_and_has_the_copy_link_button():
    from tests.apptest_pages import open_page

    at = open_page("app_pages/path.py")
    assert any("al-copy-link" in el.proto.body for el in at.sidebar.get("html"))


def test_the_presenters_key_script_serves_any_page_and_only_takes_a_page_prefix():
    from attention_ui import presenter
    from tests.test_presenter import PRESENTER_KEYS

    a = presenter.keys_script("mk", 2, 4)
    assert 'window.__alPresenterPrefix = "mk";' in a and "const STEP = 2, LAST = 4, OVERLAY = false;" in a
    for key in PRESENTER_KEYS:
        assert key in a
    with pytest.raises(ValueError):
        presenter.keys_script('x"; alert(1); "', 1, 2)


# --- 10: a longer sentence keeps its detail on a slide ----------------------------------------------

LONG = "the teacher gave the students a long list of words to learn before the exam".split()  # 15


def cell_texts(fig) -> list[str]:
    return [
        str(x)
        for tr in fig.data
        if tr.type == "heatmap" and tr.texttemplate
        for row in tr.text
        for x in row
        if x
    ]


def test_a_15_token_weights_map_keeps_its_numbers_on_a_slide_at_14_px_or_more():
    from attention_ui.playground import projector

    weights = np.random.default_rng(0).dirichlet(np.ones(15), 15)
    page = heatmaps.attention_heatmap(weights, LONG, kind="weights")
    assert not page.data[0].texttemplate  # the page prints no numbers at 15 tokens
    fig = heatmaps.attention_heatmap(weights, LONG, kind="weights", show_text=True)
    slide = projector.projector_figure(fig, square=True, tokens=LONG)
    sizes = {tr.textfont.size for tr in slide.data if tr.type == "heatmap" and tr.texttemplate}
    assert sizes and min(sizes) >= projector.MIN_TEXT_PX
    cell = (projector.SLIDE_BOX_PX - projector.CHROME_PX) / 15  # the smaller projector's cell
    assert max(projector.number_px(x, min(sizes)) for x in cell_texts(slide)) + 4 <= cell
    assert list(slide.layout.yaxis.ticktext) == LONG and list(slide.layout.xaxis.ticktext) == LONG


def test_numbers_that_would_not_fit_at_14_px_are_left_to_the_hover():
    from attention_ui.playground import projector

    tokens = [f"w{i}" for i in range(20)]
    fig = heatmaps.attention_heatmap(np.full((20, 20), 0.05), tokens, kind="weights", show_text=True)
    slide = projector.projector_figure(fig, square=True, tokens=tokens)
    assert not any(tr.texttemplate for tr in slide.data if tr.type == "heatmap")
    assert projector.cell_font(32, ["0.05"]) == 14 and projector.cell_font(31, ["0.05"]) is None


def test_all_heads_on_a_slide_label_every_token_in_full():
    from attention_ui.playground import projector

    weights = np.full((2, 15, 15), 1 / 15)
    page = heatmaps.heads_small_multiples(weights, LONG)
    assert any(x.endswith("…") for x in page.layout.xaxis.ticktext)  # the page cuts them to 6 characters
    slide = projector.projector_figure(page, tokens=LONG, wide=True)
    for name in ("xaxis", "yaxis", "xaxis2"):
        axis = slide.layout[name]
        assert list(axis.ticktext) == LONG and axis.tickfont.size >= projector.MIN_TEXT_PX, name


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_presenter_step_7_at_15_tokens_shows_the_numbers(lang):
    from attention_ui.playground import projector
    from tests.apptest_pages import chart_spec, open_page

    at = open_page(lang=lang, pg_text=" ".join(LONG), pg_present=True, pg_step=7)
    fig = chart_spec(at, "pg_chart_weights")
    printed = [tr for tr in fig["data"] if tr.get("type") == "heatmap" and tr.get("texttemplate")]
    assert printed and min(tr["textfont"]["size"] for tr in printed) >= projector.MIN_TEXT_PX
    assert fig["layout"]["yaxis"]["ticktext"] == LONG


def test_a_wide_maps_numbers_are_marked_for_hiding_on_a_phone(monkeypatch):
    import contextlib

    from tests.apptest_pages import open_page

    twelve = [f"w{i}" for i in range(12)]
    assert kit.dense_numbers(heatmaps.attention_heatmap(np.eye(12), twelve, show_text=True))
    assert not kit.dense_numbers(heatmaps.attention_heatmap(np.eye(8), twelve[:8], show_text=True))
    assert not kit.dense_numbers(heatmaps.attention_heatmap(np.eye(12), twelve, show_text=False))
    boxes = []
    monkeypatch.setattr(kit.st, "plotly_chart", lambda fig, **kw: None)
    monkeypatch.setattr(kit.st, "container", lambda key=None: boxes.append(key) or contextlib.nullcontext())
    monkeypatch.setattr(kit, "translator", lambda: kit.Translator("en"))
    kit.chart(heatmaps.attention_heatmap(np.eye(12), twelve, show_text=True), "pg_chart_w", "alt")
    kit.chart(heatmaps.attention_heatmap(np.eye(8), twelve[:8], show_text=True), "pg_chart_v", "alt")
    assert boxes == ["pg_chart_w_dense"]  # the CSS below hides its numbers on a phone
    monkeypatch.undo()
    at = open_page(lang="ja")
    css = [body for body in html_bodies(at) if "g.heatmap-label" in body]
    assert css and "max-width: 640px" in css[0] and '[class*="_dense"]' in css[0]

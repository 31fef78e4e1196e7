"""The figures' shared layout rules (attention_ui/figures/base.py): an empty strip above every chart for
Plotly's toolbar, so it never covers data (issue 24, on a phone), with the title and legend below it;
Japanese tick labels that would be turned are written top to bottom instead (issue 42); and on every
page's first view, every drawn axis says what it is."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from attention_ui.figures import base, heatmaps
from attention_ui.i18n import translate
from tests.apptest_pages import axes_without_words, open_page

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


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


def stacked(label: str) -> str:
    """A label written top to bottom, as the test expects it (vertical forms by hand)."""
    forms = {"ー": "︱", "[": "﹇", "]": "﹈", "<": "&lt;", ">": "&gt;"}
    return "<br>".join(forms.get(ch, ch) for ch in label)


def test_a_japanese_label_that_would_be_turned_is_written_top_to_bottom() -> None:
    labels = base.token_tick_labels(["マット", "猫", "[PAD]", "<bos>"])
    fit = base.fit_x_ticks(labels, plot_px=4 * 14)  # 14 px a label: none fits side by side
    assert (fit.angle, fit.upright) == (0, True)
    assert fit.depth == 5 * base.LINE_PX  # the longest, "[PAD]", is five characters tall
    assert base.x_tick_text(labels, 4 * 14) == ["マ<br>ッ<br>ト", "猫", stacked("[PAD]"), stacked("<bos>")]
    assert base.upright_labels(["ラーメン"], 14) == ["ラ<br>︱<br>メ<br>ン"]  # the long-vowel bar stands up
    english = base.token_tick_labels(["attention", "is", "all", "you"])
    assert base.fit_x_ticks(english, plot_px=4 * 14).angle == -90  # English turned, as before
    assert base.x_tick_text(english, 4 * 14) == english
    wide = base.fit_x_ticks(labels, plot_px=4 * 60)
    assert (wide.angle, wide.upright) == (0, False)  # room for all: horizontal, as they are


# The model pages (decoder, heads) load their weights: their first Japanese view is checked in the tests
# that already open it (tests/test_app_decoder_gemma.py, tests/test_app_heads.py).
PAGES = ["playground", "scaling", "masks", "multihead", "cost", "block", "lookalikes", "positions",
         "inference", "path"]  # fmt: skip


@pytest.mark.parametrize("page", PAGES)
def test_every_chart_says_what_its_axes_are(page: str) -> None:
    """Every drawn cartesian axis with tick labels has a title, on every page's first view, in Japanese."""
    at = open_page(f"app_pages/{page}.py", lang="ja", check=False)
    missing = axes_without_words(at)
    assert not missing, f"axes without words: {missing}"
    assert translate("ja", "app.st_fullscreen")  # (the page's words are the catalog's)

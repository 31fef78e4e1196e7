"""Maps on a slide (attention_ui/playground/projector.py): a longer sentence keeps its numbers at 14 px or
more where they fit, leaves them to the hover where they do not, and labels every token in full."""

from __future__ import annotations

import numpy as np
import pytest

from attention_ui.figures import heatmaps

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

"""Fixed margins instead of Plotly's automargin (issue 6): the builders size the margins for their
own tick labels, so every label and axis title must still fit. Tested as data, without a browser;
the Chromium screenshots of tests/browser cover the drawn result."""

from __future__ import annotations

import numpy as np
import pytest

from attention_ui.figures import base, heatmaps

SENTENCE = ("the", "cat", "sat", "on", "the", "mat")


def all_axes(fig):
    layout = fig.layout.to_plotly_json()
    template = fig.layout.template.layout.to_plotly_json() if fig.layout.template else {}
    return [(name, layout[name]) for name in layout if name.startswith(("xaxis", "yaxis"))], template


def playground_figures(tokens, n_dims=8):
    rng = np.random.default_rng(0)
    n = len(tokens)
    causal = np.tril(np.ones((n, n), dtype=bool))
    return [
        heatmaps.feature_heatmap(rng.standard_normal((n, n_dims)), tokens),
        heatmaps.attention_heatmap(rng.standard_normal((n, n)), tokens),
        heatmaps.attention_heatmap(rng.random((n, n)), tokens, kind="weights", allowed=causal),
        heatmaps.mask_heatmap(causal, tokens),
        heatmaps.heads_small_multiples(rng.random((2, n, n)), tokens, allowed=causal),
    ]


@pytest.mark.parametrize("tokens", [SENTENCE, tuple(f"token{i}" for i in range(40))])
def test_no_playground_figure_asks_plotly_for_automargin(tokens):
    # automargin made Plotly lay each chart out twice on every rerun
    for fig in playground_figures(tokens):
        axes, template = all_axes(fig)
        for name, axis in axes:
            assert not axis.get("automargin"), name
        for name in ("xaxis", "yaxis"):
            assert not template.get(name, {}).get("automargin"), f"template {name}"


def test_text_width_counts_wide_characters_as_a_full_em():
    assert base.text_px("猫猫") == pytest.approx(2 * base.TICK_FONT_PX)
    assert base.text_px("ab") < base.text_px("猫猫")
    # escaped entities are measured as the character they draw
    assert base.text_px("&lt;") == pytest.approx(base.text_px("<"))


def test_short_labels_that_fit_stay_horizontal():
    fit = base.fit_x_ticks(["the", "cat", "sat"], plot_px=300)
    assert fit.angle == 0
    assert fit.depth == base.LINE_PX


def test_crowded_labels_slant_then_turn_vertical():
    labels = ["attention"] * 8
    slanted = base.fit_x_ticks(labels, plot_px=8 * 40)  # 40 px per tick: too narrow for ~56 px
    assert slanted.angle == -30
    assert slanted.depth > base.LINE_PX
    assert slanted.left_overhang > 0
    vertical = base.fit_x_ticks(labels * 4, plot_px=32 * 20)  # 20 px per tick
    assert vertical.angle == -90
    assert vertical.depth == pytest.approx(base.text_px("attention"))


def test_margins_grow_with_the_widest_label_and_make_room_for_titles():
    short, _ = base.axis_margins(["a"], ["a"], 300, x_title=False, y_title=False)
    long, _ = base.axis_margins(["a"], ["extraordi…"], 300, x_title=False, y_title=False)
    titled, _ = base.axis_margins(["a"], ["a"], 300, x_title=True, y_title=True)
    assert long["l"] >= base.text_px("extraordi…") + base.TICK_PAD_PX
    assert long["l"] > short["l"]
    assert titled["l"] == pytest.approx(short["l"] + base.TITLE_BAND_PX, abs=1)
    assert titled["b"] == pytest.approx(short["b"] + base.TITLE_BAND_PX, abs=1)


def test_a_heatmap_sizes_its_margins_from_its_own_tick_labels():
    tokens = ("Transformers", "compute", "attention", "weights")
    values = np.zeros((4, 4))
    fig = heatmaps.attention_heatmap(values, tokens, query_title="query", key_title="key")
    widest_y = max(base.text_px(t) for t in fig.layout.yaxis.ticktext)
    assert fig.layout.margin.l >= widest_y + base.TICK_PAD_PX + base.TITLE_BAND_PX
    # four ~10-character labels in a 4-column square map (~42 px per column) do not fit flat
    assert fig.layout.xaxis.tickangle in (-30, -90)
    assert fig.layout.margin.b > base.LINE_PX + base.TITLE_BAND_PX


def test_japanese_labels_get_wider_margins_than_latin_ones_of_the_same_length():
    values = np.zeros((3, 3))
    latin = heatmaps.attention_heatmap(values, ("abcd", "efgh", "ijkl"))
    cjk = heatmaps.attention_heatmap(values, ("注意機構", "重み付け", "正規化済"))
    assert cjk.layout.margin.l > latin.layout.margin.l


def test_a_narrow_plot_estimate_turns_the_labels():
    values = np.zeros((6, 16))
    wide = heatmaps.feature_heatmap(values, SENTENCE, plot_px=800)
    narrow = heatmaps.feature_heatmap(values, SENTENCE, plot_px=120)
    assert wide.layout.xaxis.tickangle == 0
    assert narrow.layout.xaxis.tickangle == -90


def test_small_multiples_share_one_tick_angle_and_fit_the_first_column_labels():
    tokens = tuple(f"word{i}" for i in range(12))
    fig = heatmaps.heads_small_multiples(np.full((4, 12, 12), 1 / 12), tokens)
    axes, _ = all_axes(fig)
    angles = {axis.get("tickangle") for name, axis in axes if name.startswith("xaxis")}
    assert len(angles) == 1
    widest = max(base.text_px(t) for t in fig.layout.yaxis.ticktext)
    assert fig.layout.margin.l >= widest + base.TICK_PAD_PX


def test_a_narrow_map_thins_its_x_labels_so_upright_ones_do_not_overlap():
    values = np.zeros((6, 32))
    narrow = heatmaps.feature_heatmap(
        values, SENTENCE, plot_px=200
    )  # Q/K/V of 32 dims in a third of the page
    shown = narrow.layout.xaxis.tickvals
    assert len(shown) * base.VERTICAL_LABEL_PX <= 200
    assert shown[0] == 0 and len(shown) >= 2
    wide = heatmaps.feature_heatmap(values, SENTENCE, plot_px=900)
    assert list(wide.layout.xaxis.tickvals) == list(range(32))  # room for all: nothing thinned

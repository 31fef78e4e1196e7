"""Figure builders of the decoder page, read through ``fig.data`` / ``fig.layout`` (no model needed)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_ui.figures import base
from attention_ui.figures import decoder as fdc
from attention_ui.i18n import translate
from tests.test_figures_base import stacked

KV_OF = [0, 0, 0, 1, 1, 1, 2, 2, 2]


def test_head_grid_cells_click_targets_frame_and_group_lines() -> None:
    grid = np.arange(30 * 9, dtype=float).reshape(30, 9) / 270
    fig = fdc.head_grid(grid, (4, 7), value_title="w<0>", kv_head_of=KV_OF)
    heat, cells = fig.data
    assert np.array(heat.z).shape == (30, 9) and heat.z[4][7] == grid[4, 7]
    assert len(cells.x) == 270
    # the click target of layer 4, head 7 sits on that cell and names it (and its KV head 7 // 3 = 2)
    k = 4 * 9 + 7
    assert (cells.x[k], cells.y[k], list(cells.customdata[k])) == (7, 4, [4, 7, 2])
    assert cells.text[k] == f"{grid[4, 7]:.3f}"
    frame = fig.layout.shapes[0]
    assert (frame.x0, frame.x1, frame.y0, frame.y1) == (6.5, 7.5, 3.5, 4.5)
    assert sorted(s.x0 for s in fig.layout.shapes[1:]) == [2.5, 5.5]  # between the KV groups
    assert fig.layout.yaxis.autorange == "reversed"
    assert "w&lt;0&gt;" in cells.hovertemplate and "<0>" not in cells.hovertemplate


def test_picked_head_reads_the_click_and_refuses_the_rest() -> None:
    assert fdc.picked_head({"customdata": [3, 8, 2]}, 30, 9) == (3, 8)
    assert fdc.picked_head({"customdata": [30, 0, 0]}, 30, 9) is None
    assert fdc.picked_head({"x": 1}, 30, 9) is None
    assert fdc.picked_head({"customdata": ["a", 1]}, 30, 9) is None


def test_group_weight_maps_one_causal_map_per_shared_head() -> None:
    n = 4
    w = np.tril(np.ones((9, n, n)))
    w = w / w.sum(-1, keepdims=True) * np.arange(1, 10)[:, None, None] / 9
    allowed = np.tril(np.ones((n, n), bool))
    labels = ["猫 1/3", "猫 2/3", "猫 3/3", "猫 1/3"]  # a repeated label keeps its own row
    figs = fdc.group_weight_maps(w, [3, 4, 5], labels, allowed)
    assert len(figs) == 3
    for h, fig in zip([3, 4, 5], figs, strict=True):
        z = np.array([[np.nan if v is None else v for v in row] for row in fig.data[0].z], float)
        np.testing.assert_allclose(z[allowed], w[h][allowed], rtol=1e-3)
        assert np.isnan(z[~allowed]).all()
        assert list(fig.layout.yaxis.tickvals) == [0, 1, 2, 3]
        assert list(fig.layout.yaxis.ticktext) == labels


def test_gqa_diagram_links_each_query_head_to_h_div_3() -> None:
    fig = fdc.gqa_diagram(9, 3, selected=4)
    lines, queries, kvs = fig.data
    xs = [x for x in lines.x if x is not None]
    pairs = list(zip(xs[0::2], xs[1::2], strict=True))
    kv_x = list(kvs.x)
    for h, (qx, kx) in enumerate(pairs):
        assert qx == h and kx == kv_x[h // 3]
    assert queries.marker.color[4] == fdc.SELECTED_COLOR
    assert [c == fdc.SELECTED_COLOR for c in kvs.marker.color] == [False, True, False]


def test_rope_offset_figure_traces_and_the_sentence_pair() -> None:
    scores = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    fig = fdc.rope_offset_figure([0, 1, 2], [0, 20], scores, actual=(2, 3.0), start_name="k at {s}")
    assert [tr.name for tr in fig.data] == ["k at 0", "k at 20", "this pair in the sentence"]
    assert list(fig.data[1].y) == [1.0, 2.0, 3.0]
    assert (fig.data[2].x[0], fig.data[2].y[0]) == (2, 3.0)


def test_next_token_bars_order_colour_and_escaped_labels() -> None:
    fig = fdc.next_token_bars(["␣was", "<b>", "␣was"], [0.5, 0.3, 0.1], chosen=1)
    bar = fig.data[0]
    assert list(bar.x) == [0.5, 0.3, 0.1] and list(bar.y) == [0, 1, 2]
    assert list(fig.layout.yaxis.ticktext) == ["1 ␣was", "2 &lt;b&gt;", "3 ␣was"]
    assert list(bar.marker.color) == [fdc.OTHER_COLOR, fdc.SELECTED_COLOR, fdc.OTHER_COLOR]
    assert fig.layout.yaxis.autorange == "reversed"  # most probable on top


def test_cache_growth_and_generated_rows() -> None:
    fig = fdc.cache_growth_figure([5, 6, 7], [230_400, 276_480, 322_560], [691_200, 829_440, 967_680])
    assert list(fig.data[0].y) == [230_400, 276_480, 322_560] and fig.data[1].line.dash == "dash"
    rows = [np.array([0.5, 0.25, 0.25]), np.array([0.1, 0.2, 0.3, 0.4])]
    labels = ["a", "b", "c", "d"]
    fig = fdc.generated_rows(rows, labels, n_prompt=2)
    z = fig.data[0].z
    assert z[0] == [0.5, 0.25, 0.25, None] and z[1] == [0.1, 0.2, 0.3, 0.4]
    assert list(fig.data[0].y) == [2, 3] and list(fig.layout.yaxis.ticktext) == ["c", "d"]
    assert fig.layout.shapes[0].x0 == 1.5  # between the prompt and the generated tokens


def test_group_maps_thin_key_labels_to_what_fits_upright_at_1366() -> None:
    """24-29 tokens: the key labels shown are at least one upright label apart in the plot a third of
    a 1366-px page leaves (they piled into one block when every label was drawn)."""
    from attention_ui.figures.base import VERTICAL_LABEL_PX

    for n in (8, 24, 29):
        labels = [f"␣word{i}" for i in range(n)]
        allowed = np.tril(np.ones((n, n), bool))
        (fig,) = fdc.group_weight_maps(np.tril(np.ones((1, n, n))) / n, [0], labels, allowed)
        plot_px = fdc.group_plot_px(labels, "query")
        ticks = list(fig.layout.xaxis.tickvals)
        assert fig.layout.xaxis.tickangle == -90 or len(ticks) == n
        gap = plot_px / n * min(b - a for a, b in zip(ticks, ticks[1:], strict=False))
        assert gap >= VERTICAL_LABEL_PX, (n, ticks, plot_px)
        assert list(fig.layout.yaxis.tickvals) == list(range(n))  # every query row keeps its label
        assert ticks[0] == 0 and len(ticks) >= 2
        assert fdc.GROUP_COLUMN_PX - fig.layout.margin.l - fdc.COLORBAR_PX - 10 <= plot_px + 1
    # a shorter label leaves a wider plot, so more keys are named
    wide = fdc.group_plot_px(["a"] * 29, "query")
    assert wide > fdc.group_plot_px(["␣attention"] * 29, "query")


def test_next_token_bars_say_words_on_hover_and_fit_the_labels() -> None:
    labels = ["猫 (completes)+は", "part of ぁ…み", "␣cat"]
    hovers = ["the rest of 猫 <b>", "the first 2 of the 3 bytes …", "«␣cat»"]
    fig = fdc.next_token_bars(labels, [0.5, 0.3, 0.2], chosen=1, hovers=hovers)
    assert list(fig.layout.yaxis.ticktext) == ["1 猫 (completes)+は", "2 part of ぁ…み", "3 ␣cat"]
    assert list(fig.data[0].customdata)[0] == "the rest of 猫 &lt;b&gt;"  # escaped
    from attention_ui.figures.base import text_px

    assert fig.layout.margin.l >= text_px("1 猫 (completes)+は")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_decoders_generated_rows_are_at_least_as_tall_as_their_axis_title(lang):
    from attention_ui.figures import decoder as fdc

    title = translate(lang, "decoder.axis_new")  # "generated token (query)" was cut to "generated token (q"
    for steps in (1, 2, 3):
        rows = [np.full(3 + s, 1 / (3 + s)) for s in range(steps)]
        fig = fdc.generated_rows(rows, [f"t{i}" for i in range(3 + steps)], 3, query_title=title)
        plot = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
        assert plot >= base.text_px(title, base.TITLE_FONT_PX), steps


DECODER_JA = ["<bos>", "猫", "が", "マット", "の上に", "座", "った", "。", "猫", "は"]  # SmolLM2's reading


def test_decoder_group_maps_name_every_key_upright() -> None:
    n = len(DECODER_JA)
    allowed = np.tril(np.ones((n, n), bool))
    (fig,) = fdc.group_weight_maps(np.tril(np.ones((1, n, n))) / n, [0], DECODER_JA, allowed, title="")
    assert list(fig.layout.xaxis.tickvals) == list(range(n)) and list(fig.layout.yaxis.tickvals) == list(
        range(n)
    )
    assert fig.layout.xaxis.tickangle == 0  # was -90: Japanese on its side
    assert list(fig.layout.xaxis.ticktext) == [stacked(x) if len(x) > 1 else x for x in DECODER_JA]
    assert fig.layout.margin.b >= 5 * base.LINE_PX  # room for "<bos>", five characters tall


def test_generated_rows_name_the_cached_tokens_upright() -> None:
    """24 cached tokens across the full-width chart: 25 px each, too narrow for マット side by side."""
    labels = [*DECODER_JA, *DECODER_JA, "マット", "の", "上", "に"]
    fig = fdc.generated_rows([np.full(23, 1 / 23), np.full(24, 1 / 24)], labels, 22)
    assert list(fig.layout.xaxis.tickvals) == list(range(24)) and fig.layout.xaxis.tickangle == 0
    assert fig.layout.xaxis.ticktext[3] == "マ<br>ッ<br>ト" and fig.layout.xaxis.ticktext[1] == "猫"
    assert fig.layout.margin.b >= 5 * base.LINE_PX + base.TITLE_BAND_PX  # "<bos>" and the axis title

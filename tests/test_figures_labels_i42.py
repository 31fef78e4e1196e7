"""Issue 42, point 14: every map names every row and column, Japanese labels read upright, and the
charts say what their axes are. Read through ``fig.layout`` (the shared builders), and on the pages.

On a phone the masks maps named every other token, and the decoder's key labels were turned 90° so
Japanese lay on its side; the RoPE rotation plane had no axis words, nor the block's bar chart's x axis.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from attention_core.training.tasks import INDUCTION_LENGTH, SYNTHETIC_LENGTH, TEXT_CONTEXT
from attention_core.training.train import MAX_HEADS, MAX_LAYERS
from attention_ui.figures import base, heatmaps
from attention_ui.figures import decoder as fdc
from attention_ui.figures.base import AxisText, HoverText
from attention_ui.i18n import translate
from attention_ui.training import figures as ftr
from tests.apptest_pages import axes_without_words, charts, open_page

MASKS_JA = [*"猫がマットの上に座った。", "[PAD]", "[PAD]"]  # the masks page's Japanese default, 14 tokens
DECODER_JA = ["<bos>", "猫", "が", "マット", "の上に", "座", "った", "。", "猫", "は"]  # SmolLM2's reading


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


def test_training_lab_maps_name_every_row_and_column_with_axis_words() -> None:
    """The training lab draws its heads with the shared small multiples: 12 tokens, 2 heads, 2 layers
    (every other token was named: at most 8 labels)."""
    n = 12
    maps = np.full((2, 2, n, n), 1 / n)
    hover = HoverText(query="クエリ", key="キー")
    fig = ftr.head_maps(maps, [str(i) for i in range(n)], panel_title="{layer}/{head}", hover=hover)
    xs = {k: v for k, v in fig.layout.to_plotly_json().items() if k.startswith("xaxis")}
    ys = {k: v for k, v in fig.layout.to_plotly_json().items() if k.startswith("yaxis")}
    assert all(list(a["tickvals"]) == list(range(n)) for a in [*xs.values(), *ys.values()])
    bottom = [a for a in xs.values() if a.get("showticklabels")]
    assert len(bottom) == 2 and all(a["title"]["text"] == "キー" for a in bottom)  # the bottom row's
    first = [a for a in ys.values() if a.get("showticklabels")]
    assert len(first) == 2 and all(a["title"]["text"] == "クエリ" for a in first)  # the first column's


@pytest.mark.parametrize("heads", range(1, MAX_HEADS + 1))
def test_training_lab_maps_name_every_key_at_every_task_length(heads: int) -> None:
    """Four heads of the induction task's 20 tokens named every other key (a row of four panels of
    162 px): a row now holds fewer panels, so each names all of its keys."""
    lengths = {*SYNTHETIC_LENGTH.values(), INDUCTION_LENGTH, TEXT_CONTEXT}
    for n, layers in itertools.product(sorted(lengths), range(1, MAX_LAYERS + 1)):
        fig = ftr.head_maps(
            np.full((layers, heads, n, n), 1 / n), [str(i) for i in range(n)], panel_title="{layer}/{head}"
        )
        axes = fig.layout.to_plotly_json()
        named = [a for k, a in axes.items() if k.startswith(("xaxis", "yaxis")) and a.get("showticklabels")]
        assert named and all(list(a["tickvals"]) == list(range(n)) for a in named), (n, layers)
        assert len(fig.data) == layers * heads  # every head still drawn


def test_four_heads_name_the_12_tokens_of_the_japanese_default() -> None:
    tokens = list("猫がマットの上に座った。")
    fig = heatmaps.heads_small_multiples(np.full((4, 12, 12), 1 / 12), tokens)
    assert list(fig.layout.xaxis.tickvals) == list(range(12)) and fig.layout.xaxis.tickangle == 0


def test_the_rotation_plane_and_the_stage_bars_say_what_their_axes_are() -> None:
    from attention_ui.block import figures as fbl
    from attention_ui.positions import figures as fps

    path = np.array([[1.0, 0.0], [0.54, 0.84]])
    fig = fps.rope_arrow_figure(path, [0, 1], position_label="p = {p}", axes=AxisText("c 4", "c 5"))
    assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == ("c 4", "c 5")
    bars = fbl.stage_figure(["x (入力)", "y"], [1.0, 2.0], [True, False], axes=AxisText("RMS", "stage"))
    assert (bars.layout.xaxis.title.text, bars.layout.yaxis.title.text) == ("RMS", "stage")
    assert all(trace.orientation == "h" for trace in bars.data)  # the stage names read across, not turned


def test_the_ablation_bars_name_their_candidates() -> None:
    """The heads page's bars (its first view draws none: tests/test_app_heads.py checks the rest)."""
    from attention_ui.heads import figures as fh

    fig = fh.before_after(["猫", "犬"], [0.5, 0.2], [0.1, 0.6], before_name="b", after_name="a",
                          axes=AxisText("probability", "candidate"))  # fmt: skip
    assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == ("probability", "candidate")


# --- on the pages ---------------------------------------------------------------------------------------


def test_the_masks_maps_name_all_14_tokens_upright_with_their_colour_bars_below() -> None:
    at = open_page("app_pages/masks.py", lang="ja")
    for key in ("masks_chart_mask", "masks_chart_masked_scores", "masks_chart_weights"):
        layout = charts(at)[key]["layout"]
        assert layout["xaxis"]["tickvals"] == list(range(14)) and layout["yaxis"]["tickvals"] == list(
            range(14)
        )
        assert layout["xaxis"]["tickangle"] == 0
        assert layout["xaxis"]["ticktext"] == [stacked(x) if len(x) > 1 else x for x in MASKS_JA]
    for key in ("masks_chart_masked_scores", "masks_chart_weights"):
        assert charts(at)[key]["data"][0]["colorbar"]["orientation"] == "h"
    heights = {
        json.dumps(charts(at)[k]["layout"]["height"]) for k in ("masks_chart_mask", "masks_chart_weights")
    }
    assert len(heights) == 1  # the three maps line up


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

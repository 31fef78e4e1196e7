"""The training lab's figure builders, read back as data (fig.data / fig.layout), on made-up arrays."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from attention_core.training.tasks import INDUCTION_LENGTH, SYNTHETIC_LENGTH, TEXT_CONTEXT
from attention_core.training.train import MAX_HEADS, MAX_LAYERS
from attention_ui.figures.base import AxisText, HoverText
from attention_ui.training import figures as ftr

TITLES = dict(x_title="step", loss_title="loss", accuracy_title="accuracy")


def test_curves_put_loss_left_and_accuracy_right_in_percent():
    fig = ftr.curves([1, 2, 3], [2.0, 1.5, 0.5], [0.1, 0.5, 0.99], total=10, **TITLES)
    loss, acc = fig.data
    assert list(loss.x) == [1, 2, 3] and list(loss.y) == [2.0, 1.5, 0.5]
    assert list(acc.y) == pytest.approx([10.0, 50.0, 99.0]) and acc.yaxis == "y2"
    assert list(fig.layout.xaxis.range) == [0, 10]  # a live curve grows into a fixed frame
    assert list(fig.layout.yaxis2.range) == [0, 100] and fig.layout.yaxis2.overlaying == "y"
    assert list(fig.layout.yaxis2.ticktext) == ["0 %", "25 %", "50 %", "75 %", "100 %"]
    assert fig.layout.yaxis.range[0] == 0 and fig.layout.yaxis.range[1] == pytest.approx(2.1)


def test_curves_refuse_ragged_input_and_escape_titles():
    with pytest.raises(ValueError):
        ftr.curves([1, 2], [1.0], [0.5, 0.6], total=2, **TITLES)
    fig = ftr.curves([1], [1.0], [0.5], total=1, x_title="<b>x</b>", loss_title="l", accuracy_title="a")
    assert "<b>" not in fig.layout.xaxis.title.text


def test_head_maps_one_panel_per_layer_and_head():
    rng = np.random.default_rng(0)
    a = rng.random((2, 3, 4, 4))
    tokens = ["A", "<i>", "C", "D"]
    fig = ftr.head_maps(a, tokens, panel_title="L{layer} H{head}")
    panels = [tr for tr in fig.data if tr.name == "values"]
    assert len(panels) == 6
    np.testing.assert_allclose(np.array(panels[4].z, float), a[1, 1])  # row-major: layer 1, head 1
    titles = [ann.text for ann in fig.layout.annotations]
    assert titles == ["L0 H0", "L0 H1", "L0 H2", "L1 H0", "L1 H1", "L1 H2"]
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    assert "<i>" not in "".join(fig.layout.xaxis.ticktext)  # user text escaped
    with pytest.raises(ValueError):
        ftr.head_maps(a[0], tokens, panel_title="x")
    with pytest.raises(ValueError):
        ftr.head_maps(a, tokens[:3], panel_title="x")


def test_runs_lines_and_bars():
    fig = ftr.runs_lines(
        {"scaled": [3, 2, 1], "unscaled": [3, 3, 2.5]}, axes=AxisText("s", "l"), dashed=("unscaled",)
    )
    assert [tr.name for tr in fig.data] == ["scaled", "unscaled"]
    assert (
        list(fig.data[0].x) == [1, 2, 3] and fig.data[1].line.dash == "dash" and fig.data[0].line.dash is None
    )
    bars = ftr.bars(["head 0", "head 1"], {"lost": [0.25, 0.5]}, y_title="accuracy", percent=True)
    assert list(bars.data[0].y) == [25.0, 50.0] and list(bars.layout.xaxis.ticktext) == ["head 0", "head 1"]
    assert list(bars.layout.yaxis.range) == [0, 105] and bars.layout.showlegend is False
    with pytest.raises(ValueError):
        ftr.bars(["a"], {"x": [1, 2]}, y_title="y")


def test_runs_lines_shade_the_plateau_and_the_drop():
    axes = AxisText("step", "loss")
    fig = ftr.runs_lines(
        {"2 layers": [3.0] * 10}, axes=axes, bands=[(2, 5, "plateau"), (6, 8, "<b>drop</b>")]
    )
    shapes = fig.layout.shapes
    assert [(s.x0, s.x1) for s in shapes] == [(2, 5), (6, 8)] and shapes[0].fillcolor != shapes[1].fillcolor
    labels = [a.text for a in fig.layout.annotations]
    assert labels[0] == "plateau" and "<b>" not in labels[1]  # the labels are escaped
    assert not ftr.runs_lines({"a": [1.0]}, axes=axes).layout.shapes


def test_by_position_lines_from_position_0():
    axes = AxisText("position", "accuracy")
    fig = ftr.by_position({"seen": [1.0, 0.5], "hidden": [0.25, float("nan")]}, axes=axes, dashed=["hidden"],
                          percent=True)  # fmt: skip
    assert list(fig.data[0].x) == [0, 1] and list(fig.data[0].y) == [100.0, 50.0]
    assert fig.data[1].line.dash == "dash" and fig.data[0].line.dash is None
    assert np.isnan(fig.data[1].y[1])  # a position with no value is a gap
    assert fig.layout.yaxis.range == (0, 105) and fig.layout.yaxis.ticksuffix == " %"
    assert fig.layout.xaxis.dtick == 1 and fig.layout.xaxis.title.text == "position"
    plain = ftr.by_position({"w": [0.2, 0.9]}, axes=axes)
    assert list(plain.data[0].y) == [0.2, 0.9] and plain.layout.yaxis.range == (0, 1.05)


def test_bars_take_an_x_title():
    fig = ftr.bars(["0", "1"], {"a": [0.1, 0.2]}, y_title="w", x_title="position")
    assert fig.layout.xaxis.title.text == "position"
    assert ftr.bars(["0"], {"a": [0.1]}, y_title="w").layout.xaxis.title.text is None


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

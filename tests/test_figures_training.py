"""The training lab's figure builders, read back as data (fig.data / fig.layout), on made-up arrays."""

from __future__ import annotations

import numpy as np
import pytest

from attention_ui.figures.base import AxisText
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

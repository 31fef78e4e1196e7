"""Figure builders of the block lab and the cost lab's weight rows, read through fig.data/fig.layout."""

from __future__ import annotations

import math

import pytest

from attention_ui.block import figures as fb
from attention_ui.figures import cost as fc


def test_stage_figure_splits_stream_and_sublayers_in_order():
    fig = fb.stage_figure(["x", "<b>in</b>", "out", "y"], [1.0, 2.0, 3.0, 4.0], [True, False, False, True])
    stream, sub = fig.data  # horizontal bars: the stages on y, top to bottom in order
    assert list(stream.y) == ["x", "y"] and list(stream.x) == [1.0, 4.0]
    assert list(sub.x) == [2.0, 3.0] and "<b>" not in sub.y[0]
    assert list(fig.layout.yaxis.categoryarray) == ["x", "&lt;b&gt;in&lt;/b&gt;", "out", "y"]
    assert fig.layout.yaxis.autorange == "reversed"
    with pytest.raises(ValueError):
        fb.stage_figure(["x"], [1.0, 2.0], [True])


def test_depth_figure_one_line_per_series_from_layer_zero():
    fig = fb.depth_figure({"Pre-LN": [1, 2, 3], "Post-LN": [1, 1, 1]})
    assert [tr.name for tr in fig.data] == ["Pre-LN", "Post-LN"]
    assert list(fig.data[0].x) == [0, 1, 2] and list(fig.data[1].y) == [1.0, 1.0, 1.0]
    assert fig.data[0].line.dash != fig.data[1].line.dash  # told apart without colour


def test_flops_figure_marks_the_crossover_on_log_axes():
    fig = fb.flops_figure([10, 100, 1000], {"a": [1, 10, 100], "b": [1, 100, 10000]}, 123.0, "n* ≈ 123")
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.shapes[0].x0 == 123.0 and fig.layout.shapes[0].x1 == 123.0
    assert fig.layout.annotations[0].x == pytest.approx(math.log10(123.0))
    assert fig.layout.annotations[0].text == "n* ≈ 123"
    assert not fb.flops_figure([10, 100], {"a": [1, 2]}, None, "").layout.shapes


def test_weight_rows_figure_groups_bars_and_escapes_tokens():
    fig = fc.weight_rows_figure(["<i>a</i>", "b"], {"softmax": [0.25, 0.75], "linear": [0.5, 0.5]})
    assert fig.layout.barmode == "group" and len(fig.data) == 2
    assert list(fig.data[0].y) == [0.25, 0.75]
    assert fig.data[0].x[0].startswith("0: ") and "<i>" not in fig.data[0].x[0]
    assert tuple(fig.layout.yaxis.range) == (0, 1)
    with pytest.raises(ValueError):
        fc.weight_rows_figure(["a"], {"s": [0.5, 0.5]})

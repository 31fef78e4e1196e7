"""Figure builders of the multi-head lab, tested as data (fig.data / fig.layout)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.labs.multihead import cost_vs_heads
from attention_ui.figures import heatmaps
from attention_ui.figures.base import AxisText
from attention_ui.multihead.figures import (
    CHART_SERIES,
    CHOSEN_COLOR,
    add_head_boundaries,
    cost_vs_heads_figure,
    head_dim_figure,
)


def test_head_dim_bars_are_d_model_over_h_and_mark_the_choice() -> None:
    fig = head_dim_figure(24, (1, 2, 3, 4, 6, 8, 12, 24), 6, axes=AxisText("<h>", "d_k"))
    bar = fig.data[0]
    assert list(bar.x) == ["1", "2", "3", "4", "6", "8", "12", "24"]
    assert list(bar.y) == [24, 12, 8, 6, 4, 3, 2, 1]
    colors = list(bar.marker.color)
    assert colors.count(CHOSEN_COLOR) == 1 and colors[4] == CHOSEN_COLOR
    assert fig.layout.xaxis.title.text == "&lt;h&gt;"  # labels are escaped
    assert fig.layout.xaxis.type == "category"


def test_head_dim_refuses_non_divisors() -> None:
    with pytest.raises(ValueError):
        head_dim_figure(10, (1, 3), 1)
    with pytest.raises(ValueError):
        head_dim_figure(10, (), 1)


@pytest.mark.parametrize(("heads", "width"), [(1, 8), (4, 2), (3, 5)])
def test_head_boundaries_sit_between_head_blocks(heads: int, width: int) -> None:
    n = 3
    fig = heatmaps.feature_heatmap(np.zeros((n, heads * width)), ["a", "b", "c"])
    add_head_boundaries(fig, heads, width, "x")
    xs = sorted(s.x0 for s in fig.layout.shapes)
    assert xs == [i * width - 0.5 for i in range(1, heads)]
    assert all(s.x0 == s.x1 for s in fig.layout.shapes)  # vertical lines
    fig2 = heatmaps.feature_heatmap(np.zeros((heads * width, 2)), [str(i) for i in range(heads * width)])
    add_head_boundaries(fig2, heads, width, "y")
    assert sorted(s.y0 for s in fig2.layout.shapes) == [i * width - 0.5 for i in range(1, heads)]
    with pytest.raises(ValueError):
        add_head_boundaries(fig, heads, width, "z")


def test_cost_chart() -> None:
    n, d = 16, 8
    costs = cost_vs_heads(n, d)
    fig = cost_vs_heads_figure(costs, {s: f"<{s}>" for s in CHART_SERIES}, axes=AxisText("heads h", "log"))
    assert [tr.name for tr in fig.data] == [f"&lt;{s}&gt;" for s in CHART_SERIES]
    assert fig.layout.yaxis.type == "log"
    assert list(fig.data[0].x) == ["1", "2", "4", "8"]
    assert list(fig.data[0].y) == [4 * d * d] * 4  # parameters: constant in h
    assert list(fig.data[1].y) == [8 * n * d * d + 4 * n * n * d] * 4  # matmul FLOPs: constant too
    assert list(fig.data[2].y) == [6 * h * n * n for h in (1, 2, 4, 8)]  # softmax + scale: grow with h
    assert list(fig.data[3].y) == [h * n * n for h in (1, 2, 4, 8)]
    with pytest.raises(ValueError):
        cost_vs_heads_figure((), {})

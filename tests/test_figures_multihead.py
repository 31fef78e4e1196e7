"""Figure builders of the multi-head lab, tested as data (fig.data / fig.layout)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.labs.multihead import cost_vs_heads
from attention_ui.figures import heatmaps
from attention_ui.figures.multihead import (
    CHART_SERIES,
    CHOSEN_COLOR,
    COST_COLUMNS,
    add_head_boundaries,
    cost_frame,
    cost_series,
    cost_vs_heads_figure,
    head_dim_figure,
)


def test_head_dim_bars_are_d_model_over_h_and_mark_the_choice() -> None:
    fig = head_dim_figure(24, (1, 2, 3, 4, 6, 8, 12, 24), 6, x_title="<h>", y_title="d_k")
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


def test_cost_frame_has_one_row_per_h_and_renamed_columns() -> None:
    costs = cost_vs_heads(10, 8)
    labels = {c: c.upper() for c in COST_COLUMNS}
    frame = cost_frame(costs, labels)
    assert list(frame.columns) == [c.upper() for c in COST_COLUMNS]
    assert list(frame["HEADS"]) == [1, 2, 4, 8]
    assert list(frame["D_K"]) == [8, 4, 2, 1]
    # Hand counts for n = 10, d_model = 8: params 4·64, projections 3·2·10·8·8.
    assert set(frame["PARAMS_TOTAL"]) == {256}
    assert set(frame["FLOPS_PROJECTIONS"]) == {3840}
    assert list(frame["ATTENTION_MATRIX_ELEMENTS"]) == [100, 200, 400, 800]


def test_cost_series_and_chart() -> None:
    n, d = 16, 8
    costs = cost_vs_heads(n, d)
    series = cost_series(costs)
    assert series["params_total"] == [4 * d * d] * 4
    assert series["flops_matmul"] == [8 * n * d * d + 4 * n * n * d] * 4
    assert series["flops_softmax_scale"] == [6 * h * n * n for h in (1, 2, 4, 8)]
    fig = cost_vs_heads_figure(costs, {s: f"<{s}>" for s in CHART_SERIES}, y_title="log")
    assert [tr.name for tr in fig.data] == [f"&lt;{s}&gt;" for s in CHART_SERIES]
    assert fig.layout.yaxis.type == "log"
    assert list(fig.data[0].x) == ["1", "2", "4", "8"]
    assert list(fig.data[3].y) == [h * n * n for h in (1, 2, 4, 8)]
    with pytest.raises(ValueError):
        cost_vs_heads_figure((), {})

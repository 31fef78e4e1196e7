"""The layouts several lab charts share (attention_ui/figures/base.legend_above_layout and
cost.block_grid_layout), tested through fig.layout, and that the charts folded onto them use them."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go

from attention_ui.block import figures as block
from attention_ui.cost import ring_figures as ring
from attention_ui.figures import base
from attention_ui.figures import cost as fc
from attention_ui.figures.base import AxisText
from attention_ui.lookalikes import figures as lookalikes
from attention_ui.lookalikes import ssm_figures as ssm
from attention_ui.multihead import figures as multihead


def test_legend_above_layout_titles_escaped_axes_extra_and_legend_room() -> None:
    fig = base.legend_above_layout(
        go.Figure(), "n <b>", "y & z", height=300, yaxis=dict(rangemode="tozero"), top=20, barmode="group"
    )
    lay = fig.layout
    assert lay.xaxis.title.text == "n &lt;b&gt;" and lay.yaxis.title.text == "y &amp; z"
    assert lay.yaxis.rangemode == "tozero" and lay.barmode == "group"
    assert (lay.margin.l, lay.margin.r, lay.margin.t, lay.margin.b) == (10, 10, 20, 10)
    assert (lay.legend.orientation, lay.legend.yanchor, lay.legend.y) == ("h", "bottom", 1.02)
    assert (lay.legend.xanchor, lay.legend.x) == ("left", 0)
    assert lay.height == 300 and lay.plot_bgcolor == "rgba(0,0,0,0)"


def test_the_folded_charts_share_the_legend_above_the_plot() -> None:
    figs = [
        block.stage_figure(["a", "b"], [1.0, 2.0], [True, False]),
        ssm.past_weights_figure(["a", "b"], {"m": [0.5, 0.5]}, axes=AxisText("s", "w")),
        fc.weight_rows_figure(["a", "b"], {"softmax": [0.4, 0.6]}),
        lookalikes.cost_figure(np.array([1, 10]), np.array([1.0, 2.0]), np.array([2.0, 1.0]), 4, 4),
        multihead.cost_vs_heads_figure(
            [SimpleNamespace(heads=h, **dict.fromkeys(multihead.CHART_SERIES, 8)) for h in (1, 2)], {}
        ),
    ]
    for fig in figs:
        assert fig.layout.legend.to_plotly_json() == base.LEGEND_ABOVE
        assert fig.layout.margin.l == 10 and fig.layout.yaxis.title.text


def test_block_grid_layout_square_cells_row_0_on_top_both_axes_ticked() -> None:
    fig = fc.block_grid_layout(go.Figure(), "key <tile>", "query", 300, tickmode="linear", dtick=2)
    x, y = fig.layout.xaxis, fig.layout.yaxis
    assert x.title.text == "key &lt;tile&gt;" and y.title.text == "query"
    assert y.scaleanchor == "x" and y.autorange == "reversed" and x.constrain == "domain"
    assert x.dtick == y.dtick == 2 and not x.showgrid and not y.showgrid
    assert fig.layout.height == 300
    sched = ring.schedule_figure(
        np.zeros((3, 3), int), np.ones((3, 3), bool), axes=AxisText("step", "device"),
        block_word="b", computed_word="c", skipped_word="s",
    )  # fmt: skip
    assert sched.layout.xaxis.side == "top" and sched.layout.yaxis.scaleanchor == "x"
    tiles = fc.tile_grid_figure(np.ones((2, 2), bool), 8, 4)
    assert tiles.layout.yaxis.autorange == "reversed" and tiles.layout.yaxis.scaleanchor == "x"

"""The heads page's figure builders (attention_ui/heads/figures.py), tested as data."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attention_ui.figures.base import DIVERGING_SCALE, AxisText
from attention_ui.heads import figures as fh


def test_head_map_signed_is_centred_on_zero_and_clickable():
    grid = np.array([[-2.0, 1.0], [0.5, 0.0]])
    fig = fh.head_map(grid, (1, 0), value_title="part", signed=True)
    heat, cells = fig.data[0], fig.data[1]
    assert heat.zmid == 0 and heat.zmin == -2.0 and heat.zmax == 2.0
    assert heat.colorscale == go.Heatmap(colorscale=DIVERGING_SCALE).colorscale
    assert [list(c[:2]) for c in cells.customdata] == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert fig.layout.shapes[0].x0 == -0.5 and fig.layout.shapes[0].y0 == 0.5  # the frame on (1, 0)
    unsigned = fh.head_map(grid, (0, 0), value_title="kl")
    assert unsigned.data[0].zmid is None and unsigned.data[0].colorscale != heat.colorscale


def test_lens_figure():
    fig = fh.lens_figure([0.1, 0.5, 0.9], axes=AxisText("after layer", "p"), name="<b>x</b>")
    assert list(fig.data[0].x) == [0, 1, 2] and list(fig.data[0].y) == [0.1, 0.5, 0.9]
    assert "<b>" not in fig.data[0].name
    assert tuple(fig.layout.yaxis.range) == (0, 1.02)


def test_before_after_bars():
    fig = fh.before_after(
        ["a", "b"], [0.6, 0.3], [0.2, 0.7], before_name="before", after_name="after", axes=AxisText("p")
    )
    assert len(fig.data) == 2 and list(fig.data[0].x) == [0.6, 0.3] and list(fig.data[1].x) == [0.2, 0.7]
    assert list(fig.layout.yaxis.ticktext) == ["1 a", "2 b"]


def test_loss_lines_with_a_marker():
    fig = fh.loss_lines({"full": [1, 2, 3], "window": [1, 4, 5]}, {"full": "a", "window": "b"}, axes=AxisText("x", "y"), marker_x=1, marker_name="m", x_start=2)  # fmt: skip
    assert list(fig.data[0].x) == [2, 3, 4] and list(fig.data[1].y) == [1, 4, 5]
    assert fig.layout.shapes[0].x0 == 1 and fig.layout.annotations[0].text == "m"


def test_the_three_mask_runs_differ_in_dash_as_well_as_colour():
    """Issue 33: the sink experiment's curves coincide up to the window and run close after it."""
    runs = ("full", "window", "sinks")
    fig = fh.loss_lines({r: [1.0, 2.0] for r in runs}, {r: r for r in runs}, axes=AxisText("x", "y"))
    dashes = [tr.line.dash for tr in fig.data]
    colours = [tr.line.color for tr in fig.data]
    assert len(set(dashes)) == 3 and len(set(colours)) == 3


def test_qk_scatter_joins_each_query_to_its_key_and_escapes_labels():
    q = np.array([[0.0, 0.0], [1.0, 1.0]])
    k = np.array([[2.0, 0.0], [3.0, 3.0]])
    fig = fh.qk_scatter(
        q, k, [1, 0], ["<img src=x>", "b"], query_name="q", key_name="k", axes=AxisText("1", "2")
    )
    links, queries, keys = fig.data
    assert list(links.x) == [0.0, 3.0, None, 1.0, 2.0, None]
    assert list(queries.x) == [0.0, 1.0] and list(keys.y) == [0.0, 3.0]
    assert all("<img" not in c for c in queries.customdata)
    assert fig.layout.yaxis.scaleanchor == "x"


def test_the_ablation_bars_name_their_candidates() -> None:
    """The heads page's bars (its first view draws none: tests/test_app_heads.py checks the rest)."""
    from attention_ui.heads import figures as fh

    fig = fh.before_after(["猫", "犬"], [0.5, 0.2], [0.1, 0.6], before_name="b", after_name="a",
                          axes=AxisText("probability", "candidate"))  # fmt: skip
    assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == ("probability", "candidate")

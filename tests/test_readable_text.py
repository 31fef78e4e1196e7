"""figures.base.readable_text writes the chart text colours into the figure's dicts (issue 24, point 11:
the graph-object path took ~20 ms per chart). It must give exactly what that path gives."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from attention_ui.figures import base, decoder, heatmaps


def _figures() -> dict[str, object]:
    """name -> a function building the figure (each test builds only its own, twice)."""
    n = 5
    tokens = [f"t{i}" for i in range(n)]
    causal = np.tril(np.ones((n, n), bool))

    def subplots() -> go.Figure:
        sub = make_subplots(rows=1, cols=2)
        sub.add_trace(go.Scatter(x=[0, 1], y=[1, 2], name="a"), row=1, col=1)
        sub.add_trace(go.Bar(x=[0, 1], y=[3, 1], marker=dict(color=[0, 1], showscale=True)), row=1, col=2)
        sub.add_annotation(text="note", x=0, y=1)
        sub.add_annotation(text="red", x=1, y=2, font=dict(color="#ff0000"))  # its own colour stays
        return sub

    return {
        "weights": lambda: heatmaps.attention_heatmap(
            causal / n, tokens, kind="weights", allowed=causal, title="w"
        ),
        "no scale": lambda: go.Figure(go.Heatmap(z=[[1, 2]], showscale=False)),
        "bars": lambda: decoder.next_token_bars(["a", "b"], [0.6, 0.4], chosen=0),
        "subplots": subplots,
        "coloraxis": lambda: go.Figure(
            go.Heatmap(z=[[1, 2]], coloraxis="coloraxis"), layout=dict(coloraxis=dict(cmin=0))
        ),
        "pie": lambda: go.Figure(go.Pie(values=[1, 2])),
        "legend set": lambda: go.Figure(
            go.Scatter(y=[1]), layout=dict(legend=dict(font=dict(color="#123456")))
        ),
    }


@pytest.mark.parametrize("name", list(_figures()))
def test_the_dict_path_gives_what_the_graph_object_path_gives(name):
    build = _figures()[name]
    fast, slow = build(), build()
    base.readable_text(fast)
    base._readable_text_objects(slow)
    assert fast.to_json() == slow.to_json()  # what st.plotly_chart sends
    assert fast.layout.font.color == base.AXIS_TEXT_COLOR  # and the graph objects see it


def test_colours_already_set_are_kept():
    fig = _figures()["legend set"]()
    base.readable_text(fig)
    assert (
        fig.layout.legend.font.color == "#123456" and fig.layout.xaxis.tickfont.color == base.AXIS_TEXT_COLOR
    )

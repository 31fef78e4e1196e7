"""Figures of the heads page: head maps (layers × heads, clickable), the logit lens, the prediction
before and after an ablation, losses per position, and queries and keys in one picture.

Pure builders: arrays and translated labels in, a ``go.Figure`` out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_ui.figures.base import DIVERGING_SCALE, PLAIN_TEMPLATE, TITLE_BAND_PX, AxisText, escape_label
from attention_ui.figures.decoder import OTHER_COLOR, SELECTED_COLOR, head_grid

QUERY_COLOR = "#1f77b4"
KEY_COLOR = "#d95f02"
# The three mask runs share their losses up to the window, then run close: a dash pattern of its own
# (with the colour) keeps each line visible where another lies on it, in print and for colour-blind eyes.
RUN_DASHES = {"full": "solid", "window": "dash", "sinks": "dot"}
RUN_COLORS = {
    "full": "#333333",
    "window": "#d62728",
    "sinks": "#1f77b4",
    "first": "#1f77b4",
    "second": "#d95f02",
}
LINE_HEIGHT_PX = 320


def head_map(grid: np.ndarray, selected: tuple[int, int], *, value_title: str, signed: bool = False,
             **titles) -> go.Figure:  # fmt: skip
    """:func:`..decoder.head_grid` (click a cell to pick a head); ``signed``: a diverging scale
    centred on 0, for contributions that can be negative."""
    fig = head_grid(grid, selected, value_title=value_title, **titles)
    if signed:
        bound = float(np.max(np.abs(grid))) or 1.0
        fig.data[0].update(colorscale=DIVERGING_SCALE, zmid=0, zmin=-bound, zmax=bound)
    return fig


def lens_figure(target_p: Sequence[float], *, axes: AxisText, name: str) -> go.Figure:
    """The final top token's probability after each layer (layer 0 on the left)."""
    p = [float(v) for v in target_p]
    fig = go.Figure(
        go.Scatter(x=list(range(len(p))), y=p, mode="lines+markers", name=escape_label(name),
                   line=dict(color=SELECTED_COLOR), hovertemplate="%{x}: %{y:.4f}<extra></extra>")
    )  # fmt: skip
    fig.update_layout(
        template=PLAIN_TEMPLATE, height=LINE_HEIGHT_PX, margin=dict(l=60, r=10, t=10, b=50),
        xaxis=axes.x_axis(dtick=2),
        yaxis=axes.y_axis(range=[0, 1.02]),
    )  # fmt: skip
    return fig


def before_after(labels: Sequence[str], before: Sequence[float], after: Sequence[float], *,
                 before_name: str, after_name: str, axes: AxisText) -> go.Figure:  # fmt: skip
    """Grouped horizontal bars: each listed token's probability before and after the ablation."""
    names = [f"{i + 1} {escape_label(lab, 16)}" for i, lab in enumerate(labels)]
    y = list(range(len(names)))
    fig = go.Figure(
        [
            go.Bar(x=[float(v) for v in before], y=y, orientation="h", name=escape_label(before_name),
                   marker=dict(color=OTHER_COLOR), customdata=names, hovertemplate="%{customdata}: %{x:.4f}"),
            go.Bar(x=[float(v) for v in after], y=y, orientation="h", name=escape_label(after_name),
                   marker=dict(color=SELECTED_COLOR), customdata=names, hovertemplate="%{customdata}: %{x:.4f}"),
        ]
    )  # fmt: skip
    top = max([*before, *after, 0.01])
    fig.update_layout(
        template=PLAIN_TEMPLATE, barmode="group", height=int(110 + 34 * len(names)),
        margin=dict(l=130 + (TITLE_BAND_PX if axes.y else 0), r=20, t=30, b=50),
        legend=dict(orientation="h", y=1.02, yanchor="bottom"),
        xaxis=axes.x_axis(range=[0, min(1.0, top * 1.15 + 0.02)]),
        yaxis=axes.y_axis(autorange="reversed", tickmode="array", tickvals=y, ticktext=names),
    )  # fmt: skip
    return fig


def loss_lines(series: dict[str, Sequence[float]], names: dict[str, str], *, axes: AxisText,
               marker_x: float | None = None, marker_name: str = "", x_start: int = 0) -> go.Figure:  # fmt: skip
    """One line per run: the next-token loss at each position (``x_start`` + index); an optional
    vertical line at ``marker_x`` (where the first token leaves the window, say)."""
    fig = go.Figure()
    for key, values in series.items():
        v = [float(x) for x in values]
        fig.add_trace(go.Scatter(
            x=list(range(x_start, x_start + len(v))), y=v, mode="lines", name=escape_label(names[key]),
            line=dict(color=RUN_COLORS.get(key, OTHER_COLOR), width=2.2 if key in RUN_DASHES else 1.6,
                      dash=RUN_DASHES.get(key, "solid")),
            hovertemplate="%{x}: %{y:.3f}<extra>" + escape_label(names[key]) + "</extra>",
        ))  # fmt: skip
    shapes = []
    if marker_x is not None:
        shapes.append(dict(type="line", x0=marker_x, x1=marker_x, yref="y domain", y0=0, y1=1,
                           line=dict(color="#888888", dash="dash", width=1.5)))  # fmt: skip
    fig.update_layout(
        template=PLAIN_TEMPLATE, height=LINE_HEIGHT_PX + 40, margin=dict(l=60, r=10, t=40, b=50), shapes=shapes,
        legend=dict(orientation="h", y=1.02, yanchor="bottom"),
        xaxis=axes.x_axis(), yaxis=axes.y_axis(),
    )  # fmt: skip
    if marker_x is not None and marker_name:
        fig.add_annotation(x=marker_x, y=1, yref="y domain", text=escape_label(marker_name), showarrow=False,
                           xanchor="left", yanchor="top", font=dict(color="#5c5f6e"))  # fmt: skip
    return fig


def qk_scatter(queries: np.ndarray, keys: np.ndarray, strongest: Sequence[int], labels: Sequence[str], *,
               query_name: str, key_name: str, axes: AxisText) -> go.Figure:  # fmt: skip
    """Queries (circles) and keys (squares) in one plane; a grey segment joins each query to its
    most-weighted key. Trace order: segments, queries, keys."""
    q, k = np.asarray(queries, float), np.asarray(keys, float)
    xs: list = []
    ys: list = []
    for i, j in enumerate(strongest):
        xs += [q[i, 0], k[int(j), 0], None]
        ys += [q[i, 1], k[int(j), 1], None]
    hover = [f"#{i} {escape_label(lab, 16)}" for i, lab in enumerate(labels)]
    fig = go.Figure(
        [
            go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="#bbbbbb", width=1), hoverinfo="skip",
                       showlegend=False, name="links"),
            go.Scatter(x=q[:, 0].tolist(), y=q[:, 1].tolist(), mode="markers", name=escape_label(query_name),
                       marker=dict(color=QUERY_COLOR, size=9, symbol="circle"), customdata=hover,
                       hovertemplate="%{customdata}<extra>" + escape_label(query_name) + "</extra>"),
            go.Scatter(x=k[:, 0].tolist(), y=k[:, 1].tolist(), mode="markers", name=escape_label(key_name),
                       marker=dict(color=KEY_COLOR, size=9, symbol="square"), customdata=hover,
                       hovertemplate="%{customdata}<extra>" + escape_label(key_name) + "</extra>"),
        ]
    )  # fmt: skip
    fig.update_layout(
        template=PLAIN_TEMPLATE, height=440, margin=dict(l=60, r=10, t=40, b=50),
        legend=dict(orientation="h", y=1.02, yanchor="bottom"),
        xaxis=axes.x_axis(zeroline=False),
        yaxis=axes.y_axis(zeroline=False, scaleanchor="x", scaleratio=1),
    )  # fmt: skip
    return fig

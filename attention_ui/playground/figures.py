"""Figures of the playground beyond its heatmaps: the cell explainer's bar charts, and the way back
from a click on a heatmap to the cell under it.

Pure (no Streamlit). The step-by-step maps themselves are :mod:`attention_ui.figures.heatmaps`.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attention_ui.figures import base


def row_output_figure(
    weights: np.ndarray, output: np.ndarray, tokens, *, weights_title: str, output_title: str
) -> go.Figure:
    """Two bar charts: query i's weights over the keys, and the resulting output vector."""
    n, d_v = len(weights), len(output)
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=(base.escape_label(weights_title), base.escape_label(output_title))
    )
    fig.add_trace(
        go.Bar(
            x=list(range(n)),
            y=np.asarray(weights, dtype=float).tolist(),
            marker_color="#3b528b",
            customdata=base.hover_labels(tokens),
            hovertemplate="%{customdata}: %{y:.4f}<extra></extra>",
            showlegend=False,
        ),
        row=1,
        col=1,
    )
    out = np.asarray(output, dtype=float)
    fig.add_trace(
        go.Bar(
            x=list(range(d_v)),
            y=out.tolist(),
            marker_color=["#b2182b" if v >= 0 else "#2166ac" for v in out],
            hovertemplate="d%{x}: %{y:.4f}<extra></extra>",
            showlegend=False,
        ),
        row=1,
        col=2,
    )
    shown = base.tick_positions(n)
    fig.update_xaxes(
        tickmode="array",
        tickvals=shown,
        ticktext=[base.token_tick_labels(tokens)[k] for k in shown],
        row=1,
        col=1,
    )
    fig.update_yaxes(range=[0, 1], row=1, col=1)
    fig.update_xaxes(
        tickmode="array", tickvals=list(range(d_v)), ticktext=[f"d{k}" for k in range(d_v)], row=1, col=2
    )
    fig.update_layout(height=300, margin=dict(l=10, r=10, t=40, b=10), template=base.PLAIN_TEMPLATE)
    fig.update_xaxes(automargin=True)  # drawn on demand only: Plotly may size its margins itself
    fig.update_yaxes(automargin=True)
    return fig


def cell_from_point(point: dict, n_rows: int, n_cols: int) -> tuple[int, int] | None:
    """(row, column) of a Plotly selection point on a matrix drawn at integer positions.

    Cells sit at x = column, y = row; points outside the matrix or without numbers give None.
    """
    try:
        x, y = float(point["x"]), float(point["y"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (np.isfinite(x) and np.isfinite(y)):
        return None
    row, col = int(round(y)), int(round(x))
    if 0 <= row < n_rows and 0 <= col < n_cols:
        return row, col
    return None


CELL_OUTLINE = "#111111"  # the chosen cell's frame: 18.9:1 on white, 5.4:1 on the darkest blue


def outline_cell(fig: go.Figure, row: int, col: int) -> go.Figure:
    """``fig`` with a thick dark frame around cell (``row``, ``col``) of its n×n map (the cell the
    explainer shows); cells sit at integer positions, also on the category axes of large maps."""
    fig.add_shape(
        type="rect",
        x0=col - 0.5,
        x1=col + 0.5,
        y0=row - 0.5,
        y1=row + 0.5,
        line=dict(color=CELL_OUTLINE, width=3),
        fillcolor="rgba(0,0,0,0)",
        layer="above",
        name="chosen cell",
    )
    return fig

"""Figures of the training lab: the live loss and accuracy curves, every head's map, the runs an
experiment compares, and the accuracy lost when each head is knocked out.

Pure builders: arrays and translated labels in, a ``go.Figure`` out (tests/test_figures_training.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from attention_ui.figures import heatmaps
from attention_ui.figures.base import (
    DEFAULT_HOVER,
    LEGEND_ABOVE,
    PLAIN_TEMPLATE,
    AxisText,
    HoverText,
    escape_label,
)

LOSS_COLOR, ACCURACY_COLOR = "#0068c9", "#d95f02"
# The runs of an experiment, in order (first run dark blue, second orange, ... distinct in CVD sims).
RUN_COLORS = ("#0068c9", "#d95f02", "#1b9e77", "#7570b3", "#666666", "#e7298a")
BAND_COLORS = ("#7570b3", "#d95f02")  # a plateau, then a drop
CURVE_HEIGHT_PX = 320
PERCENT_TICKS = (0, 25, 50, 75, 100)
BARS_HEIGHT_PX = 300


def curves(
    steps: Sequence[int],
    losses: Sequence[float],
    accuracy: Sequence[float],
    *,
    total: int,
    x_title: str,
    loss_title: str,
    accuracy_title: str,
    loss_axis: str | None = None,
    accuracy_axis: str | None = None,
) -> go.Figure:
    """The training loss (left axis) and the held-out accuracy (right axis, 0–100 %) against the
    step. The x axis runs to ``total`` from the start, so a live curve grows into a fixed frame.
    ``*_title`` name the lines (legend, hover); ``*_axis`` are the axes' shorter titles (default: the
    same), which must fit beside a phone's plot. Trace order: loss, accuracy."""
    x = [int(s) for s in steps]
    if not (len(x) == len(losses) == len(accuracy)):
        raise ValueError("one loss and one accuracy per step are needed")
    loss = [float(v) for v in losses]
    acc = [100.0 * float(v) for v in accuracy]
    fig = go.Figure(
        [
            go.Scatter(
                x=x, y=loss, mode="lines", name=escape_label(loss_title), line=dict(color=LOSS_COLOR, width=2),
                hovertemplate="%{x}: %{y:.4f}<extra>" + escape_label(loss_title) + "</extra>",
            ),
            go.Scatter(
                x=x, y=acc, mode="lines", name=escape_label(accuracy_title), yaxis="y2",
                line=dict(color=ACCURACY_COLOR, width=2, dash="dot"),
                hovertemplate="%{x}: %{y:.1f} %<extra>" + escape_label(accuracy_title) + "</extra>",
            ),
        ]
    )  # fmt: skip
    top = max(loss) * 1.05 if loss and np.isfinite(max(loss)) and max(loss) > 0 else 1.0
    fig.update_layout(
        template=PLAIN_TEMPLATE,
        height=CURVE_HEIGHT_PX,
        margin=dict(l=60, r=60, t=30, b=50),
        legend=LEGEND_ABOVE,
        xaxis=dict(title=dict(text=escape_label(x_title)), range=[0, max(1, int(total))]),
        yaxis=dict(title=dict(text=escape_label(loss_axis or loss_title)), range=[0, top]),
        yaxis2=dict(
            title=dict(text=escape_label(accuracy_axis or accuracy_title)), overlaying="y", side="right", range=[0, 100],
            tickmode="array", tickvals=PERCENT_TICKS, ticktext=[f"{v} %" for v in PERCENT_TICKS], showgrid=False,
        ),
    )  # fmt: skip
    return fig


def head_maps(
    attention: np.ndarray,
    tokens: Sequence[str],
    *,
    panel_title: str,
    hover: HoverText = DEFAULT_HOVER,
) -> go.Figure:
    """Every head's attention map ``[L, H, n, n]`` on one 0..1 scale: one row of panels per layer.
    ``panel_title`` is formatted with ``layer`` and ``head``."""
    a = np.asarray(attention, dtype=float)
    if a.ndim != 4 or a.shape[2] != a.shape[3] or a.shape[2] != len(tokens):
        raise ValueError("maps [layers, heads, n, n] with one token per row are needed")
    n_layers, n_heads = a.shape[:2]
    titles = [panel_title.format(layer=lay, head=h) for lay in range(n_layers) for h in range(n_heads)]
    return heatmaps.heads_small_multiples(
        a.reshape(n_layers * n_heads, *a.shape[2:]), tokens, hover=hover, max_cols=n_heads, titles=titles
    )


def runs_lines(
    series: Mapping[str, Sequence[float]],
    *,
    axes: AxisText,
    log_y: bool = False,
    dashed: Sequence[str] = (),
    bands: Sequence[tuple[float, float, str]] = (),
) -> go.Figure:
    """One line per run (``series``: its translated name -> a value per step, step 1 first); the
    ``dashed`` names are drawn dashed (a second setting beside the first's seeds). ``bands``: shaded
    stretches of steps ``(first, last, translated label)``, in order (a plateau, then a drop)."""
    fig = go.Figure()
    for i, (x0, x1, label) in enumerate(bands):
        fig.add_vrect(
            x0=x0, x1=x1, fillcolor=BAND_COLORS[i % len(BAND_COLORS)], opacity=0.18, line_width=0, layer="below",
            annotation_text=escape_label(label), annotation_position="top left",
        )  # fmt: skip
    for i, (name, values) in enumerate(series.items()):
        v = [float(x) for x in values]
        fig.add_trace(
            go.Scatter(
                x=list(range(1, len(v) + 1)), y=v, mode="lines", name=escape_label(name),
                line=dict(color=RUN_COLORS[i % len(RUN_COLORS)], width=1.8, dash="dash" if name in dashed else None),
                hovertemplate="%{x}: %{y:.4f}<extra>" + escape_label(name) + "</extra>",
            )
        )  # fmt: skip
    fig.update_layout(
        template=PLAIN_TEMPLATE, height=CURVE_HEIGHT_PX, margin=dict(l=60, r=10, t=30, b=50), legend=LEGEND_ABOVE,
        xaxis=axes.x_axis(),
        yaxis=axes.y_axis(type="log" if log_y else "linear"),
    )  # fmt: skip
    return fig


def by_position(
    series: Mapping[str, Sequence[float]],
    *,
    axes: AxisText,
    dashed: Sequence[str] = (),
    percent: bool = False,
) -> go.Figure:
    """One line with markers per series (its translated name -> a value per position, position 0
    first, each between 0 and 1); ``dashed`` names drawn dashed. ``percent``: shown as 0–100 %."""
    scale = 100.0 if percent else 1.0
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        v = [scale * float(x) for x in values]
        fig.add_trace(
            go.Scatter(
                x=list(range(len(v))), y=v, mode="lines+markers", name=escape_label(name),
                line=dict(color=RUN_COLORS[i % len(RUN_COLORS)], width=1.8, dash="dash" if name in dashed else None),
                hovertemplate="%{x}: %{y:.1f}" + (" %" if percent else "") + "<extra>" + escape_label(name) + "</extra>",
            )
        )  # fmt: skip
    yaxis = axes.y_axis(range=[0, 105], ticksuffix=" %") if percent else axes.y_axis(range=[0, 1.05])
    fig.update_layout(
        template=PLAIN_TEMPLATE, height=CURVE_HEIGHT_PX, margin=dict(l=60, r=10, t=30, b=50), legend=LEGEND_ABOVE,
        xaxis=axes.x_axis(dtick=1), yaxis=yaxis,
    )  # fmt: skip
    return fig


def bars(
    labels: Sequence[str],
    groups: Mapping[str, Sequence[float]],
    *,
    y_title: str,
    percent: bool = False,
    y_range: tuple[float, float] | None = None,
    x_title: str | None = None,
) -> go.Figure:
    """Grouped bars: one group per label (already translated), one bar per entry of ``groups``
    (its name -> one value per label). ``percent``: values are fractions, shown as 0–100 %."""
    scale = 100.0 if percent else 1.0
    ticks = [escape_label(x) for x in labels]
    fig = go.Figure()
    for i, (name, values) in enumerate(groups.items()):
        v = [scale * float(x) for x in values]
        if len(v) != len(ticks):
            raise ValueError("one value per label is needed")
        fig.add_trace(
            go.Bar(
                x=list(range(len(ticks))), y=v, name=escape_label(name), marker=dict(color=RUN_COLORS[i % len(RUN_COLORS)]),
                customdata=ticks, texttemplate="%{y:.1f}" + (" %" if percent else "") if percent else "%{y:.3g}",
                hovertemplate="%{customdata}: %{y:.4g}" + (" %" if percent else "") + "<extra>" + escape_label(name) + "</extra>",
            )
        )  # fmt: skip
    yaxis = dict(title=dict(text=escape_label(y_title)))
    if percent:
        yaxis.update(range=[0, 105], ticksuffix=" %")
    elif y_range is not None:
        yaxis.update(range=list(y_range))
    fig.update_layout(
        template=PLAIN_TEMPLATE, barmode="group", height=BARS_HEIGHT_PX, margin=dict(l=60, r=10, t=30, b=60),
        legend=LEGEND_ABOVE, yaxis=yaxis, showlegend=len(groups) > 1,
        xaxis=dict(tickmode="array", tickvals=list(range(len(ticks))), ticktext=ticks,
                   title=dict(text=escape_label(x_title)) if x_title else None),
    )  # fmt: skip
    return fig

"""Figure builders for the block lab: the residual stream's size stage by stage, its size with
depth (Pre-LN against Post-LN) and the FLOPs of one block against n with the crossover marked.

No Streamlit here. Labels passed in are plain text and are escaped here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from attention_ui.figures.base import AxisText, add_named_series, escape_label, legend_above_layout
from attention_ui.figures.cost import loglog_figure

STREAM_COLOR = "#1b9e77"
SUBLAYER_COLOR = "#7570b3"
DASHES = ("solid", "dash", "dot")

# The charts' English axis words (pages pass translated ones).
STAGE_AXES = AxisText("RMS", "stage")
DEPTH_AXES = AxisText("layer", "RMS")
FLOPS_AXES = AxisText("n", "FLOPs")


def _layout(fig: go.Figure, axes: AxisText, height: int) -> go.Figure:
    return legend_above_layout(fig, axes.x, axes.y, height=height, yaxis=dict(rangemode="tozero"))


def stage_figure(
    stages: Sequence[str],
    values: Sequence[float],
    in_stream: Sequence[bool],
    *,
    stream_name: str = "residual stream",
    sublayer_name: str = "sub-layer input/output",
    axes: AxisText = STAGE_AXES,
    height: int = 320,
) -> go.Figure:
    """One horizontal bar per stage of the block, in order from the top, coloured by whether it is the
    residual stream itself or a sub-layer's input/output; the value (x) is the mean RMS of the token
    vectors. The stages' names stand on the y axis, so they read across in any language and width (on
    a phone, upright bars turned the Japanese names on their side)."""
    if not (len(stages) == len(values) == len(in_stream)):
        raise ValueError("one value and one flag per stage")
    labels = [escape_label(s) for s in stages]
    fig = go.Figure()
    for flag, name, colour in ((True, stream_name, STREAM_COLOR), (False, sublayer_name, SUBLAYER_COLOR)):
        names = [lab for lab, f in zip(labels, in_stream, strict=True) if f == flag]
        sizes = [float(v) for v, f in zip(values, in_stream, strict=True) if f == flag]
        fig.add_trace(
            go.Bar(
                x=sizes,
                y=names,
                orientation="h",
                name=escape_label(name),
                marker_color=colour,
                hovertemplate="%{y}<br>%{x:.3f}<extra></extra>",
            )
        )
    legend_above_layout(fig, axes.x, axes.y, height=height, xaxis=dict(rangemode="tozero"))
    fig.update_yaxes(categoryorder="array", categoryarray=labels, autorange="reversed")
    return fig


def depth_figure(
    series: Mapping[str, Sequence[float]], *, axes: AxisText = DEPTH_AXES, height: int = 320
) -> go.Figure:
    """The residual stream's mean RMS after each layer (0 = the input), one line per series."""
    if not series:
        raise ValueError("at least one series is needed")
    fig = go.Figure()
    add_named_series(
        fig,
        series,
        go.Scatter,
        lambda i: dict(mode="lines+markers", line=dict(dash=DASHES[i % len(DASHES)], width=2)),
        "%{x}<br>%{y:.3f}",
    )
    return _layout(fig, axes, height)


def flops_figure(
    ns: Sequence[int],
    series: Mapping[str, Sequence[float]],
    crossover: float | None,
    crossover_label: str,
    *,
    axes: AxisText = FLOPS_AXES,
) -> go.Figure:
    """FLOPs against n on log–log axes (see :func:`attention_ui.figures.cost.loglog_figure`), with a
    dotted vertical line at the n where the n² terms catch up with the linear ones."""
    fig = loglog_figure(ns, series, axes=axes)
    if crossover is not None and crossover > 0:
        fig.add_vline(x=crossover, line=dict(color="#555555", width=1, dash="dot"))
        fig.add_annotation(
            text=escape_label(crossover_label),
            x=math.log10(crossover),
            xref="x",
            y=1,
            yref="y domain",
            yanchor="top",
            xanchor="left",
            showarrow=False,
            font=dict(size=11, color="#555555"),
        )
    return fig

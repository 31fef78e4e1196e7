"""Figure builders for the cost lab: log-log lines against n (bytes or counts) and the tile grid.

No Streamlit here. Labels passed in are plain text and are escaped here (Plotly renders
pseudo-HTML in titles, legends, tick labels and hover text).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from attention_core.labs.cost import format_bytes

from .base import LOG_DECADES, AxisText, add_named_series, escape_label, legend_above_layout, reference_line

COMPUTED_COLOR = "#1b9e77"
SKIPPED_COLOR = "#d9d9d9"

# The charts' English axis words (pages pass translated ones).
LOGLOG_AXES = AxisText("n", "")
TILE_AXES = AxisText("key tile", "query tile")
ROWS_AXES = AxisText("key", "weight")


def block_grid_trace(z: list[list[float]], **kwargs) -> go.Heatmap:
    """A grid of blocks, 1 = computed and 0 = skipped, in the two lab colours, each cell at its integer
    position (row 0 on top is the caller's axis setting); ``kwargs``: text, hover, name."""
    return go.Heatmap(
        z=z,
        x=list(range(len(z[0]))),
        y=list(range(len(z))),
        zmin=0,
        zmax=1,
        colorscale=[[0.0, SKIPPED_COLOR], [0.5, SKIPPED_COLOR], [0.5, COMPUTED_COLOR], [1.0, COMPUTED_COLOR]],
        showscale=False,
        xgap=2,
        ygap=2,
        **kwargs,
    )


def block_grid_layout(fig: go.Figure, x_title: str, y_title: str, side: int, **axis) -> go.Figure:
    """The layout of a :func:`block_grid_trace` map: square cells, row 0 on top, no grid lines,
    ``side`` px high, 10 px margins; ``axis``: tick settings both axes share."""
    fig.update_layout(
        xaxis=dict(
            title=dict(text=escape_label(x_title)), showgrid=False, zeroline=False, constrain="domain", **axis
        ),
        yaxis=dict(
            title=dict(text=escape_label(y_title)),
            autorange="reversed",
            showgrid=False,
            zeroline=False,
            scaleanchor="x",
            **axis,
        ),
        height=side,
        margin=dict(l=10, r=10, t=10, b=10),
        plot_bgcolor="rgba(0,0,0,0)",
    )
    return fig


DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


def unit_columns(t, rows) -> dict[str, list[str]]:
    """Table columns: the memory of each row (``.bytes``) in decimal and in binary units."""
    return {
        t("cost.col_decimal"): [format_bytes(r.bytes, binary=False) for r in rows],
        t("cost.col_binary"): [format_bytes(r.bytes) for r in rows],
    }


def byte_ticks(lo: float, hi: float, binary: bool = True) -> tuple[list[float], list[str]]:
    """Tick positions at whole units (1 B, 1 KiB, 1 MiB, …) plus ×32 steps between them, covering
    [lo, hi]; labels such as ``"32 MiB"``. For a log axis of bytes."""
    if lo <= 0 or hi <= 0:
        raise ValueError("byte ticks need positive bounds")
    base = 1024 if binary else 1000
    span = math.log(hi / lo, base)  # how many whole units the data covers
    if span <= 1.2:
        steps = tuple(2**k for k in range(10)) if binary else (1, 2, 5, 10, 20, 50, 100, 200, 500)
    elif span <= 2.5:
        steps = (1, 4, 16, 64, 256) if binary else (1, 3, 10, 30, 100, 300)
    else:
        steps = (1, 32) if binary else (1, 30)
    vals: list[float] = []
    e_lo = math.floor(math.log(lo, base)) - 1
    e_hi = math.ceil(math.log(hi, base)) + 1
    for e in range(max(0, e_lo), e_hi + 1):
        for s in steps:
            v = s * float(base) ** e
            if lo / 2 <= v <= hi * 2:
                vals.append(v)
    return vals, [format_bytes(v, binary) for v in vals]


def loglog_figure(
    x: Sequence[float],
    series: Mapping[str, Sequence[float]],
    *,
    axes: AxisText = LOGLOG_AXES,
    bytes_axis: bool = False,
    y_hover: str = "%{y:.3s}",
    height: int = 380,
    reference: Mapping[str, float] | None = None,
    x_ticks: Sequence[int] | None = None,
) -> go.Figure:
    """One line per series against ``x``, both axes logarithmic.

    With ``bytes_axis`` the y ticks are byte sizes (1 KiB, 32 KiB, 1 MiB, …) and the hover shows the
    size in binary units. ``reference`` adds labelled horizontal lines (e.g. a GPU's memory).
    ``x_ticks`` puts a tick at each given x, labelled with thousands separators (for a few doublings).
    Values that are not positive (or None) are left out of a line, since a log axis cannot show them.
    """
    if not series:
        raise ValueError("at least one series is needed")
    fig = go.Figure()
    positives: list[float] = []
    for i, (name, ys) in enumerate(series.items()):
        if len(ys) != len(x):
            raise ValueError("every series needs one value per x")
        clean = [float(v) if v is not None and v > 0 else None for v in ys]
        positives += [v for v in clean if v is not None]
        label = escape_label(name)
        hover = (
            [format_bytes(v) if v is not None else "" for v in clean] if bytes_axis else None
        )  # bytes: show "8 MiB" rather than 8.39M
        fig.add_trace(
            go.Scatter(
                x=list(x),
                y=clean,
                mode="lines+markers",
                name=label,
                line=dict(dash=DASHES[i % len(DASHES)], width=2),
                customdata=hover,
                hovertemplate=(
                    f"{label}<br>n = %{{x:,}}<br>"
                    + ("%{customdata}" if bytes_axis else y_hover)
                    + "<extra></extra>"
                ),
            )
        )
    yaxis: dict = dict(LOG_DECADES)
    for name, value in (reference or {}).items():
        # On a log axis Plotly places annotations in log10 units (shapes take data units).
        reference_line(fig, value, name, label_y=math.log10(value), yref="y")
        positives.append(float(value))
    if bytes_axis and positives:
        vals, text = byte_ticks(min(positives), max(positives))
        yaxis.update(tickmode="array", tickvals=vals, ticktext=text)
    else:
        yaxis.update(exponentformat="power")
    xaxis: dict = dict(exponentformat="power", **LOG_DECADES)
    if x_ticks is not None:
        xaxis.update(tickmode="array", tickvals=list(x_ticks), ticktext=[f"{v:,}" for v in x_ticks])
    return legend_above_layout(fig, axes.x, axes.y, height=height, xaxis=xaxis, yaxis=yaxis)


def tile_grid_figure(
    grid: np.ndarray,
    n: int,
    block: int,
    *,
    axes: AxisText = TILE_AXES,
    computed: str = "computed",
    skipped: str = "skipped",
) -> go.Figure:
    """The tiles ``grid [tiles, tiles]`` (True = formed) of n tokens in ``block``-sized tiles, as a
    two-colour heatmap (query tiles as rows, row 0 on top)."""
    grid = np.asarray(grid, dtype=float)
    t = grid.shape[0]
    ranges = [f"{i * block}–{min(n, (i + 1) * block) - 1}" for i in range(t)]
    words = np.where(grid > 0, escape_label(computed), escape_label(skipped))
    custom = [[[ranges[i], ranges[j], words[i, j]] for j in range(t)] for i in range(t)]
    fig = go.Figure(
        block_grid_trace(
            grid.tolist(),
            customdata=custom,
            hovertemplate=(
                f"{escape_label(axes.y)}: %{{customdata[0]}}<br>{escape_label(axes.x)}: %{{customdata[1]}}"
                "<br>%{customdata[2]}<extra></extra>"
            ),
            name="tiles",
        )
    )
    return block_grid_layout(fig, axes.x, axes.y, int(min(420, max(200, 60 + 26 * t))))


def weight_rows_figure(
    keys: Sequence[str],
    rows: Mapping[str, Sequence[float]],
    *,
    axes: AxisText = ROWS_AXES,
    height: int = 300,
) -> go.Figure:
    """One query's attention weights over its keys, one bar group per method (e.g. softmax and
    linear attention). ``keys`` are token labels (escaped here); each row has one weight per key."""
    if not rows:
        raise ValueError("at least one row of weights is needed")
    labels = [f"{i}: {escape_label(k, 16)}" for i, k in enumerate(keys)]
    fig = go.Figure()
    colours = (COMPUTED_COLOR, "#7570b3", "#d95f02")
    if any(len(ws) != len(keys) for ws in rows.values()):
        raise ValueError("every row needs one weight per key")
    add_named_series(
        fig, rows, go.Bar, lambda i: dict(marker_color=colours[i % len(colours)]), "%{x}<br>%{y:.3f}", labels
    )
    return legend_above_layout(
        fig,
        axes.x,
        axes.y,
        height=height,
        xaxis=dict(type="category"),
        yaxis=dict(range=[0, 1]),
        barmode="group",
    )

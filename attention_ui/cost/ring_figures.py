"""Figure builders for the ring attention section of the cost lab: the P × P schedule, one query row's
running max and denominator, and the load per device.

No Streamlit here. Labels passed in are plain text and are escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attention_ui.figures.base import AxisText, add_named_series, escape_label, legend_above_layout
from attention_ui.figures.cost import block_grid_layout, block_grid_trace

ORDER_COLOURS = ("#1b9e77", "#7570b3", "#d95f02")
CELL_TEXT_UP_TO = 12  # block numbers in the cells while they stay readable


def schedule_figure(
    schedule: np.ndarray,
    computed: np.ndarray,
    *,
    axes: AxisText,
    block_word: str,
    computed_word: str,
    skipped_word: str,
) -> go.Figure:
    """``schedule [P, P]`` (block held by device p at step t) as a grid, devices as rows (0 on top),
    steps as columns; green where the block was folded in, grey where it was skipped (wholly
    future). Each cell shows the block's number while P ≤ :data:`CELL_TEXT_UP_TO`."""
    schedule, computed = np.asarray(schedule, int), np.asarray(computed, bool)
    if schedule.shape != computed.shape or schedule.shape[0] != schedule.shape[1]:
        raise ValueError("schedule and computed must both be [P, P]")
    P = schedule.shape[0]
    words = np.where(computed, escape_label(computed_word), escape_label(skipped_word))
    custom = [[[int(schedule[p, t]), words[p, t]] for t in range(P)] for p in range(P)]
    block = escape_label(block_word)
    fig = go.Figure(
        block_grid_trace(
            computed.astype(float).tolist(),
            text=schedule.tolist() if P <= CELL_TEXT_UP_TO else None,
            texttemplate="%{text}" if P <= CELL_TEXT_UP_TO else None,
            textfont=dict(color="#000000", size=12),
            customdata=custom,
            hovertemplate=(
                f"{escape_label(axes.y)} %{{y}}<br>{escape_label(axes.x)} %{{x}}<br>"
                f"{block} %{{customdata[0]}}<br>%{{customdata[1]}}<extra></extra>"
            ),
            name="schedule",
        )
    )
    side = int(min(460, max(220, 70 + 26 * P)))
    block_grid_layout(fig, axes.x, axes.y, side, tickmode="linear", dtick=1 if P <= 8 else 2)
    fig.update_xaxes(side="top")  # the devices' steps read from the top, like a timetable
    return fig


def running_state_figure(
    row_max: Sequence[float],
    row_denom: Sequence[float],
    blocks: Sequence[int],
    *,
    x_title: str,
    max_title: str,
    denom_title: str,
    block_word: str,
    height: int = 380,
) -> go.Figure:
    """One query row's running max m (top) and denominator ℓ (bottom) after each step ``t``;
    ``blocks[t]`` is the block folded in at that step (shown on hover). −inf (nothing allowed yet)
    is left out of the line."""
    if not len(row_max) == len(row_denom) == len(blocks):
        raise ValueError("one max, denominator and block per step")
    steps = list(range(len(row_max)))
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    block = escape_label(block_word)
    for i, (values, title) in enumerate(((row_max, max_title), (row_denom, denom_title)), start=1):
        clean = [float(v) if np.isfinite(v) else None for v in values]
        label = escape_label(title)
        fig.add_trace(
            go.Scatter(
                x=steps,
                y=clean,
                mode="lines+markers",
                name=label,
                line=dict(shape="hv", width=2, color=ORDER_COLOURS[i]),
                customdata=list(blocks),
                hovertemplate=f"{label} = %{{y:.4g}}<br>{block} %{{customdata}}<extra></extra>",
            ),
            row=i,
            col=1,
        )
        fig.update_yaxes(title=dict(text=label), row=i, col=1)
    fig.update_xaxes(tickmode="linear", dtick=1 if len(steps) <= 8 else 2)
    fig.update_xaxes(title=dict(text=escape_label(x_title)), row=2, col=1)
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=10, b=10), showlegend=False)
    return fig


def load_figure(per_device: Mapping[str, Sequence[float]], *, axes: AxisText, height: int = 320) -> go.Figure:
    """Grouped bars, one group per device, one bar per series (blocks folded in, or allowed pairs under
    an ordering)."""
    if not per_device:
        raise ValueError("at least one series is needed")
    fig = go.Figure()
    add_named_series(
        fig,
        per_device,
        go.Bar,
        lambda i: dict(marker_color=ORDER_COLOURS[i % len(ORDER_COLOURS)]),
        f"{escape_label(axes.x)} %{{x}}: %{{y:,}}",
    )
    return legend_above_layout(
        fig,
        axes.x,
        axes.y,
        height=height,
        xaxis=dict(tickmode="linear", dtick=1),
        yaxis=dict(rangemode="tozero"),
        barmode="group",
    )

"""Figure builders for the inference lab: FLOPs per decoding step, cache size against the number of
KV heads, the grouped heads' weights and how earlier outputs change when a token is appended.

No Streamlit here. Labels passed in are plain text and are escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from attention_core.labs.cost import format_bytes
from attention_ui.figures.base import (
    DEFAULT_HOVER,
    PLAIN_TEMPLATE,
    AxisText,
    HoverText,
    escape_label,
    per_token_bars_layout,
    token_tick_labels,
)
from attention_ui.figures.heatmaps import heads_small_multiples

CACHED_COLOR, RECOMPUTE_COLOR = "#1b9e77", "#d95f02"
BAR_COLOR, CURRENT_COLOR = "#9ecae1", "#08519c"
KV_COLORS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")


def flops_figure(ns: Sequence[int], series: Mapping[str, Sequence[int]], *, axes: AxisText) -> go.Figure:
    """FLOPs of one decoding step against the context length, log-log: one line per way of decoding
    (the first green, the second orange)."""
    fig = go.Figure()
    for (name, ys), color in zip(series.items(), (CACHED_COLOR, RECOMPUTE_COLOR), strict=False):
        fig.add_scatter(
            x=[int(n) for n in ns],
            y=[int(v) for v in ys],
            mode="lines+markers",
            name=escape_label(name),
            line=dict(color=color, width=2),
            hovertemplate=f"{escape_label(name)}<br>n = %{{x:,}}: %{{y:,}}<extra></extra>",
        )
    fig.update_layout(
        template=PLAIN_TEMPLATE,
        height=360,
        margin=dict(l=70, r=10, t=30, b=50),
        legend=dict(orientation="h", y=1.12),
        xaxis=axes.x_axis(type="log"),
        yaxis=axes.y_axis(type="log", exponentformat="power"),
    )
    return fig


def cache_bars_figure(
    kv_choices: Sequence[int], sizes: Sequence[int], current: int, *, axes: AxisText
) -> go.Figure:
    """Cache bytes for every valid number of KV heads (MQA = 1 … MHA = h); the chosen one dark."""
    labels = [str(g) for g in kv_choices]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=[int(s) for s in sizes],
            text=[format_bytes(s) for s in sizes],
            textposition="outside",
            marker_color=[CURRENT_COLOR if g == current else BAR_COLOR for g in kv_choices],
            hovertemplate="%{x}: %{text}<extra></extra>",
        )
    )
    fig.update_layout(
        template=PLAIN_TEMPLATE,
        height=340,
        margin=dict(l=70, r=10, t=30, b=50),
        xaxis=axes.x_axis(type="category"),
        yaxis=axes.y_axis(rangemode="tozero"),
        showlegend=False,
    )
    return fig


def grouped_heads_figure(
    weights: np.ndarray,
    tokens: Sequence[str],
    kv_head_of: Sequence[int],
    *,
    title: str,
    allowed: np.ndarray | None = None,
    hover: HoverText = DEFAULT_HOVER,
) -> go.Figure:
    """Each query head's weights ``[h, n, n]``; the panel titles name the KV head each reads
    (``title`` has ``{h}`` and ``{kv}``) and are coloured by that KV head."""
    fig = heads_small_multiples(weights, tokens, allowed=allowed, hover=hover, head_title="{h}")
    owner = [int(k) for k in kv_head_of]
    for j, ann in enumerate(fig.layout.annotations[: len(owner)]):
        ann.text = escape_label(title.format(h=j, kv=owner[j]))
        ann.font = dict(color=KV_COLORS[owner[j] % len(KV_COLORS)])
    return fig


def prefix_change_figure(
    tokens: Sequence[str], changes: Mapping[str, Sequence[float]], *, axes: AxisText
) -> go.Figure:
    """Per earlier token, the largest change of its output when one token is appended, for each mask
    (bars side by side; the first green, the second orange). Linear axis: a causal mask's zeros
    show as no bar at all."""
    labels = token_tick_labels(tokens)
    fig = go.Figure()
    for (name, values), color in zip(changes.items(), (CACHED_COLOR, RECOMPUTE_COLOR), strict=False):
        fig.add_bar(
            x=list(range(len(values))),
            y=[float(v) for v in values],
            name=escape_label(name),
            marker_color=color,
            hovertemplate=f"{escape_label(name)}: %{{y:.3g}}<extra></extra>",
        )
    return per_token_bars_layout(fig, labels, axes, rangemode="tozero")

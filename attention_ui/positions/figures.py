"""Figure builders for the positions lab: the shuffle check, scores against position, the RoPE arrow
and extrapolation past the longest seen position.

No Streamlit here. Labels passed in are plain text and are escaped here (Plotly renders
pseudo-HTML in titles, legends, tick labels and hover text).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from attention_ui.figures.base import (
    PLAIN_TEMPLATE,
    TITLE_BAND_PX,
    AxisText,
    escape_label,
    per_token_bars_layout,
    token_tick_labels,
)

SCHEME_COLORS = {"sinusoidal": "#1b9e77", "learned": "#d95f02", "rope": "#7570b3"}
SCHEME_DASHES = {"sinusoidal": "solid", "learned": "dash", "rope": "dot"}
OFF_COLOR, ON_COLOR = "#1b9e77", "#d95f02"
# The arrow figure's axes: the pair's two coordinates (pages pass translated words).
ARROW_AXES = AxisText("coordinate 2i (after RoPE)", "coordinate 2i + 1 (after RoPE)")


def _finite(values) -> list:
    """Plotly JSON: NaN becomes None (a gap in a line)."""
    return [None if not math.isfinite(float(v)) else float(v) for v in values]


def row_gap_figure(
    tokens: Sequence[str], gaps: Mapping[str, Sequence[float]], *, axes: AxisText
) -> go.Figure:
    """One bar group per token: how far its output row is from the shuffled run's, for each case.

    ``gaps``: legend name -> ``[n]`` differences (the first is drawn green, the second orange).
    The y axis is logarithmic (rounding-sized and large differences side by side); zeros are drawn
    at 1e-17 so that they stay visible, and the hover gives the exact value.
    """
    fig = go.Figure()
    labels = token_tick_labels(tokens)
    for (name, values), color in zip(gaps.items(), (OFF_COLOR, ON_COLOR), strict=False):
        vals = [float(v) for v in values]
        fig.add_bar(
            x=list(range(len(vals))),
            y=[max(v, 1e-17) for v in vals],
            customdata=vals,
            name=escape_label(name),
            marker_color=color,
            hovertemplate=f"{escape_label(name)}: %{{customdata:.3g}}<extra></extra>",
        )
    return per_token_bars_layout(fig, labels, axes, type="log", exponentformat="power")


def scheme_lines_figure(
    x: Sequence[int],
    series: Mapping[str, Sequence[float]],
    names: Mapping[str, str],
    *,
    axes: AxisText,
    seen: int | None = None,
    seen_label: str = "",
) -> go.Figure:
    """One line per position scheme (keys of ``series``: sinusoidal, learned, rope) against ``x``.

    NaN values (no vector for that position) leave a gap. ``seen`` draws a vertical line at the
    first position past the longest seen one, labelled ``seen_label``.
    """
    fig = go.Figure()
    for scheme, ys in series.items():
        fig.add_scatter(
            x=[int(v) for v in x],
            y=_finite(ys),
            mode="lines+markers" if len(x) <= 40 else "lines",
            name=escape_label(names[scheme]),
            line=dict(color=SCHEME_COLORS[scheme], dash=SCHEME_DASHES[scheme], width=2),
            marker=dict(size=5),
            hovertemplate=f"{escape_label(names[scheme])}<br>%{{x}}: %{{y:.4f}}<extra></extra>",
        )
    if seen is not None:
        fig.add_vline(x=seen - 0.5, line=dict(color="#555", dash="dash", width=1))
        fig.add_annotation(
            x=seen - 0.5, y=1, yref="paper", text=escape_label(seen_label), showarrow=False, xanchor="left",
            yanchor="bottom",
        )  # fmt: skip
    fig.update_layout(
        template=PLAIN_TEMPLATE,
        height=360,
        margin=dict(l=60, r=10, t=40, b=50),
        legend=dict(orientation="h", y=-0.25),
        xaxis=axes.x_axis(),
        yaxis=axes.y_axis(),
    )
    return fig


def rope_arrow_figure(
    path: np.ndarray, positions: Sequence[int], *, position_label: str, axes: AxisText = ARROW_AXES
) -> go.Figure:
    """One 2-D pair of a vector after RoPE at each position, drawn as arrows from the origin.

    ``path [P, 2]``; every arrow has the same length (a rotation keeps it), and each turns by the
    same angle from the one before. ``position_label`` is a template with ``{p}``; ``axes`` names the
    pair's two coordinates (the plane the pair turns in).
    """
    path = np.asarray(path, dtype=float)
    r = float(np.max(np.hypot(path[:, 0], path[:, 1]))) if path.size else 1.0
    r = r or 1.0
    t = np.linspace(0, 2 * math.pi, 121)
    fig = go.Figure()
    fig.add_scatter(
        x=(r * np.cos(t)).tolist(), y=(r * np.sin(t)).tolist(), mode="lines", showlegend=False,
        line=dict(color="#bbb", dash="dot", width=1), hoverinfo="skip",
    )  # fmt: skip
    shades = np.linspace(0.35, 1.0, len(positions))
    for (x, y), p, s in zip(path, positions, shades, strict=True):
        color = f"rgba(117,112,179,{s:.2f})"
        label = escape_label(position_label.format(p=int(p)))
        fig.add_annotation(
            x=float(x), y=float(y), ax=0, ay=0, xref="x", yref="y", axref="x", ayref="y",
            showarrow=True, arrowhead=2, arrowwidth=2, arrowcolor=color, text="",
        )  # fmt: skip
        fig.add_scatter(
            x=[float(x)], y=[float(y)], mode="markers+text", text=[label], textposition="top center",
            marker=dict(color=color, size=7), showlegend=False,
            hovertemplate=f"{label}<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
        )  # fmt: skip
    lim = 1.3 * r
    fig.update_layout(
        template=PLAIN_TEMPLATE,
        height=420,
        width=None,
        margin=dict(l=40 + TITLE_BAND_PX, r=10, t=20, b=40 + TITLE_BAND_PX),
        xaxis=axes.x_axis(range=[-lim, lim], zeroline=True, scaleanchor="y", scaleratio=1),
        yaxis=axes.y_axis(range=[-lim, lim], zeroline=True),
    )
    return fig

"""Figure builders for the look-alikes lab (pure: numbers and labels in, ``go.Figure`` out).

Heatmaps reuse :mod:`attention_ui.figures.heatmaps`; this module adds the two drawings that are not
matrices: the RNN-vs-attention path picture and the per-layer cost curves. All text passed in is
escaped here, because Plotly renders pseudo-HTML in labels and annotations.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from attention_ui.figures.base import LOG_DECADES, escape_label, legend_above_layout

RNN_COLOR = "#d95f02"  # orange: the recurrent chain
ATTENTION_COLOR = "#1b9e77"  # teal: the single attention hop (orange/teal stay apart for CVD)
IDLE_COLOR = "#b8b8b8"  # nodes and links not on the path


@dataclass(frozen=True)
class PathText:
    """Words for :func:`path_figure` (the page passes translated ones)."""

    rnn: str = "RNN"
    attention: str = "self-attention"
    rnn_steps: str = "{steps} steps"
    attention_steps: str = "{steps} step"
    position: str = "position"


def _quiet_line(x: list, y: list, color: str, width: float, name: str) -> go.Scatter:
    """A line of the path picture with no hover box and no legend entry (links, the path, the arc)."""
    return go.Scatter(
        x=x,
        y=y,
        mode="lines",
        line=dict(color=color, width=width),
        hoverinfo="skip",
        name=name,
        showlegend=False,
    )


def _node_row(n: int, y: float, lit: Collection[int], color: str, hover: str, name: str) -> go.Scatter:
    """A row of n positions as dots, those in ``lit`` in ``color`` and the rest grey."""
    return go.Scatter(
        x=list(range(n)),
        y=[y] * n,
        mode="markers",
        marker=dict(
            size=14,
            color=[color if x in lit else IDLE_COLOR for x in range(n)],
            line=dict(color="white", width=1),
        ),
        hovertemplate=hover,
        name=name,
        showlegend=False,
    )


def _row_label(fig: go.Figure, y: float, color: str, name: str, steps: str) -> None:
    """A row's name (bold) and its step count, left of the row in the row's colour."""
    fig.add_annotation(
        x=-0.6,
        y=y,
        xanchor="right",
        showarrow=False,
        font=dict(color=color, size=13),
        text=f"<b>{escape_label(name)}</b><br>{escape_label(steps)}",
    )


def path_figure(
    n: int, i: int, j: int, rnn_states: tuple[int, ...], attention_steps: int, text: PathText = PathText()
) -> go.Figure:
    """Two rows of n positions: the RNN chain (top) and self-attention (bottom).

    The RNN row highlights the links the signal crosses between positions i and j (``rnn_states``
    are the positions it passes through, i..j); the attention row draws one arc from i to j.
    Trace names: ``rnn_links``, ``rnn_path``, ``rnn_nodes``, ``attention_nodes``, ``attention_arc``.
    """
    if n < 1 or not (0 <= i < n and 0 <= j < n):
        raise ValueError("i and j must be positions in 0..n-1")
    y_rnn, y_att = 1.0, 0.0
    fig = go.Figure()
    # every recurrent link h_t -> h_{t+1}, grey
    link_x: list[float | None] = []
    link_y: list[float | None] = []
    for t in range(n - 1):
        link_x += [t, t + 1, None]
        link_y += [y_rnn, y_rnn, None]
    fig.add_trace(_quiet_line(link_x, link_y, IDLE_COLOR, 2, "rnn_links"))
    lo, hi = min(i, j), max(i, j)
    fig.add_trace(_quiet_line(list(range(lo, hi + 1)), [y_rnn] * (hi - lo + 1), RNN_COLOR, 5, "rnn_path"))
    rnn_hover = f"{escape_label(text.rnn)}: h<sub>%{{x}}</sub><extra></extra>"
    fig.add_trace(_node_row(n, y_rnn, set(rnn_states), RNN_COLOR, rnn_hover, "rnn_nodes"))
    position_hover = f"{escape_label(text.position)} %{{x}}<extra></extra>"
    fig.add_trace(_node_row(n, y_att, (i, j), ATTENTION_COLOR, position_hover, "attention_nodes"))
    # one arc i -> j above the attention row (a parabola through both ends)
    if i != j:
        s = np.linspace(0.0, 1.0, 41)
        arc_x = i + (j - i) * s
        arc_y = y_att + 0.45 * 4 * s * (1 - s)
        fig.add_trace(_quiet_line(arc_x.tolist(), arc_y.tolist(), ATTENTION_COLOR, 4, "attention_arc"))
    _row_label(fig, y_rnn, RNN_COLOR, text.rnn, text.rnn_steps.format(steps=len(rnn_states) - 1))
    _row_label(
        fig, y_att, ATTENTION_COLOR, text.attention, text.attention_steps.format(steps=attention_steps)
    )
    tick_step = max(1, int(np.ceil(n / 24)))
    fig.update_layout(
        xaxis=dict(
            title=dict(text=escape_label(text.position)),
            tickmode="array",
            tickvals=list(range(0, n, tick_step)),
            range=[-0.5 - max(3.0, 0.22 * n), n - 0.5],
            showgrid=False,
            zeroline=False,
        ),
        yaxis=dict(visible=False, range=[-0.35, 1.35]),
        height=230,
        margin=dict(l=10, r=10, t=10, b=10),
        plot_bgcolor="rgba(0,0,0,0)",
    )
    return fig


@dataclass(frozen=True)
class CostText:
    attention: str = "self-attention n²·d"
    rnn: str = "RNN n·d²"
    n_axis: str = "sequence length n"
    ops_axis: str = "multiply-adds per layer"
    chosen: str = "your n"
    crossing: str = "n = d"


def cost_figure(
    ns: np.ndarray, attention: np.ndarray, rnn: np.ndarray, d: int, n_chosen: int, text: CostText = CostText()
) -> go.Figure:
    """Per-layer cost against n on log-log axes, the crossing n = d and the chosen n marked.

    ``attention`` and ``rnn`` are the cost values at ``ns`` (same length). Trace names:
    ``attention``, ``rnn``, ``chosen``.
    """
    ns = np.asarray(ns, dtype=float)
    attention = np.asarray(attention, dtype=float)
    rnn = np.asarray(rnn, dtype=float)
    if not (ns.shape == attention.shape == rnn.shape) or ns.ndim != 1 or ns.size < 2:
        raise ValueError("ns, attention and rnn must be 1-D arrays of the same length (≥ 2)")
    fig = go.Figure()
    for values, name, line in (
        (attention, text.attention, dict(color=ATTENTION_COLOR)),
        (rnn, text.rnn, dict(color=RNN_COLOR, dash="dash")),
    ):
        fig.add_trace(
            go.Scatter(
                x=ns.tolist(),
                y=values.tolist(),
                mode="lines",
                name=escape_label(name),
                line=dict(width=3, **line),
            )
        )
    k = int(np.argmin(np.abs(ns - n_chosen)))
    fig.add_trace(
        go.Scatter(
            x=[ns[k], ns[k]],
            y=[attention[k], rnn[k]],
            mode="markers",
            marker=dict(
                size=11,
                color=[ATTENTION_COLOR, RNN_COLOR],
                symbol="circle",
                line=dict(color="black", width=1),
            ),
            name=escape_label(text.chosen),
            showlegend=False,
            hovertemplate="n = %{x:,.0f}<br>%{y:,.0f}<extra></extra>",
        )
    )
    fig.add_vline(x=d, line=dict(color="#555555", dash="dot", width=1))
    fig.add_annotation(
        x=np.log10(d),
        y=1.0,
        yref="paper",
        xanchor="left",
        showarrow=False,
        text=escape_label(text.crossing),
        font=dict(size=12),
    )
    return legend_above_layout(
        fig,
        text.n_axis,
        text.ops_axis,
        height=340,
        xaxis=dict(LOG_DECADES),
        yaxis=dict(exponentformat="power", **LOG_DECADES),
    )

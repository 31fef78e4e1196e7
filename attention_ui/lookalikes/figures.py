"""Figure builders for the look-alikes lab (pure: numbers and labels in, ``go.Figure`` out).

Heatmaps reuse :mod:`attention_ui.figures.heatmaps`; this module adds the two drawings that are not
matrices: the RNN-vs-attention path picture and the per-layer cost curves. All text passed in is
escaped here, because Plotly renders pseudo-HTML in labels and annotations.
"""

from __future__ import annotations

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
    xs = list(range(n))
    y_rnn, y_att = 1.0, 0.0
    on_path = set(rnn_states)
    fig = go.Figure()
    # every recurrent link h_t -> h_{t+1}, grey
    link_x: list[float | None] = []
    link_y: list[float | None] = []
    for t in range(n - 1):
        link_x += [t, t + 1, None]
        link_y += [y_rnn, y_rnn, None]
    fig.add_trace(
        go.Scatter(
            x=link_x,
            y=link_y,
            mode="lines",
            line=dict(color=IDLE_COLOR, width=2),
            hoverinfo="skip",
            name="rnn_links",
            showlegend=False,
        )
    )
    lo, hi = min(i, j), max(i, j)
    fig.add_trace(
        go.Scatter(
            x=list(range(lo, hi + 1)),
            y=[y_rnn] * (hi - lo + 1),
            mode="lines",
            line=dict(color=RNN_COLOR, width=5),
            hoverinfo="skip",
            name="rnn_path",
            showlegend=False,
        )
    )
    node_colors = [RNN_COLOR if x in on_path else IDLE_COLOR for x in xs]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=[y_rnn] * n,
            mode="markers",
            marker=dict(size=14, color=node_colors, line=dict(color="white", width=1)),
            hovertemplate=f"{escape_label(text.rnn)}: h<sub>%{{x}}</sub><extra></extra>",
            name="rnn_nodes",
            showlegend=False,
        )
    )
    att_colors = [ATTENTION_COLOR if x in (i, j) else IDLE_COLOR for x in xs]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=[y_att] * n,
            mode="markers",
            marker=dict(size=14, color=att_colors, line=dict(color="white", width=1)),
            hovertemplate=f"{escape_label(text.position)} %{{x}}<extra></extra>",
            name="attention_nodes",
            showlegend=False,
        )
    )
    # one arc i -> j above the attention row (a parabola through both ends)
    if i != j:
        s = np.linspace(0.0, 1.0, 41)
        arc_x = i + (j - i) * s
        arc_y = y_att + 0.45 * 4 * s * (1 - s)
        fig.add_trace(
            go.Scatter(
                x=arc_x.tolist(),
                y=arc_y.tolist(),
                mode="lines",
                line=dict(color=ATTENTION_COLOR, width=4),
                hoverinfo="skip",
                name="attention_arc",
                showlegend=False,
            )
        )
    rnn_steps = len(rnn_states) - 1
    fig.add_annotation(
        x=-0.6,
        y=y_rnn,
        xanchor="right",
        showarrow=False,
        font=dict(color=RNN_COLOR, size=13),
        text=f"<b>{escape_label(text.rnn)}</b><br>{escape_label(text.rnn_steps.format(steps=rnn_steps))}",
    )
    fig.add_annotation(
        x=-0.6,
        y=y_att,
        xanchor="right",
        showarrow=False,
        font=dict(color=ATTENTION_COLOR, size=13),
        text=f"<b>{escape_label(text.attention)}</b><br>"
        f"{escape_label(text.attention_steps.format(steps=attention_steps))}",
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
    fig.add_trace(
        go.Scatter(
            x=ns.tolist(),
            y=attention.tolist(),
            mode="lines",
            name=escape_label(text.attention),
            line=dict(color=ATTENTION_COLOR, width=3),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=ns.tolist(),
            y=rnn.tolist(),
            mode="lines",
            name=escape_label(text.rnn),
            line=dict(color=RNN_COLOR, width=3, dash="dash"),
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

"""Figure builders for the state-space section of the look-alikes lab: the weights of one output y_t on
the past inputs x_s, model by model, and the selective model's step sizes Δ_t.

No Streamlit here. Labels passed in are plain text and are escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from attention_ui.figures.base import (
    AxisText,
    add_named_series,
    escape_label,
    legend_above_layout,
    reference_line,
)

MODEL_COLOURS = ("#0068c9", "#7570b3", "#d95f02", "#1b9e77")
MODEL_DASHES = ("solid", "dash", "dot", "dashdot")


def past_weights_figure(
    tokens: Sequence[str],
    rows: Mapping[str, Sequence[float]],
    *,
    axes: AxisText,
    height: int = 340,
) -> go.Figure:
    """One line per model: the weight of y_t on each past input x_s (s = 0 … t). Signed, unbounded y
    axis (the recurrences' weights may be negative and need not sum to 1); a line at 0."""
    if not rows:
        raise ValueError("at least one model is needed")
    labels = [f"{i}: {escape_label(tok, 12)}" for i, tok in enumerate(tokens)]
    fig = go.Figure()
    if any(len(values) != len(tokens) for values in rows.values()):
        raise ValueError("every model needs one weight per past token")

    def style(i: int) -> dict:
        return dict(
            mode="lines+markers", line=dict(color=MODEL_COLOURS[i % 4], dash=MODEL_DASHES[i % 4], width=2)
        )

    add_named_series(fig, rows, go.Scatter, style, "%{x}<br>%{y:.3f}", labels)
    fig.add_hline(y=0, line=dict(color="#555555", width=1))
    return legend_above_layout(fig, axes.x, axes.y, height=height, xaxis=dict(type="category"))


def steps_figure(
    tokens: Sequence[str],
    steps: Sequence[float],
    fixed: float,
    *,
    axes: AxisText,
    fixed_label: str,
) -> go.Figure:
    """The selective model's Δ_t per token as bars, the fixed model's Δ as a dotted line."""
    if len(steps) != len(tokens):
        raise ValueError("one step size per token")
    labels = [f"{i}: {escape_label(tok, 12)}" for i, tok in enumerate(tokens)]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=[float(v) for v in steps],
            marker_color=MODEL_COLOURS[3],
            name=escape_label(axes.y),
            hovertemplate="%{x}<br>Δ = %{y:.3f}<extra></extra>",
        )
    )
    reference_line(fig, fixed, fixed_label)
    fig.update_layout(
        height=260,
        xaxis=axes.x_axis(type="category"),
        yaxis=axes.y_axis(rangemode="tozero"),
        margin=dict(l=10, r=10, t=10, b=10),
        plot_bgcolor="rgba(0,0,0,0)",
        showlegend=False,
    )
    return fig

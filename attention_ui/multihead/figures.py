"""Pure builders for the multi-head lab: head width, head boundaries, cost against h.

No Streamlit here. Every label passed in is plain text (from the page's catalog) and is escaped
here, because Plotly renders pseudo-HTML in titles, tick labels and hover text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from attention_ui.figures.base import LOG_DECADES, AxisText, escape_label, legend_above_layout

CHOSEN_COLOR = "#d95f02"  # orange: the chosen h, distinct from the blue of the other bars
OTHER_COLOR = "#7570b3"
BOUNDARY_COLOR = "#222222"

# Columns of the two cost tables, in display order (ids of MultiHeadCost fields): what stays the same
# for every h, then what grows with h. Two tables of at most seven columns, because one of eleven
# was wider than the 1366 px layout and cut its last column.
COST_COLUMNS_CONSTANT = (
    "heads",
    "d_k",
    "params_total",
    "flops_projections",
    "flops_scores",
    "flops_weighted_sum",
    "flops_output",
)
COST_COLUMNS_GROWING = ("heads", "flops_scale", "flops_softmax", "attention_matrix_elements", "flops_total")
COST_COLUMNS = COST_COLUMNS_CONSTANT + COST_COLUMNS_GROWING[1:]
# Lines of the cost chart: what stays constant and what grows with h.
CHART_SERIES = ("params_total", "flops_matmul", "flops_softmax_scale", "attention_matrix_elements")

# The charts' English axis words (pages pass translated ones).
HEAD_DIM_AXES = AxisText("heads h", "d_k = d_model / h")
COST_AXES = AxisText("heads h", "count (log scale)")


def head_dim_figure(
    d_model: int,
    head_counts: Sequence[int],
    chosen: int,
    *,
    axes: AxisText = HEAD_DIM_AXES,
    hover_heads: str = "h",
    hover_dim: str = "d_k",
) -> go.Figure:
    """One bar per valid head count: the dimensions each head works in (d_model / h).

    The chosen h is drawn in a different colour. Bars sit on a categorical x axis so that the
    divisors (1, 2, 4, 8, …) are evenly spaced.
    """
    if not head_counts:
        raise ValueError("at least one head count is needed")
    if any(d_model % h for h in head_counts):
        raise ValueError("every head count must divide d_model")
    dims = [d_model // h for h in head_counts]
    colors = [CHOSEN_COLOR if h == chosen else OTHER_COLOR for h in head_counts]
    fig = go.Figure(
        go.Bar(
            x=[str(h) for h in head_counts],
            y=dims,
            marker_color=colors,
            text=[str(d) for d in dims],
            textposition="outside",
            cliponaxis=False,
            hovertemplate=f"{escape_label(hover_heads)} = %{{x}}<br>{escape_label(hover_dim)} = %{{y}}<extra></extra>",
            name="d_k",
        )
    )
    fig.update_layout(
        xaxis=axes.x_axis(type="category"),
        yaxis=axes.y_axis(rangemode="tozero", range=[0, max(dims) * 1.18]),
        height=300,
        margin=dict(l=10, r=10, t=20, b=10),
        showlegend=False,
        plot_bgcolor="rgba(0,0,0,0)",
    )
    return fig


def add_head_boundaries(fig: go.Figure, heads: int, width: int, axis: str) -> go.Figure:
    """Draw a line between the column (``axis="x"``) or row (``axis="y"``) blocks of each head.

    A Concat matrix ``[n, h·d_v]`` has head i in columns i·d_v … (i+1)·d_v − 1; W^O ``[h·d_v, d_model]``
    has head i's rows there. Cells sit at integer positions, so boundaries are at i·d_v − 0.5.
    Returns the same figure (modified in place) for chaining.
    """
    if axis not in ("x", "y"):
        raise ValueError("axis must be 'x' or 'y'")
    for i in range(1, heads):
        pos = i * width - 0.5
        if axis == "x":
            fig.add_vline(x=pos, line=dict(color=BOUNDARY_COLOR, width=2))
        else:
            fig.add_hline(y=pos, line=dict(color=BOUNDARY_COLOR, width=2))
    return fig


def cost_vs_heads_figure(
    costs: Sequence,
    names: Mapping[str, str],
    *,
    axes: AxisText = COST_AXES,
) -> go.Figure:
    """Lines against h on a log y axis: flat lines are the counts that do not depend on h.

    ``names`` maps each id of :data:`CHART_SERIES` to its legend text.
    """
    if not costs:
        raise ValueError("at least one cost row is needed")
    hs = [str(c.heads) for c in costs]
    dashes = {"params_total": "solid", "flops_matmul": "solid", "flops_softmax_scale": "dot"}
    fig = go.Figure()
    for sid in CHART_SERIES:
        name = escape_label(names.get(sid, sid))
        fig.add_trace(
            go.Scatter(
                x=hs,
                y=[getattr(c, sid) for c in costs],
                mode="lines+markers",
                name=name,
                line=dict(dash=dashes.get(sid, "dash"), width=2),
                hovertemplate=f"{name}<br>h = %{{x}}: %{{y:,}}<extra></extra>",
            )
        )
    return legend_above_layout(
        fig,
        axes.x,
        axes.y,
        height=380,
        xaxis=dict(type="category"),
        yaxis=dict(exponentformat="power", **LOG_DECADES),
        top=20,
    )

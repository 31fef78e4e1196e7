"""Pure figure builders for the pretrained (all-MiniLM-L6-v2) view.

:func:`heads_overview` draws every layer's and head's attention weights at once: small multiples,
rows = layers, columns = heads, one shared 0..1 colour scale. It is built for speed (72 panels
re-drawn on every rerun): the axes are laid out by hand instead of ``make_subplots``, all heatmaps
go in with one ``add_traces`` call, no cell prints its value and hover labels come from
categorical axes (unique ``"#i token"`` names) instead of a per-cell ``customdata`` array.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_ui.figures.base import (
    DEFAULT_HOVER,
    WEIGHT_SCALE,
    HoverText,
    escape_label,
    hover_labels,
    invisible_points,
)

PANEL_GAP = 0.012  # fraction of the plotting area between neighbouring panels
# Click targets (see heads_overview's ``clickable``): one per cell up to this many tokens, so the hover
# still names each cell; beyond it (cells of a few pixels) one per panel, naming the panel.
CELL_TARGETS_MAX_TOKENS = 10
SELECTED_COLOR = "#d62728"  # frame around the panel the step-by-step view shows


def axis_name(index: int, axis: str) -> str:
    """Layout key of the ``index``-th (0-based) x or y axis: ``xaxis``, ``xaxis2``, ..."""
    return f"{axis}axis" if index == 0 else f"{axis}axis{index + 1}"


def axis_ref(index: int, axis: str) -> str:
    """Trace reference of the ``index``-th axis: ``x``, ``x2``, ..."""
    return axis if index == 0 else f"{axis}{index + 1}"


def _domains(count: int, gap: float) -> list[tuple[float, float]]:
    """``count`` equal intervals across [0, 1] with ``gap`` between neighbours."""
    size = (1.0 - gap * (count - 1)) / count
    return [(i * (size + gap), i * (size + gap) + size) for i in range(count)]


def _frame(selected: tuple[int, int], n_layers: int, n_heads: int) -> list[dict]:
    """A red rectangle around panel ``selected = (layer, head)``; nothing if it is out of range."""
    layer, head = selected
    if not (0 <= layer < n_layers and 0 <= head < n_heads):
        return []
    (x0, x1), (y0, y1) = _domains(n_heads, PANEL_GAP)[head], _domains(n_layers, PANEL_GAP * 2)[::-1][layer]
    pad = PANEL_GAP / 2
    return [
        dict(
            type="rect",
            xref="paper",
            yref="paper",
            x0=x0 - pad,
            x1=x1 + pad,
            y0=y0 - pad,
            y1=y1 + pad,
            line=dict(color=SELECTED_COLOR, width=3),
            fillcolor="rgba(0,0,0,0)",
        )
    ]


def with_selection(fig: go.Figure, selected: tuple[int, int] | None) -> go.Figure:
    """A copy of an overview from :func:`heads_overview` with the frame moved to ``selected``.

    Copying (about a quarter of a second for 72 panels) is cheaper than building the overview
    again, and the original stays untouched, so it can be cached and shared.
    """
    meta = fig.layout.meta
    out = go.Figure(fig, _validate=False)
    out.layout.shapes = [] if selected is None else _frame(selected, meta["layers"], meta["heads"])
    return out


def _cells(z: np.ndarray) -> list:
    """Rows of weights rounded to 4 decimals (what the hover shows), None for masked cells."""
    return [[round(v, 4) if v == v else None for v in row] for row in z.tolist()]


def heads_overview(
    attentions: np.ndarray,
    tokens: Sequence[str],
    *,
    allowed: np.ndarray | None = None,
    layer_title: str = "layer {layer}",
    head_title: str = "head {head}",
    hover: HoverText = DEFAULT_HOVER,
    selected: tuple[int, int] | None = None,
    panel_px: int = 78,
    clickable: bool = False,
    click_hint: str = "",
) -> go.Figure:
    """All heads of all layers: ``attentions [layers, heads, n, n]`` -> one figure of small multiples.

    Panel (l, h) sits in row l (top = first layer) and column h, on axes number ``l * heads + h``.
    In each panel queries are rows (first token on top) and keys columns. ``allowed [n, n]``
    (True = may attend) hides masked cells: they stay blank (no colour), so they cannot be mistaken
    for a weight of 0 on the colour scale. ``selected``
    frames one panel (the layer and head shown step by step). ``layer_title``/``head_title`` are
    formatted with ``layer=`` / ``head=``.

    ``clickable``: Plotly heatmaps report no points to a selection (streamlit#8760), so each panel
    gets a trace of invisible scatter points on its own axes, appended after the heatmaps in the
    same order: the selected point's ``curve_number - layers * heads`` is the panel's index
    ``layer * heads + head`` (:func:`panel_of_point`). The points take over the hover (the same
    text, plus ``click_hint``); ``hoverdistance=-1`` makes a click anywhere in a panel select one.
    """
    a = np.asarray(attentions, dtype=float)
    if a.ndim != 4 or a.shape[2] != a.shape[3]:
        raise ValueError("attentions must be [layers, heads, n, n]")
    n_layers, n_heads, n, _ = a.shape
    if len(tokens) != n:
        raise ValueError("one token per row is needed")
    if allowed is not None:
        allowed = np.asarray(allowed, dtype=bool)
        if allowed.shape != (n, n):
            raise ValueError("the mask must be n×n")
        a = np.where(allowed, a, np.nan)  # masked cells: blank

    labels = hover_labels(tokens)  # "#i token", escaped: unique, so categorical axes keep every row
    q, k = escape_label(hover.query), escape_label(hover.key)
    value = escape_label(hover.value)
    col_domains = _domains(n_heads, PANEL_GAP)
    row_domains = _domains(n_layers, PANEL_GAP * 2)[::-1]  # first layer on top

    layout: dict = {}
    traces = []
    for layer in range(n_layers):
        for head in range(n_heads):
            i = layer * n_heads + head
            name = f"{escape_label(layer_title.format(layer=layer))} · {escape_label(head_title.format(head=head))}"
            z = a[layer, head]
            traces.append(
                dict(
                    type="heatmap",
                    z=_cells(z),
                    x=labels,
                    y=labels,
                    coloraxis="coloraxis",
                    xaxis=axis_ref(i, "x"),
                    yaxis=axis_ref(i, "y"),
                    name=name,
                    hoverongaps=False,
                    hovertemplate=f"{name}<br>{q}: %{{y}}<br>{k}: %{{x}}<br>{value}: %{{z:.4f}}<extra></extra>",
                )
            )
            common = dict(showticklabels=False, ticks="", showgrid=False, zeroline=False, fixedrange=True)
            layout[axis_name(i, "x")] = dict(
                domain=list(col_domains[head]), anchor=axis_ref(i, "y"), type="category", **common
            )
            layout[axis_name(i, "y")] = dict(
                domain=list(row_domains[layer]),
                anchor=axis_ref(i, "x"),
                type="category",
                autorange="reversed",
                **common,
            )

    annotations = [
        dict(
            text=escape_label(head_title.format(head=head)),
            x=(lo + hi) / 2,
            y=1.0,
            xref="paper",
            yref="paper",
            xanchor="center",
            yanchor="bottom",
            showarrow=False,
            font=dict(size=11),
        )
        for head, (lo, hi) in enumerate(col_domains)
    ] + [
        dict(
            text=escape_label(layer_title.format(layer=layer)),
            x=0.0,
            y=(lo + hi) / 2,
            xref="paper",
            yref="paper",
            xanchor="right",
            yanchor="middle",
            xshift=-6,
            showarrow=False,
            font=dict(size=11),
        )
        for layer, (lo, hi) in enumerate(row_domains)
    ]
    shapes = [] if selected is None else _frame(selected, n_layers, n_heads)
    layout.update(
        annotations=annotations,
        shapes=shapes,
        coloraxis=dict(colorscale=WEIGHT_SCALE, cmin=0.0, cmax=1.0, colorbar=dict(thickness=12, len=0.8)),
        plot_bgcolor="rgba(0,0,0,0)",  # a coloured background would also fill the gaps between panels
        height=int(n_layers * panel_px + 60),
        margin=dict(l=70, r=10, t=30, b=10),
        showlegend=False,
        meta=dict(layers=n_layers, heads=n_heads),
    )
    if clickable:
        traces += _click_targets(traces, a, labels, escape_label(click_hint))
        layout.update(hoverdistance=-1, clickmode="event+select")
    fig = go.Figure(layout=layout, _validate=False)  # the layout in one go: update_layout costs seconds here
    fig.add_traces(traces)
    return fig


def _click_targets(heatmaps: list[dict], a: np.ndarray, labels: list[str], hint: str) -> list[dict]:
    """One invisible scatter trace per panel (see :func:`heads_overview`); takes over their hover."""
    n = a.shape[2]
    per_cell = n <= CELL_TARGETS_MAX_TOKENS
    hint = f"<br><i>{hint}</i>" if hint else ""
    if per_cell:
        rows, cols = np.divmod(np.arange(n * n), n)
        xs, ys = [labels[c] for c in cols], [labels[r] for r in rows]
    else:  # the panel's centre: the middle token on both axes
        xs = ys = [labels[n // 2]]
    targets = []
    for i, heat in enumerate(heatmaps):
        layer, head = divmod(i, a.shape[1])
        if per_cell:
            values = a[layer, head].ravel()
            keep = np.isfinite(values)  # a masked cell stays silent, as in the heatmap
            idx = np.flatnonzero(keep) if not keep.all() else np.arange(n * n)
            x, y = [xs[j] for j in idx], [ys[j] for j in idx]
            data = np.round(values[idx], 4).tolist()
            template = (
                heat["hovertemplate"]
                .replace("%{z:.4f}", "%{customdata:.4f}")
                .replace("<extra></extra>", f"{hint}<extra></extra>")
            )
        else:
            x, y, data = xs, ys, None
            template = f"{heat['name']}{hint}<extra></extra>"
        heat["hoverinfo"] = "skip"
        heat["hovertemplate"] = None
        targets.append(
            dict(
                type="scatter",
                x=x,
                y=y,
                customdata=data,
                **invisible_points(8),
                hovertemplate=template,
                xaxis=heat["xaxis"],
                yaxis=heat["yaxis"],
                name=heat["name"],
                showlegend=False,
            )
        )
    return targets


def panel_of_point(point: dict, n_layers: int, n_heads: int) -> tuple[int, int] | None:
    """(layer, head) of a point selected on a clickable overview, or None for anything else."""
    try:
        curve = int(point["curve_number"])
    except (KeyError, TypeError, ValueError):
        return None
    panel = curve - n_layers * n_heads
    if not 0 <= panel < n_layers * n_heads:
        return None
    return divmod(panel, n_heads)

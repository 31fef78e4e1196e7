"""Figure builders for the "Masks" lab: small multiples of matrices and the leakage charts.

Pure (no Streamlit), tested as data. Conventions follow :mod:`attention_ui.figures.heatmaps` (row 0 on
top, cells at integer positions, token text only in tick labels/hover, labels escaped). The
leakage charts must make "exactly 0" and "tiny but not 0" look different: movements are drawn on
a log scale, and exact zeros get their own trace (a marker at the bottom of the axis, or a cell
in a separate colour) labelled with the page's "0 exactly" text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attention_core.labs.masks import ROUNDING_LEVEL
from attention_ui.figures.base import (
    LEGEND_ABOVE,
    WEIGHT_SCALE,
    AxisText,
    HoverText,
    escape_label,
    fit_x_ticks,
    hover_labels,
    token_tick_labels,
    x_tick_text,
)
from attention_ui.figures.heatmaps import (
    CELL_FONT_PX,
    TEXT_MIN_CELL_PX,
    attention_heatmap,
    contrast_text,
    light_text_trace,
)

EXACT_ZERO_COLOR = "#009E73"  # bluish green (Okabe–Ito): the correct, exactly-zero result
EXACT_ZERO_TEXT = "#00664a"  # the same green darkened for text: 6.0:1 on its light cells, 7.0:1 on white
LEAK_SCALE, LEAK_ZMIN, LEAK_ZMAX = "Inferno", -18.0, 1.0  # log10 of the change
PANELS_PX = 800  # a low estimate of the plot width all panels of a full-width chart share
LOG_FLOOR = 1e-18  # exact zeros are drawn at this height on log axes
METHOD_COLORS = {
    "correct": "#009E73",
    "zero_values": "#D55E00",
    "zero_weights": "#CC79A7",
    "renormalise": "#0072B2",
}

# The charts' English axis words (pages pass translated ones).
LEAK_AXES = AxisText("earlier position", "max |change|")


def sci(value: float, zero: str = "0") -> str:
    """A movement in scientific notation (``3.2e-17``); exact 0.0 as ``zero``."""
    value = float(value)
    if value == 0.0:
        return zero
    return f"{value:.1e}"


def _token_axis(labels: Sequence[str]) -> dict:
    """An axis with one (already escaped) token label per cell position, no grid lines."""
    return dict(
        tickmode="array", tickvals=list(range(len(labels))), ticktext=labels, showgrid=False, zeroline=False
    )


def panels_figure(
    matrices: Sequence[np.ndarray],
    titles: Sequence[str],
    tokens: Sequence[str],
    *,
    kind: str = "weights",
    allowed: Sequence[np.ndarray] | np.ndarray | None = None,
    hover: HoverText | None = None,
    max_cols: int = 3,
    show_text: bool | None = None,
) -> go.Figure:
    """Several n×n matrices side by side (mask kinds, or the masking methods' weights).

    ``allowed`` is one mask for every panel or one per panel (grey "masked" overlay). ``kind`` as in
    :func:`attention_ui.figures.heatmaps.matrix_heatmap`; weights share one 0..1 colour axis. Trace order: per
    panel its values trace, then (if anything is masked) its overlay.
    """
    hover = hover or HoverText()
    mats = [np.asarray(m, dtype=float) for m in matrices]
    if not mats or len(titles) != len(mats):
        raise ValueError("one title per matrix is needed")
    n = len(tokens)
    if any(m.shape != (n, n) for m in mats):
        raise ValueError("every matrix must be n×n with one token per row")
    if allowed is None or (isinstance(allowed, np.ndarray) and allowed.ndim == 2):
        masks = [allowed] * len(mats)
    else:
        masks = list(allowed)
        if len(masks) != len(mats):
            raise ValueError("one mask per matrix is needed")
    count = len(mats)
    cols = min(count, max_cols)
    rows = math.ceil(count / cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[escape_label(t) for t in titles],
        horizontal_spacing=0.05,
        vertical_spacing=0.14 if rows > 1 else 0.1,
    )
    panel_px = 0.9 * PANELS_PX / cols
    if show_text is None:
        show_text = n <= 8 and panel_px / n >= TEXT_MIN_CELL_PX
    labels = token_tick_labels(tokens, max_chars=6)
    angle = fit_x_ticks(labels, panel_px).angle  # turned rather than overlapping ([PAD] [PAD])
    x_labels = x_tick_text(labels, panel_px)  # Japanese written top to bottom, upright, instead
    q_title, k_title = escape_label(hover.query), escape_label(hover.key)
    for k, (mat, mask) in enumerate(zip(mats, masks, strict=True)):
        single = attention_heatmap(mat, tokens, kind=kind, allowed=mask, hover=hover, show_text=show_text)
        r, c = divmod(k, cols)
        for trace in single.data:
            if trace.name == "values" and kind == "weights":
                trace.update(coloraxis="coloraxis", showscale=None, colorbar=None, zmin=None, zmax=None)
                trace.update(colorscale=None)
            elif trace.name == "values":
                trace.update(showscale=False, colorbar=None)
            fig.add_trace(trace, row=r + 1, col=c + 1)
        bottom = k + cols >= count  # no panel below it: it names the columns, and the first column the rows
        fig.update_xaxes(**_token_axis(x_labels), tickangle=angle, showticklabels=bottom, row=r + 1, col=c + 1,
                         title=dict(text=k_title if bottom else ""))  # fmt: skip
        fig.update_yaxes(**_token_axis(labels), autorange="reversed", showticklabels=c == 0, row=r + 1, col=c + 1,
                         title=dict(text=q_title if c == 0 else ""))  # fmt: skip
    layout: dict = dict(
        height=int(rows * max(240, min(380, 90 + 30 * n)) + 50),
        margin=dict(l=10, r=10, t=40, b=10),
        plot_bgcolor="rgba(0,0,0,0)",
    )
    if kind == "weights":
        layout["coloraxis"] = dict(colorscale=WEIGHT_SCALE, cmin=0.0, cmax=1.0, colorbar=dict(thickness=12))
    fig.update_layout(**layout)
    return fig


def mask_panels_figure(
    allowed: Sequence[np.ndarray],
    titles: Sequence[str],
    tokens: Sequence[str],
    *,
    hover: HoverText | None = None,
) -> go.Figure:
    """Several masks side by side (True = may attend), each drawn like the playground's mask map."""
    blank = [np.zeros(np.shape(a)) for a in allowed]
    return panels_figure(blank, titles, tokens, kind="mask", allowed=list(allowed), hover=hover)


def leakage_bars(
    moved: dict[str, np.ndarray],
    names: dict[str, str],
    tokens: Sequence[str],
    position: int,
    *,
    zero_label: str = "0 exactly",
    axes: AxisText = LEAK_AXES,
    height: int = 400,
) -> go.Figure:
    """How far the outputs *before* ``position`` moved, per method, on a log axis.

    ``moved[method]`` is ``[n]`` (max |after − before| per output row). For every method there is
    a bar trace (nonzero movements, text in scientific notation) and, if any movement is exactly
    0.0, a marker trace at ``LOG_FLOOR`` labelled ``zero_label``. Trace ``meta`` holds the method id.
    """
    if not 1 <= position < len(tokens):
        raise ValueError("position must have at least one earlier token")
    earlier = list(range(position))
    ticks = [f"#{i} {lab}" for i, lab in zip(earlier, token_tick_labels(tokens[:position], 8), strict=True)]
    full = hover_labels(tokens)
    fig = go.Figure()
    for method, values in moved.items():
        v = np.asarray(values, dtype=float)[:position]
        name = escape_label(names.get(method, method))
        color = METHOD_COLORS.get(method, "#777777")
        nonzero = v > 0.0
        fig.add_trace(
            go.Bar(
                x=[ticks[i] for i in earlier],
                y=[float(x) if x > 0 else None for x in v],
                base=LOG_FLOOR,
                name=name,
                legendgroup=method,
                offsetgroup=method,
                showlegend=bool(nonzero.any()),  # no bars drawn -> no legend entry for them
                marker=dict(color=color),
                text=[sci(x) if x > 0 else "" for x in v],
                textposition="outside",
                customdata=[full[i] for i in earlier],
                hovertemplate="%{customdata}<br>%{y:.2e}<extra>" + name + "</extra>",
                meta=method,
            )
        )
        if (~nonzero).any():
            zero_idx = [i for i in earlier if not nonzero[i]]
            fig.add_trace(
                go.Scatter(
                    x=[ticks[i] for i in zero_idx],
                    y=[LOG_FLOOR * 3] * len(zero_idx),
                    mode="markers+text",
                    name=f"{name}: {escape_label(zero_label)}",
                    legendgroup=method,
                    offsetgroup=method,
                    marker=dict(
                        symbol="diamond", size=12, color=EXACT_ZERO_COLOR, line=dict(color="black", width=1)
                    ),
                    text=[escape_label(zero_label)] * len(zero_idx),
                    textposition="top center",
                    textfont=dict(color=EXACT_ZERO_TEXT),
                    customdata=[full[i] for i in zero_idx],
                    hovertemplate="%{customdata}<br>0.0<extra>" + name + "</extra>",
                    meta=method,
                )
            )
    fig.update_layout(
        barmode="group",
        scattermode="group",
        title=dict(text=escape_label(axes.title), y=0.98, yanchor="top", x=0.0) if axes.title else None,
        xaxis=axes.x_axis(),
        yaxis=axes.y_axis(type="log", range=[math.log10(LOG_FLOOR), 1.5], exponentformat="power", dtick=3),
        height=height,
        margin=dict(l=10, r=10, t=90 if axes.title else 50, b=10),
        legend=LEGEND_ABOVE,
        plot_bgcolor="rgba(0,0,0,0)",
    )
    fig.add_hline(y=ROUNDING_LEVEL, line=dict(color="#999999", dash="dot", width=1))
    return fig


def leakage_heatmap(
    moved: np.ndarray,
    tokens: Sequence[str],
    *,
    zero_label: str = "0",
    changed_title: str = "changed input",
    output_title: str = "output",
    title: str = "",
    show_text: bool | None = None,
) -> go.Figure:
    """``moved[c, i]`` (output i when input c changes) as log10 colours; exact zeros in their own colour.

    Trace 0: nonzero cells, coloured by log10(moved) on a fixed −18 … 1 scale; trace 1: the cells
    that are exactly 0.0. Cells with output i < changed c are the ones a causal mask must keep at 0.
    """
    m = np.asarray(moved, dtype=float)
    n = len(tokens)
    if m.shape != (n, n):
        raise ValueError("an n×n matrix is needed")
    if show_text is None:
        show_text = n <= 10
    full = hover_labels(tokens)
    custom = [[[full[c], full[i], sci(m[c, i], "0.0")] for i in range(n)] for c in range(n)]
    with np.errstate(divide="ignore"):
        logs = np.where(m > 0, np.log10(np.where(m > 0, m, 1.0)), np.nan)
    zero = m == 0.0
    common = dict(x=list(range(n)), y=list(range(n)), customdata=custom, xgap=1, ygap=1)
    template = (
        f"{escape_label(changed_title)}: %{{customdata[0]}}<br>"
        f"{escape_label(output_title)}: %{{customdata[1]}}<br>max |Δ| = %{{customdata[2]}}<extra></extra>"
    )
    z_logs = [[None if math.isnan(v) else v for v in row] for row in logs.tolist()]
    numbers = np.array([[sci(v) if v > 0 else "" for v in row] for row in m.tolist()], dtype=object)
    on_light, on_dark = contrast_text(logs, LEAK_SCALE, LEAK_ZMIN, LEAK_ZMAX, text=numbers)
    traces = [
        go.Heatmap(
            z=z_logs,
            colorscale=LEAK_SCALE,
            zmin=LEAK_ZMIN,
            zmax=LEAK_ZMAX,
            colorbar=dict(
                thickness=12,
                title=dict(text="log₁₀"),
                tickvals=[-18, -15, -12, -9, -6, -3, 0],
                ticktext=["1e-18", "1e-15", "1e-12", "1e-9", "1e-6", "1e-3", "1"],
            ),
            text=on_light,  # black numbers on light cells; white ones on dark cells in a trace of their own
            texttemplate="%{text}" if show_text else None,
            textfont=dict(color="#000000", size=CELL_FONT_PX),
            hovertemplate=template,
            name="moved",
            **common,
        ),
        go.Heatmap(
            z=[[1.0 if z else None for z in row] for row in zero.tolist()],
            colorscale=[[0.0, "#d9f2e9"], [1.0, "#d9f2e9"]],
            zmin=0.0,
            zmax=1.0,
            showscale=False,
            text=[[escape_label(zero_label) if z else "" for z in row] for row in zero.tolist()],
            texttemplate="%{text}" if show_text else None,
            textfont=dict(color=EXACT_ZERO_TEXT, size=CELL_FONT_PX),
            hovertemplate=template,
            name="exact zero",
            **common,
        ),
    ]
    if show_text and any(any(row) for row in on_dark):
        traces.append(
            light_text_trace(logs, on_dark, lambda a: np.where(np.isnan(a), None, a).tolist(), **common)
        )
    fig = go.Figure(traces)
    labels = token_tick_labels(tokens)
    fig.update_layout(
        title=dict(text=escape_label(title)) if title else None,
        xaxis=dict(title=dict(text=escape_label(output_title)), **_token_axis(labels)),
        yaxis=dict(title=dict(text=escape_label(changed_title)), autorange="reversed", **_token_axis(labels)),
        height=int(min(720, max(260, 110 + 34 * n))),
        margin=dict(l=10, r=10, t=40 if title else 10, b=10),
        plot_bgcolor="rgba(0,0,0,0)",
    )
    return fig

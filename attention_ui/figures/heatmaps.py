"""Heatmaps of matrices: NumPy arrays and token labels in, ``go.Figure`` out (pure, no Streamlit).

Conventions shared by every heatmap:

* matrix orientation: row 0 on top (``yaxis.autorange="reversed"``), queries as rows and keys as
  columns for n×n matrices, tokens as rows and feature dimensions as columns otherwise;
* cells sit at integer positions 0..n-1; token text is only a tick label (``tickvals`` /
  ``ticktext``) and hover data (``customdata``), so a repeated word keeps its own row and column;
* signed values use a diverging scale centred on 0, attention weights a fixed 0..1 scale;
* masked cells are a neutral grey overlay (a second trace, not part of any colour scale);
* labels are escaped and margins fixed by the toolkit in :mod:`attention_ui.figures.base`.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .base import (
    DARK_TEXT,
    DEFAULT_HOVER,
    DIVERGING_SCALE,
    LIGHT_TEXT,
    LINE_PX,
    MASK_SCALE,
    PLAIN_TEMPLATE,
    TICK_MAX_LABELS,
    TICK_PAD_PX,
    TITLE_BAND_PX,
    WEIGHT_SCALE,
    HoverText,
    axis_margins,
    escape_label,
    fit_x_ticks,
    hover_labels,
    invisible_points,
    scale_rgb,
    text_on,
    tick_positions,
    token_tick_labels,
    x_label_count,
    x_tick_text,
)

TEXT_MAX_CELLS = 12  # print cell values while both sides have at most this many cells
# Cell numbers are CELL_FONT_PX everywhere ("0" and "−∞" too; Plotly's automatic size shrank them to
# ~5 px in narrow maps), and printed only when a cell is at least TEXT_MIN_CELL_PX wide ("−0.35").
CELL_FONT_PX = 11
TEXT_MIN_CELL_PX = 30
# Feature maps (tokens × dimensions) print values only while they have this few columns: their
# numbers are not read cell by cell the way scores and weights are, and every printed cell is an
# SVG text element Plotly lays out on each rerun (about a sixth of the default page's drawing).
FEATURE_TEXT_MAX_DIMS = 4
# Beyond this many cells a map is "large": per-cell hover strings and JSON number lists would make
# a 256×256 map ~3 MB, so large maps name rows/columns through category axes (hover stays exact)
# and carry z as a compact binary array at the 4 decimals hover shows (see _compact).
LARGE_MAP_CELLS = 80 * 80
# A map with more rows or columns than this counts as large too: a 256×16 feature map's 4,096 cells
# as JSON lists cost more to validate than the large-map path.
LARGE_MAP_SIDE = 80
# A colour bar under the plot (matrix_heatmap's colorbar_below): a horizontal bar at the figure's foot,
# in a band of COLORBAR_BELOW_PX added below the x axis' labels and title.
COLORBAR_BELOW_PX = 46
COLORBAR_BELOW = dict(
    orientation="h", thickness=10, len=1.0, x=0.5, xanchor="center", y=0, yanchor="bottom", yref="container"
)


def _clean(a: np.ndarray) -> list:
    """Nested lists of floats with None for NaN/±∞ (Plotly draws None as an empty cell)."""
    return [[v if math.isfinite(v) else None for v in row] for row in np.asarray(a, dtype=float).tolist()]


def _compact(a: np.ndarray) -> np.ndarray:
    """z for a large map: NaN for gaps (NaN/±∞), rounded to the 4 decimals hover shows, as float32.

    float32 halves the bytes of float64 (Plotly sends NumPy arrays as base64). Rounding first keeps
    hover exact: while |v| < 1024 the float32 nearest a 4-decimal value is within 3.1e-5 of it, so
    ``%{z:.4f}`` prints exactly that value. Larger values stay float64, unrounded.
    """
    a = np.asarray(a, dtype=float)
    ok = np.isfinite(a)
    if ok.any() and np.abs(a[ok]).max() >= 1024:
        return np.where(ok, a, np.nan)
    return np.where(ok, np.round(a, 4), np.nan).astype(np.float32)


def _axis(
    n: int, labels: Sequence[str], title: str, max_labels: int, categories: Sequence[str] | None = None
) -> dict:
    shown = tick_positions(n, max_labels)
    extra = (
        {}
        if categories is None
        else dict(type="category", categoryorder="array", categoryarray=list(categories))
    )
    return dict(
        **extra,
        title=dict(text=title),
        tickmode="array",
        tickvals=shown if categories is None else [categories[i] for i in shown],
        ticktext=[labels[i] for i in shown],
        range=[-0.5, n - 0.5],
        showgrid=False,
        zeroline=False,
    )


def matrix_heatmap(
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    kind: str = "signed",
    allowed: np.ndarray | None = None,
    title: str = "",
    row_title: str = "",
    col_title: str = "",
    row_hover: str = "row",
    col_hover: str = "col",
    hover: HoverText = DEFAULT_HOVER,
    show_text: bool | None = None,
    col_hover_labels: Sequence[str] | None = None,
    row_hover_labels: Sequence[str] | None = None,
    height: int | None = None,
    max_labels: int = TICK_MAX_LABELS,
    plot_px: float | None = None,
    bound: float | None = None,
    colorbar_below: bool = False,
) -> go.Figure:
    """A heatmap of a 2-D matrix, row 0 on top.

    ``kind``: ``"signed"`` (diverging scale, zmid=0), ``"weights"`` (0..1 sequential scale) or
    ``"mask"`` (0 = allowed, drawn in one light colour). ``allowed`` (bool, same shape, True = may
    attend) marks masked cells: their value is hidden and a grey overlay trace says "masked (−∞)".
    ``row_labels``/``col_labels`` are raw text; they are escaped and shortened here.
    ``plot_px``: the expected width of the plot area, which decides the x tick labels' angle and the
    margins (default: a low estimate for a square map up to 16 columns, a full-width chart beyond).
    ``bound``: a signed map's colour scale runs from −bound to bound (a scale shared with another
    map) instead of its own largest |value|; the cell numbers' colours follow the same scale.
    ``colorbar_below``: the colour bar lies under the x axis, so the plot keeps the width a bar at its
    side would take (three maps in a row, each naming every column).
    """
    z = np.asarray(values, dtype=float)
    if z.ndim != 2:
        raise ValueError("matrix_heatmap needs a 2-D matrix")
    n_rows, n_cols = z.shape
    if len(row_labels) != n_rows or len(col_labels) != n_cols:
        raise ValueError("one label per row and per column is needed")
    # A masked score is −∞; a masked weight is exactly 0 (softmax of −∞), so say that instead.
    masked_text = "0" if kind == "weights" else "−∞"
    masked_value = f"<br>{escape_label(hover.value)}: 0" if kind == "weights" else ""
    masked = np.zeros_like(z, dtype=bool) if allowed is None else ~np.asarray(allowed, dtype=bool)
    if masked.shape != z.shape:
        raise ValueError("the mask must have the matrix's shape")
    if show_text is None:
        fits = plot_px is None or plot_px / max(1, n_cols) >= TEXT_MIN_CELL_PX
        show_text = n_rows <= TEXT_MAX_CELLS and n_cols <= TEXT_MAX_CELLS and fits

    rows_full = list(row_hover_labels) if row_hover_labels is not None else hover_labels(row_labels)
    cols_full = list(col_hover_labels) if col_hover_labels is not None else hover_labels(col_labels)
    shown = np.where(masked, np.nan, z)
    large = (
        max(n_rows, n_cols) > LARGE_MAP_SIDE
        and len(set(rows_full)) == n_rows
        and len(set(cols_full)) == n_cols
    )
    if large:  # rows/columns are named by their (unique) hover labels: no per-cell strings
        customdata, x, y, where_row, where_col, cells = None, cols_full, rows_full, "%{y}", "%{x}", _compact
    else:
        customdata = np.empty((n_rows, n_cols, 2), dtype=object)  # object array: validated fast
        customdata[:, :, 0] = np.array(rows_full, dtype=object)[:, None]
        customdata[:, :, 1] = np.array(cols_full, dtype=object)[None, :]
        x, y, where_row, where_col, cells = (
            list(range(n_cols)),
            list(range(n_rows)),
            "%{customdata[0]}",
            "%{customdata[1]}",
            _clean,
        )

    common = dict(
        x=x,
        y=y,
        customdata=customdata,
        xgap=_gap(max(n_rows, n_cols), 40),
        ygap=_gap(max(n_rows, n_cols), 40),
        hoverongaps=False,  # an empty cell of one trace must not answer for the other trace
    )
    value_line = f"{escape_label(hover.value)}: %{{z:.4f}}"
    template = (
        f"{escape_label(row_hover)}: {where_row}<br>"
        f"{escape_label(col_hover)}: {where_col}<br>{value_line}<extra></extra>"
    )
    finite = shown[np.isfinite(shown)]
    if kind == "weights":
        scale = dict(colorscale=WEIGHT_SCALE, zmin=0.0, zmax=1.0)
    elif kind == "mask":
        scale = dict(colorscale=[[0.0, "#f0f4fa"], [1.0, "#f0f4fa"]], zmin=0.0, zmax=1.0, showscale=False)
    elif kind == "signed":
        if bound is None or not math.isfinite(bound) or bound <= 0:
            bound = float(np.max(np.abs(finite))) if finite.size else 1.0
            bound = bound if bound > 0 else 1.0
        scale = dict(colorscale=DIVERGING_SCALE, zmid=0.0, zmin=-bound, zmax=bound)
    else:
        raise ValueError(f"unknown kind {kind!r}")

    on_light, on_dark = None, None
    if show_text and kind != "mask":
        on_light, on_dark = contrast_text(shown, scale["colorscale"], scale["zmin"], scale["zmax"])
    main = go.Heatmap(
        z=cells(shown),
        hovertemplate=template,
        name="values",
        text=on_light,
        texttemplate=("0" if kind == "mask" else "%{text}") if show_text else None,
        textfont=dict(color=DARK_TEXT, size=CELL_FONT_PX) if show_text else None,
        colorbar=(COLORBAR_BELOW if colorbar_below else dict(thickness=12, len=0.9))
        if kind != "mask"
        else None,
        **scale,
        **common,
    )
    traces = [main]
    if masked.any():
        overlay = np.where(masked, 1.0, np.nan)
        traces.append(
            go.Heatmap(
                z=cells(overlay),
                colorscale=MASK_SCALE,
                zmin=0.0,
                zmax=1.0,
                showscale=False,
                hovertemplate=(
                    f"{escape_label(row_hover)}: {where_row}<br>"
                    f"{escape_label(col_hover)}: {where_col}<br>"
                    f"{escape_label(hover.masked)}{masked_value}<extra></extra>"
                ),
                name="masked",
                text=[[masked_text if m else "" for m in row] for row in masked.tolist()]
                if show_text
                else None,
                texttemplate="%{text}" if show_text else None,
                textfont=dict(color=DARK_TEXT, size=CELL_FONT_PX),  # 6.3:1 on the masked grey (white: 3.4:1)
                **common,
            )
        )
    if on_dark is not None and any(any(row) for row in on_dark):
        traces.append(light_text_trace(shown, on_dark, cells, **common))
    if plot_px is None:
        plot_px = 42.0 * n_cols if n_cols <= 16 else 600.0
    # every column named while the labels fit side by side turned or written top to bottom; beyond,
    # every k-th (a narrow Q/K/V map of 32 dims); every row while there are at most max_labels
    x_max = x_label_count(plot_px, max_labels)
    xaxis = _axis(n_cols, token_tick_labels(col_labels), col_title, x_max, cols_full if large else None)
    yaxis = _axis(n_rows, token_tick_labels(row_labels), row_title, max_labels, rows_full if large else None)
    yaxis["autorange"] = "reversed"
    yaxis.pop("range")
    margin, xaxis["tickangle"] = axis_margins(
        xaxis["ticktext"], yaxis["ticktext"], plot_px, x_title=bool(col_title), y_title=bool(row_title)
    )
    xaxis["ticktext"] = x_tick_text(xaxis["ticktext"], plot_px)  # Japanese upright, not on its side
    if colorbar_below:  # (a mask map, which has no bar, keeps the band: its plot lines up with the others')
        margin["b"] += COLORBAR_BELOW_PX
    layout = dict(
        xaxis=xaxis,
        yaxis=yaxis,
        height=(height or _auto_height(n_rows)) + (COLORBAR_BELOW_PX if colorbar_below else 0),
        margin=dict(margin, r=10, t=40 if title else 10),
        plot_bgcolor="rgba(0,0,0,0)",
        template=PLAIN_TEMPLATE,
    )
    if title:
        layout["title"] = dict(text=title)
    # One constructor call: Figure.update_layout afterwards costs ~7x more (Plotly's relayout path).
    fig = go.Figure(data=traces, layout=layout)
    return fig


TRANSPARENT_SCALE = [[0.0, "rgba(0,0,0,0)"], [1.0, "rgba(0,0,0,0)"]]


def cell_numbers(values: np.ndarray) -> np.ndarray:
    """Each finite value with two decimals and a true minus sign (as Plotly's ``%{z:.2f}``), "" else."""
    v = np.asarray(values, dtype=float)
    return np.array(
        [[f"{x:.2f}".replace("-", "−") if math.isfinite(x) else "" for x in row] for row in v.tolist()],
        dtype=object,
    ).reshape(v.shape)


def contrast_text(
    values: np.ndarray, colorscale, zmin: float, zmax: float, text: np.ndarray | None = None
) -> tuple[list, list]:
    """Cell numbers split by the text colour their cell needs: (on light cells, on dark cells).

    A Plotly heatmap has one text colour per trace (its automatic one is a shade of the cell's own
    colour, 3.1:1 on mid blue), so the numbers on dark cells go into a second, transparent trace.
    """
    text = cell_numbers(values) if text is None else np.asarray(text, dtype=object)
    dark = text_on(scale_rgb(colorscale, values, zmin, zmax)) == DARK_TEXT
    return np.where(dark, text, "").tolist(), np.where(dark, "", text).tolist()


def light_text_trace(values: np.ndarray, text: list, cells, **common) -> go.Heatmap:
    """White numbers over the dark cells of a map, in a transparent trace that never answers hover."""
    on = np.array([[bool(x) for x in row] for row in text], dtype=bool).reshape(np.shape(values))
    return go.Heatmap(
        z=cells(np.where(on, values, np.nan)),
        colorscale=TRANSPARENT_SCALE,
        showscale=False,
        text=text,
        texttemplate="%{text}",
        textfont=dict(color=LIGHT_TEXT, size=CELL_FONT_PX),
        hoverinfo="skip",
        name="values text",
        **common,
    )


def _gap(n: int, limit: int) -> int:
    """1 px white lines between cells while cells are big enough; none once they would dominate."""
    return 1 if n <= limit else 0


def _auto_height(n_rows: int) -> int:
    return int(min(720, max(220, 90 + 30 * n_rows)))


def attention_heatmap(
    values: np.ndarray,
    tokens: Sequence[str],
    *,
    kind: str = "signed",
    allowed: np.ndarray | None = None,
    title: str = "",
    hover: HoverText = DEFAULT_HOVER,
    query_title: str = "query",
    key_title: str = "key",
    show_text: bool | None = None,
    height: int | None = None,
    plot_px: float | None = None,
    bound: float | None = None,
    colorbar_below: bool = False,
) -> go.Figure:
    """An n×n query × key matrix (scores, weights or the mask); queries are rows. ``bound`` and
    ``colorbar_below``: see :func:`matrix_heatmap`."""
    values = np.asarray(values, dtype=float)
    if values.shape != (len(tokens), len(tokens)):
        raise ValueError("an n×n matrix with one token per row is needed")
    return matrix_heatmap(
        values,
        tokens,
        tokens,
        kind=kind,
        allowed=allowed,
        title=title,
        row_title=query_title,
        col_title=key_title,
        row_hover=hover.query,
        col_hover=hover.key,
        hover=hover,
        show_text=show_text,
        height=height,
        plot_px=plot_px,
        bound=bound,
        colorbar_below=colorbar_below,
    )


def feature_heatmap(
    values: np.ndarray,
    tokens: Sequence[str],
    *,
    title: str = "",
    hover: HoverText = DEFAULT_HOVER,
    token_title: str = "token",
    dim_title: str = "dimension",
    dim_names: Sequence[str] | None = None,
    show_text: bool | None = None,
    height: int | None = None,
    group_size: int | None = None,
    plot_px: float | None = None,
) -> go.Figure:
    """Token rows × feature columns (X, Q, K, V, head output, concat, output); signed scale.

    ``group_size`` draws a vertical divider every that many columns (the heads of a concat).
    Cell values are printed for small maps with at most ``FEATURE_TEXT_MAX_DIMS`` columns.
    """
    values = np.asarray(values, dtype=float)
    n, d = values.shape
    if show_text is None:
        show_text = n <= TEXT_MAX_CELLS and d <= FEATURE_TEXT_MAX_DIMS
    names = list(dim_names) if dim_names is not None else [str(j) for j in range(d)]
    fig = matrix_heatmap(
        values,
        tokens,
        names,
        kind="signed",
        title=title,
        row_title=token_title,
        col_title=dim_title,
        row_hover=hover.token,
        col_hover=hover.dim,
        hover=hover,
        show_text=show_text,
        col_hover_labels=[escape_label(name) for name in names],
        height=height,
        plot_px=plot_px,
    )
    if dim_names is not None:
        _turn_when_crowded(fig)
    if group_size and 0 < group_size < d:
        fig.layout.shapes = [  # what add_vline makes, set at once (add_vline relayouts per line)
            dict(
                type="line",
                xref="x",
                yref="y domain",
                x0=edge - 0.5,
                x1=edge - 0.5,
                y0=0,
                y1=1,
                line=dict(color="#222222", width=2),
            )
            for edge in range(group_size, d, group_size)
        ]
    return fig


def _turn_when_crowded(fig: go.Figure) -> None:
    """Named dimensions ("h0·0", "h0·1", …) ran together on a phone, where the plot is a third as wide
    as the estimate the angle was chosen by: Plotly picks the angle (0°, 30° or 90°) at the width the
    chart is drawn, and the bottom margin has room for the steepest."""
    xaxis = fig.layout.xaxis
    labels = list(xaxis.ticktext or ())
    if not labels:
        return
    slanted, upright = fit_x_ticks(labels, 2 * LINE_PX * len(labels)), fit_x_ticks(labels, 0)
    depth = max(slanted.depth, upright.depth) + TICK_PAD_PX + (TITLE_BAND_PX if xaxis.title.text else 0)
    bottom, left = fig.layout.margin.b or 0, fig.layout.margin.l or 0
    xaxis.tickangle = None  # unset: Plotly's "auto"
    grow = max(0, math.ceil(depth) - bottom)  # the plot keeps its height
    fig.update_layout(
        margin_b=bottom + grow,
        margin_l=max(left, math.ceil(slanted.left_overhang + TICK_PAD_PX)),
        height=fig.layout.height + grow if fig.layout.height else None,
    )


def mask_heatmap(allowed: np.ndarray, tokens: Sequence[str], **kwargs) -> go.Figure:
    """The additive mask M: 0 (light) where a query may attend, −∞ (grey overlay) where not.

    ``kwargs`` as for :func:`attention_heatmap` (title, hover, query_title, key_title, show_text).
    Only the −∞ cells carry text (on small maps): an all-light map of printed zeros says nothing
    the colour and the hover do not, and costs a text element per cell.
    """
    allowed = np.asarray(allowed, dtype=bool)
    fig = attention_heatmap(np.zeros(allowed.shape), tokens, kind="mask", allowed=allowed, **kwargs)
    fig.data[0].hovertemplate = fig.data[0].hovertemplate.replace("%{z:.4f}", "0")
    fig.data[0].texttemplate = None
    return fig


@functools.lru_cache(maxsize=32)
def _grid_layout_cached(rows: int, cols: int, titles: tuple[str, ...]) -> dict:
    grid = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=list(titles),
        horizontal_spacing=0.04,
        vertical_spacing=min(0.12, 0.3 / rows) if rows > 1 else 0.1,
    )
    return grid.layout.to_plotly_json()


def _grid_layout(rows: int, cols: int, titles: tuple[str, ...]) -> dict:
    """make_subplots' layout (axis domains, panel titles) as a fresh dict; the grid is built once."""
    return copy.deepcopy(_grid_layout_cached(rows, cols, titles))


def heads_small_multiples(
    weights: np.ndarray,
    tokens: Sequence[str],
    *,
    allowed: np.ndarray | None = None,
    head_title: str = "head {h}",
    hover: HoverText = DEFAULT_HOVER,
    max_cols: int = 4,
    show_text: bool | None = None,
    token_hover_max: int = 24,
    titles: Sequence[str] | None = None,
    signed: bool = False,
    query_title: str | None = None,
    key_title: str | None = None,
) -> go.Figure:
    """Every head's weights ``[h, n, n]`` side by side on one shared 0..1 colour scale.

    The first column's panels say ``query_title`` up their y axis and the bottom row's ``key_title``
    under their x axis (default: the hover words, ``hover.query`` and ``hover.key``). Every row is
    named, and every column: a row holds fewer than ``max_cols`` panels where that lets the labels fit
    (:func:`panels_per_row`).

    ``titles``: one panel title each (default ``head_title`` with the head's number; already
    translated, escaped here). ``signed``: values of either sign (gradients) on one diverging scale
    centred on 0, from −m to m, m the largest |value| of all panels.

    Trace order: for each head its weights trace, then (if anything is masked) its grey overlay.
    Up to ``token_hover_max`` tokens the hover names the tokens; beyond that it gives the query
    and key positions only (still exact), which keeps many large panels fast to draw.
    """
    weights = np.asarray(weights, dtype=float)
    h, n, _ = weights.shape
    if len(tokens) != n:
        raise ValueError("one token per row is needed")
    masked = np.zeros((n, n), dtype=bool) if allowed is None else ~np.asarray(allowed, dtype=bool)
    cols = panels_per_row(h, n, max_cols)
    rows = math.ceil(h / cols)
    names = [head_title.format(h=k) for k in range(h)] if titles is None else [str(x) for x in titles]
    if len(names) != h:
        raise ValueError("one title per panel is needed")
    layout = _grid_layout(rows, cols, tuple(escape_label(x) for x in names))
    if show_text is None:
        show_text = False  # head k's numbers are printed in its own weights map above; panels stay light

    q, k_ = escape_label(hover.query), escape_label(hover.key)
    if n <= token_hover_max:
        full = hover_labels(tokens)
        customdata = np.array([[[full[i], full[j]] for j in range(n)] for i in range(n)], dtype=object)
        where = f"{q}: %{{customdata[0]}}<br>{k_}: %{{customdata[1]}}"
    else:
        customdata = None
        where = f"{q}: #%{{y}}<br>{k_}: #%{{x}}"
    gap = _gap(n, 16)
    common = dict(
        x=list(range(n)), y=list(range(n)), xgap=gap, ygap=gap, hoverongaps=False, customdata=customdata
    )
    cells = _compact if n * n > LARGE_MAP_CELLS else _clean
    overlay_z = cells(np.where(masked, 1.0, np.nan)) if masked.any() else None
    value_format = ".3g" if signed else ".4f"

    traces, trace_rows, trace_cols = [], [], []
    for head in range(h):
        r, c = divmod(head, cols)
        shown = np.where(masked, np.nan, weights[head])
        traces.append(
            go.Heatmap(
                z=cells(shown),
                coloraxis="coloraxis",
                name="values",
                hovertemplate=f"{where}<br>{escape_label(hover.value)}: %{{z:{value_format}}}<extra>{escape_label(names[head])}</extra>",
                texttemplate="%{z:.2f}" if show_text else None,
                **common,
            )
        )
        trace_rows.append(r + 1)
        trace_cols.append(c + 1)
        if overlay_z is not None:
            traces.append(
                go.Heatmap(
                    z=overlay_z,
                    colorscale=MASK_SCALE,
                    zmin=0.0,
                    zmax=1.0,
                    showscale=False,
                    name="masked",
                    hovertemplate=f"{where}<br>{escape_label(hover.masked)}<extra>{escape_label(names[head])}</extra>",
                    **common,
                )
            )
            trace_rows.append(r + 1)
            trace_cols.append(c + 1)
    for trace, r, c in zip(traces, trace_rows, trace_cols, strict=True):
        idx = (r - 1) * cols + c
        trace.xaxis, trace.yaxis = f"x{idx if idx > 1 else ''}", f"y{idx if idx > 1 else ''}"

    labels = token_tick_labels(tokens, max_chars=6)
    # Panels share a full-width chart: a low estimate of 720 px for all columns at 1366 px (four
    # panels were 165 px each), so the 12 tokens of the Japanese default sentence are all named.
    panel_px = 0.9 * SMALL_MULTIPLES_PX / cols
    columns = tick_positions(n, x_label_count(panel_px))
    rows_shown = tick_positions(n)
    x_text = [labels[i] for i in columns]
    y_ticks = dict(tickmode="array", tickvals=rows_shown, ticktext=[labels[i] for i in rows_shown])
    x_ticks = dict(tickmode="array", tickvals=columns, ticktext=x_tick_text(x_text, panel_px))
    q_title = escape_label(hover.query if query_title is None else query_title)
    k_title = escape_label(hover.key if key_title is None else key_title)
    margin, angle = axis_margins(x_text, y_ticks["ticktext"], panel_px, x_title=True, y_title=True)
    for name, axis in layout.items():
        if name.startswith("xaxis"):
            idx = int(name[5:] or 1)
            bottom = h - cols < idx <= h  # a panel with none below it names the columns
            axis.update(
                showgrid=False, zeroline=False, range=[-0.5, n - 0.5], tickangle=angle, showticklabels=bottom,
                **x_ticks,
            )  # fmt: skip
            if bottom:
                axis.update(title=dict(text=k_title))
        elif name.startswith("yaxis"):
            idx = int(name[5:] or 1)
            first_col = (idx - 1) % cols == 0
            axis.update(
                showgrid=False, zeroline=False, autorange="reversed", showticklabels=first_col, **y_ticks
            )
            if first_col:
                axis.update(title=dict(text=q_title))
    if signed:
        finite = np.abs(weights[np.isfinite(weights) & ~masked[None]])
        bound = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        scale = dict(colorscale=DIVERGING_SCALE, cmin=-bound, cmax=bound)
    else:
        scale = dict(colorscale=WEIGHT_SCALE, cmin=0.0, cmax=1.0)
    layout.update(
        coloraxis=dict(**scale, colorbar=dict(thickness=12)),
        height=int(min(1600, rows * max(220, min(360, 60 + 22 * n)) + 40)),
        margin=dict(margin, r=10, t=40),
        plot_bgcolor="rgba(0,0,0,0)",
        template=PLAIN_TEMPLATE,
    )
    # One constructor call instead of add_traces + update_xaxes/yaxes/layout (Plotly's slow path).
    fig = go.Figure(data=traces, layout=layout)
    return fig


SMALL_MULTIPLES_PX = 720  # heads_small_multiples: the plot width all panels share (see there)


def panels_per_row(h: int, n: int, max_cols: int) -> int:
    """How many of ``h`` panels of ``n`` tokens a row of :func:`heads_small_multiples` holds: up to
    ``max_cols``, fewer where that lets every column's label fit a panel (four heads of a 16-token
    sentence: two rows of two, not every other token named), the rows as even as they can be. Where
    even one panel a row cannot name them all, the rows stay full (the labels are thinned anyway)."""
    full = max(1, min(h, max_cols))
    fits = [c for c in range(full, 0, -1) if x_label_count(0.9 * SMALL_MULTIPLES_PX / c) >= n]
    if not fits:
        return full
    return math.ceil(full / math.ceil(full / fits[0]))


CLICK_MAX_CELLS = 64 * 64  # beyond this, no click targets (cells are a few pixels wide anyway)


def add_click_targets(fig: go.Figure) -> go.Figure:
    """Overlay an invisible scatter point on every cell centre of a matrix heatmap, in place.

    Plotly heatmaps report no points to selection events (streamlit#8760), scatter points do: each
    point sits at (column, row) and carries the cell's hover text, so clicking anywhere in a cell
    selects that cell's point (``hoverdistance=-1``: the nearest centre is always the cell under
    the pointer) and hovering still shows the same box. The heatmaps' own hover is turned off so
    only one box appears.
    """
    heatmaps = [tr for tr in fig.data if tr.type == "heatmap"]
    if not heatmaps:
        return fig
    main = heatmaps[0]
    n_rows, n_cols = len(main.y), len(main.x)
    if main.customdata is None or n_rows * n_cols > CLICK_MAX_CELLS:
        return fig  # large maps: one point per cell would outweigh the map; the selectboxes remain
    xs, ys, data, templates = [], [], [], []
    main_template = main.hovertemplate.replace("%{z:.4f}", "%{customdata[2]:.4f}")
    for r in range(n_rows):
        for c in range(n_cols):
            label_row, label_col = main.customdata[r][c][0], main.customdata[r][c][1]
            value = main.z[r][c]
            template = main_template
            if value is None:  # masked (or not finite): the overlay's text answers
                owner = next((tr for tr in heatmaps[1:] if tr.z[r][c] is not None), None)
                template = owner.hovertemplate if owner is not None else main_template
            xs.append(c)
            ys.append(r)
            data.append([label_row, label_col, value])
            templates.append(template)
    for tr in heatmaps:
        tr.hoverinfo = "skip"
        tr.hovertemplate = None
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            **invisible_points(12),
            customdata=data,
            hovertemplate=templates,
            name="cells",
            showlegend=False,
        )
    )
    fig.update_layout(hoverdistance=-1, clickmode="event+select")
    return fig

"""The figure toolkit every builder shares: colours, the plain template, escaping, ticks, margins.

Pure (no Streamlit). Conventions for every figure in this package:

* all user text is escaped with :func:`escape_label`, because Plotly renders pseudo-HTML in tick
  labels, hover text, titles, legends and cell text;
* colour scales are colour-vision-deficiency friendly (tests/test_colour_access.py);
* charts drawn with ``theme=None`` carry :data:`PLAIN_TEMPLATE` and fixed margins sized for their
  tick labels (:func:`axis_margins`), so Plotly lays each chart out once;
* :class:`AxisText` carries a chart's axis titles and title, and :func:`legend_above_layout` gives the
  line and bar charts of the labs one look.
"""

from __future__ import annotations

import html
import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go

# contrast); tests/test_colour_access.py checks both against the masked grey.
DIVERGING_SCALE = "RdBu_r"  # negative = blue, 0 = near white, positive = red
# Weights: single-hue Blues (white = 0, dark blue = 1). Viridis passes through a mid grey-teal that
# protan/deutan viewers cannot tell from the masked grey (CIELAB ΔE ≈ 1 under Machado 2009
# simulation); Blues stays ΔE ≥ 25 from it for normal, protan, deutan and tritan vision.
WEIGHT_SCALE = "Blues"
MASK_COLOR = "#8c8c8c"  # neutral mid grey: not near white (RdBu centre) nor Viridis' ends
MASK_SCALE = [[0.0, MASK_COLOR], [1.0, MASK_COLOR]]

# The look of Streamlit's light chart theme (font, colours) as a small fixed Plotly template. The
# playground's step charts are drawn with ``theme=None`` and this template: Streamlit's theme is
# applied in the browser by serialising each figure and rewriting placeholder colours on every
# rerun, which at 128 tokens cost more than drawing the maps themselves (bench/page_latency.py);
# our colour scales are set explicitly anyway, and the template replaces the ~8 KB default one
# Plotly would otherwise embed in every figure.
FONT_FAMILY = '"Source Sans", sans-serif'
# Chart text (tick labels, axis titles, legends, colour-bar ticks): 6.3:1 on white, above WCAG 2.1 AA's
# 4.5:1 for small text. Streamlit's own chart grey (#808495) reaches only 3.7:1.
AXIS_TEXT_COLOR = "#5c5f6e"
# Numbers printed in cells are black or white, whichever contrasts more with the cell's colour: one of
# the two always reaches 4.58:1 (the worst case is a cell of relative luminance 0.179).
DARK_TEXT, LIGHT_TEXT = "#000000", "#ffffff"
TICK_FONT_PX = 12  # the template's font size, used by tick labels
TITLE_FONT_PX = 14  # axis titles
PLAIN_TEMPLATE = go.layout.Template(
    layout=dict(
        font=dict(family=FONT_FAMILY, size=TICK_FONT_PX, color=AXIS_TEXT_COLOR),
        paper_bgcolor="#FFFFFF",
        plot_bgcolor="rgba(0,0,0,0)",
        hoverlabel=dict(
            bgcolor="#FFFFFF", bordercolor="#DCD8D4", font=dict(family=FONT_FAMILY, size=13, color="#31333F")
        ),
        # No automargin: the builders size the margins for their own tick labels (axis_margins);
        # automargin made Plotly lay every chart out twice on each rerun (~0.3x the floor app time).
        xaxis=dict(title=dict(font=dict(size=TITLE_FONT_PX), standoff=8)),
        yaxis=dict(title=dict(font=dict(size=TITLE_FONT_PX), standoff=8)),
        colorway=["#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700", "#ffd16a"],
    )
)


def relative_luminance(rgb) -> np.ndarray:
    """WCAG 2.1 relative luminance of sRGB colours given as 0..255 channels ``[..., 3]``."""
    c = np.asarray(rgb, dtype=float) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return lin @ np.array([0.2126, 0.7152, 0.0722])


def contrast_ratio(a, b) -> np.ndarray:
    """WCAG contrast ratio (1 … 21) between colours ``a`` and ``b`` (0..255 channels, broadcast)."""
    la, lb = relative_luminance(a), relative_luminance(b)
    return (np.maximum(la, lb) + 0.05) / (np.minimum(la, lb) + 0.05)


def colour_rgb(colour: str) -> tuple[float, float, float]:
    """``#rrggbb`` or ``rgb(r, g, b)`` as 0..255 channels."""
    if colour.startswith("#"):
        return tuple(float(v) for v in pc.hex_to_rgb(colour))
    return tuple(float(v) for v in pc.unlabel_rgb(colour))


def scale_rgb(colorscale, values: np.ndarray, zmin: float, zmax: float) -> np.ndarray:
    """The colour Plotly draws for each value on ``colorscale`` (a name or [[pos, colour], ...]) as
    0..255 channels ``[..., 3]``; NaN values give NaN colours."""
    scale = pc.get_colorscale(colorscale) if isinstance(colorscale, str) else colorscale
    v = np.asarray(values, dtype=float)
    span = zmax - zmin if zmax > zmin else 1.0
    pos = np.clip((v - zmin) / span, 0.0, 1.0)
    out = np.full(v.shape + (3,), np.nan)
    ok = np.isfinite(v)
    if ok.any():
        sampled = pc.sample_colorscale(scale, pos[ok].tolist(), colortype="tuple")
        out[ok] = np.array([[c * 255 if max(rgb) <= 1 else c for c in rgb] for rgb in sampled])
    return out


def text_on(rgb: np.ndarray) -> np.ndarray:
    """Per cell, :data:`DARK_TEXT` or :data:`LIGHT_TEXT`, whichever contrasts more with ``rgb``."""
    lum = relative_luminance(np.nan_to_num(np.asarray(rgb, dtype=float), nan=255.0))
    # black wins where (L + 0.05) / 0.05 > 1.05 / (L + 0.05), i.e. above L = 0.179
    return np.where(lum > np.sqrt(1.05 * 0.05) - 0.05, DARK_TEXT, LIGHT_TEXT)


# Trace types whose own colour bar is drawn unless showscale is False (the others have one on marker).
_COLORBAR_TRACES = frozenset(
    "heatmap contour histogram2d histogram2dcontour surface choropleth choroplethmap choroplethmapbox "
    "densitymap densitymapbox cone streamtube volume isosurface mesh3d".split()
)


def _set_missing(d: dict, path: tuple[str, ...], value: str) -> None:
    """``d[path[0]][path[1]]… = value`` unless a colour is already there."""
    for key in path[:-1]:
        d = d.setdefault(key, {})
    if not d.get(path[-1]):
        d[path[-1]] = value


def readable_text(fig: go.Figure) -> go.Figure:
    """Every axis, legend, colour bar and unstyled annotation of ``fig`` in :data:`AXIS_TEXT_COLOR`, in place.

    For charts drawn in Streamlit's theme, whose template paints chart text #808495 (3.7:1 on white):
    colours set on the figure itself win over the template's. Written straight into the figure's
    property dicts (what ``to_dict`` and so ``st.plotly_chart`` read): setting them one by one through
    graph objects validated each and took ~20 ms per chart, a third of the decoder page's script run
    (bench/RESULTS.md, issue 24). Only colours are written, so nothing needs validating; a Plotly
    without these dicts takes the graph-object path (:func:`_readable_text_objects`, the same result).
    """
    layout, data = getattr(fig, "_layout", None), getattr(fig, "_data", None)
    if not isinstance(layout, dict) or not isinstance(data, list):
        return _readable_text_objects(fig)
    c = AXIS_TEXT_COLOR
    for path in (("font", "color"), ("legend", "font", "color"), ("legend", "title", "font", "color")):
        _set_missing(layout, path, c)
    _set_missing(layout, ("title", "font", "color"), "#31333F")
    axes = {"xaxis", "yaxis"} | {k for k in layout if k.startswith(("xaxis", "yaxis")) and k[5:].isdigit()}
    for name in sorted(axes):
        _set_missing(layout, (name, "tickfont", "color"), c)
        _set_missing(layout, (name, "title", "font", "color"), c)
    for annotation in layout.get("annotations") or ():
        _set_missing(annotation, ("font", "color"), c)
    bars = [
        tr.setdefault("colorbar", {})
        for tr in data
        if tr.get("type") in _COLORBAR_TRACES and tr.get("showscale") is not False
    ]
    bars += [
        tr["marker"].setdefault("colorbar", {}) for tr in data if (tr.get("marker") or {}).get("showscale")
    ]
    coloraxes = {"coloraxis"} | {k for k in layout if k.startswith("coloraxis") and k[9:].isdigit()}
    bars += [
        layout.setdefault(k, {}).setdefault("colorbar", {}) for k in sorted(coloraxes)
    ]  # as select_coloraxes
    for bar in bars:
        _set_missing(bar, ("tickfont", "color"), c)
        _set_missing(bar, ("title", "font", "color"), c)
    return fig


def _readable_text_objects(fig: go.Figure) -> go.Figure:
    """Every axis, legend, colour bar and unstyled annotation of ``fig`` in :data:`AXIS_TEXT_COLOR`, in place.

    For charts drawn in Streamlit's theme, whose template paints chart text #808495 (3.7:1 on white):
    colours set on the figure itself win over the template's.
    """
    c = AXIS_TEXT_COLOR
    layout = fig.layout
    layout.font.color = layout.font.color or c
    layout.legend.font.color = layout.legend.font.color or c
    layout.legend.title.font.color = layout.legend.title.font.color or c
    layout.title.font.color = layout.title.font.color or "#31333F"
    for axis in (*fig.select_xaxes(), *fig.select_yaxes()):
        axis.tickfont.color = axis.tickfont.color or c
        axis.title.font.color = axis.title.font.color or c
    for annotation in layout.annotations:
        annotation.font.color = annotation.font.color or c
    # only colour bars that are drawn: touching an unused one (a bar chart's marker) makes Plotly draw it
    bars = [tr.colorbar for tr in fig.data if "colorbar" in tr and tr.showscale is not False]
    bars += [
        tr.marker.colorbar
        for tr in fig.data
        if "marker" in tr and "colorbar" in tr.marker and tr.marker.showscale
    ]
    bars += [axis.colorbar for axis in fig.select_coloraxes()]
    for bar in bars:
        bar.tickfont.color = bar.tickfont.color or c
        bar.title.font.color = bar.title.font.color or c
    return fig


# A log axis labelled at powers of ten only (Plotly's default adds 2 and 5 between them, which reads
# "1, 2, 5, 10, 2, 5, 100"); dtick=1 is one decade in log10 units.
LOG_DECADES = dict(type="log", dtick=1)

TICK_MAX_LABELS = 32  # beyond this, show every k-th tick label (hover stays exact)
LABEL_MAX_CHARS = 10  # tick labels longer than this are shortened with "…"


def escape_label(text: object, max_chars: int | None = None) -> str:
    """``text`` made safe for Plotly's pseudo-HTML (``&``, ``<``, ``>`` escaped).

    With ``max_chars``, text longer than that is cut to ``max_chars - 1`` characters plus "…"
    *before* escaping, so an entity such as ``&amp;`` is never cut in half.
    """
    s = str(text)
    if max_chars is not None and len(s) > max_chars:
        s = s[: max(1, max_chars - 1)] + "…"
    return html.escape(s, quote=False)


def token_tick_labels(tokens: Sequence[str], max_chars: int = LABEL_MAX_CHARS) -> list[str]:
    """Escaped, shortened tick labels, one per token."""
    return [escape_label(tok, max_chars) for tok in tokens]


def hover_labels(tokens: Sequence[str]) -> list[str]:
    """Full escaped labels with their position, e.g. ``#4 the``, for hover boxes."""
    return [f"#{i} {escape_label(tok)}" for i, tok in enumerate(tokens)]


def tick_positions(n: int, max_labels: int = TICK_MAX_LABELS) -> list[int]:
    """Which of 0..n-1 get a tick label: all of them, or every k-th when there are too many."""
    step = max(1, math.ceil(n / max_labels))
    return list(range(0, n, step))


LINE_PX = 16  # height of one line of tick labels
TICK_PAD_PX = 8  # between the plot and its tick labels, and a little air beyond them
TITLE_BAND_PX = 32  # an axis title (14 px) with its standoff
# Horizontal room one tick label needs beside the next when it is turned 90° or written top to bottom
# (a 12-px character, see upright_label): the x labels of a map are thinned only below this.
VERTICAL_LABEL_PX = 13


def text_px(text: str, size: int = TICK_FONT_PX) -> float:
    """A generous estimate of how wide ``text`` (escaped pseudo-HTML) is drawn, in pixels.

    Wide and fullwidth characters (CJK) take 1 em, everything else 0.62 em, which is wider than
    the average Latin letter of the app's font, so labels are not clipped by margins sized from it.
    """
    plain = html.unescape(text)
    return sum(size * (1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.62) for ch in plain)


@dataclass(frozen=True)
class TickFit:
    """How a bottom axis' tick labels are drawn: their angle, how far below the plot they reach, and
    whether they are written top to bottom (``upright``: :func:`upright_labels` gives their text)."""

    angle: int
    depth: float
    left_overhang: float  # how far the first label reaches left of its tick (rotated labels)
    upright: bool = False


def is_wide(text: str) -> bool:
    """Whether ``text`` (escaped) holds a wide character (Japanese, Chinese, Korean): one that a label
    turned 90° shows lying on its side."""
    return any(unicodedata.east_asian_width(ch) in "WF" for ch in html.unescape(text))


def fit_x_ticks(labels: Sequence[str], plot_px: float) -> TickFit:
    """Horizontal labels when they fit beside each other, else written top to bottom when any holds a
    Japanese (wide) character, else slanted 30°, else vertical.

    The same choice Plotly's automatic tick angles make, taken here from an estimate of the plot
    width, so the margins can be fixed in advance (automargin would lay the chart out twice). Turned,
    Japanese lies on its side (issue 42, point 14: the decoder's key labels read sideways); written
    one character under the other, it reads upright, as Japanese is written in columns.
    """
    widths = [text_px(label) for label in labels]
    widest = max(widths, default=0.0)
    per_tick = plot_px / max(1, len(labels))
    if widest + 6 <= per_tick:
        return TickFit(0, LINE_PX, 0.0)
    if any(is_wide(label) for label in labels):
        lines = max(label.count("<br>") + 1 for label in upright_labels(labels, per_tick))
        return TickFit(0, lines * LINE_PX, 0.0, upright=True)
    if per_tick >= 2 * LINE_PX:
        first = widths[0] if widths else 0.0
        return TickFit(-30, 0.5 * widest + LINE_PX, 0.87 * first)
    return TickFit(-90, widest, 0.0)


# In a label written top to bottom, the forms Japanese uses in columns: the long-vowel bar and the
# ellipsis stand upright, brackets open downwards (Unicode's vertical presentation forms, which the
# Japanese fonts draw).
VERTICAL_FORMS = str.maketrans(
    {
        "ー": "︱",
        "…": "︙",
        "（": "︵",
        "）": "︶",
        "(": "︵",
        ")": "︶",
        "「": "﹁",
        "」": "﹂",
        "[": "﹇",
        "]": "﹈",
    }
)


def x_tick_text(labels: Sequence[str], plot_px: float) -> list[str]:
    """The text of a bottom axis' labels (escaped) as :func:`fit_x_ticks` draws them in ``plot_px``:
    as they are, or written top to bottom (:func:`upright_labels`) where Japanese would be turned."""
    if not fit_x_ticks(labels, plot_px).upright:
        return list(labels)
    return upright_labels(labels, plot_px / max(1, len(labels)))


def x_label_count(plot_px: float, max_labels: int = TICK_MAX_LABELS) -> int:
    """How many x labels a map of ``plot_px`` names: one per :data:`VERTICAL_LABEL_PX`, at most
    ``max_labels``, at least 2 (hover names every cell)."""
    return min(max_labels, max(2, int(plot_px // VERTICAL_LABEL_PX)))


def upright_labels(labels: Sequence[str], per_tick: float) -> list[str]:
    """Each label (escaped) one character per line, top to bottom; a label that fits ``per_tick`` px
    on one line (``a``, ``猫``) stays as it is."""
    out = []
    for label in labels:
        if text_px(label) + 2 <= per_tick:
            out.append(label)
            continue
        chars = html.unescape(label).translate(VERTICAL_FORMS)
        out.append("<br>".join(html.escape(ch, quote=False) for ch in chars if not ch.isspace()))
    return out


def axis_margins(
    x_labels: Sequence[str], y_labels: Sequence[str], plot_px: float, *, x_title: bool, y_title: bool
) -> tuple[dict, int]:
    """(margin l/b, x tick angle) that fit the given tick labels and axis titles.

    ``plot_px`` is the plot area's expected width (a low estimate: the real one is usually wider,
    and a narrower guess only means labels are slanted where they might have fit).
    """
    fit = fit_x_ticks(x_labels, plot_px)
    left = max((text_px(label) for label in y_labels), default=0.0) + TICK_PAD_PX
    left += TITLE_BAND_PX if y_title else 0
    bottom = fit.depth + TICK_PAD_PX + (TITLE_BAND_PX if x_title else 0)
    left = max(left, fit.left_overhang + TICK_PAD_PX)
    return dict(l=math.ceil(left), b=math.ceil(bottom)), fit.angle


# A legend in one row just above the plot, from its left edge (the labs' line and bar charts).
LEGEND_ABOVE = dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0)


def legend_above_layout(
    fig: go.Figure,
    x_title: str,
    y_title: str,
    *,
    height: int,
    xaxis: dict | None = None,
    yaxis: dict | None = None,
    top: int = 30,
    **layout,
) -> go.Figure:
    """The layout the labs' line and bar charts share: both axis titles (escaped), ``xaxis`` and
    ``yaxis`` extra settings, :data:`LEGEND_ABOVE`, 10 px margins but ``top`` px above the plot (the
    legend's room), a transparent plot area; ``layout``: anything else (e.g. ``barmode``)."""
    fig.update_layout(
        height=height,
        xaxis=dict(title=dict(text=escape_label(x_title)), **(xaxis or {})),
        yaxis=dict(title=dict(text=escape_label(y_title)), **(yaxis or {})),
        margin=dict(l=10, r=10, t=top, b=10),
        legend=LEGEND_ABOVE,
        plot_bgcolor="rgba(0,0,0,0)",
        **layout,
    )
    return fig


def reference_line(
    fig: go.Figure, y: float, label: str, *, label_y: float | None = None, **annotation
) -> None:
    """A dotted grey horizontal line at ``y``, its label (escaped) just above it at the plot's left
    edge. ``label_y``: where the label sits when that is not ``y`` (a log axis places annotations in
    log10 units); ``annotation``: further annotation settings."""
    fig.add_hline(y=y, line=dict(color="#555555", width=1, dash="dot"))
    fig.add_annotation(
        text=escape_label(label),
        x=0,
        xref="x domain",
        xanchor="left",
        y=y if label_y is None else label_y,
        yanchor="bottom",
        showarrow=False,
        font=dict(size=11, color="#555555"),
        **annotation,
    )


def add_named_series(
    fig: go.Figure,
    rows: Mapping[str, Sequence[float]],
    trace: Callable[..., object],
    style: Callable[[int], dict],
    hover: str,
    x: Sequence | None = None,
) -> go.Figure:
    """One trace per named row (a bar group or a line), the charts' shared loop: ``trace`` is
    ``go.Bar`` or ``go.Scatter``; the row's name is escaped and leads its hover box (``hover``: the
    rest of the template); ``style(i)`` is row i's look (colour, dash, mode); ``x``: the categories,
    or ``None`` for the positions 0, 1, …"""
    for i, (name, values) in enumerate(rows.items()):
        label = escape_label(name)
        fig.add_trace(
            trace(
                x=list(range(len(values))) if x is None else x,
                y=[float(v) for v in values],
                name=label,
                hovertemplate=f"{label}<br>{hover}<extra></extra>",
                **style(i),
            )
        )
    return fig


@dataclass(frozen=True)
class HoverText:
    """The words used in hover boxes; pages pass translated ones (default: English)."""

    query: str = "query"
    key: str = "key"
    token: str = "token"
    dim: str = "dim"
    value: str = "value"
    masked: str = "masked (−∞)"


DEFAULT_HOVER = HoverText()


@dataclass(frozen=True)
class AxisText:
    """A chart's axis titles and its own title, as plain text (escaped where drawn): the words a
    figure builder takes as one value. Each builder has its own English default; pages pass
    translated ones (an empty ``title``: no chart title)."""

    x: str = ""
    y: str = ""
    title: str = ""

    def x_axis(self, **settings) -> dict:
        """The x axis' layout: its title (escaped), then ``settings``."""
        return dict(title=dict(text=escape_label(self.x)), **settings)

    def y_axis(self, **settings) -> dict:
        """The y axis' layout: its title (escaped), then ``settings``."""
        return dict(title=dict(text=escape_label(self.y)), **settings)


def per_token_bars_layout(fig: go.Figure, labels: Sequence[str], axes: AxisText, **yaxis) -> go.Figure:
    """The layout of grouped bars with one group per token: tokens on x, a legend on top, ``yaxis`` extra."""
    fig.update_layout(
        template=PLAIN_TEMPLATE,
        barmode="group",
        height=320,
        margin=dict(l=60, r=10, t=30, b=60),
        legend=dict(orientation="h", y=1.12),
        xaxis=axes.x_axis(tickmode="array", tickvals=list(range(len(labels))), ticktext=labels),
        yaxis=axes.y_axis(**yaxis),
    )
    return fig


# Plotly's toolbar (the PNG button, reset axes and Streamlit's full-screen button) is drawn over the
# top-right corner of the figure: 2 px from the top, 26 px tall (measured in Chromium, Plotly.js 3 as
# Streamlit 1.67 bundles it). TOOLBAR_PX of empty strip above everything the figure draws keeps it
# off the data at any width; charts put on the page by kit.chart get it from :func:`toolbar_room`.
TOOLBAR_PX = 30
PLOTLY_DEFAULT_TOP_PX = 100  # Plotly's own top margin when a figure sets none


def toolbar_room(fig: go.Figure) -> go.Figure:
    """An empty strip of :data:`TOOLBAR_PX` at the top of ``fig``, in place; the plot keeps its size.

    The top margin (and a fixed height) grow by the strip, so whatever sits above the plot in paper
    coordinates (legends, panel titles, top tick labels) keeps its place relative to the plot. A title
    placed relative to the whole figure (``yref="container"``, Plotly's default) moves down by the
    strip. Applying it twice adds nothing (``fig._toolbar_room``).
    """
    if getattr(fig, "_toolbar_room", False):
        return fig
    layout = fig.layout
    top = layout.margin.t if layout.margin.t is not None else PLOTLY_DEFAULT_TOP_PX
    height = layout.height + TOOLBAR_PX if layout.height else None
    update: dict = dict(margin_t=top + TOOLBAR_PX)
    if height:
        update["height"] = height
    title = layout.title
    if title.text and title.yref != "paper":
        if height:
            # distance of the title's anchor from the figure's top, then moved below the strip
            old = height - TOOLBAR_PX
            below = top / 2 if title.y in (None, "auto") else (1 - float(title.y)) * old
            update["title_y"] = 1 - (below + TOOLBAR_PX) / height
            update["title_yanchor"] = title.yanchor if title.y not in (None, "auto") else "middle"
        else:  # no fixed height to place it by: right above the plot, in the top margin
            update.update(title_yref="paper", title_y=1, title_yanchor="bottom")
    legend = layout.legend
    above = (
        legend.y is not None and legend.y >= 1 and legend.yanchor == "bottom" and legend.yref != "container"
    )
    if height and above and legend.orientation == "h":
        # A row of legend entries above the plot wraps into more rows on a narrow screen and grew up
        # into the toolbar's corner; hung from below the strip (and below a title) it grows downwards,
        # and Plotly widens the top margin for it (margin.autoexpand).
        hang = TOOLBAR_PX + (TITLE_BAND_PX if title.text and title.yref != "paper" else 0)
        update.update(legend_yref="container", legend_y=1 - hang / height, legend_yanchor="top")
    fig.update_layout(**update)
    fig._toolbar_room = True
    return fig


def invisible_points(size: int) -> dict:
    """Scatter settings for click targets: markers nobody sees, selected or not, that still take
    hover and clicks (Plotly heatmaps report no points to a selection, streamlit#8760)."""
    return dict(
        mode="markers",
        marker=dict(size=size, color="rgba(0,0,0,0)"),
        selected=dict(marker=dict(opacity=0)),
        unselected=dict(marker=dict(opacity=0)),
    )

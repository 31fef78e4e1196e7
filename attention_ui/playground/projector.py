"""A step's figure restyled for a projector (presenter mode): pure, ``go.Figure`` in, new figure out.

The normal page sizes figures for reading at a desk (12 px ticks, small maps). On a projector the
chart fills the slide (the page gives it the height of the window, see
:mod:`attention_ui.playground.presenter`), so the figure drops its fixed height and uses large type:
cell numbers of :data:`CELL_FONT_PX`, tick labels of :data:`TICK_FONT_PX`, both in near-black text
(cell numbers on dark cells switch to white, which Plotly chooses per cell).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

from attention_ui.figures.base import escape_label

CELL_FONT_PX = 22  # the numbers printed in cells, up to CROWDED_COLUMNS columns
CROWDED_FONT_PX = 18  # beyond that (a 12-token map at 1366 px wide still fits "0.00" in a cell)
CROWDED_COLUMNS = 8
TICK_FONT_PX = 20  # token labels and dimension names on the axes
TITLE_FONT_PX = 22  # axis titles
COLORBAR_FONT_PX = 18
TEXT_COLOR = "#1f2129"  # 15.6:1 on white


# The room a slide gives its chart on the smaller projector, 1366×768 (a figure cannot know the
# window, so it is sized for the smaller one and only gains on a 1920×1080 one). The boxes are the
# presenter CSS's (attention_ui.playground.presenter): the chart column, 100vh − 9.5rem tall, and a
# wide step's box, 100vh − 24rem; CHROME_PX is what the plot loses of it to the toolbar strip, the
# panel titles and the tick labels (measured: ~130 px at 15 tokens).
SLIDE_BOX_PX = 768 - 152
WIDE_BOX_PX = 768 - 384
CHROME_PX = 140  # a map on the chart column: toolbar strip, x labels and title
WIDE_CHROME_PX = 116  # the heads' panels: their titles (sharing the toolbar's band) and upright x labels
MIN_TEXT_PX = 14  # cell numbers and token labels are printed at least this large, or not at all
LABEL_LINE = 1.2  # a label's line height, in font sizes
SLIDE_LABEL_CHARS = 16  # token labels on a slide are cut only beyond this (the page cuts at 6–10)
SLIDE_TEXT_MAX_N = 20  # an n×n map's cell numbers are worth preparing up to this n (470 / 20 px cells)


def number_px(text: str, size: float) -> float:
    """How wide a cell number ("0.35", "−1.20") is drawn: digits 0.55 em, the point 0.3 em, a minus
    0.6 em (the app's font; a little wider than drawn, so a number said to fit does)."""
    widths = {".": 0.3, "−": 0.6, "-": 0.6}
    return size * sum(widths.get(ch, 0.55) for ch in text)


def cell_font(cell_px: float, texts: Sequence[str]) -> int | None:
    """The largest size (:data:`CELL_FONT_PX` down to :data:`MIN_TEXT_PX`) at which every text fits
    a cell ``cell_px`` wide with 2 px to spare on each side; None when not even the smallest does."""
    widest = max(texts, key=lambda x: number_px(x, 1.0), default="")
    for size in range(CELL_FONT_PX, MIN_TEXT_PX - 1, -1):
        if number_px(widest, size) + 4 <= cell_px and size * LABEL_LINE <= cell_px:
            return size
    return None


def _cell_texts(fig: go.Figure) -> list[str]:
    texts = []
    for trace in fig.data:
        if trace.type == "heatmap" and trace.texttemplate and trace.text is not None:
            texts += [str(x) for row in trace.text for x in row if x]
    return texts


def _panel_rows(fig: go.Figure) -> int:
    domains = {tuple(fig.layout[name].domain or (0, 1)) for name in fig.layout if name.startswith("yaxis")}
    return max(1, len(domains))


def _token_axes(out: go.Figure, tokens: Sequence[str], line_px: float, both: bool) -> None:
    """Every token on the token axes, cut only beyond :data:`SLIDE_LABEL_CHARS`, at the largest size
    (up to :data:`TICK_FONT_PX`) a row of ``line_px`` holds; every k-th one when not even
    :data:`MIN_TEXT_PX` fits."""
    n = len(tokens)
    size = min(TICK_FONT_PX, math.floor(line_px / LABEL_LINE))
    step = 1 if size >= MIN_TEXT_PX else math.ceil(MIN_TEXT_PX * LABEL_LINE / max(line_px, 1e-9))
    size = max(size, MIN_TEXT_PX)
    shown = list(range(0, n, step))
    labels = [escape_label(tokens[i], SLIDE_LABEL_CHARS) for i in shown]
    for name in out.layout:
        if name.startswith("yaxis") or (both and name.startswith("xaxis")):
            axis = out.layout[name]
            if axis.tickvals is not None and len(axis.tickvals) and axis.type != "category":
                axis.update(tickmode="array", tickvals=shown, ticktext=labels, tickfont_size=size)


def projector_figure(
    fig: go.Figure, square: bool = False, tokens: Sequence[str] | None = None, wide: bool = False
) -> go.Figure:
    """A copy of ``fig`` for a projector: no fixed height (the chart fills its container), large
    type, margins that grow with the labels; ``square`` keeps an n×n map's cells square.

    With ``tokens`` (the rows', and for a square map or the heads' panels also the columns'), the
    projector's room is used for them: an n×n map prints its numbers while they fit at
    :data:`MIN_TEXT_PX` or more (:func:`cell_font`), and the token axes label every token, in full
    where they can (:func:`_token_axes`). ``wide``: the chart is a wide step's (the heads' panels).
    """
    out = go.Figure(fig)
    out.update_layout(
        height=None,
        autosize=True,
        font=dict(size=TICK_FONT_PX, color=TEXT_COLOR),
        # room above the plot for subplot titles (all heads' panels), which Plotly draws as annotations
        margin=dict(l=10, r=10, t=TITLE_FONT_PX + 24 if fig.layout.annotations else 10, b=10),
    )
    out.update_annotations(font=dict(size=TITLE_FONT_PX, color=TEXT_COLOR))
    if fig.layout.annotations:
        # The panel titles' band above the plot is the toolbar's too: the titles are centred over
        # panels hundreds of pixels wide, the toolbar sits in the corner (tests/browser check both).
        out._toolbar_room = True
    axis = dict(
        tickfont=dict(size=TICK_FONT_PX, color=TEXT_COLOR),
        title_font=dict(size=TITLE_FONT_PX, color=TEXT_COLOR),
        automargin=True,
    )
    out.update_xaxes(**axis)
    out.update_yaxes(**axis)
    if square:
        out.update_layout(yaxis=dict(scaleanchor="x", scaleratio=1, constrain="domain"))
        out.update_layout(xaxis=dict(constrain="domain"))
    fitted = None
    if tokens is not None:
        n = len(tokens)
        box = WIDE_BOX_PX - WIDE_CHROME_PX if wide else SLIDE_BOX_PX - CHROME_PX
        line = box / (n * _panel_rows(out))
        _token_axes(out, tokens, line, both=square or wide)
        if square:
            fitted = cell_font(line, _cell_texts(out)) or 0  # 0: the numbers do not fit
    for trace in out.data:
        if trace.type != "heatmap":
            continue
        if trace.texttemplate and fitted == 0:
            trace.texttemplate = None  # hover still gives every number
        elif trace.texttemplate:
            columns = len(trace.x) if trace.x is not None else CROWDED_COLUMNS + 1
            size = CELL_FONT_PX if columns <= CROWDED_COLUMNS else CROWDED_FONT_PX
            size = fitted or size
            # no colour given: Plotly picks dark or white text per cell, whichever contrasts
            trace.textfont = dict(size=size, color=trace.textfont.color or None)
        if trace.showscale is not False and trace.colorbar is not None:
            trace.colorbar.tickfont = dict(size=COLORBAR_FONT_PX, color=TEXT_COLOR)
            trace.colorbar.thickness = 24
    return out


# A lab's or the decoder's section on a slide (attention_ui.presenter): several charts and text share
# the slide, so the figures keep their layout and grow less than a playground step's single chart.
SLIDE_TICK_PX = 16
SLIDE_TITLE_PX = 18
SLIDE_CELL_PX = 14  # the smallest cell number on a slide (the page's are 11 px)
SLIDE_GROWTH = 1.25  # a chart's height on a slide, relative to the page's
SLIDE_MAX_PX = 600  # ... but no taller than fits under the controls of a 1366×768 slide


def slide_figure(fig: go.Figure) -> go.Figure:
    """A copy of ``fig`` for a section's slide: larger type (ticks, titles, legend, cell numbers of at
    least :data:`SLIDE_CELL_PX`), margins that grow with the labels, and a taller chart."""
    out = go.Figure(fig)
    height = fig.layout.height
    if height:
        out.layout.height = max(height, min(SLIDE_MAX_PX, round(height * SLIDE_GROWTH)))
    out.update_layout(font=dict(size=SLIDE_TICK_PX), legend=dict(font=dict(size=SLIDE_TICK_PX)))
    out.update_annotations(font=dict(size=SLIDE_TITLE_PX))
    axis = dict(tickfont=dict(size=SLIDE_TICK_PX), title_font=dict(size=SLIDE_TITLE_PX), automargin=True)
    out.update_xaxes(**axis)
    out.update_yaxes(**axis)
    for trace in out.data:
        if trace.type == "heatmap" and trace.texttemplate:
            trace.textfont.size = max(trace.textfont.size or 0, SLIDE_CELL_PX)
        if "colorbar" in trace and trace.showscale is not False:
            trace.colorbar.tickfont.size = SLIDE_TICK_PX - 2
    return out

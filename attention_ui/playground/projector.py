"""A step's figure restyled for a projector (presenter mode): pure, ``go.Figure`` in, new figure out.

The normal page sizes figures for reading at a desk (12 px ticks, small maps). On a projector the
chart fills the slide (the page gives it the height of the window, see
:mod:`attention_ui.playground.presenter`), so the figure drops its fixed height and uses large type:
cell numbers of :data:`CELL_FONT_PX`, tick labels of :data:`TICK_FONT_PX`, both in near-black text
(cell numbers on dark cells switch to white, which Plotly chooses per cell).
"""

from __future__ import annotations

import plotly.graph_objects as go

CELL_FONT_PX = 22  # the numbers printed in cells, up to CROWDED_COLUMNS columns
CROWDED_FONT_PX = 18  # beyond that (a 12-token map at 1366 px wide still fits "0.00" in a cell)
CROWDED_COLUMNS = 8
TICK_FONT_PX = 20  # token labels and dimension names on the axes
TITLE_FONT_PX = 22  # axis titles
COLORBAR_FONT_PX = 18
TEXT_COLOR = "#1f2129"  # 15.6:1 on white


def projector_figure(fig: go.Figure, square: bool = False) -> go.Figure:
    """A copy of ``fig`` for a projector: no fixed height (the chart fills its container), large
    type, margins that grow with the labels; ``square`` keeps an n×n map's cells square."""
    out = go.Figure(fig)
    out.update_layout(
        height=None,
        autosize=True,
        font=dict(size=TICK_FONT_PX, color=TEXT_COLOR),
        # room above the plot for subplot titles (all heads' panels), which Plotly draws as annotations
        margin=dict(l=10, r=10, t=TITLE_FONT_PX + 24 if fig.layout.annotations else 10, b=10),
    )
    out.update_annotations(font=dict(size=TITLE_FONT_PX, color=TEXT_COLOR))
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
    for trace in out.data:
        if trace.type != "heatmap":
            continue
        if trace.texttemplate:
            columns = len(trace.x) if trace.x is not None else CROWDED_COLUMNS + 1
            size = CELL_FONT_PX if columns <= CROWDED_COLUMNS else CROWDED_FONT_PX
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

"""Formulas and tables on a narrow screen: a formula shrinks to the column; what still scrolls says so.

KaTeX draws a display formula (``$$…$$``) on one line, and Streamlit puts it in a box that scrolls
sideways when the line is longer than the column. On a 390 px phone the attention formula is about
630 px long: it was cut at the right edge, and nothing showed that the rest was one swipe away
(a phone's scrollbars appear only while scrolling).

* A constant script shrinks each display formula that is too long (CSS ``zoom``, which the layout
  follows) to the column's width, down to :data:`MIN_ZOOM` of its size (its symbols stay at least
  ~13 px tall). It looks again when the page changes (a rerun draws new formulas), the window is
  resized or the formula fonts arrive.
* A formula scrolls sideways in a box that hides what overflows it; the box is padded above and below,
  where KaTeX draws a few pixels past its own box (a root's foot was cut off).
* A formula still too long at that size scrolls, and constant CSS draws a shadow at the edge where
  more of it is hidden (the "scroll shadow" pattern: two shadows fixed to the box, two white covers
  that move with the content and hide a shadow once its end is in view).
* A code block (``st.code``) wider than the column scrolls, with the same shadows (code is not wrapped).
* The punctuation after an inline formula stays on the formula's line: a browser may break after
  KaTeX's inline-block parts even before ")" or "、", which left a ")" or a "、" alone at the start of
  a line on a phone; the CSS draws an inline formula's parts inline, so the normal line-breaking rules
  apply between a formula and what follows it.
* A table (``st.dataframe``) wider than the column scrolls inside its frame, drawn on a canvas that
  no background shows through: the script marks the frame ``data-al-more="left|right|both"`` while
  columns are hidden on that side, and the CSS shades that edge of the frame.

Nothing here reads or writes user text.
"""

from __future__ import annotations

import json

import streamlit as st

from attention_ui import assets
from attention_ui.st_structure import testid

MIN_ZOOM = 0.7  # a display formula is shrunk at most to this fraction of KaTeX's size
# KaTeX's last glyph reaches a pixel or two past its box (italic correction), in every width of box:
# a formula is shrunk only when more than this is hidden.
SLACK_PX = 3
# a table's frame: st.dataframe's (its columns drawn on a canvas) and st.table's (an HTML table)
TABLE_FRAME = f"{testid('stDataFrameResizable')}, {testid('stTable')}"

_CSS = assets.style("narrow_fit.css")

_SCRIPT = assets.script("narrow_fit.js")


def fit_css() -> str:
    """The constant CSS."""
    return _CSS.replace("__FRAME__", f":is({TABLE_FRAME})")


def fit_script() -> str:
    """The constant script (:data:`MIN_ZOOM`, :data:`SLACK_PX` and :data:`TABLE_FRAME` filled in)."""
    values = {"__MIN_ZOOM__": repr(float(MIN_ZOOM)), "__SLACK_PX__": str(int(SLACK_PX))}
    values["__FRAME_JS__"] = json.dumps(TABLE_FRAME)
    script = _SCRIPT
    for name, value in values.items():
        script = script.replace(name, value)
    return script


def fit_to_width() -> None:
    """Put the CSS and the script on the page; call once per run from app.py (they are invisible)."""
    st.html(fit_css())
    st.html(fit_script(), unsafe_allow_javascript=True)

"""On a touch screen: a tap on a chart that selects (``on_select``) selects what it was tapped on.

Plotly selects on a click from the hover data it already holds (``selectOnClick`` reads
``gd._hoverdata``). A mouse has hovered the cell before it clicks it; a finger has not, so a tap
selected nothing, or the cell tapped before (plotly.js #6721: its fix #6724, in the Plotly.js 3 that
Streamlit 1.67 bundles, hovers at the tapped point only *after* the selection was taken from the stale
hover data, so the label showed and nothing was chosen). Streamlit's ``on_select`` hears only that
selection (its click handler is for treemap-like charts), so taps never reached the page.

A constant script hands Plotly the hover a mouse would have given: when one finger touches the
plot area of a chart whose ``clickmode`` selects, the touch's position goes to Plotly's own hover
handler (a ``mousemove`` on the touched drag layer) before Plotly's touch handlers run, so the tap
that follows selects the cell under the finger. A drag (pan, scroll) is left to Plotly; charts that
do not select are not touched. Nothing here reads or writes user text.
"""

from __future__ import annotations

import streamlit as st

from attention_ui import assets

_SCRIPT = assets.script("touch_select.js")


def touch_script() -> str:
    """The constant script."""
    return _SCRIPT


def select_on_tap() -> None:
    """Put the script on the page; call once per run from app.py (any place: it is invisible)."""
    st.html(touch_script(), unsafe_allow_javascript=True)

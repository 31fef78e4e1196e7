"""On a keyboard, a chart's toolbar is one Tab stop (WCAG 2.1.1 and 2.4.3).

Plotly draws each toolbar button (Streamlit's full screen, the PNG download, reset axes) as a
``<button>``, so every chart cost three Tab stops before the control after it: 33 on the playground's
first screen. A constant script makes each toolbar a ``role="toolbar"`` group with a roving tab
index, the pattern WAI-ARIA's toolbar uses: Tab reaches one button of the group (the one used last,
else the first) and leaves the chart with the next Tab; ←/→ (and Home/End) move between its buttons.
Plotly redraws a toolbar when a figure changes, so the script looks again after each change.
The group's name (``charts.toolbar``, in the page's language) is the only text it writes.
"""

from __future__ import annotations

import json

import streamlit as st

from attention_ui import assets

_SCRIPT = assets.script("chart_keys.js")


def keys_script(toolbar_name: str) -> str:
    """The script, naming each toolbar ``toolbar_name`` (a catalog message, never user text)."""
    # a JavaScript string that cannot end the <script> element it sits in
    return _SCRIPT.replace("__NAME__", json.dumps(toolbar_name).replace("</", "<\\/"))


def one_tab_stop_per_chart(toolbar_name: str) -> None:
    """Put the script on the page; call once per run from app.py (it is invisible)."""
    st.html(keys_script(toolbar_name), unsafe_allow_javascript=True)

"""On a narrow screen (a phone): the sidebar gets out of the way once it has done its job.

Below Streamlit's own breakpoint of 768 px the sidebar is drawn *over* the page (300 of a phone's
390 px). Streamlit closes it after a page is chosen only when the browser's user agent says "mobile"
(its ``isMobile`` check on ``navigator.userAgent``); a narrow window, a tablet or a phone browser in
"desktop site" mode keep it open over the page they just opened. Streamlit 1.67 has no option for
this (``initial_sidebar_state`` only decides how a page *starts*; ``"auto"`` is its default), so a
constant script closes it on a narrow screen after

* a page is chosen in the navigation, and
* a text box in the sidebar (the sentence) is applied (it loses focus with a changed value, or
  Ctrl/⌘+Enter), so the learner sees what the new sentence changed instead of the sidebar.

Other sidebar controls leave it open: several of them are often set in a row (d_model, then the
heads), and a number's steppers would close it at the first tap. Nothing here reads or writes user
text; the script is the same for every page and runs once per browser tab.
"""

from __future__ import annotations

import streamlit as st

from attention_ui import assets

NARROW_PX = 768  # Streamlit's "md" breakpoint: below it the sidebar overlays the page

_SCRIPT = assets.script("narrow_sidebar.js")


def sidebar_script() -> str:
    """The constant script (only :data:`NARROW_PX` is filled in)."""
    return _SCRIPT.replace("__NARROW_PX__", str(int(NARROW_PX)))


def close_sidebar_when_done() -> None:
    """Put the script on the page; call once per run from app.py (any place: it is invisible)."""
    st.html(sidebar_script(), unsafe_allow_javascript=True)

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

NARROW_PX = 768  # Streamlit's "md" breakpoint: below it the sidebar overlays the page

_SCRIPT = """
<script>
(() => {
  if (window.__alNarrowSidebar) return;
  window.__alNarrowSidebar = true;
  const NARROW_PX = __NARROW_PX__;
  const TEXT = '[data-testid="stSidebar"] textarea, [data-testid="stSidebar"] input[type="text"]';
  const collapse = () => document.querySelector('[data-testid="stSidebarCollapseButton"] button');
  const close = () => {
    if (window.innerWidth >= NARROW_PX) return;
    const button = collapse();
    // only while it is open: Streamlit closes it itself on a "mobile" user agent, and the button toggles
    if (button && button.getAttribute("aria-expanded") === "true") button.click();
  };
  const soon = () => setTimeout(close, 150);
  document.addEventListener("click", (e) => {
    if (e.target && e.target.closest && e.target.closest('[data-testid="stSidebarNavLink"]')) soon();
  });
  document.addEventListener("change", (e) => { if (e.target && e.target.matches && e.target.matches(TEXT)) soon(); });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && e.target && e.target.matches && e.target.matches(TEXT)) soon();
  });
})();
</script>
"""


def sidebar_script() -> str:
    """The constant script (only :data:`NARROW_PX` is filled in)."""
    return _SCRIPT.replace("__NARROW_PX__", str(int(NARROW_PX)))


def close_sidebar_when_done() -> None:
    """Put the script on the page; call once per run from app.py (any place: it is invisible)."""
    st.html(sidebar_script(), unsafe_allow_javascript=True)

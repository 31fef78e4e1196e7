"""Display formulas fit a narrow screen: shrunk to the column's width, else scrolled with a visible cue.

KaTeX draws a display formula (``$$…$$``) on one line, and Streamlit puts it in a box that scrolls
sideways when the line is longer than the column. On a 390 px phone the attention formula is about
630 px long: it was cut at the right edge, and nothing showed that the rest was one swipe away
(a phone's scrollbars appear only while scrolling).

* A constant script shrinks each display formula that is too long (CSS ``zoom``, which the layout
  follows) to the column's width, down to :data:`MIN_ZOOM` of its size (its symbols stay at least
  ~13 px tall). It looks again when the page changes (a rerun draws new formulas), the window is
  resized or the formula fonts arrive.
* A formula still too long at that size scrolls, and constant CSS draws a shadow at the edge where
  more of it is hidden (the "scroll shadow" pattern: two shadows fixed to the box, two white covers
  that move with the content and hide a shadow once its end is in view).

Nothing here reads or writes user text.
"""

from __future__ import annotations

import streamlit as st

MIN_ZOOM = 0.7  # a display formula is shrunk at most to this fraction of KaTeX's size
CUE_CLASS = "katex-display"  # the boxes the cue is drawn on (KaTeX's display-formula box)

_CSS = """
<style>
.katex-display {
  overflow-x: auto;
  overflow-y: hidden;
  background:
    linear-gradient(to right, #ffffff 30%, rgba(255, 255, 255, 0)) left center / 28px 100% no-repeat local,
    linear-gradient(to left, #ffffff 30%, rgba(255, 255, 255, 0)) right center / 28px 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgba(49, 51, 63, 0.4), rgba(49, 51, 63, 0)) left center / 12px 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgba(49, 51, 63, 0.4), rgba(49, 51, 63, 0)) right center / 12px 100% no-repeat scroll;
}
</style>
"""

_SCRIPT = """
<script>
(() => {
  if (window.__alFormulaFit) return;
  window.__alFormulaFit = true;
  const MIN_ZOOM = __MIN_ZOOM__;
  let fitted = new WeakMap();  // box -> [its width, the formula] when last fitted
  const fitOne = (box) => {
    const formula = box.firstElementChild;
    const width = box.clientWidth;
    if (!formula || !width) return;
    const last = fitted.get(box);
    if (last && last[0] === width && last[1] === formula) return;
    formula.style.zoom = "";
    const natural = box.scrollWidth;
    if (natural > width + 1) formula.style.zoom = String(Math.max(MIN_ZOOM, Math.floor(1000 * width / natural) / 1000));
    fitted.set(box, [width, formula]);
  };
  let queued = false;
  const fitAll = () => {
    queued = false;
    document.querySelectorAll(".katex-display").forEach(fitOne);
  };
  const soon = () => { if (!queued) { queued = true; requestAnimationFrame(fitAll); } };
  new MutationObserver(soon).observe(document.body, { childList: true, subtree: true });
  window.addEventListener("resize", soon);
  if (document.fonts) document.fonts.addEventListener("loadingdone", () => { fitted = new WeakMap(); soon(); });
  soon();
})();
</script>
"""


def fit_script() -> str:
    """The constant script (only :data:`MIN_ZOOM` is filled in)."""
    return _SCRIPT.replace("__MIN_ZOOM__", repr(float(MIN_ZOOM)))


def fit_formulas() -> None:
    """Put the CSS and the script on the page; call once per run from app.py (they are invisible)."""
    st.html(_CSS)
    st.html(fit_script(), unsafe_allow_javascript=True)

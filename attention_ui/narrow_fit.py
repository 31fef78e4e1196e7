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
* A table (``st.dataframe``) wider than the column scrolls inside its frame, drawn on a canvas that
  no background shows through: the script marks the frame ``data-al-more="left|right|both"`` while
  columns are hidden on that side, and the CSS shades that edge of the frame.

Nothing here reads or writes user text.
"""

from __future__ import annotations

import json

import streamlit as st

MIN_ZOOM = 0.7  # a display formula is shrunk at most to this fraction of KaTeX's size
# KaTeX's last glyph reaches a pixel or two past its box (italic correction), in every width of box:
# a formula is shrunk only when more than this is hidden.
SLACK_PX = 3
# a table's frame: st.dataframe's (its columns drawn on a canvas) and st.table's (an HTML table)
TABLE_FRAME = '[data-testid="stDataFrameResizable"], [data-testid="stTable"]'

_CSS = """
<style>
.katex-display {
  overflow-x: auto;
  overflow-y: hidden;
  /* KaTeX draws below its box (a root's foot, a descender: 2-7 px), which the hidden overflow cut off;
     padding gives it room, and the margin keeps KaTeX's 1em between a formula and the text */
  padding: 0.5em 0;
  margin: 0.5em 0;
  background:
    linear-gradient(to right, #ffffff 60%, rgba(255, 255, 255, 0)) left center / 28px 100% no-repeat local,
    linear-gradient(to left, #ffffff 60%, rgba(255, 255, 255, 0)) right center / 28px 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgba(49, 51, 63, 0.55), rgba(49, 51, 63, 0)) left center / 16px 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgba(49, 51, 63, 0.55), rgba(49, 51, 63, 0)) right center / 16px 100% no-repeat scroll;
}
/* a code block's lines do not wrap (a wrapped line of code reads as two): the same shadows, the covers in
   the block's own grey (Streamlit 1.67's light theme) */
[data-testid="stCode"] pre {
  background:
    linear-gradient(to right, rgb(247, 247, 246) 60%, rgba(247, 247, 246, 0)) left center / 28px 100% no-repeat local,
    linear-gradient(to left, rgb(247, 247, 246) 60%, rgba(247, 247, 246, 0)) right center / 28px 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgba(49, 51, 63, 0.55), rgba(49, 51, 63, 0)) left center / 16px 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgba(49, 51, 63, 0.55), rgba(49, 51, 63, 0)) right center / 16px 100% no-repeat scroll,
    rgb(247, 247, 246);
}
[data-testid="stTable"][data-al-more] { position: relative; }
__FRAME__[data-al-more]::before, __FRAME__[data-al-more]::after {
  content: ""; position: absolute; top: 0; bottom: 0; width: 14px; pointer-events: none; z-index: 3;
}
__FRAME__[data-al-more="right"]::after, __FRAME__[data-al-more="both"]::after {
  right: 0; background: linear-gradient(to left, rgba(49, 51, 63, 0.3), rgba(49, 51, 63, 0));
}
__FRAME__[data-al-more="left"]::before, __FRAME__[data-al-more="both"]::before {
  left: 0; background: linear-gradient(to right, rgba(49, 51, 63, 0.3), rgba(49, 51, 63, 0));
}
</style>
"""

_SCRIPT = """
<script>
(() => {
  if (window.__alFormulaFit) return;
  window.__alFormulaFit = true;
  const MIN_ZOOM = __MIN_ZOOM__, SLACK_PX = __SLACK_PX__;
  let fitted = new WeakMap();  // box -> [its width, the formula] when last fitted
  const fitOne = (box) => {
    const formula = box.firstElementChild;
    const width = box.clientWidth;
    if (!formula || !width) return;
    const last = fitted.get(box);
    if (last && last[0] === width && last[1] === formula) return;
    formula.style.zoom = "";
    // a few steps, as parts of a formula (struts, rounding to whole pixels) do not scale exactly
    for (let zoom = 1, i = 0; i < 4 && zoom > MIN_ZOOM && box.scrollWidth > width + SLACK_PX; i++) {
      zoom = Math.max(MIN_ZOOM, Math.floor(1000 * zoom * width / box.scrollWidth) / 1000 - 0.005);
      formula.style.zoom = String(zoom);
    }
    fitted.set(box, [width, formula]);
  };
  const FRAME = __FRAME_JS__;
  const scrollers = new WeakMap();  // frame -> the box in it that scrolls sideways
  const scroller = (frame) => {
    let s = scrollers.get(frame);
    if (!s || !frame.contains(s)) {
      s = frame.querySelector(".dvn-scroller")
        || [...frame.querySelectorAll("div")].find((d) => /auto|scroll/.test(getComputedStyle(d).overflowX));
      if (s) scrollers.set(frame, s);
    }
    return s;
  };
  const cue = (frame) => {
    const s = scroller(frame);
    if (!s) return;
    const left = s.scrollLeft > 1, right = s.scrollLeft + s.clientWidth < s.scrollWidth - 1;
    const more = left && right ? "both" : left ? "left" : right ? "right" : "";
    if ((frame.dataset.alMore || "") === more) return;
    if (more) frame.dataset.alMore = more; else delete frame.dataset.alMore;
  };
  document.addEventListener("scroll", (e) => {
    const frame = e.target && e.target.closest && e.target.closest(FRAME);
    if (frame) cue(frame);
  }, { capture: true, passive: true });
  let queued = false;
  const fitAll = () => {
    queued = false;
    document.querySelectorAll(".katex-display").forEach(fitOne);
    document.querySelectorAll(FRAME).forEach(cue);
  };
  const soon = () => { if (!queued) { queued = true; requestAnimationFrame(fitAll); } };
  new MutationObserver(soon).observe(document.body, { childList: true, subtree: true });
  // a table lays its columns out after its frame is drawn, with no change a MutationObserver of the
  // page's structure sees: the (few) frames are looked at again twice a second
  setInterval(() => document.querySelectorAll(FRAME).forEach(cue), 500);
  window.addEventListener("resize", soon);
  if (document.fonts) document.fonts.addEventListener("loadingdone", () => { fitted = new WeakMap(); soon(); });
  soon();
})();
</script>
"""


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

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

_SCRIPT = """
<script>
(() => {
  window.__alToolbarName = __NAME__;
  if (window.__alChartKeys) { window.__alChartKeys(); return; }
  const BUTTON = "button.modebar-btn";
  const current = new WeakMap();  // toolbar -> the button Tab reaches
  const group = (bar) => {
    const buttons = [...bar.querySelectorAll(BUTTON)];
    if (!buttons.length) return;
    bar.setAttribute("role", "toolbar");
    bar.setAttribute("aria-label", window.__alToolbarName);
    const chosen = buttons.includes(current.get(bar)) ? current.get(bar) : buttons[0];
    buttons.forEach((b) => { b.tabIndex = b === chosen ? 0 : -1; });
  };
  const groupAll = () => document.querySelectorAll(".modebar").forEach(group);
  window.__alChartKeys = groupAll;
  document.addEventListener("focusin", (e) => {
    const button = e.target.closest && e.target.closest(BUTTON);
    const bar = button && button.closest(".modebar");
    if (bar) { current.set(bar, button); group(bar); }
  });
  document.addEventListener("keydown", (e) => {
    const button = e.target.closest && e.target.closest(BUTTON);
    const bar = button && button.closest(".modebar");
    if (!bar) return;
    const buttons = [...bar.querySelectorAll(BUTTON)];
    const i = buttons.indexOf(button);
    const next = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: buttons.length - 1 }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    buttons[(next + buttons.length) % buttons.length].focus();
  });
  let queued = false;
  new MutationObserver(() => {
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; groupAll(); }); }
  }).observe(document.body, { childList: true, subtree: true });
  groupAll();
})();
</script>
"""


def keys_script(toolbar_name: str) -> str:
    """The script, naming each toolbar ``toolbar_name`` (a catalog message, never user text)."""
    # a JavaScript string that cannot end the <script> element it sits in
    return _SCRIPT.replace("__NAME__", json.dumps(toolbar_name).replace("</", "<\\/"))


def one_tab_stop_per_chart(toolbar_name: str) -> None:
    """Put the script on the page; call once per run from app.py (it is invisible)."""
    st.html(keys_script(toolbar_name), unsafe_allow_javascript=True)

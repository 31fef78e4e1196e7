"""Presenter mode: one step at a time, large type, controls out of the way, step in the URL.

Uses the same step functions as the normal page (:func:`attention_ui.playground.steps_view.render_step`).
State: ``pg_present`` (bool) and ``pg_step`` (1-based), plain session keys changed by callbacks,
so the URL written after the run already holds the new step.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from attention_ui.classroom import presenter_hook
from attention_ui.i18n import LANGUAGE_NAMES, LANGUAGES
from attention_ui.language import LANG_KEY, current_language
from attention_ui.playground.steps_view import PER_HEAD, STEPS, View, render_step

PRESENT_KEY, STEP_KEY = "pg_present", "pg_step"

# Static CSS only (no user text): bigger type, no sidebar (the settings stay in the session), and the
# slide's chart box as tall as the window below the controls and the heading.
_CSS = """
<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"] { display: none !important; }
[data-testid="stMainBlockContainer"] { padding-top: 1rem; padding-bottom: 1rem; max-width: 100%; }
[data-testid="stMain"] .stMarkdown p, [data-testid="stMain"] .stMarkdown li { font-size: 1.35rem; line-height: 1.6; }
[data-testid="stMain"] h1 { font-size: 2.6rem; padding-top: 0.25rem; }
[data-testid="stMain"] .katex { font-size: 1.3em; }
[data-testid="stMain"] .katex-display { overflow-x: auto; overflow-y: hidden; padding-bottom: 0.2rem; }
.st-key-pg_present_first, .st-key-pg_present_last { display: none !important; }
[class*="st-key-pg_slide_wide_"] { height: calc(100vh - 24rem) !important; min-height: 16rem; flex: none !important; }
[class*="st-key-pg_slide_wide_"] > div, [class*="st-key-pg_slide_wide_"] [data-testid="stFullScreenFrame"],
[class*="st-key-pg_slide_wide_"] [data-testid="stPlotlyChart"] { height: 100% !important; }
.st-key-pg_slide_chart { height: calc(100vh - 9.5rem) !important; min-height: 26rem; flex: none !important; }
.st-key-pg_slide_chart > div, .st-key-pg_slide_chart [data-testid="stFullScreenFrame"],
.st-key-pg_slide_chart [data-testid="stPlotlyChart"] { height: 100% !important; }
@media (max-height: 900px) {  /* a 1366×768 projector: the step's text stays above the fold */
  [data-testid="stMain"] .stMarkdown p, [data-testid="stMain"] .stMarkdown li { font-size: 1.12rem; line-height: 1.5; }
  [data-testid="stMain"] h1 { font-size: 2.1rem; padding-top: 0; padding-bottom: 0.5rem; }
  [data-testid="stMain"] .katex { font-size: 1.12em; }
}
</style>
"""

# Constant JavaScript (no user text, only the step numbers below): keys and presentation clickers
# (which send PageDown/PageUp or the arrows) drive the Previous/Next buttons, Home/End the hidden
# first/last step buttons, Escape exits; focus is
# kept on the controls (Next, or Previous at the last step) instead of falling to <body>.
_KEYS_JS = """
<script>
(() => {
  const NEXT = ["ArrowRight", "PageDown", " "], PREV = ["ArrowLeft", "PageUp"];
  const button = (key) => document.querySelector(".st-key-" + key + " button");
  if (!window.__alPresenterKeys) {
    window.__alPresenterKeys = true;
    const wanted = (e) => {
      if (!button("pg_present_next") || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return null;
      const el = e.target;
      if (el && el.closest && el.closest("input, textarea, select, [contenteditable], [role=listbox], [role=combobox]")) return null;
      if (NEXT.includes(e.key)) return "pg_present_next";
      if (PREV.includes(e.key)) return "pg_present_prev";
      if (e.key === "Home") return "pg_present_first";
      if (e.key === "End") return "pg_present_last";
      if (e.key === "Escape") return "pg_present_exit";
      return null;
    };
    document.addEventListener("keydown", (e) => {
      const key = wanted(e);
      if (!key) return;
      e.preventDefault();  // no page scroll, no second click of a focused button
      e.stopPropagation();
      if (e.repeat) return;
      const b = button(key);
      if (b && !b.disabled) b.click();
    }, true);
    document.addEventListener("keyup", (e) => { if (wanted(e)) { e.preventDefault(); e.stopPropagation(); } }, true);
  }
  const STEP = __STEP__, LAST = __LAST__;
  let tries = 0;
  const settle = () => {
    const next = button("pg_present_next"), prev = button("pg_present_prev");
    const ready = next && prev && next.disabled === (STEP === LAST) && prev.disabled === (STEP === 1);
    if (!ready) { if (++tries < 60) setTimeout(settle, 50); return; }
    const active = document.activeElement;
    const CONTROLS = ".st-key-pg_present_prev, .st-key-pg_present_next, .st-key-pg_present_lang, .st-key-pg_present_exit, .st-key-pg_head";
    if (!active || active.disabled || !active.isConnected || !active.closest || !active.closest(CONTROLS)) {
      (next.disabled ? prev : next).focus();
    }
  };
  setTimeout(settle, 0);
})();
</script>
"""

# Constant JavaScript for the normal page: remember where the learner was when presenter mode
# started (the scroll position) and, after Exit, scroll back there and focus the presenter button.
_RETURN_JS = """
<script>
(() => {
  const SAVED = "attention-lab-present-return", EXITED = "attention-lab-present-exited";
  const scroller = () => {
    for (const sel of ['[data-testid="stMain"]', '[data-testid="stAppViewContainer"]']) {
      const el = document.querySelector(sel);
      if (el && el.scrollHeight > el.clientHeight + 1 && /(auto|scroll)/.test(getComputedStyle(el).overflowY)) return el;
    }
    return document.scrollingElement;
  };
  if (!window.__alPresenterReturn) {
    window.__alPresenterReturn = true;
    document.addEventListener("click", (e) => {
      const t = e.target;
      if (!t || !t.closest) return;
      if (t.closest(".st-key-pg_present_start")) sessionStorage.setItem(SAVED, String(scroller().scrollTop));
      if (t.closest(".st-key-pg_present_exit")) sessionStorage.setItem(EXITED, "1");
    }, true);
  }
  if (!sessionStorage.getItem(EXITED)) return;
  sessionStorage.removeItem(EXITED);
  const top = Number(sessionStorage.getItem(SAVED) || 0);
  sessionStorage.removeItem(SAVED);
  let tries = 0;
  const restore = () => {
    const el = scroller(), start = document.querySelector(".st-key-pg_present_start button");
    if (!start || (el.scrollHeight < top + el.clientHeight && ++tries < 100)) { setTimeout(restore, 50); return; }
    el.scrollTop = top;
    start.focus({ preventScroll: true });
    // the page may still be settling (charts drawing): look once more
    setTimeout(() => {
      if (!document.activeElement || document.activeElement === document.body) start.focus({ preventScroll: true });
      if (Math.abs(el.scrollTop - top) > 2) el.scrollTop = top;
    }, 700);
  };
  setTimeout(restore, 0);
})();
</script>
"""


def clamp_step(state) -> int:
    step = state.get(STEP_KEY, 1)
    if not isinstance(step, int) or isinstance(step, bool) or not 1 <= step <= len(STEPS):
        step = 1
    state[STEP_KEY] = step
    return step


def _go(delta: int) -> None:
    s = st.session_state
    s[STEP_KEY] = min(len(STEPS), max(1, clamp_step(s) + delta))


def _go_to(step: int) -> None:
    st.session_state[STEP_KEY] = min(len(STEPS), max(1, step))


def _enter() -> None:
    """Presenter mode starts at step 1 (a link with ``?present=1&step=k`` still opens at step k)."""
    st.session_state[PRESENT_KEY] = True
    st.session_state[STEP_KEY] = 1


def _leave() -> None:
    st.session_state[PRESENT_KEY] = False


def _set_language(lang: str) -> None:
    # The same ``lang`` state as the sidebar selectbox (hidden here); a callback runs before the
    # app draws that selectbox, so the whole rerun is in the new language and the step is kept.
    st.session_state[LANG_KEY] = lang


def other_language() -> str:
    current = current_language()
    return LANGUAGES[(LANGUAGES.index(current) + 1) % len(LANGUAGES)]


def return_script() -> None:
    """On the normal page: bring the learner back to where they were after presenter mode."""
    st.html(_RETURN_JS, unsafe_allow_javascript=True)


def keys_script(step: int) -> str:
    """The presenter's key handling and focus script for ``step`` (integers only are filled in)."""
    return _KEYS_JS.replace("__STEP__", str(int(step))).replace("__LAST__", str(len(STEPS)))


def enter_button(t) -> None:
    st.button(
        t("playground.present_start"),
        key="pg_present_start",
        on_click=_enter,
        icon=":material/slideshow:",
        help=t("playground.present_help"),
    )


def render(view: View, head_picker) -> None:
    """One step as a slide: a row of controls that stays put from step to step (the head picker is
    always in it, disabled on steps that do not depend on the head), the step's title as the H1, its
    text beside a chart as tall as the window. ``head_picker(where, disabled)`` draws the picker."""
    t = view.t
    st.html(_CSS)
    presenter_hook.strip(t)  # the live class: start it, or its join code, and the view students follow
    step = clamp_step(st.session_state)
    name = STEPS[step - 1]
    st.html(keys_script(step), unsafe_allow_javascript=True)
    cols = st.columns([1, 1.3, 1, 1.4, 1.1, 1], vertical_alignment="center")
    c_prev, c_pos, c_next, c_head, c_lang, c_exit = cols
    c_prev.button(
        t("playground.present_prev"),
        key="pg_present_prev",
        on_click=_go,
        args=(-1,),
        disabled=step == 1,
        icon=":material/arrow_back:",
        width="stretch",
    )
    c_pos.markdown(t("playground.present_position", step=step, total=len(STEPS)))
    # Home and End (keys only, hidden by _CSS): buttons, so the jump runs through a callback like
    # Previous/Next and the URL written after the run holds the new step.
    for key, target in (("pg_present_first", 1), ("pg_present_last", len(STEPS))):
        c_pos.button(
            t("playground.present_first" if target == 1 else "playground.present_last"),
            key=key,
            on_click=_go_to,
            args=(target,),
            disabled=step == target,
        )
    c_next.button(
        t("playground.present_next"),
        key="pg_present_next",
        on_click=_go,
        args=(1,),
        disabled=step == len(STEPS),
        icon=":material/arrow_forward:",
        width="stretch",
    )
    head_picker(c_head, name not in PER_HEAD or view.trace.heads == 1)
    target = other_language()  # the sidebar (and its language box) is hidden while presenting
    c_lang.button(
        LANGUAGE_NAMES[target],
        key="pg_present_lang",
        on_click=_set_language,
        args=(target,),
        icon=":material/translate:",
        help=t("playground.present_language"),
        width="stretch",
    )
    c_exit.button(
        t("playground.present_exit"),
        key="pg_present_exit",
        on_click=_leave,
        icon=":material/close:",
        width="stretch",
    )
    slide = dataclasses.replace(view, present=True, show_tables=False, on_cell=None, after={}, cell=None)
    render_step(slide, name, step, heading_level="title")

"""Presenter mode: one step at a time, large type, controls out of the way, step in the URL.

Uses the same step functions as the normal page (:func:`attention_ui.playground.steps_view.render_step`).
State: ``pg_present`` (bool) and ``pg_step`` (1-based), plain session keys changed by callbacks,
so the URL written after the run already holds the new step.
"""

from __future__ import annotations

import streamlit as st

from attention_ui.i18n import LANGUAGE_NAMES, LANGUAGES
from attention_ui.language import LANG_KEY, current_language
from attention_ui.playground.steps_view import PER_HEAD, STEPS, View, render_step

PRESENT_KEY, STEP_KEY = "pg_present", "pg_step"

# Static CSS only (no user text): bigger type, no sidebar (the settings stay in the session).
_CSS = """
<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"] { display: none !important; }
[data-testid="stMain"] .stMarkdown p, [data-testid="stMain"] .stMarkdown li { font-size: 1.35rem; line-height: 1.6; }
[data-testid="stMain"] h2 { font-size: 2.4rem; }
[data-testid="stMain"] .katex { font-size: 1.5em; }
</style>
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


def _enter() -> None:
    st.session_state[PRESENT_KEY] = True
    clamp_step(st.session_state)


def _leave() -> None:
    st.session_state[PRESENT_KEY] = False


def _set_language(lang: str) -> None:
    # The same ``lang`` state as the sidebar selectbox (hidden here); a callback runs before the
    # app draws that selectbox, so the whole rerun is in the new language and the step is kept.
    st.session_state[LANG_KEY] = lang


def other_language() -> str:
    current = current_language()
    return LANGUAGES[(LANGUAGES.index(current) + 1) % len(LANGUAGES)]


def enter_button(t) -> None:
    st.button(
        t("playground.present_start"),
        key="pg_present_start",
        on_click=_enter,
        icon=":material/slideshow:",
        help=t("playground.present_help"),
    )


def render(view: View, head_selector) -> None:
    t = view.t
    st.html(_CSS)
    step = clamp_step(st.session_state)
    name = STEPS[step - 1]
    c_prev, c_pos, c_next, c_exit, c_lang = st.columns([1, 1.6, 1, 1, 1.2], vertical_alignment="center")
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
    c_next.button(
        t("playground.present_next"),
        key="pg_present_next",
        on_click=_go,
        args=(1,),
        disabled=step == len(STEPS),
        icon=":material/arrow_forward:",
        width="stretch",
    )
    c_exit.button(
        t("playground.present_exit"),
        key="pg_present_exit",
        on_click=_leave,
        icon=":material/close:",
        width="stretch",
    )
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
    if name in PER_HEAD and view.trace.heads > 1:
        head_selector()
    render_step(view, name, step, heading_level="header")

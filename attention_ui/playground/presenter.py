"""Presenter mode: one step at a time, large type, controls out of the way, step in the URL.

Uses the same step functions as the normal page (:func:`attention_ui.playground.steps_view.render_step`)
and the page kit's presenter pieces (:mod:`attention_ui.presenter`: controls, keys, return script).
State: ``pg_present`` (bool) and ``pg_step`` (1-based), plain session keys changed by callbacks,
so the URL written after the run already holds the new step.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from attention_ui import assets
from attention_ui import presenter as kit_presenter
from attention_ui.classroom.settings import TABLE as CLASS
from attention_ui.playground.settings import TABLE
from attention_ui.playground.steps_view import PER_HEAD, STEPS, View, render_step

PRESENT_KEY, STEP_KEY = TABLE.key("present"), TABLE.key("step")

# The page kit's presenter CSS (bigger type, no sidebar), plus the playground's slide: the chart box as
# tall as the window below the controls and the heading. Static CSS only (no user text).
_SLIDE_CSS = assets.style("playground_slide.css")
_CSS = kit_presenter.css(TABLE.prefix) + _SLIDE_CSS
# The controls' words: the playground presents steps.
WORDS = {
    "start": "playground.present_start",
    "help": "playground.present_help",
    "prev": "playground.present_prev",
    "next": "playground.present_next",
    "first": "playground.present_first",
    "last": "playground.present_last",
    "exit": "playground.present_exit",
    "language": "playground.present_language",
    "position": "playground.present_position",
}


def clamp_step(state) -> int:
    return kit_presenter.clamp(state, STEP_KEY, len(STEPS))


other_language = kit_presenter.other_language


def return_script() -> None:
    """On the normal page: bring the learner back to where they were after presenter mode."""
    kit_presenter.return_script(TABLE.prefix)


def keys_script(step: int, overlay: bool = False) -> str:
    """The presenter's key handling and focus script for ``step`` (integers and a flag only are
    filled in); ``overlay``: the live class's join-code slide is up on this step. The settings the
    slide's controls row draws (the table's ``presenter`` entries: the head picker) keep the focus."""
    return kit_presenter.keys_script(
        TABLE.prefix, step, len(STEPS), controls=TABLE.presenter_keys, overlay=overlay,
        openers=(CLASS.key("present_code"),),
    )  # fmt: skip


def enter_button(t) -> None:
    """Presenter mode starts at step 1 (a link with ``?present=1&step=k`` still opens at step k)."""
    kit_presenter.enter_button(t, TABLE.key, WORDS, slide_key=STEP_KEY)


def render(view: View, head_picker) -> None:
    """One step as a slide: a row of controls that stays put from step to step (the head picker is
    always in it, disabled on steps that do not depend on the head), the step's title as the H1, its
    text beside a chart as tall as the window. ``head_picker(where, disabled)`` draws the picker."""
    # Imported here: the live class (its QR codes, its question bank) costs ~130 ms to import, which
    # the normal page's first run, a cold start's critical path, does not need (bench/RESULTS.md).
    from attention_ui.classroom import presenter_hook

    t = view.t
    st.html(_CSS)
    running = presenter_hook.strip(t)  # a live class: its join code, and the view students follow
    step = clamp_step(st.session_state)
    name = STEPS[step - 1]
    code_slide = running and presenter_hook.code_slide_on(step)  # "Show the join code": over the step
    st.html(keys_script(step, overlay=code_slide), unsafe_allow_javascript=True)
    kit_presenter.controls(
        t,
        TABLE.key,
        step,
        len(STEPS),
        words=WORDS,
        slide_key=STEP_KEY,
        extra=[
            lambda where: head_picker(where, name not in PER_HEAD or view.trace.heads == 1),
            *([] if running else [lambda where: presenter_hook.start_button(t, where)]),  # in the row
        ],
    )
    if code_slide:
        presenter_hook.code_slide(t, step)
    else:
        slide = dataclasses.replace(view, present=True, show_tables=False, on_cell=None, after={}, cell=None)
        render_step(slide, name, step, heading_level="title")
    # last: a clicker's next press waits until this slide is drawn (attention_ui/presenter.py)
    st.html(kit_presenter.drawn_script(TABLE.prefix, step), unsafe_allow_javascript=True)


def teaching_here() -> bool:
    """Might this browser run a live class? (Its key in the session or its cookie; the class strip
    checks the store.)"""
    if st.session_state.get(CLASS.key("teacher")):
        return True
    try:
        return "attnlab_class_teacher" in st.context.cookies
    except Exception:  # noqa: BLE001 - no browser context (tests)
        return False


def class_banner(t) -> None:
    """The normal playground's banner while this browser runs a live class (issue 34)."""
    if teaching_here():
        from attention_ui.classroom import presenter_hook  # only then: the live class costs ~130 ms to import

        presenter_hook.playground_banner(t)

"""The presenter's live-class strip: "Start a live class" before one runs; then the join code, the
count of students and the class panel's button, and the current view published for students.

Called once at the top of presenter mode (attention_ui/playground/presenter.py), so the hook there
stays one line."""

from __future__ import annotations

import streamlit as st

from attention_ui.classroom import follow, state, teacher_view
from classroom import ClassError

CLASS_PAGE = "app_pages/class_teach.py"


def publish(cls: dict) -> bool:
    """Store the teacher's current view (a no-op when it has not changed); False if the class is over."""
    try:
        state.store().set_view(cls["sid"], cls["token"], follow.view_of(st.session_state))
    except ClassError:
        return False
    st.session_state[follow.OWNER_KEY] = cls["sid"]
    return True


def start_button(t, where) -> None:
    """ "Start a live class", drawn in presenter mode's row of controls while no class runs (a row of
    its own would push a 1366×768 slide past the window)."""
    if where.button(
        t("class.present_start"), key="cls_present_start", icon=":material/groups:", width="stretch"
    ):
        if teacher_view.start(t):
            st.rerun()


def strip(t) -> bool:
    """The running class's strip above the slide; False when no class runs (the caller then puts
    :func:`start_button` in its row of controls)."""
    teacher_view.cookie_script()
    cls = state.teacher()
    if cls is None:
        return False
    if not publish(cls):
        st.warning(t("class.err_session_over"))
        teacher_view.forget(t)
        return False
    info = state.store().teacher_session(cls["sid"], cls["token"])
    with st.container(key="cls_present_strip"):
        line, count, panel = st.columns([6, 1.4, 1.2], vertical_alignment="center")
        teacher_view.join_line(t, cls, info, line)
        with count:
            teacher_view.student_count(t, cls)
        if panel.button(t("class.panel"), key="cls_present_panel", icon=":material/how_to_vote:"):
            st.switch_page(CLASS_PAGE)
    return True

"""Live class, the teacher's panel: start (or resume) a class, show the join code and QR code,
open polls on the current step, watch the answers come in, reveal, export the results, end.

The sentence, settings and step the students follow are the playground's (presenter mode publishes
them); the store is ``classroom`` (attention_ui/classroom/state.py opens it). Words: ``class`` catalog.
"""

from __future__ import annotations

import time

import streamlit as st

from attention_ui.classroom import follow, presenter_hook, state, teacher_view
from attention_ui.classroom.settings import TABLE
from attention_ui.language import translator
from attention_ui.playground.settings import PAGE as PLAYGROUND

PLAYGROUND_SCRIPT = "app_pages/playground.py"


def present() -> None:
    """Presenter mode on the class's step: this session's playground state is the class's view
    (main() adopted it when this session had not published it)."""
    st.session_state[PLAYGROUND.key("present")] = True
    st.switch_page(
        PLAYGROUND_SCRIPT,
        query_params={"present": "1", "step": str(st.session_state.get(PLAYGROUND.key("step"), 1))},
    )


def main() -> None:
    t = translator()
    st.title(t("class.teach_title"))
    teacher_view.cookie_script()
    if st.session_state.pop(TABLE.key("clear_cookie"), False):
        state.set_cookie(state.TEACHER_COOKIE, None, 0)
        ended = st.session_state.get(state.ENDED_KEY)
        if ended:  # its results stay downloadable from this browser after a reload too
            days = state.settings().retention_days
            state.set_cookie(state.ENDED_COOKIE, f"{ended['sid']}.{ended['token']}", int(days * 86400))
    if state.store_or_error(t) is None:
        return
    teacher_view.show_error(t)
    cls = state.teacher()
    if cls is None:
        ended = state.ended()
        if ended:
            days = state.settings().retention_days
            st.info(t("class.ended", code=state.format_code(ended["code"]), days=f"{days:g}"))
            teacher_view.export_button(t, ended)
        st.markdown(t("class.teach_intro"))
        teacher_view.start_panel(t)
        return
    info = state.store().teacher_session(cls["sid"], cls["token"])
    # Presenter mode publishes the view students follow; this page only gives a new class its first
    # view (after a reload this session's playground state is the default one, not the projected).
    if not info.live(time.time()) or (info.view_rev == 0 and not presenter_hook.publish(cls)):
        st.warning(t("class.err_session_over"))
        teacher_view.export_button(t, cls)
        teacher_view.forget(t)
        return
    if info.view_rev == 0:
        info = state.store().teacher_session(cls["sid"], cls["token"])  # with the view just published
    if st.session_state.get(follow.OWNER_KEY) != cls["sid"]:
        # a reload, or control resumed on another device: this session's playground state is the
        # default one; the class's view (the projected sentence and step) becomes this session's
        follow.adopt_view(st.session_state, info.view)
        st.session_state[follow.OWNER_KEY] = cls["sid"]
    teacher_view.watchdog()  # a panel that lost its connection reloads instead of staying white
    teacher_view.join_box(t, cls, info)
    if st.session_state.pop(TABLE.key("new_key"), False):
        st.info(t("class.key_saved_note"))
    left, right = st.columns([1, 2])
    with left:
        st.header(t("class.poll_section"))
        st.caption(t("class.poll_from_step", step=info.view.get("step", 1)))
        teacher_view.poll_picker(t, cls, info.view)
        st.divider()
        if st.button(t("class.to_presenter"), key=TABLE.key("to_presenter"), icon=":material/slideshow:"):
            present()
        teacher_view.export_button(t, cls)
        teacher_view.course_files(t, info.view)
        teacher_view.key_file(t, cls)
        teacher_view.one_per_device(t, cls, info)
        teacher_view.end_button(t, cls)
    with right:
        teacher_view.live_panel(t, cls)  # the count of students and the poll: one live fragment


main()

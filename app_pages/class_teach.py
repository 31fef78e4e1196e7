"""Live class, the teacher's panel: start (or resume) a class, show the join code and QR code,
open polls on the current step, watch the answers come in, reveal, export the results, end.

The sentence, settings and step the students follow are the playground's (presenter mode publishes
them); the store is ``classroom`` (attention_ui/classroom/state.py opens it). Words: ``class`` catalog.
"""

from __future__ import annotations

import time

import streamlit as st

from attention_ui.classroom import presenter_hook, state, teacher_view
from attention_ui.language import translator

PLAYGROUND = "app_pages/playground.py"


def present() -> None:
    st.session_state["pg_present"] = True
    st.switch_page(PLAYGROUND, query_params={"present": "1", "step": str(st.session_state.get("pg_step", 1))})


def main() -> None:
    t = translator()
    st.title(t("class.teach_title"))
    teacher_view.cookie_script()
    if st.session_state.pop("cls_clear_cookie", False):
        state.set_cookie(state.TEACHER_COOKIE, None, 0)
    if state.store_or_error(t) is None:
        return
    teacher_view.show_error(t)
    ended = st.session_state.get("cls_ended")
    cls = state.teacher()
    if cls is None:
        if ended:
            st.info(t("class.ended", code=state.format_code(ended["code"])))
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
    teacher_view.join_box(t, cls, info)
    teacher_view.student_count(t, cls, shared=True)
    if st.session_state.pop("cls_new_key", False):
        st.info(t("class.key_saved_note"))
    left, right = st.columns([1, 2])
    with left:
        st.header(t("class.poll_section"))
        st.caption(t("class.poll_from_step", step=info.view.get("step", 1)))
        teacher_view.poll_picker(t, cls)
        st.divider()
        if st.button(t("class.to_presenter"), key="cls_to_presenter", icon=":material/slideshow:"):
            present()
        teacher_view.export_button(t, cls)
        teacher_view.key_file(t, cls)
        teacher_view.one_per_device(t, cls, info)
        teacher_view.end_button(t, cls)
    with right:
        teacher_view.poll_panel(t, cls)


main()

"""The presenter's live-class strip: "Start a live class" before one runs; then the join code, the
count of students and the class panel's button, and the current view published for students.

Called once at the top of presenter mode (attention_ui/playground/presenter.py), so the hook there
stays one line."""

from __future__ import annotations

import time

import streamlit as st

from attention_ui import assets, kit
from attention_ui.classroom import follow, state, teacher_view
from attention_ui.classroom.settings import TABLE
from attention_ui.playground.settings import PAGE as PLAYGROUND
from classroom import ClassError
from classroom.model import icu_ready

CLASS_PAGE = "app_pages/class_teach.py"


_OVER = ("class.err_session_over", "class.err_forbidden")


def _warn(key: str, values: dict) -> None:
    from attention_ui.language import translator

    st.warning(translator()(key, **values))


def publish(cls: dict) -> bool:
    """Store the teacher's current view (a no-op when it has not changed); False only if the class is
    over. A view the store cannot take (too big) or a store fault is said, and the class goes on:
    nothing here raises into the presenter's page."""
    try:
        state.store().set_view(cls["sid"], cls["token"], follow.view_of(st.session_state))
    except ClassError as err:
        if err.key in _OVER:
            return False
        _warn(err.key, err.values)
        return True
    except Exception as exc:  # the database failed this once: the next run publishes again
        _warn("class.err_store", {"error": type(exc).__name__})
        return True
    st.session_state[follow.OWNER_KEY] = cls["sid"]
    return True


def start_button(t, where) -> None:
    """ "Start a live class", drawn in presenter mode's row of controls while no class runs (a row of
    its own would push a 1366×768 slide past the window). In a process without PyICU it opens the
    class page, which says why no class starts here and how to add it (no room for that in the row)."""
    if where.button(
        t("class.present_start"), key=TABLE.key("present_start"), icon=":material/groups:", width="stretch"
    ):
        if not icu_ready():
            st.switch_page(CLASS_PAGE)
        if teacher_view.start(t):
            st.rerun()


CODE_SLIDE_KEY = TABLE.key("code_slide")  # the step at which "Show the join code" was pressed
# Static CSS: the running class's strip is one line; the slide's chart box leaves room for it (the
# class strip used to push the chart's x axis below a 1920×1080 or 1366×768 window). The join-code
# slide: the code at 15 % of the window's height, the QR code at 48 %.
STRIP_CSS = assets.style("class_present_strip.css")


def _show_code(step: int) -> None:
    st.session_state[CODE_SLIDE_KEY] = step


def _hide_code() -> None:
    st.session_state.pop(CODE_SLIDE_KEY, None)


def code_slide_on(step: int) -> bool:
    """Is the join-code slide up? (It was opened at this step; a step change closes it.)"""
    return st.session_state.get(CODE_SLIDE_KEY) == step


def _teacher_class():
    """This browser's class and the store's view of it, or ``(cls, None)`` when it runs none (or the
    store refuses it)."""
    cls = state.teacher()
    if cls is None:
        return None, None
    try:
        return cls, state.store().teacher_session(cls["sid"], cls["token"])
    except ClassError:
        return cls, None


def code_slide(t, step: int) -> None:
    """The join code for the back of the room: the code in letters 15 % of the window high, the QR
    code 48 %, the address, and a warning when the address is this computer's own (a phone cannot
    open localhost). A clicker's Next or Previous closes it (the presenter's close button)."""
    cls, info = _teacher_class()
    if info is None:
        return
    address = state.join_address(info.join_url, cls["code"])
    qr, text = st.columns([1, 1.25], vertical_alignment="center")
    with qr.container(key=TABLE.key("code_qr")):
        st.image(teacher_view.qr_svg(address))
    with text:
        st.markdown(t("class.code_slide_title"))
        with st.container(key=TABLE.key("code_big")):
            st.markdown(kit.escape_markdown(state.format_code(cls["code"])))
        with st.container(key=TABLE.key("code_url")):
            st.markdown(t("class.code_slide_url", url=kit.escape_markdown(address)))
        teacher_view.local_address_warning(t, address)
        st.button(t("class.code_slide_close", step=step), key=PLAYGROUND.key("present", "close"), on_click=_hide_code,
                  icon=":material/close:")  # fmt: skip


def strip(t) -> bool:
    """The running class's strip above the slide, one line: the join code and address, the count of
    students, "Show the join code" and the class panel's button; False when no class runs (the
    caller then puts :func:`start_button` in its row of controls)."""
    teacher_view.cookie_script()
    cls = state.teacher()
    if cls is None:
        return False
    if not publish(cls):
        st.warning(t("class.err_session_over"))
        teacher_view.forget(t)
        return False
    info = state.store().teacher_session(cls["sid"], cls["token"])
    st.html(STRIP_CSS)
    step = st.session_state.get(PLAYGROUND.key("step"), 1)
    with st.container(key=TABLE.key("present_strip")):
        line, count, show, panel = st.columns([4.6, 1.5, 1.3, 1.5], vertical_alignment="center")
        address = state.join_address(info.join_url, cls["code"])
        line.markdown(
            t("class.join_line", code=state.format_code(cls["code"]), url=kit.escape_markdown(address))
        )
        with count:
            teacher_view.student_count(t, cls)
        show.button(t("class.code_slide"), key=TABLE.key("present_code"), icon=":material/qr_code_2:", on_click=_show_code,
                    args=(step,), width="stretch")  # fmt: skip
        if panel.button(
            t("class.panel"), key=TABLE.key("present_panel"), icon=":material/how_to_vote:", width="stretch"
        ):
            st.switch_page(CLASS_PAGE)
    return True


def _back_to_class(step: int) -> None:
    st.session_state[PLAYGROUND.key("present")] = True
    st.session_state[PLAYGROUND.key("step")] = step


def playground_banner(t) -> None:
    """The normal playground while this browser runs a class: say so, with the step students see and
    a button back to presenter mode at that step (the sidebar's presenter button starts at step 1).
    Called before the playground's widgets: a new tab without a sentence in its address takes the
    class's view, so that going back to presenter mode does not publish the default sentence."""
    cls, info = _teacher_class()
    if info is None:
        return
    if not info.live(time.time()):
        return
    if st.session_state.get(follow.OWNER_KEY) != cls["sid"] and "text" not in st.query_params:
        follow.adopt_view(st.session_state, info.view)
        st.session_state[follow.OWNER_KEY] = cls["sid"]
    step = int(info.view.get("step") or 1)
    with st.container(border=True, key=TABLE.key("pg_banner")):
        st.markdown(t("class.pg_banner", code=state.format_code(cls["code"]), step=step))
        st.button(t("class.pg_back", step=step), key=TABLE.key("pg_back"), on_click=_back_to_class, args=(step,),
                  type="primary", icon=":material/slideshow:")  # fmt: skip

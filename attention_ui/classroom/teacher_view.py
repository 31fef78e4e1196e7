"""The teacher's controls: start or resume a class, the join code and QR code, polls with a live
histogram, reveal, CSV export and end. Drawn by app_pages/class_teach.py and, compactly, by the
presenter's strip (presenter_hook.py). Nothing here shows the teacher's key as text."""

from __future__ import annotations

import os
import threading
import time

import segno
import streamlit as st

from attention_ui import assets, kit
from attention_ui.classroom import code_polls, follow, questions, state
from attention_ui.classroom.export import results_csv
from attention_ui.classroom.figures import HEIGHT as HISTOGRAM_HEIGHT
from attention_ui.classroom.figures import answers_histogram
from attention_ui.classroom.settings import TABLE
from attention_ui.st_structure import key_class
from attention_ui.takehome import buttons as takehome_buttons
from classroom import ClassError
from classroom.model import icu_ready

POLL_REFRESH_S = 1.0  # the class panel's live parts: the count of students, the histogram and answer count
COUNT_REFRESH_S = 2.0  # the presenter's strip's count of students
SEEN_WITHIN_S = 60.0  # the count of students: those whose page was open in the last minute
# Streamlit fades an element while its fragment reruns; a count refreshed every second would
# flicker on the projector. Constant CSS: the live parts stay at full opacity.
_STEADY_CSS = (
    assets.style("class_steady.css")
    .replace("__POLL__", key_class(TABLE.key("live_poll")))
    .replace("__COUNT__", key_class(TABLE.key("live_count")))
)


def qr_svg(url: str) -> str:
    """The join address as an SVG QR code (error correction M, dark on white)."""
    return segno.make(url, error="m").svg_inline(scale=6, dark="#000000", light="#ffffff", border=2)


def start(t, join_url: str | None = None) -> bool:
    db = state.store_or_error(t)
    if db is None:
        return False
    try:
        db.purge(state.settings().retention_days)  # long-running servers drop old classes here too
        started = db.start_session(hours=state.settings().class_hours, join_url=join_url or None,
                                   client_key=state.client_key())  # fmt: skip
    except ClassError as err:
        st.error(t(err.key, **err.values))
        return False
    st.session_state[state.TEACHER_KEY] = {"sid": started.session_id, "token": started.teacher_token,
                                           "code": started.code}  # fmt: skip
    st.session_state[TABLE.key("new_key")] = True
    st.session_state[TABLE.key("set_cookie")] = int(state.settings().class_hours * 3600)
    st.session_state.pop(state.ENDED_KEY, None)  # "until you start another class", as the page says
    st.session_state[TABLE.key("ended_cookie_tried")] = True
    return True


def cookie_script() -> None:
    """After a start or resume: remember the key in this browser's cookie (never drawn)."""
    cls = st.session_state.get(state.TEACHER_KEY)
    age = st.session_state.pop(TABLE.key("set_cookie"), None)
    if cls and age:
        state.set_cookie(state.TEACHER_COOKIE, f"{cls['sid']}.{cls['token']}", age)
        state.set_cookie(state.ENDED_COOKIE, None, 0)  # a new class: the ended one's results go


KEY_FILE_TTL_S = 30.0  # the key file's download address answers this long after the click


def _expire_downloads() -> None:
    """Delete the files no session refers to (a deferred download's file is one from the moment it
    is made): Streamlit marks such a file on one sweep and deletes it on the next."""
    from streamlit import runtime

    if runtime.exists():
        manager = runtime.get_instance().media_file_mgr
        manager.remove_orphaned_files()
        manager.remove_orphaned_files()


def _key_file_data(text: str):
    """The key file's content, made only when the button is clicked (through this session's own
    connection), at an address that is gone KEY_FILE_TTL_S later, tab open or not."""

    def make() -> str:
        timer = threading.Timer(_key_ttl(), _expire_downloads)
        timer.daemon = True
        timer.start()
        return text

    return make


def _key_ttl() -> float:
    try:
        return max(
            1.0, min(KEY_FILE_TTL_S, float(os.environ.get("ATTENTION_LAB_KEY_FILE_TTL_S", KEY_FILE_TTL_S)))
        )
    except ValueError:
        return KEY_FILE_TTL_S


def key_file(t, cls: dict) -> None:
    """The key as a downloaded file (for another device): the file holds it, the page does not."""
    text = t("class.key_file_text", code=state.format_code(cls["code"]), key=cls["token"])
    st.download_button(t("class.key_download"), _key_file_data(text), file_name=f"attention-lab-class-{cls['code']}.txt",
                       mime="text/plain", key=TABLE.key("key_download"), icon=":material/key:",
                       help=t("class.key_help"), on_click="ignore")  # fmt: skip


ICU_COMMANDS = "sudo apt-get install libicu-dev pkg-config g++\nmake run"  # Debian and Ubuntu


def no_icu(t) -> None:
    """Why this process starts no class (PyICU missing: no nickname could be checked for look-alikes)
    and how to add it. Said before the start button, which is then off: a press that only said it
    afterwards would be a dead end on the projector."""
    st.error(t("class.err_no_icu"))
    st.markdown(t("class.no_icu_how"))
    st.code(ICU_COMMANDS, language="bash")
    st.caption(t("class.no_icu_other"))


def start_panel(t) -> None:
    st.header(t("class.start_heading"))
    ready = icu_ready()
    if not ready:
        no_icu(t)
    fixed = state.settings().join_url
    if fixed:
        st.caption(t("class.join_url_fixed", url=fixed))
        url = None
    else:
        url = st.text_input(
            t("class.join_url"), key=TABLE.key("join_url_input"), max_chars=500, help=t("class.join_url_help")
        )
    if st.button(
        t("class.start"), key=TABLE.key("start"), type="primary", icon=":material/groups:", disabled=not ready
    ):
        if start(t, url):
            st.rerun()
    resume_panel(t)


def resume_panel(t) -> None:
    with st.expander(t("class.resume_heading")):
        st.caption(t("class.resume_help"))
        with st.form(TABLE.key("resume_form"), clear_on_submit=True):
            code = st.text_input(t("class.code_label"), max_chars=16, key=TABLE.key("resume_code"))
            key = st.text_input(
                t("class.key_label"), type="password", max_chars=128, key=TABLE.key("resume_key")
            )
            go = st.form_submit_button(t("class.resume"))
        if go:
            db = state.store_or_error(t)
            if db is None:
                return
            try:
                info = db.resume_teacher(code, key, state.client_key())
            except ClassError as err:
                st.error(t(err.key, **err.values))
                return
            st.session_state[state.TEACHER_KEY] = {"sid": info.session_id, "token": key, "code": info.code}
            st.session_state[TABLE.key("set_cookie")] = max(60, int(info.expires_at - time.time()))
            st.rerun()


def join_box(t, cls: dict, info) -> None:
    """The join code, address and QR code: what the projector shows the room."""
    address = state.join_address(info.join_url, cls["code"])
    qr, text = st.columns([1, 3], vertical_alignment="center")
    qr.image(qr_svg(address), width=220)
    text.markdown(t("class.join_code", code=state.format_code(cls["code"])))
    text.markdown(t("class.join_at", url=kit.escape_markdown(address)))
    with text:
        local_address_warning(t, address)


LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def local_address(address: str) -> bool:
    """Is the join address this computer's own? A phone that opens it reaches itself, not the class."""
    from urllib.parse import urlsplit

    host = (urlsplit(address).hostname or "").lower()
    return host in LOCAL_HOSTS or host.endswith(".localhost") or host.startswith("127.")


def local_address_warning(t, address: str) -> None:
    if local_address(address):
        st.warning(t("class.warn_localhost"))


def forget(t) -> None:
    st.session_state.pop(state.TEACHER_KEY, None)
    state.set_cookie(state.TEACHER_COOKIE, None, 0)


def _act(t, action) -> None:
    try:
        action()
    except ClassError as err:
        st.session_state[TABLE.key("error")] = (err.key, err.values)


def poll_picker(t, cls: dict, view: dict, *, where=st) -> None:
    """Choose a question (from the projected sentence, ``view`` as the store keeps it, or the computed
    quiz) and open it. The stored view, not this session's playground state: after a reload of
    this page that state was the default sentence, and the poll asked about a sentence no one saw."""
    trace, _ = follow.trace_of(view)
    live = [k for k in questions.LIVE_KINDS] if trace is not None else []
    options = [("live", k) for k in live] + [("quiz", k) for k in questions.QUIZ_KINDS]
    labels = {o: t(f"class.pick_{o[0]}_{o[1]}") for o in options}
    choice = where.selectbox(t("class.pick"), options, format_func=labels.get, key=TABLE.key("pick"))
    if where.button(t("class.open_poll"), key=TABLE.key("open"), icon=":material/how_to_vote:"):
        if choice[0] == "live":
            q = questions.live_question(choice[1], trace, int(view.get("head") or 0))
        else:
            q = questions.quiz_question(choice[1], seed=int(time.time()) % 100_000)
        if q is None:
            st.session_state[TABLE.key("error")] = ("class.err_no_question", {})
        else:
            db = state.store()
            _act(
                t,
                lambda: db.open_poll(
                    cls["sid"], cls["token"], q.question, q.n_choices, q.correct, int(view.get("step") or 1)
                ),
            )


def live_panel(t, cls: dict, *, height: int = HISTOGRAM_HEIGHT) -> None:
    """The class panel's live parts: the count of students and the latest poll, drawn by ONE
    ``run_every`` fragment every POLL_REFRESH_S. Two such fragments on one page (the count every 2 s,
    the poll every 1 s) got their ticks' runs in bursts on a busy machine, most cut short, and
    Streamlit's frontend then threw "Cannot set a node at a delta path", closed its websocket and
    left the panel white (bench/RESULTS.md, "Why the teacher stops"). One timer: no two fragment
    runs of this page can interleave."""
    db = state.store()
    hide = st.toggle(t("class.hide_open"), key=TABLE.key("hide_open"), help=t("class.hide_open_help"))

    st.html(_STEADY_CSS)

    @st.fragment(run_every=POLL_REFRESH_S)
    def live() -> None:
        _count(t, db, cls, shared=True)
        with st.container(key=TABLE.key("live_poll")):
            _poll(t, db, cls, hide=hide, height=height)

    live()


def _poll(t, db, cls: dict, *, hide: bool, height: int) -> None:
    """The latest poll: live count and histogram; close and reveal. With "hide until closed" (for a
    projected panel) an open poll shows only its number of answers, so the class's answers do not
    steer those still thinking."""

    def draw() -> None:
        try:
            tallies = db.tallies(cls["sid"], cls["token"])
        except ClassError:
            return
        if not tallies:
            st.caption(t("class.no_poll_yet"))
            return
        tally = tallies[-1]
        p = tally.poll
        st.markdown(t("class.poll_heading", seq=p.seq, state=t(f"class.state_{p.state}")))
        code_polls.show_question(t, p.question)
        revealed = p.state == "revealed"
        if hide and p.state == "open":
            st.info(t("class.hidden_open", n=tally.total))
        else:
            histogram(p, tally, revealed)
        if revealed:  # a code question: what each fragment did, as the quiz shows it
            code_polls.show_consequences_of(t, p.question, p.correct, None, p.seq)
        buttons(p, revealed)

    def histogram(p, tally, revealed: bool) -> None:
        fig = answers_histogram(
            questions.choice_labels(t, p.question), tally.counts, p.correct if revealed else None,
            title=t("class.answers_count", n=tally.total), count_title=t("class.count_axis"),
        )  # fmt: skip
        fig.update_layout(height=height)
        kit.chart(fig, key=TABLE.key("hist", p.seq), alt=t("class.hist_alt"))
        if revealed:
            share = tally.share_right
            st.success(t("class.revealed", answer=kit.escape_markdown(
                f"{chr(65 + p.correct)}. {questions.choice_labels(t, p.question)[p.correct]}"),
                share="—" if share is None else f"{share:.0%}"))  # fmt: skip

    def buttons(p, revealed: bool) -> None:
        c1, c2 = st.columns(2)
        if p.state == "open":
            c1.button(t("class.close_poll"), key=TABLE.key("close", p.seq), icon=":material/lock:",
                      on_click=_act, args=(t, lambda: db.close_poll(cls["sid"], cls["token"], p.poll_id)))  # fmt: skip
        if not revealed:
            c2.button(t("class.reveal"), key=TABLE.key("reveal", p.seq), icon=":material/visibility:",
                      on_click=_act, args=(t, lambda: db.close_poll(cls["sid"], cls["token"], p.poll_id, reveal=True)))  # fmt: skip

    draw()


def _count(t, db, cls: dict, *, shared: bool) -> None:
    """The count of students, in its container; with ``shared`` also how many identities share an
    address."""
    try:
        info = db.teacher_session(cls["sid"], cls["token"])
    except ClassError:
        return
    try:  # students whose page was open in the last minute: every identity made counts 5 for 3 people
        seen = db.students_seen(cls["sid"], cls["token"], within_s=SEEN_WITHIN_S)
    except ClassError:
        seen = info.students
    with st.container(key=TABLE.key("live_count")):
        st.markdown(t("class.students_seen", n=seen), help=t("class.students_seen_help"))
        if shared and info.shared_address:
            st.caption(t("class.shared_address", n=info.shared_address, most=info.most_per_address))


def student_count(t, cls: dict) -> None:
    """The presenter's strip's count of students (its only live part), every COUNT_REFRESH_S."""
    db = state.store()

    st.html(_STEADY_CSS)

    @st.fragment(run_every=COUNT_REFRESH_S)
    def count() -> None:
        _count(t, db, cls, shared=False)

    count()


RELOAD_AFTER_S = 10  # a panel whose connection has been down this long reloads (if the server answers)
RELOAD_AT_MOST_EVERY_S = 60
# The panel's watchdog (constant). Why: under load, Streamlit's frontend on the teacher's panel threw
# "Cannot set a node at a delta path", closed its websocket and never connected again: the panel
# stayed white and counted nothing until someone reloaded it (bench/RESULTS.md, "Why the teacher
# stops"). What it does: when the page has not been connected for RELOAD_AFTER_S and the server's
# health check answers (a server that is down keeps Streamlit's own retries: a reload then would
# leave a browser error page with nothing to retry), it reloads the page, at most once per
# RELOAD_AT_MOST_EVERY_S (counted in the tab's session storage, so across reloads). The class comes
# back with the reload: the teacher's cookie holds it.
_WATCHDOG = assets.style("class_panel_watchdog.css") + assets.script("class_panel_watchdog.js")


def watchdog() -> None:
    """The class panel's watchdog (see _WATCHDOG), in a hidden box."""
    import json

    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    health = "/" + (base + "/" if base else "") + "_stcore/health"
    script = (
        _WATCHDOG.replace("__BOX__", TABLE.key("teach_watchdog"))
        .replace("__AFTER__", str(RELOAD_AFTER_S))
        .replace("__EVERY__", str(RELOAD_AT_MOST_EVERY_S))
        .replace("__HEALTH__", json.dumps(health))
    )
    with st.container(key=TABLE.key("teach_watchdog")):
        st.html(script, unsafe_allow_javascript=True)


def one_per_device(t, cls: dict, info) -> None:
    """The teacher's "one vote per device" switch (classroom/store.py: a cookie plus the address)."""

    def change() -> None:
        _act(
            t,
            lambda: state.store().set_one_per_device(
                cls["sid"], cls["token"], st.session_state[TABLE.key("one_device")]
            ),
        )

    st.session_state[TABLE.key("one_device")] = info.one_per_device
    st.toggle(
        t("class.one_per_device"),
        key=TABLE.key("one_device"),
        on_change=change,
        help=t("class.one_per_device_help"),
    )


BOM = "\ufeff"  # so that Excel reads the file as UTF-8 (Japanese, emoji, "QKᵀ", "×")


def results_file(t, db, cls: dict) -> bytes:
    """The results CSV as the store has them now, UTF-8 with a byte-order mark."""
    text = results_csv(t, db.tallies(cls["sid"], cls["token"]), db.export_answers(cls["sid"], cls["token"]))
    return (BOM + text).encode("utf-8")


def export_button(t, cls: dict) -> None:
    """The results CSV, made when the button is pressed (deferred data): the poll panel's reveal and
    answers are fragment runs, which left a CSV made by the last full run without them. The press
    does not rerun the page (``on_click="ignore"``): a rerun starting before the server read the
    request dropped the callable it asked for, and the click then downloaded nothing."""
    db = state.store()
    try:
        db.teacher_session(cls["sid"], cls["token"])
    except ClassError:
        return
    st.download_button(t("class.export"), lambda: results_file(t, db, cls),
                       file_name=f"attention-lab-class-{cls['code']}.csv", mime="text/csv", key=TABLE.key("export"),
                       icon=":material/download:", on_click="ignore")  # fmt: skip


def course_files(t, view: dict) -> None:
    """The projected sentence as a SCORM package and a Moodle/GIFT quiz, for the course after class."""
    trace, _ = follow.trace_of(view)
    if trace is None:
        return
    text = " ".join(trace.tokens) if view.get("preset") == "example" else str(view.get("text") or "")
    head = max(0, min(int(view.get("head") or 0), trace.heads - 1))
    with st.expander(t("takehome.course_files"), icon=":material/school:"):
        takehome_buttons.course_files(t, TABLE.key, trace, text, head, heading=False)


def _confirm_end(on: bool) -> None:
    st.session_state[TABLE.key("end_confirm")] = on


def end_button(t, cls: dict) -> None:
    """ "End the class", then a dialog that asks first: a class ended by mistake cannot be started
    again (its students would need a new code). A dialog, in the middle of the window: drawn under
    the button, the question came at the bottom edge of a 1080-px class panel and its "Yes" below it
    (issue 42 point 7)."""

    def end() -> None:
        try:
            state.store().end_session(cls["sid"], cls["token"])
        except ClassError:
            pass
        st.session_state[state.ENDED_KEY] = dict(cls)
        st.session_state.pop(state.TEACHER_KEY, None)
        st.session_state.pop(TABLE.key("end_confirm"), None)
        st.session_state[TABLE.key("clear_cookie")] = True

    st.button(
        t("class.end"),
        key=TABLE.key("end"),
        on_click=_confirm_end,
        args=(True,),
        icon=":material/stop_circle:",
    )
    if not st.session_state.get(TABLE.key("end_confirm")):
        return

    @st.dialog(t("class.end_title"), on_dismiss=lambda: _confirm_end(False))
    def ask() -> None:
        # A dialog runs as a fragment: a press reruns only it, and only a full rerun closes it.
        with st.container(key=TABLE.key("end_box")):
            st.warning(t("class.end_confirm"))
            yes, no = st.columns(2)
            if yes.button(t("class.end_yes"), key=TABLE.key("end_yes"), type="primary", icon=":material/stop_circle:",
                          width="stretch"):  # fmt: skip
                end()
                st.rerun()
            if no.button(t("class.end_no"), key=TABLE.key("end_no"), width="stretch"):
                _confirm_end(False)
                st.rerun()

    ask()


def show_error(t) -> None:
    err = st.session_state.pop(TABLE.key("error"), None)
    if err:
        st.error(t(err[0], **err[1]))

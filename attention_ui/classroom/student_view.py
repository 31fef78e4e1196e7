"""A student's phone: join with the code, follow the teacher's step, answer the open poll.

When the teacher's view or the poll moves on, the class bell of the server process rings the page
(classroom/bell.py: one store query per class per quarter second, however many students), which
reruns from the server the part of the page that shows the class (:func:`live`, a fragment). A slower fragment (every FOLLOW_REFRESH_S) makes the
same check from the page, as the fallback: it reads the class's pulse from the cache the bell
shares (classroom/pulse_cache.py) and compares it with what this page last drew. A student can step away (their own step) and
come back to the teacher's with one button. They see their own answer, never anyone else's, and
the right answer and the class's share only after the reveal.
"""

from __future__ import annotations

import time

import streamlit as st

from attention_ui import assets, kit
from attention_ui.classroom import code_polls, follow, questions, ring, shared_slide, state
from attention_ui.classroom.settings import TABLE
from attention_ui.playground import steps_view
from classroom import NICKNAME_MAX, ClassError
from classroom.model import BLANK_LETTERS, Pulse
from classroom.pulse_cache import moved_on, progress

# The page's own check, the fallback to the bell: a page that the bell does not ring (a Streamlit
# without the names classroom ring reads; a ring lost on its way) follows within this plus one redraw.
# Each check is a script run (about 2.3 ms of a process's time: at 1 s, 150 students cost a third of
# a core while nothing changed, bench/RESULTS.md).
FOLLOW_REFRESH_S = 4.0
SEEN_KEY, AWAY_KEY, OWN_STEP_KEY = TABLE.key("seen"), TABLE.key("away"), TABLE.key("own_step")
DRAWING_KEY = TABLE.key("drawing")  # set while a full run draws the page (see watcher)
RESYNC_KEY = TABLE.key("resync")  # the watchdog's box (its hidden button: TABLE.key("resync_now"))
WATCHDOG_QUIET_S = 3 * FOLLOW_REFRESH_S  # a following page that asked for no run this long redraws itself
WATCHDOG_MISMATCH_S = 3  # ... and one that shows another state than it should for this long
DRAWN_PREFIX, EXPECT_PREFIX = (
    TABLE.family("drawn") + "_",
    TABLE.family("expect") + "_",
)  # markers: what the page shows / should show
DRAWN_AT_KEY = TABLE.key("drawn_at")  # when this session last drew the class (time.monotonic)
DRAWN_STEP_KEY = TABLE.key("drawn_step")  # the teacher's step that run drew (its caption says it)
EXPECT_FOR_S = 5 * FOLLOW_REFRESH_S  # after a drawing, the watcher's ticks say this long what it should show
ASK_BYTES = 32  # a longer message from the page is a rerun request (a tick's: ~200 B; a heartbeat: one flag)
CODE_PARAM_MAX = 64
PRESENCE_KEY, PRESENCE_EVERY_S = TABLE.key("presence_at"), 20.0  # see present()


def code_from_url() -> str:
    raw = st.query_params.get("code", "")
    return raw if isinstance(raw, str) and len(raw) <= CODE_PARAM_MAX and raw.isprintable() else ""


def nickname_problem(nick: object) -> tuple[str, dict] | None:
    """What the student should hear about their nickname before joining (catalog key, values), or None.
    The store checks it again (classroom.model.clean_nickname); this names the length and says when
    nothing visible is left."""
    import unicodedata

    if not nick:
        return None
    if not isinstance(nick, str):  # a forged widget value (issue 42 point 7): said, never raised
        return "class.err_nickname_type", {}
    name = nick.strip()
    if len(name) > NICKNAME_MAX:
        return "class.err_nick_length", {"n": len(name), "limit": NICKNAME_MAX}
    visible = [ch for ch in name if ch not in BLANK_LETTERS and unicodedata.category(ch)[0] not in ("Z", "C")]
    if name and not visible:
        return "class.err_nick_invisible", {}
    return None


def join_form(t) -> None:
    st.markdown(t("class.join_intro"))
    raw_code = st.query_params.get("code")
    if raw_code is not None and not code_from_url():
        st.warning(t("class.err_code_param"))
    with st.form(TABLE.key("join_form")):
        code = st.text_input(
            t("class.code_label"), value=code_from_url(), max_chars=16, key=TABLE.key("join_code")
        )
        # No max_chars: at the limit the box cut a longer nickname silently (and a 500-character
        # paste left it empty), and at 1000 its counter said "25/1000" and a long paste was cut to
        # 1000, which the message then named (issue 42 point 7); the check below counts what was typed
        nick = st.text_input(
            t("class.nick_label", n=NICKNAME_MAX), key=TABLE.key("join_nick"), help=t("class.nick_help")
        )
        go = st.form_submit_button(t("class.join"), type="primary", width="stretch")
    st.caption(t("class.join_stored", days=f"{state.settings().retention_days:g}"))
    if not go:
        return
    problem = nickname_problem(nick)
    if problem is not None:
        st.error(t(problem[0], **problem[1]))
        return
    db = state.store_or_error(t)
    if db is None:
        return
    try:
        joined = db.join(code, nick or None, state.client_key(), device=state.device_key())
    except ClassError as err:
        st.error(t(err.key, **err.values))
        return
    st.session_state[state.STUDENT_KEY] = {"sid": joined.session_id, "token": joined.student_token,
                                           "code": joined.code, "nick": joined.nickname}  # fmt: skip
    st.session_state[TABLE.key("student_cookie")] = True
    st.rerun()


def watcher(me: dict) -> None:
    """Every FOLLOW_REFRESH_S: has the class moved past what this page drew? Then redraw the whole page.

    Drawn in a slot made at the top of the page, so the fragment's position (and so its id) is
    the same in every run and on every server process, whatever the page above it shows; and
    called before the page is drawn, so every full run gives the browser its timer at once, even
    a run that is stopped half-way by the next one. That first, inline run checks nothing: the
    run that calls it draws the class as it is."""
    cache = state.pulses()
    sid = me["sid"]

    @st.fragment(run_every=FOLLOW_REFRESH_S)
    def watch() -> None:
        if st.session_state.pop(DRAWING_KEY, False):
            return
        seen = st.session_state.get(SEEN_KEY)
        if moved_on(progress(cache.get(sid)), seen):
            st.rerun(scope="app")
        present(me)  # after the check: a store write never delays a follow
        if seen is not None and time.monotonic() - st.session_state.get(DRAWN_AT_KEY, 0.0) < EXPECT_FOR_S:
            step = st.session_state.get(DRAWN_STEP_KEY, 0)  # the watchdog compares both with the page's
            draw_marker(EXPECT_PREFIX, seen, f"_step{step}")

    st.session_state[DRAWING_KEY] = True
    watch()


def present(me: dict) -> None:
    """Tell the store this page is open, at most every PRESENCE_EVERY_S (the teacher's count of
    students seen in the last minute; 30 phones: 1.5 small writes a second)."""
    now = time.monotonic()
    if now - st.session_state.get(PRESENCE_KEY, -PRESENCE_EVERY_S) < PRESENCE_EVERY_S:
        return
    st.session_state[PRESENCE_KEY] = now
    try:
        state.store().seen(me["sid"], me["token"])
    except Exception:  # noqa: BLE001 - a lost presence note costs a count, never the page
        pass


def marker(seen) -> str:
    """A drawn state (:func:`classroom.pulse_cache.progress`) as part of an element key."""
    return "-".join(str(int(x)) for x in seen)


def draw_marker(prefix: str, seen, tail: str = "") -> None:
    """An invisible element whose key says a drawn state (a browser does not draw an empty box)."""
    with st.container(key=prefix + marker(seen) + tail):
        st.html("<span></span>")


# The watchdog (constant; one per browser tab whatever the number of runs that draw it).
#
# Why: Streamlit's server drops what a finished script runner still had queued for the browser when
# a request from that browser (the watcher's tick, a click) starts a new runner first (AppSession
# ignores events from a runner that is no longer the session's current one). In the 30-student
# bench runs (bench/RESULTS.md "Live class, part 2") 0-7 full runs per class lost their end that
# way, twice the run's auto-rerun message: that page had got the start of the run, which clears the
# watcher's timer in the browser, but not the message that sets it again, so it stopped
# following (1 page in 150 before this watchdog). A page can also lose a run's drawing while the
# server counts it as drawn.
#
# What it does: it notes when the page last asked the server for a rerun (every tick of the
# watcher's timer does), and compares the state the page shows (the live part's hidden DRAWN marker,
# drawn last) with the one it should show (the watcher's EXPECT marker, drawn by its ticks for
# EXPECT_FOR_S after a drawing; without a DRAWN marker, the step its caption shows). When the page
# is connected and not in a run, and has asked for no rerun for WATCHDOG_QUIET_S, or has shown
# another state than it should for WATCHDOG_MISMATCH_S, it clicks the hidden button: a full run, which draws the class as it is and
# gives the browser its timer again. At most one such click per WATCHDOG_QUIET_S.
_WATCHDOG = assets.style("class_watchdog.css") + assets.script("class_watchdog.js")
for _name, _value in (("__BOX__", RESYNC_KEY), ("__EXPECT__", EXPECT_PREFIX), ("__DRAWN__", DRAWN_PREFIX),
                      ("__QUIET__", str(WATCHDOG_QUIET_S)), ("__MISMATCH__", str(WATCHDOG_MISMATCH_S)),
                      ("__ASK_BYTES__", str(ASK_BYTES))):  # fmt: skip
    _WATCHDOG = _WATCHDOG.replace(_name, _value)


def watchdog(t) -> None:
    """The watchdog's script and its hidden button (a click: a full run of the page), in a hidden
    box; its style also hides the page's EXPECT and DRAWN markers."""
    with st.container(key=RESYNC_KEY):
        st.button(t("class.resync"), key=TABLE.key("resync_now"))
        st.html(_WATCHDOG, unsafe_allow_javascript=True)


def _send(me: dict, poll_id: str, key: str, names: list[str]) -> None:
    """The chosen answer to the store; the acknowledgement, or the true reason it was not taken.
    The choice is the radio's value as the browser sent it: a message forged by hand can make it
    anything (issue 42 point 7), so only one of the options offered goes on."""
    picked = st.session_state.get(key)
    if not isinstance(picked, str) or picked not in names:
        st.session_state[TABLE.key("ack")] = (poll_id, None, "class.answer_refused_unknown")
        return
    choice = names.index(picked)
    db = state.store()
    if db.answer(me["sid"], me["token"], poll_id, choice):
        st.session_state[TABLE.key("ack")] = (poll_id, choice, None)
        return
    st.session_state[TABLE.key("ack")] = (
        poll_id,
        None,
        db.answer_refusal(me["sid"], me["token"], poll_id, choice),
    )


def poll_box(t, me: dict, latest) -> tuple[int | None, str | None]:
    """The latest poll of the class (if any) as this student sees it; returns its (number, state).

    Part of the live part (:func:`live`), not a fragment of its own: choosing an option and sending
    it rerun the live part, whose slide is replayed from the shared drawing (shared_slide.py). A
    fragment inside the live part made a click during the bell's run of it end that run "early"
    (its own queued messages were dropped), and the browser then kept the last step's leftovers."""
    if latest is None:
        return None, None
    _draw_poll(t, me, latest)
    return latest.seq, latest.state


def _draw_poll(t, me: dict, p) -> None:
    labels = questions.choice_labels(t, p.question)
    names = [f"{chr(65 + i)}. {kit.escape_markdown(lab)}" for i, lab in enumerate(labels)]
    with st.container(border=True, key=TABLE.key("poll_box")):
        st.markdown(t("class.poll_heading", seq=p.seq, state=t(f"class.state_{p.state}")))
        code_polls.show_question(t, p.question)
        key = TABLE.key("choice", p.poll_id)
        if p.state == "open":
            if key not in st.session_state and p.my_choice is not None:
                st.session_state[key] = names[p.my_choice]
            mine = st.session_state.get(key)
            if mine is not None and (not isinstance(mine, str) or mine not in names):
                # Only a message forged by hand sends an option we did not offer or a value of another
                # type (the options are their texts: a browser sends one of them). Streamlit takes the
                # message's value type for the widget and, drawing the radio, writes our text into it:
                # an uncaught TypeError (issue 42 point 7). Forgotten here, the widget's state with it.
                del st.session_state[key]
            st.radio(t("class.your_answer"), names, key=key, index=None)
            st.button(t("class.send"), key=TABLE.key("send", p.poll_id), on_click=_send, args=(me, p.poll_id, key, names),
                      type="primary", width="stretch", disabled=st.session_state.get(key) is None)  # fmt: skip
            ack = st.session_state.get(TABLE.key("ack"))
            if ack and ack[0] == p.poll_id:
                if ack[1] is None:
                    st.error(t(ack[2]))
                else:
                    st.success(t("class.answer_ack", choice=chr(65 + ack[1])))
            elif p.my_choice is not None:
                st.success(t("class.answer_ack", choice=chr(65 + p.my_choice)))
        else:
            mine = "—" if p.my_choice is None else names[p.my_choice]
            st.markdown(t("class.your_final", choice=mine))
            if p.state == "revealed" and p.correct is not None:
                share = "—" if p.share_right is None else f"{p.share_right:.0%}"
                st.success(t("class.revealed", answer=names[p.correct], share=share))
                code_polls.show_consequences_of(t, p.question, p.correct, p.my_choice, p.poll_id)
            else:
                st.info(t("class.poll_closed_wait"))


def _back() -> None:
    st.session_state[AWAY_KEY] = False


def _away() -> None:
    st.session_state[AWAY_KEY] = True


def _own(delta: int, teacher_step: int) -> None:
    s = st.session_state
    s[OWN_STEP_KEY] = min(len(steps_view.STEPS), max(1, int(s.get(OWN_STEP_KEY, teacher_step)) + delta))


def slide(t, me: dict, head, view: dict) -> int:
    """The teacher's step (or the student's own while away), from the class's ``view``; returns the
    teacher's step. While following, the step it is at goes into ``head`` (the page's title box) and
    the "explore" button after the step's chart: the first screen is for the chart."""
    trace, why = follow.trace_of(view)
    teacher_step = int(view.get("step", 1))
    away = bool(st.session_state.get(AWAY_KEY))
    if not away:
        st.session_state[OWN_STEP_KEY] = teacher_step
    step = int(st.session_state.get(OWN_STEP_KEY, teacher_step)) if away else teacher_step
    if away:
        st.info(t("class.away_note", step=teacher_step))
        st.button(t("class.back"), key=TABLE.key("back"), on_click=_back, type="primary", width="stretch",
                  icon=":material/undo:")  # fmt: skip
        c1, c2 = st.columns(2)
        c1.button(t("class.prev"), key=TABLE.key("own_prev"), on_click=_own, args=(-1, teacher_step), width="stretch",
                  disabled=step <= 1)  # fmt: skip
        c2.button(t("class.next"), key=TABLE.key("own_next"), on_click=_own, args=(1, teacher_step), width="stretch",
                  disabled=step >= len(steps_view.STEPS))  # fmt: skip
    else:
        head.caption(t("class.following", step=teacher_step, total=len(steps_view.STEPS)))
    if trace is None:
        st.info(t(why))
    else:
        k = max(0, min(int(view.get("head", 0)), trace.heads - 1))
        v = steps_view.View(t=t, trace=trace, example=view.get("preset") == "example", head=k, show_tables=False,
                            text_after=t("class.step_text"), draw_body=shared_slide.drawer(view, t.lang))  # fmt: skip
        with st.container(key=TABLE.key("slide")):
            steps_view.render_step(v, steps_view.STEPS[step - 1], step, heading_level="subheader")
    if not away:
        # Its key is not AWAY_KEY: a button's own session value is reset to False on the next run,
        # which took the student back to following at their first Previous/Next or teacher step.
        st.button(t("class.explore"), key=TABLE.key("explore"), on_click=_away, icon=":material/explore:")
    return teacher_step


# Constant CSS for a joined page, so the step's chart starts on a phone's first screen and all of
# a 420-px chart fits on a 390x844 one (issue 34: at ~660 px of 844, then ~500 px with the title
# made small): the title as small as its text, the step it follows right under it (no gap, so
# not the -1 rem margin Streamlit gives a heading to close one); the step's
# heading one size down; the page's top margin no taller than Streamlit's header bar (3.75 rem).
_JOINED_HEAD_CSS = assets.style("class_joined_head.css")


def page(t) -> None:
    slot = st.container()  # first, so the watcher's fragment id never depends on what follows
    bell, here = state.bell(), ring.here()
    if bell is not None and here is not None:
        bell.leave(here[0])  # until this run says what it drew (a run that stops early: not following)
    head = st.container()  # the page's title and, once joined, the class (the live part)
    if st.session_state.pop(TABLE.key("student_cookie"), False):  # (after head: its place stays put)
        me = st.session_state.get(state.STUDENT_KEY)
        if me:
            state.set_cookie(state.STUDENT_COOKIE, f"{me['sid']}.{me['token']}", 48 * 3600)
    db = state.store_or_error(t)
    if db is None:
        head.title(t("class.join_title"))
        return
    me = state.student()
    if me is None:
        head.title(t("class.join_title"))
        join_form(t)
        return
    # Whether the class still runs, read from the store: the pulse the bell shares may be a quarter
    # second old, and a page run just after the class ended must say so (tests/test_class_pages.py).
    # With it, in the same transaction, the view and the poll this run draws.
    now = db.student_page(me["sid"], me["token"])
    if now is None or not now.pulse.live:
        with head:
            class_over(t)
        return
    with slot:
        watcher(me)
        watchdog(t)
        st.html(_JOINED_HEAD_CSS)  # (here, not in the live part: a style needs no redrawing at each step)
    with head:
        live(t, me, now)


def class_over(t) -> None:
    st.title(t("class.join_title"))
    st.info(t("class.over_student"))
    if st.button(t("class.join_another"), key=TABLE.key("leave")):
        st.session_state.pop(state.STUDENT_KEY, None)
        state.set_cookie(state.STUDENT_COOKIE, None, 0)
        st.rerun()


def live(t, me: dict, first) -> None:
    """Everything of a joined page that shows the class: its title, the poll, the step and the
    DRAWN marker. A fragment: the class bell's ring reruns only this part (attention_ui/classroom/
    ring.py), not the app around it (its navigation and sidebar, the watcher and the watchdog),
    which made a step change in a hall cost each student's page a whole app run (issue 47). The
    page's full run passes what it has just read (``first``); a ring's run reads the store again,
    and draws the class's end if it has ended (the watcher's next check then runs the whole page,
    which has no watcher once the class is over)."""
    start = [first]

    @st.fragment
    def part() -> None:
        now = start.pop() if start else state.store().student_page(me["sid"], me["token"])
        bell, here = state.bell(), ring.here()
        if now is None or not now.pulse.live:
            if bell is not None and here is not None:
                bell.leave(here[0])
            class_over(t)
            return
        head = st.container(key=TABLE.key("joined_head"))  # the page's H1 kept (screen readers)
        with head:  # ... one line high (_JOINED_HEAD_CSS)
            st.title(t("class.join_title"))
        rev, view, latest = now.view_rev, now.view, now.poll
        # The poll above the step while it is open or the class is at its step; a closed or revealed
        # one after the step's chart on the later steps: its result box above every step until the next
        # poll pushed the chart to 590 px of a 844-px phone (issue 42 point 6).
        on_top = latest is not None and (latest.state == "open" or latest.step == int(view.get("step", 1)))
        if on_top:
            seq, poll_state = poll_box(t, me, latest)
        teacher_step = slide(t, me, head, view)
        if not on_top:
            seq, poll_state = poll_box(t, me, latest)
        # Who and where, after the step: the student reads them once, the chart at every step.
        st.caption(t("class.in_class", code=state.format_code(me["code"])))
        if me.get("nick"):
            st.text(t("class.you_are", nick=me["nick"]))  # as text: a nickname is never Markdown or HTML
        # What this page shows, read from the store in this run (the cached pulse may be older); its
        # marker comes last (hidden by the watchdog's style), so a page that lost the end of this run
        # does not have it.
        seen = progress(Pulse(rev, seq, poll_state, True))
        st.session_state[SEEN_KEY], st.session_state[DRAWN_AT_KEY] = seen, time.monotonic()
        st.session_state[DRAWN_STEP_KEY] = teacher_step
        draw_marker(DRAWN_PREFIX, seen)
        if bell is not None and here is not None:  # the bell rings this part when the class moves past it
            bell.follow(here[0], me["sid"], here[1], seen, ring.fragment_here())

    part()

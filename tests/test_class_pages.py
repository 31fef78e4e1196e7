"""The live-class pages with AppTest: a teacher and students in one process sharing one SQLite store.

Start, join, follow, poll, answer, reveal, export and end, in English and Japanese; the projector
never shows the teacher's key; students never see names or others' answers; hostile input.
"""

from __future__ import annotations

import json
import re
import types
from pathlib import Path

import pytest

from attention_ui.classroom import shared_slide, state
from attention_ui.playground import steps_view
from classroom.store import FREE_TRIES
from tests.apptest_pages import no_exception, open_page

TEACH, JOIN, PLAYGROUND = "app_pages/class_teach.py", "app_pages/class_join.py", "app_pages/playground.py"
HOSTILE = json.loads((Path(__file__).parent / "data" / "hostile_inputs.json").read_text(encoding="utf-8"))
VISIBLE = (
    "markdown",
    "text",
    "caption",
    "info",
    "success",
    "warning",
    "error",
    "code",
    "title",
    "header",
    "subheader",
)


@pytest.fixture(autouse=True)
def class_store(tmp_path, monkeypatch):
    """A new SQLite store for each test (the pages open it through their cached ``state.store``)."""
    monkeypatch.setenv("ATTENTION_LAB_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_DATABASE_URL", raising=False)
    monkeypatch.delenv("ATTENTION_LAB_JOIN_URL", raising=False)
    state.settings.clear()
    state.store.clear()
    state.pulses.clear()
    yield state.store()
    state.store().close()
    state.store.clear()
    state.settings.clear()


def visible(at) -> str:
    """Everything the page shows as text, plus the values of its text boxes, plus the text of its
    HTML blocks with their scripts removed (scripts are not shown)."""
    parts = []
    for kind in VISIBLE:
        parts += [str(getattr(el, "value", "")) for el in at.get(kind)]
    parts += [str(w.value) for w in at.text_input]
    for el in at.get("html"):
        parts.append(re.sub(r"<script>.*?</script>", "", el.proto.body, flags=re.S))
    parts += [f"{k}={v}" for k, v in at.query_params.items()]
    return "\n".join(parts)


def scripts(at) -> str:
    return "\n".join(el.proto.body for el in at.get("html"))


def start_class(lang="en"):
    at = open_page(TEACH, lang=lang)
    at.button(key="cls_start").click().run()
    no_exception(at)
    return at, at.session_state[state.TEACHER_KEY]


def join(code: str, nick: str | None = None, lang="en"):
    at = open_page(JOIN, lang=lang, params={"code": code})
    if nick is not None:
        at.text_input(key="cls_join_nick").set_value(nick)
    at.button[0].click().run()  # the form's submit button
    no_exception(at)
    return at


def choose(phone, key: str, i: int) -> None:
    """Pick option ``i`` of a poll (the radio's options are their texts, "A. ...": what a browser sends)."""
    radio = phone.radio(key=key)
    radio.set_value(radio.options[i]).run()


def test_start_shows_code_and_qr_but_never_the_teacher_key(class_store):
    at, cls = start_class()
    shown = visible(at)
    assert cls["code"][:3] + "-" + cls["code"][3:] in shown
    assert "class_join?code=" + cls["code"] in shown.replace("\\", "")
    assert len(at.get("image")) == 1  # the QR code
    assert cls["token"] not in shown
    assert cls["token"] in scripts(at)  # only inside the cookie script: how a reload resumes control
    assert len(cls["token"]) >= 43


def assert_export_does_not_rerun(teacher) -> None:
    """The results button makes its CSV when pressed (deferred data) and does not rerun the page: a
    rerun that started before the server read the download request dropped the callable it asked
    for, and the press downloaded nothing (seen once in a Chromium lecture test under load)."""
    exports = [d for d in teacher.get("download_button") if d.proto.id.endswith("cls_export")]
    assert len(exports) == 1 and exports[0].proto.deferred_file_id, [
        d.proto.id for d in teacher.get("download_button")
    ]
    assert exports[0].proto.ignore_rerun


def test_a_class_in_both_languages_from_start_to_export(class_store):
    teacher, cls = start_class("ja")
    assert "参加コード" in visible(teacher)
    alice = join(cls["code"].lower(), "Alice", lang="en")
    bob = join(cls["code"], "<b>Bob</b>", lang="ja")
    assert "You joined as: Alice" in [t.value for t in alice.text]
    assert "参加名：<b>Bob</b>" in [t.value for t in bob.text]  # as text, never as HTML
    assert alice.get("plotly_chart")  # the teacher's step is drawn on the phone
    # the teacher opens a poll on the sentence: which key wins the last row
    teacher.selectbox(key="cls_pick").set_value(("live", "winning_key")).run()
    teacher.button(key="cls_open").click().run()
    no_exception(teacher)
    for phone in (alice, bob):
        phone.run()
        assert phone.radio(key=next(k for k in phone.session_state if str(k).startswith("cls_choice_")))
    key = next(k for k in alice.session_state if str(k).startswith("cls_choice_"))
    poll = class_store.tallies(cls["sid"], cls["token"])[0].poll
    choose(alice, key, poll.correct)
    alice.button(key=f"cls_send_{poll.poll_id}").click().run()
    assert any("received" in s.value for s in alice.success)
    wrong = (poll.correct + 1) % poll.n_choices
    choose(bob, key, wrong)
    bob.button(key=f"cls_send_{poll.poll_id}").click().run()
    assert any("受け付けました" in s.value for s in bob.success)
    assert "Alice" not in visible(bob) and "Bob" not in visible(alice)
    teacher.run()
    hist = json.loads(teacher.get("plotly_chart")[0].proto.spec)
    assert hist["layout"]["title"]["text"] == "回答数：2" and sorted(hist["data"][0]["y"]) == [0, 0, 1, 1]
    teacher.button(key=f"cls_reveal_{poll.seq}").click().run()
    alice.run()
    assert any("50%" in s.value and "Right answer" in s.value for s in alice.success)
    bob.run()
    assert any("正解" in s.value and "50%" in s.value for s in bob.success)
    csv = class_store.tallies(cls["sid"], cls["token"])
    assert csv[0].counts[poll.correct] == 1 and csv[0].total == 2
    assert_export_does_not_rerun(teacher)
    teacher.button(key="cls_end").click().run()  # asks first: the class goes on
    alice.run()
    assert not any("ended" in i.value for i in alice.info)
    teacher.button(key="cls_end_no").click().run()
    assert "cls_end_yes" not in {b.key for b in teacher.button}
    teacher.button(key="cls_end").click().run()
    teacher.button(key="cls_end_yes").click().run()
    no_exception(teacher)
    assert any("日間" in i.value for i in teacher.info), [i.value for i in teacher.info]
    assert teacher.get("download_button")  # the results, still there
    assert_export_does_not_rerun(teacher)
    alice.run()
    assert any("ended" in i.value for i in alice.info)


def test_a_student_cannot_act_as_teacher_or_see_the_tally(class_store):
    teacher, cls = start_class()
    phone = join(cls["code"])
    # nothing a student's page offers moves the class or touches polls
    keys = {b.key for b in phone.button}
    assert not keys & {"cls_open", "cls_end", "cls_start"} and not any(
        str(k).startswith("cls_reveal") for k in keys
    )
    assert state.TEACHER_KEY not in phone.session_state
    assert not phone.get("plotly_chart") or all(
        "Answers" not in el.proto.spec for el in phone.get("plotly_chart")
    )


def test_the_presenter_starts_a_class_and_publishes_its_step(class_store):
    at = open_page(PLAYGROUND, pg_present=True, pg_step=4)
    at.button(key="cls_present_start").click().run()
    no_exception(at)
    cls = at.session_state[state.TEACHER_KEY]
    assert cls["token"] not in visible(at)
    phone = join(cls["code"])
    assert class_store.student_view(*_me(phone))[1]["step"] == 4
    at.button(key="pg_present_next").click().run()
    assert class_store.student_view(*_me(phone))[1]["step"] == 5
    phone.run()
    assert any("step 5 of" in c.value for c in phone.caption)
    # away and back with one button
    phone.button(key="cls_explore").click().run()
    phone.button(key="cls_own_prev").click().run()
    assert any("teacher is at step 5" in i.value for i in phone.info)
    phone.button(key="cls_back").click().run()
    assert any("step 5 of" in c.value for c in phone.caption)


def test_reloading_the_class_page_does_not_move_the_class(class_store):
    text = "one two three four five six seven eight nine"  # 9 tokens; the default sentence has 6
    at = open_page(PLAYGROUND, pg_present=True, pg_step=6, pg_text=text)
    at.button(key="cls_present_start").click().run()
    cls = at.session_state[state.TEACHER_KEY]
    reloaded = open_page(TEACH, **{state.TEACHER_KEY: dict(cls)})  # a new session of the same browser
    no_exception(reloaded)
    phone = join(cls["code"])
    assert class_store.student_view(*_me(phone))[1]["step"] == 6
    # a poll on this sentence is on the projected one (issue 34 point 2)
    reloaded.button(key="cls_open").click().run()
    poll = class_store.tallies(cls["sid"], cls["token"])[-1].poll
    assert poll.question["kind"] == "scores_shape" and poll.question["n"] == 9 and poll.step == 6
    # back to presenter mode: the class stays where it was (point 1)
    reloaded.button(key="cls_to_presenter").click().run()
    assert reloaded.session_state["pg_step"] == 6 and reloaded.session_state["pg_text"] == text
    view = class_store.student_view(*_me(phone))[1]
    assert view["step"] == 6 and view["text"] == text


def _me(phone):
    me = phone.session_state[state.STUDENT_KEY]
    return me["sid"], me["token"]


def test_resume_control_on_another_device_with_code_and_key(class_store):
    _, cls = start_class()
    other = open_page(TEACH)
    other.text_input(key="cls_resume_code").set_value(cls["code"])
    other.text_input(key="cls_resume_key").set_value("A" * 43)
    other.button[-1].click().run()
    assert any("do not match" in e.value for e in other.error)
    other.text_input(key="cls_resume_code").set_value(cls["code"])
    other.text_input(key="cls_resume_key").set_value(cls["token"])
    other.button[-1].click().run()
    no_exception(other)
    assert other.session_state[state.TEACHER_KEY]["sid"] == cls["sid"]
    assert cls["token"] not in visible(other)


@pytest.mark.parametrize(
    "nick, message",
    [
        ("N" * 100_000, "has 100000 characters; at most 24"),  # the true count (it said 1000: the box's cut)
        ("N" * 500, "has 500 characters; at most 24"),  # a paste: it used to leave the box empty
        ("Nicknames-are-25-letters", None),  # 24: fits
        ("Nicknames-are-25-letters!", "has 25 characters; at most 24"),  # used to be cut silently
        ("\u200b\u200b", "no visible character"),  # zero-width only: it would be stored empty
        ("\u3164", "no visible character"),  # a Hangul filler
        ("a\x00b", "control characters"),
        ("\u202eevil", "control characters"),
    ],
    ids=["100KB", "500", "24", "25", "zero-width", "filler", "nul", "bidi"],
)
def test_hostile_nicknames_get_a_clear_message_and_change_nothing(class_store, nick, message):
    _, cls = start_class()
    phone = join(cls["code"], nick)
    if message is None:
        assert phone.session_state[state.STUDENT_KEY]["nick"] == nick
    else:
        assert any(message in e.value for e in phone.error), [e.value for e in phone.error]
        assert class_store.teacher_session(cls["sid"], cls["token"]).students == 0
        assert phone.text_input(key="cls_join_nick").value == nick  # kept, to be corrected


def test_wrong_codes_then_slowed_down(class_store):
    _, cls = start_class()
    phone = open_page(JOIN)
    for _ in range(FREE_TRIES):
        phone.text_input(key="cls_join_code").set_value("QQQQQQ")
        phone.button[0].click().run()
        assert any("does not belong" in e.value for e in phone.error)
    phone.text_input(key="cls_join_code").set_value(cls["code"])
    phone.button[0].click().run()
    assert any("Too many wrong join codes" in e.value for e in phone.error)
    assert state.STUDENT_KEY not in phone.session_state


@pytest.mark.parametrize(
    "query", [q for q in HOSTILE["query_strings"]][:6] + ["code=" + "Z" * 5000, "code=%00%0a"]
)
def test_malformed_join_links_are_named_not_fatal(class_store, query):
    from urllib.parse import parse_qsl

    params = dict(parse_qsl(str(query).lstrip("?"), keep_blank_values=True)) or {"code": str(query)}
    if "code" not in params:
        params["code"] = str(query)
    at = open_page(JOIN, params={k: v for k, v in params.items() if k in ("code", "lang")})
    no_exception(at)
    at.button[0].click().run()
    no_exception(at)
    assert at.error or at.warning
    assert state.STUDENT_KEY not in at.session_state


def test_the_watchers_fragment_id_is_the_same_whatever_the_page_shows(class_store, monkeypatch):
    """A student page's 1-s watcher is a fragment whose id Streamlit derives from its position on
    the page. The browser's timer keeps sending the id it was given; after a process is killed,
    another process must know that same id. So it may not depend on what the page draws above it:
    no poll, an open poll, an answer sent, a nickname or none, the student away on their own step."""
    from streamlit.runtime import fragment as st_fragment

    seen: list[str] = []
    real = st_fragment._make_fragment_identity

    def spy(func, **kwargs):
        identity = real(func, **kwargs)
        if func.__name__ == "watch":
            seen.append(identity.fragment_id)
        return identity

    monkeypatch.setattr(st_fragment, "_make_fragment_identity", spy)
    teacher, cls = start_class()
    with_nick, no_nick = join(cls["code"], "Ann"), join(cls["code"])
    teacher.button(key="cls_open").click().run()
    no_exception(teacher)
    for phone in (with_nick, no_nick):
        phone.run()
    poll = class_store.tallies(cls["sid"], cls["token"])[-1].poll
    choose(with_nick, f"cls_choice_{poll.poll_id}", 0)
    with_nick.button(key=f"cls_send_{poll.poll_id}").click().run()
    with_nick.button(key="cls_explore").click().run()
    with_nick.button(key="cls_own_next").click().run()
    assert any("teacher is at step" in i.value for i in with_nick.info)  # really away
    assert len(seen) >= 8 and len(set(seen)) == 1, seen


def test_a_joined_page_asks_the_bell_to_ring_only_its_live_part(class_store, monkeypatch):
    """The bell's ring reruns the fragment that draws the class (student_view.live), not the app:
    the page hands the bell that fragment's id, in a full run and in the fragment's own runs."""
    from streamlit.runtime import fragment as st_fragment

    ids: dict[str, set] = {}
    real = st_fragment._make_fragment_identity

    def spy(func, **kwargs):
        identity = real(func, **kwargs)
        if func.__module__ == "attention_ui.classroom.student_view":
            ids.setdefault(func.__name__, set()).add(identity.fragment_id)
        return identity

    class Bell:
        def __init__(self):
            self.follows, self.left = [], []

        def follow(self, session_id, class_id, page, drawn, fragment=""):
            self.follows.append((class_id, drawn, fragment))
            return True

        def leave(self, session_id):
            self.left.append(session_id)

    bell = Bell()
    monkeypatch.setattr(st_fragment, "_make_fragment_identity", spy)
    monkeypatch.setattr(state, "bell", lambda: bell)
    teacher, cls = start_class()
    phone = join(cls["code"], "Ann")
    phone.run()
    phone.button(key="cls_explore").click().run()  # a button of the live part
    no_exception(phone)
    (live,) = ids["part"]  # one place on the page, whatever the run
    assert set(ids) == {"watch", "part"} and live not in ids["watch"]  # the poll is part of the live part
    assert len(bell.follows) >= 3 and {f[2] for f in bell.follows} == {live}
    assert {f[0] for f in bell.follows} == {cls["sid"]} and bell.left
    class_store.end_session(cls["sid"], cls["token"])
    follows = len(bell.follows)
    phone.run()
    assert "over" in visible(phone) and len(bell.follows) == follows  # an ended class is not followed


def class_with_one_answer(class_store):
    """A class with an open poll that one phone answered (option A): (teacher page, class, poll)."""
    teacher, cls = start_class()
    phone = join(cls["code"])
    teacher.button(key="cls_open").click().run()
    poll = class_store.tallies(cls["sid"], cls["token"])[-1].poll
    phone.run()
    choose(phone, f"cls_choice_{poll.poll_id}", 0)
    phone.button(key=f"cls_send_{poll.poll_id}").click().run()
    return teacher, cls, poll


def test_hide_the_answers_until_the_poll_is_closed(class_store):
    """A projected panel can keep an open poll's histogram to itself: only the count shows."""
    teacher, cls, poll = class_with_one_answer(class_store)
    teacher.run()
    assert teacher.get("plotly_chart")  # public by default
    teacher.toggle(key="cls_hide_open").set_value(True).run()
    assert not teacher.get("plotly_chart") and any("so far: 1" in i.value for i in teacher.info)
    teacher.button(key=f"cls_close_{poll.seq}").click().run()
    teacher.run()
    assert teacher.get("plotly_chart")  # closed: shown


def test_the_count_is_of_students_seen_in_the_last_minute(class_store):
    teacher, cls = start_class()
    for _ in range(2):
        join(cls["code"])
    teacher.run()
    assert any("Students here:** 2" in m.value for m in teacher.markdown)


def test_the_normal_playground_shows_the_class_and_goes_back_at_its_step(class_store):
    """A new tab (or a reload) of the normal playground while a class runs: it says so, shows the
    class's sentence, and goes back to presenter mode at the class's step, not at step 1."""
    text = "one two three four five six seven eight nine"
    at = open_page(PLAYGROUND, pg_present=True, pg_step=7, pg_text=text)
    at.button(key="cls_present_start").click().run()
    cls = at.session_state[state.TEACHER_KEY]
    tab = open_page(PLAYGROUND, **{state.TEACHER_KEY: dict(cls)})  # a new session of the same browser
    no_exception(tab)
    assert any("Students see step 7" in m.value for m in tab.markdown)
    assert tab.session_state["pg_text"] == text
    tab.button(key="cls_pg_back").click().run()
    no_exception(tab)
    view = class_store.teacher_session(cls["sid"], cls["token"]).view
    assert view["step"] == 7 and view["text"] == text


def test_the_teacher_panel_gives_the_projected_sentence_for_a_course(class_store, monkeypatch):
    """Issue 45: after class, the projected sentence as a SCORM package and a Moodle quiz."""
    from tests.apptest_pages import capture_downloads, downloaded

    kept = capture_downloads(monkeypatch)
    teacher, cls = start_class("ja")
    view = class_store.student_view(*_me(join(cls["code"])))[1]
    data, mime, name = downloaded(teacher, kept, "cls_tk_quiz")
    assert mime == "application/xml" and name == "attention_quiz_ja.xml"
    from attention_ui.classroom.follow import trace_of
    from attention_ui.i18n import Translator
    from attention_ui.takehome import build

    trace, _ = trace_of(view)  # the projected sentence and settings, as the store keeps them
    assert data.decode("utf-8") == build.quiz_file(
        Translator("ja"), trace, "moodle", int(view.get("head") or 0)
    )
    assert downloaded(teacher, kept, "cls_tk_scorm")[0][:2] == b"PK"


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_revealed_code_poll_shows_every_fragments_consequence_on_the_projector_and_phones(
    class_store, lang
):
    """Issue 43 ask 4 in the live class: after the reveal, what each fragment did on the poll's
    sentence, worded as the quiz words it (from the run of that option), on the teacher's panel
    and on each phone, with the phone's own answer marked; nothing of it before the reveal."""
    from attention_core import codegen_questions as cq
    from attention_ui.classroom import follow
    from attention_ui.i18n import Translator
    from attention_ui.program.consequences import consequences

    teacher, cls = start_class(lang)
    phone = join(cls["code"], "Ann", lang=lang)
    teacher.selectbox(key="cls_pick").set_value(("live", "code_scale_order")).run()
    teacher.button(key="cls_open").click().run()
    no_exception(teacher)
    poll = class_store.tallies(cls["sid"], cls["token"])[-1].poll
    assert poll.question["kind"] == "code"
    phone.run()
    wrong = (poll.correct + 1) % poll.n_choices
    choose(phone, f"cls_choice_{poll.poll_id}", wrong)
    phone.button(key=f"cls_send_{poll.poll_id}").click().run()
    # the question the class was asked, computed here from the class's view, not from the poll
    trace, _ = follow.trace_of(class_store.student_view(*_me(phone))[1])
    q = cq.code_question("scale_order", trace.config, trace.tokens[: trace.n - trace.n_pad])
    t = Translator(lang)
    said = [[f"- {line}" for line in consequences(t, q, option)] for option in q.options]
    assert len({tuple(s) for s in said}) == 4  # four different consequences to look for

    def shown(at) -> str:
        return "\n".join(m.value for m in at.markdown)

    teacher.run()
    for at in (teacher, phone):
        assert not any(line in shown(at) for lines in said for line in lines[1:])  # not before the reveal
        assert poll.question["program"] in [c.value for c in at.code]  # its lines as code, not a paragraph
    teacher.button(key=f"cls_reveal_{poll.seq}").click().run()
    phone.run()
    for at in (teacher, phone):
        no_exception(at)
        text = shown(at)
        assert t("class.code_consequences") in text
        for option, lines in zip(q.options, said, strict=True):
            assert "\n".join(lines) in text, (option.mutation, lines)
            assert "\n".join(option.fragment) in [c.value for c in at.code]
    mine = f"{t('code.q_option', letter='ABCD'[wrong])}** — {t('code.q_your_pick')}"
    assert mine in shown(phone) and t("code.q_your_pick") not in shown(teacher)


def _slide(phone) -> tuple:
    """What a phone's slide shows: its charts' specs, formulas and texts (the replay must match them)."""
    return tuple(
        tuple(str(getattr(el, "value", el.proto)) for el in phone.get(kind))
        for kind in ("plotly_chart", "latex", "markdown", "caption", "expander")
    )


def test_students_following_one_view_share_one_drawing_of_each_slide(class_store, monkeypatch):
    """Issue 47: each step's body (formula, shapes, chart, notes) is drawn once per view, language,
    head and step in a process and replayed to every other student; the heading stays per session."""
    shared_slide.clear()
    built, real = [], steps_view.step_body

    def counted(view, name, explanation):
        if view.draw_body is not None:  # a student's slide (the teacher's presenter mode draws its own)
            built.append((name, view.t.lang))
        real(view, name, explanation)

    monkeypatch.setattr(steps_view, "step_body", counted)
    teacher = open_page(PLAYGROUND, pg_present=True, pg_step=4)
    teacher.button(key="cls_present_start").click().run()
    code = teacher.session_state[state.TEACHER_KEY]["code"]
    alice, bob = join(code), join(code)
    assert built == [("scaled", "en")]
    assert alice.get("plotly_chart") and _slide(bob) == _slide(alice)  # the replay draws the same slide
    teacher.button(key="pg_present_next").click().run()
    alice.run(), bob.run()
    assert built == [("scaled", "en"), ("mask", "en")]
    assert any("step 5 of" in c.value for c in bob.caption) and _slide(bob) == _slide(alice)
    carol = join(code, lang="ja")  # another language: its own drawing
    assert built[-1] == ("mask", "ja") and len(built) == 3 and carol.get("latex")
    alice.button(key="cls_explore").click().run()
    alice.button(key="cls_own_prev").click().run()  # away at step 4: the drawing already made
    assert len(built) == 3 and any("teacher is at step 5" in i.value for i in alice.info)
    teacher.session_state["pg_text"] = "a different sentence here"  # another view: drawn anew
    teacher.run()
    bob.run()
    assert built[-1] == ("mask", "en") and len(built) == 4


def test_the_shared_slides_are_bounded(monkeypatch):
    built = []
    monkeypatch.setattr(steps_view, "step_body", lambda view, name, explanation: built.append(name))
    shared_slide.clear()
    for i in range(shared_slide.SLIDES_MAX + 1):
        shared_slide.drawer({"text": f"view {i}", "step": 1}, "en")(types.SimpleNamespace(head=0), "x", "")
    assert len(built) == shared_slide.SLIDES_MAX + 1
    shared_slide.drawer({"text": f"view {shared_slide.SLIDES_MAX}", "step": 3}, "en")(
        types.SimpleNamespace(head=0), "x", ""
    )  # the newest is kept (the teacher's step is not part of the view's key)...
    assert len(built) == shared_slide.SLIDES_MAX + 1
    shared_slide.drawer({"text": "view 0", "step": 1}, "en")(types.SimpleNamespace(head=0), "x", "")
    assert len(built) == shared_slide.SLIDES_MAX + 2  # ...and the oldest was dropped
    shared_slide.clear()


def test_the_class_panel_draws_the_count_and_the_poll_in_one_timed_fragment(class_store, monkeypatch):
    """The class panel has ONE ``run_every`` fragment, and each of its runs draws both the count of
    students and the poll: two timed fragments on the teacher's tab (the count every 2 s, the poll
    every 1 s) broke Streamlit's frontend under load (bench/RESULTS.md, "Why the teacher stops")."""
    import functools

    import streamlit

    real_fragment, real_container = streamlit.fragment, streamlit.container
    timers: list[tuple[float, list[str]]] = []  # (run_every, keys of the boxes its runs drew)
    inside: list[list[str]] = []

    def container(*args, **kwargs):
        if inside and kwargs.get("key"):
            inside[-1].append(kwargs["key"])
        return real_container(*args, **kwargs)

    def fragment(func=None, *, run_every=None):
        def wrap(f):
            if run_every is None:
                return real_fragment(f)
            keys: list[str] = []
            timers.append((run_every, keys))

            @functools.wraps(f)
            def body(*args, **kwargs):
                inside.append(keys)
                try:
                    return f(*args, **kwargs)
                finally:
                    inside.pop()

            return real_fragment(body, run_every=run_every)

        return wrap if func is None else wrap(func)

    monkeypatch.setattr(streamlit, "fragment", fragment)
    monkeypatch.setattr(streamlit, "container", container)
    teacher, cls, poll = class_with_one_answer(class_store)
    timers.clear()
    teacher.run()
    no_exception(teacher)
    assert len(timers) == 1, timers
    every, keys = timers[0]
    assert every == 1.0 and {"cls_live_count", "cls_live_poll"} <= set(keys), timers
    assert any("Students here:** 1" in m.value for m in teacher.markdown)
    assert teacher.get("plotly_chart") and teacher.button(key=f"cls_close_{poll.seq}")


def test_the_class_panel_carries_its_reload_watchdog(class_store):
    """While a class runs, the panel has the watchdog that reloads a tab whose connection is lost
    (tested in Chromium by tests/browser/test_class_browser.py), asking the app's own health path."""
    at = open_page(TEACH)
    assert "__alPanelWatchdog" not in scripts(at)  # no class: nothing live to lose
    teacher, _ = start_class()
    assert '"/_stcore/health"' in scripts(teacher) and "location.reload()" in scripts(teacher)

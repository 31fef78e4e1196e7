"""The live class in a process without PyICU (requirements-class.txt, which `make run` skips on a
machine that cannot build it): the app works, the teacher's page refuses to start a class and says
why and how to add PyICU, in both languages, and no nickname joins unchecked. A nameless join has
nothing to compare and is taken; a class a process with ICU started is not changed by it.

The ``icu`` module is hidden the way a machine without it is: ``sys.modules["icu"] = None`` makes
``import icu`` fail (classroom/model.py looks it up at each use).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from attention_ui.classroom import state
from attention_ui.i18n import translate
from classroom.model import ClassError, icu_ready
from tests.apptest_pages import ROOT, no_exception
from tests.test_class_pages import PLAYGROUND, TEACH, join, open_page, start_class
from tests.test_class_pages import class_store as _a_new_store_each_test  # noqa: F401 (autouse)


@pytest.fixture
def no_icu(monkeypatch):
    """From here on, this process has no PyICU."""

    def hide() -> None:
        monkeypatch.setitem(sys.modules, "icu", None)
        assert not icu_ready()

    return hide


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_teacher_page_refuses_to_start_and_says_why_and_how(no_icu, lang):
    no_icu()
    at = open_page(TEACH, lang=lang)
    no_exception(at)
    assert [e.value for e in at.error] == [translate(lang, "class.err_no_icu")]
    assert translate(lang, "class.no_icu_how") in [m.value for m in at.markdown]
    assert any("apt-get install libicu-dev" in c.value and "make run" in c.value for c in at.code)
    assert translate(lang, "class.no_icu_other") in [c.value for c in at.caption]
    assert at.button(key="cls_start").disabled
    with pytest.raises(ClassError) as err:  # a forged press: the store refuses too
        state.store().start_session()
    assert err.value.key == "class.err_no_icu"


def test_presenter_modes_start_button_opens_the_class_page_that_says_why(no_icu):
    no_icu()
    at = open_page(PLAYGROUND, pg_present=True, pg_step=4)
    at.button(key="cls_present_start").click().run()
    no_exception(at)
    assert state.TEACHER_KEY not in at.session_state
    assert translate("en", "class.err_no_icu") in [e.value for e in at.error]


def test_a_join_with_a_nickname_is_refused_and_one_without_is_taken(no_icu):
    _, cls = start_class()  # a process with ICU started the class
    before = join(cls["code"], "Alice")
    assert before.session_state[state.STUDENT_KEY]["nick"] == "Alice"
    no_icu()
    for lang, nick in (("en", "Аlice"), ("ja", "Alice2")):  # a Cyrillic А: what the check is for
        phone = join(cls["code"], nick, lang=lang)
        assert [e.value for e in phone.error] == [translate(lang, "class.err_nickname_unchecked")]
        assert state.STUDENT_KEY not in phone.session_state
        assert phone.text_input(key="cls_join_nick").value == nick  # kept, to be emptied
    assert state.store().teacher_session(cls["sid"], cls["token"]).students == 1
    nameless = join(cls["code"])
    assert nameless.session_state[state.STUDENT_KEY]["nick"] is None
    assert state.store().teacher_session(cls["sid"], cls["token"]).students == 2
    # the class itself goes on: its teacher's page and its students' pages in this process
    before.run()
    no_exception(before)
    with pytest.raises(ClassError) as err:  # the store's own refusal, whatever page calls it
        state.store().join(cls["code"], "Bob", client_key="s:test")
    assert err.value.key == "class.err_nickname_unchecked"


def test_the_app_imports_and_the_class_pages_load_without_icu():
    code = (
        "import sys; sys.modules['icu'] = None\n"
        "import classroom.store, attention_ui.classroom.teacher_view, attention_ui.classroom.student_view\n"
        "from classroom.model import clean_nickname, icu_ready\n"
        "assert not icu_ready() and clean_nickname(None) is None and clean_nickname('  ') is None\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr

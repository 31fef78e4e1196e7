"""The quiz page driven through app.py with AppTest: answer right and wrong, check the score,
the feedback, the retry round, the seed and that answers survive reruns and language switches."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attention_ui.i18n import translate
from attention_ui.quiz_bank import build_quiz
from tests.apptest_pages import no_exception, open_page

ROOT = Path(__file__).resolve().parents[1]
PAGE = "app_pages/quiz.py"


@pytest.fixture
def at() -> AppTest:
    return open_page(PAGE)


def radios(at: AppTest) -> dict:
    """Question id -> its radio (keys are quiz_r_<round>_<lang>_<qid>)."""
    out = {}
    for r in at.main.radio:
        if r.key and r.key.startswith("quiz_r_"):
            out[r.key.split("_", 4)[4]] = r
    return out


def answer(at: AppTest, qid: str, index: int) -> None:
    radios(at)[qid].set_value(index)
    at.run()
    no_exception(at)


def metric(at: AppTest, label_key: str) -> str:
    label = translate("en", label_key)
    return next(m.value for m in at.metric if m.label == label)


def test_all_questions_in_seeded_order(at: AppTest) -> None:
    assert at.title[0].value == translate("en", "quiz.title")
    quiz = build_quiz(0)
    assert len(quiz) >= 24
    assert list(radios(at)) == [it.qid for it in quiz]
    assert all(r.value is None for r in at.main.radio)  # nothing pre-selected
    assert metric(at, "quiz.answered") == f"0 of {len(quiz)}"


def test_right_and_wrong_answers_score_and_explain(at: AppTest) -> None:
    quiz = build_quiz(0)
    first, second, third = quiz[0], quiz[1], quiz[2]
    answer(at, first.qid, first.correct)
    answer(at, second.qid, (second.correct + 1) % second.n_choices)
    answer(at, third.qid, third.correct)
    assert metric(at, "quiz.score") == "2 / 3"
    assert metric(at, "quiz.answered") == f"3 of {len(quiz)}"
    assert len(at.success) == 2 and len(at.error) == 1
    assert at.error[0].value.startswith(translate("en", "quiz.wrong", answer="").rstrip())
    # the explanation of the wrong one and a link to its page are shown
    if second.computed is None:
        assert translate("en", second.why_key) in [m.value for m in at.markdown]
    assert len(at.get("page_link")) == 3
    # answered questions lose their radio (the first answer counts) and list the choices, marked
    r = radios(at)
    assert first.qid not in r and second.qid not in r and quiz[3].qid in r
    marked = [m.value.replace("  \n", "\n") for m in at.markdown if "✅" in m.value]
    assert len(marked) == 3
    wrong_list = marked[1]
    assert wrong_list.count("✅") == 1 and wrong_list.count("❌") == 1
    assert (
        translate("en", "quiz.your_pick") in wrong_list.splitlines()[(second.correct + 1) % second.n_choices]
    )
    assert "✅" in wrong_list.splitlines()[second.correct]
    # a rerun (any interaction) keeps the answers
    at.run()
    assert metric(at, "quiz.score") == "2 / 3"
    assert len(at.error) == 1


def test_retry_the_missed_ones(at: AppTest) -> None:
    quiz = build_quiz(0)
    wrong = [quiz[1], quiz[4]]
    answer(at, quiz[0].qid, quiz[0].correct)
    for it in wrong:
        answer(at, it.qid, (it.correct + 1) % it.n_choices)
    retry = at.button(key="quiz_retry_btn")
    assert retry.label == translate("en", "quiz.retry", n=2) and not retry.disabled
    retry.click()
    at.run()
    assert not at.exception
    assert list(radios(at)) == [it.qid for it in wrong]  # only the missed ones, still in seeded order
    assert all(r.value is None for r in at.main.radio)
    assert any(translate("en", "quiz.retry_mode", n=2) == i.value for i in at.info)
    assert metric(at, "quiz.answered") == "0 of 2"
    for it in wrong:
        answer(at, it.qid, it.correct)
    assert metric(at, "quiz.retry_score") == "2 / 2"  # the retry round's own score …
    assert metric(at, "quiz.first_score") == "1 / 3"  # … beside the first attempt's, which stays
    assert any(translate("en", "quiz.finished_all", total=2) == s.value for s in at.success)
    assert at.button(key="quiz_retry_btn").disabled  # nothing left to retry
    at.button(key="quiz_back").click()
    at.run()
    assert len(radios(at)) == len(quiz) - 3  # all questions back; the three answered ones show results
    assert metric(at, "quiz.score") == "3 / 3"  # the first right answer plus the two retried
    assert metric(at, "quiz.first_score") == "1 / 3"
    at.button(key="quiz_restart").click()
    at.run()
    assert not [m for m in at.metric if m.label == translate("en", "quiz.first_score")]  # a new quiz


def test_answered_options_stay_small_like_the_radio(at: AppTest) -> None:
    quiz = build_quiz(0)
    answer(at, quiz[0].qid, quiz[0].correct)
    shown = [m.value for m in at.markdown if "✅" in m.value and "○" in m.value]
    assert shown and all(line.startswith(":small[") for line in shown[0].split("  \n"))


def test_all_right_finishes(at: AppTest) -> None:
    quiz = build_quiz(0)
    for it in quiz:
        answer(at, it.qid, it.correct)
    assert metric(at, "quiz.score") == f"{len(quiz)} / {len(quiz)}"
    assert any(translate("en", "quiz.finished_all", total=len(quiz)) == s.value for s in at.success)
    assert not at.error


def test_new_seed_reorders_and_clears(at: AppTest) -> None:
    quiz0 = build_quiz(0)
    answer(at, quiz0[0].qid, quiz0[0].correct)
    at.button(key="quiz_new_seed").click()
    at.run()
    assert at.number_input(key="quiz_seed").value == 1
    assert list(radios(at)) == [it.qid for it in build_quiz(1)]
    assert metric(at, "quiz.answered") == f"0 of {len(quiz0)}"
    at.number_input(key="quiz_seed").set_value(7).run()
    assert list(radios(at)) == [it.qid for it in build_quiz(7)]
    at.button(key="quiz_restart").click()
    at.run()
    assert not at.exception and all(r.value is None for r in at.main.radio)


def test_answers_survive_a_language_switch(at: AppTest) -> None:
    quiz = build_quiz(0)
    answer(at, quiz[0].qid, quiz[0].correct)
    at.session_state["lang"] = "ja"
    at.run()
    assert not at.exception
    assert at.title[0].value == translate("ja", "quiz.title")
    assert quiz[0].qid not in radios(at)
    assert at.success[0].value == translate("ja", "quiz.correct")

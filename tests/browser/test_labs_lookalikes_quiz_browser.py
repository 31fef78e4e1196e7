"""The look-alikes and quiz labs in a real browser: they load, draw, react, speak Japanese.

Screenshots go to artifacts/screenshots/ (lookalikes_en/ja, quiz_en/ja) to be looked at by eye.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect
from st_browser import (
    PLOTLY_CHART,
    assert_no_exception,
    open_lab,
    screenshot,
    switch_language,
    tick_labels,
    wait_for_app_run,
    wait_for_charts,
)

from attention_ui.i18n import translate

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def lookalikes_chart(page: Page, name: str):
    return page.locator(f".st-key-lookalikes_chart_{name} {PLOTLY_CHART}")


def test_lookalikes_draws_cross_attention_follows_the_second_sentence_and_speaks_japanese(
    page: Page, streamlit_server: str
) -> None:
    open_lab(page, streamlit_server, "lookalikes")
    wait_for_charts(page, minimum=7)
    assert_no_exception(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text(translate("en", "lookalikes.title"))
    cross = lookalikes_chart(page, "cross")
    # queries from sentence 1 (rows), keys from sentence 2 (columns): 6 × 7, not square
    assert tick_labels(cross, "y") == ["the", "cat", "sat", "on", "the", "mat"]
    assert tick_labels(cross, "x") == ["le", "chat", "était", "assis", "sur", "le", "tapis"]
    assert screenshot(page, "lookalikes_en").stat().st_size > 10_000

    # the second sentence sets the columns (same page session: a lab load costs more than the check)
    box = page.locator('[data-testid="stSidebar"] .st-key-lookalikes_text_b input')
    box.fill("a <b> & c")
    box.press("Enter")
    wait_for_app_run(page)
    cross = lookalikes_chart(page, "cross")
    # the tokenizer splits punctuation off; Plotly must show "<", ">" and "&" literally (escaped labels)
    expect(cross.locator("g.xtick text")).to_have_text(["a", "<", "b", ">", "&", "c"])
    assert_no_exception(page)

    # and in Japanese, switched in the sidebar
    wait_for_charts(page)
    switch_language(page, "ja")
    title = translate("ja", "lookalikes.title")
    assert CJK.search(title)
    expect(page.get_by_role("heading", level=1)).to_contain_text(title)
    wait_for_charts(page, minimum=7)
    assert_no_exception(page)
    screenshot(page, "lookalikes_ja")


def quiz_box(page: Page, qid: str):
    return page.locator(f".st-key-quiz_box_{qid}")


def choice(page: Page, qid: str, index: int):
    """The ``index``-th option (display order) of a question's radio group."""
    return quiz_box(page, qid).locator('[data-testid="stRadio"] [role="radiogroup"] label').nth(index)


def test_quiz_answer_right_and_wrong_then_retry(page: Page, streamlit_server: str) -> None:
    from attention_ui.quiz_bank import build_quiz

    open_lab(page, streamlit_server, "quiz")
    expect(page.get_by_role("heading", level=1)).to_contain_text(translate("en", "quiz.title"))
    quiz = build_quiz(0)
    first, second = quiz[0], quiz[1]
    boxes = page.locator('[class*="st-key-quiz_box_"]')
    expect(boxes).to_have_count(len(quiz))
    # right answer: click the option at the right display position
    choice(page, first.qid, first.correct).click()
    wait_for_app_run(page)
    expect(quiz_box(page, first.qid)).to_contain_text(translate("en", "quiz.correct"))
    wrong = (second.correct + 1) % second.n_choices
    choice(page, second.qid, wrong).click()
    wait_for_app_run(page)
    expect(quiz_box(page, second.qid).locator('[data-testid="stAlertContentError"]')).to_be_visible()
    expect(quiz_box(page, second.qid).locator('[data-testid="stPageLink"]')).to_have_count(1)
    expect(page.get_by_test_id("stMetricValue").first).to_have_text("1 / 2")
    assert_no_exception(page)
    screenshot(page, "quiz_en", full=False)
    page.locator(".st-key-quiz_retry_btn button").click()
    wait_for_app_run(page)
    expect(boxes).to_have_count(1)
    # the first attempt's score stays, the retry round's own score beside it
    expect(page.get_by_test_id("stMetricValue").nth(0)).to_have_text("1 / 2")
    expect(page.get_by_test_id("stMetricValue").nth(1)).to_have_text("0 / 0")
    assert_no_exception(page)


def test_quiz_japanese(page: Page, streamlit_server: str) -> None:
    from attention_ui.quiz_bank import build_quiz

    open_lab(page, streamlit_server, "quiz")
    switch_language(page, "ja")
    expect(page.get_by_role("heading", level=1)).to_contain_text(translate("ja", "quiz.title"))
    quiz = build_quiz(0)
    item = quiz[0]
    choice(page, item.qid, item.correct).click()
    wait_for_app_run(page)
    expect(quiz_box(page, item.qid)).to_contain_text(translate("ja", "quiz.correct"))
    assert_no_exception(page)
    screenshot(page, "quiz_ja", full=False)
    assert CJK.search(page.locator('[data-testid="stMain"]').inner_text())

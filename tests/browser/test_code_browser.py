"""The code tabs and the exam code questions in Chromium (issue 43): at 1366 × 768 in English and on a
390 × 844 phone with touch in Japanese, a step's code tab opens with the program's lines, the code
scrolls inside its box and never the page, and answering a code question shows every fragment's
consequence. Screenshots: artifacts/screenshots/code_*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from st_browser import (
    assert_no_exception,
    browser_language,
    new_context,
    open_lab,
    screenshot,
    wait_for_app_run,
)

from attention_ui.i18n import translate

DESKTOP = dict(width=1366, height=768)
PHONE = dict(width=390, height=844)
SLOW_MS = 120_000

PAGE_FITS = "() => document.documentElement.scrollWidth <= window.innerWidth"
# The widest code block inside a box: whether it scrolls sideways inside it (its content is wider).
SCROLLS_INSIDE = """(sel) => {
    const pres = [...document.querySelectorAll(sel + ' pre')];
    return pres.some((p) => p.scrollWidth > p.clientWidth + 1);
}"""


def _press(locator, touch: bool) -> None:
    if touch:
        locator.tap()
    else:
        locator.click()


def _shot(page: Page, locator, name: str) -> None:
    """The window's screenshot with ``locator`` scrolled into view (Streamlit scrolls inside its own
    container, so an element shot of a box taller than the window comes out blank)."""
    locator.scroll_into_view_if_needed()
    screenshot(page, name, full=False)


def _code_tab_and_question(page: Page, base_url: str, lang: str, touch: bool, name: str) -> None:
    browser_language(page, lang)
    page.goto(f"{base_url}/?lang={lang}")
    wait_for_app_run(page, SLOW_MS)
    tab = page.locator(".st-key-pg_code_raw")
    tab.scroll_into_view_if_needed()
    _press(tab.locator("summary"), touch)
    wait_for_app_run(page, SLOW_MS)
    assert_no_exception(page)
    code = tab.locator('[data-testid="stCode"]')
    expect(code).to_contain_text("scores = Q @ K.transpose(0, 2, 1)")
    expect(tab).to_contain_text(translate(lang, "code.tab_caption")[:20])
    assert page.evaluate(PAGE_FITS), "the page scrolls sideways"
    if touch:  # the comment beside the line is wider than a phone: the box scrolls, not the page
        assert page.evaluate(SCROLLS_INSIDE, ".st-key-pg_code_raw")
    _shot(page, tab, f"code_{name}_tab")

    whole = page.locator(".st-key-pg_code_all")
    whole.scroll_into_view_if_needed()
    _press(whole.locator("summary"), touch)
    wait_for_app_run(page, SLOW_MS)
    box = whole.locator('[data-testid="stCode"]').first
    expect(box).to_contain_text("output = concat @ W_O")
    height = box.evaluate("(el) => el.getBoundingClientRect().height")
    assert height <= 460, height  # a fixed box: the program scrolls inside it
    assert page.evaluate(PAGE_FITS), "the page scrolls sideways"
    expect(
        whole.get_by_role("button", name=translate(lang, "code.download_nb").replace("`", ""))
    ).to_be_visible()
    _shot(page, whole, f"code_{name}_whole")

    open_lab(page, base_url, "quiz", lang, SLOW_MS)
    question = page.locator(".st-key-quiz_code_q_mask_place_box")
    question.scroll_into_view_if_needed()
    expect(question).to_contain_text(translate(lang, "code.q_mask_place"))
    option = question.locator('[data-testid="stRadio"] label').filter(
        has_text=translate(lang, "code.q_option", letter="B")
    )
    _press(option, touch)
    wait_for_app_run(page, SLOW_MS)
    assert_no_exception(page)
    for i in range(4):  # every fragment, run, with what it did
        box = page.locator(f".st-key-quiz_code_q_mask_place_opt_{i}")
        expect(box).to_be_visible()
        expect(box.locator("li").first).to_be_visible()
    shown = question.inner_text()
    assert translate(lang, "code.c_forbidden_zero") in shown or translate(lang, "code.c_same") in shown
    assert page.evaluate(PAGE_FITS), "the page scrolls sideways"
    _shot(page, question, f"code_{name}_quiz_question")
    _shot(page, page.locator(".st-key-quiz_code_q_mask_place_opt_0"), f"code_{name}_quiz_options")


@pytest.mark.parametrize(
    ("lang", "size", "touch"), [("en", DESKTOP, False), ("ja", PHONE, True)], ids=["desktop_en", "phone_ja"]
)
def test_code_tab_and_code_question(browser, streamlit_server, lang, size, touch):
    context = new_context(browser, locale="ja-JP" if lang == "ja" else "en-US", touch=touch, **size)
    page = context.new_page()
    try:
        _code_tab_and_question(
            page, streamlit_server, lang, touch, f"{'phone' if touch else 'desktop'}_{lang}"
        )
    finally:
        context.close()

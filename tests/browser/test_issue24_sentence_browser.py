"""Issue 24, point 1 in a real browser: a teacher's shared link (in Japanese, ``?lang=ja``) opened in an
English browser shows English (point 3), and the link's sentence goes with the student into the labs
they click in the sidebar, and into each lab's own address."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, expect
from st_browser import (
    assert_no_exception,
    new_context,
    screenshot,
    wait_for_app_run,
    wait_for_charts,
    wait_for_path,
)

from attention_ui.i18n import translate

pytestmark = pytest.mark.browser

SENTENCE = "hello world again today"


def test_a_shared_links_sentence_goes_on_into_the_sidebars_labs(
    browser: Browser, streamlit_server: str
) -> None:
    context = new_context(browser, width=1366, height=768, locale="en-US")
    page = context.new_page()
    page.goto(f"{streamlit_server}/?text={quote(SENTENCE)}&lang=ja")
    wait_for_app_run(page)
    expect(page.get_by_role("heading", level=1).first).to_contain_text(translate("en", "playground.title"))
    expect(page.locator('[data-testid="stMain"] .st-key-pg_text textarea')).to_have_value(SENTENCE)

    for url_path, key in (("masks", "masks_text"), ("lookalikes", "lk_text_a")):
        page.locator(f'[data-testid="stSidebarNav"] a[href$="/{url_path}"]').click()
        wait_for_path(page, url_path)
        wait_for_app_run(page)
        wait_for_charts(page)
        expect(page.locator(f'[data-testid="stSidebar"] .st-key-{key} :is(textarea, input)')).to_have_value(
            SENTENCE
        )
        expect(page).to_have_url(re.compile(r"[?&]text=" + re.escape(SENTENCE.replace(" ", "+"))))
        assert_no_exception(page)
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text(translate("en", "app.sentence_yours"))
    screenshot(page, "issue24_lookalikes_carried_sentence_1366", full=False)
    context.close()

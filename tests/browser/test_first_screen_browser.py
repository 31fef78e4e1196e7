"""The playground's first view in Chromium (attention_ui/playground/first_screen.py): step 1 comes
first, then steps 2–11 arrive by themselves (nobody clicks), at 1366×768 (screenshots of step 1 alone
and of the whole first view). That a later view draws every step in one run is tests/test_first_screen.py."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect
from st_browser import (
    PLOTLY_CHART,
    REST_PENDING,
    assert_no_exception,
    new_context,
    screenshot,
    wait_for_charts,
)

pytestmark = pytest.mark.browser

# Installed before the page's scripts: whether the "steps 2–11 follow" note was ever on the page, and
# how many charts were drawn at that moment.
SEEN_PENDING_JS = f"""
(() => {{
  window.__pending = null;
  new MutationObserver(() => {{
    if (window.__pending === null && document.querySelector('{REST_PENDING}'))
      window.__pending = document.querySelectorAll('{PLOTLY_CHART}').length;
  }}).observe(document, {{subtree: true, childList: true}});
}})();
"""


def test_first_view_draws_step_1_then_the_rest_by_itself(browser: Browser, streamlit_server: str) -> None:
    context = new_context(browser, width=1366, height=768)
    try:
        page = context.new_page()
        page.add_init_script(SEEN_PENDING_JS)
        page.goto(streamlit_server + "/")
        page.locator(f".st-key-pg_chart_x {PLOTLY_CHART} .main-svg").first.wait_for()
        screenshot(page, "first_view_step1_1366", full=False)
        wait_for_charts(page, minimum=11)  # waits, among others, for the note to have gone
        assert page.evaluate("window.__pending") is not None, "the first view was not deferred"
        assert page.evaluate("window.__pending") <= 1  # only step 1's chart came with the note
        expect(page.locator(PLOTLY_CHART)).to_have_count(11)
        expect(page.locator("#step-output")).to_be_attached()
        assert_no_exception(page)
        screenshot(page, "first_view_1366")
    finally:
        context.close()

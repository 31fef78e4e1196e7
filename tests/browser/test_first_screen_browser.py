"""The playground's first view in Chromium (attention_ui/playground/first_screen.py): step 1 comes
first, with the sentence box on the first screen, then steps 2–11 arrive by themselves (nobody clicks),
at 1366×768 (screenshots of step 1 alone and of the whole first view). That a later view draws every step in one run is tests/test_first_screen.py."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect
from st_browser import (
    PLOTLY_CHART,
    REST_PENDING,
    SENTENCE_BOX,
    assert_no_exception,
    assert_on_first_screen,
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
        # issue 42, point 8: the sentence the introduction asks for is on the first screen
        assert_on_first_screen(page, SENTENCE_BOX, "the sentence box")
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


@pytest.mark.parametrize("query", ["", "?seed=3&head=1"])
def test_a_link_to_a_later_step_lands_on_it(browser: Browser, streamlit_server: str, query: str) -> None:
    """A link to step 7's anchor (``#step-softmax``) opened as a session's first view: the step is not on
    the first view (it comes one run later), and the browser never sends the fragment to the server,
    so the page's script asks for the rest at once and scrolls to the anchor once it is there."""
    context = new_context(browser, width=1366, height=768)
    try:
        page = context.new_page()
        page.goto(f"{streamlit_server}/{query}#step-softmax")
        wait_for_charts(page, minimum=11)
        anchor = page.locator("#step-softmax")
        expect(anchor).to_be_in_viewport(timeout=5000)
        # and it stays there once the charts above it are drawn (nothing above it grew afterwards)
        page.wait_for_timeout(700)
        expect(anchor).to_be_in_viewport()
        assert_no_exception(page)
        screenshot(page, f"first_view_deep_link{'_query' if query else ''}_1366", full=False)
    finally:
        context.close()

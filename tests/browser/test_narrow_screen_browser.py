"""A narrow window (390×844, a desktop browser's user agent, no touch) in Chromium
(attention_ui/narrow_screen.py, issue 24): the page starts without the sidebar, the sidebar gets out of
the way after a page is chosen and after the sentence is applied, no chart toolbar covers data, and the
named dimensions of the heads' concatenation do not run together."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect
from st_browser import (
    new_context,
    no_toolbar_over_data,
    screenshot,
    sidebar_open,
    wait_for_app_run,
    wait_for_charts,
    wait_for_path,
)

pytestmark = pytest.mark.browser

# Pairs of neighbouring x tick labels of one chart that overlap (labels running together); a label's box
# is its line box, a few pixels wider than its glyphs when turned upright, hence the 3 px.
TICKS_OVERLAP_JS = """(key) => {
  const labels = [...document.querySelectorAll(`.st-key-${key} g.xtick text`)].map((t) => t.getBoundingClientRect());
  let crowded = 0;
  for (let i = 1; i < labels.length; i++) {
    const a = labels[i - 1], b = labels[i];
    if (a.right > b.left + 3 && a.bottom > b.top + 3 && b.bottom > a.top + 3) crowded += 1;
  }
  return {labels: labels.length, crowded};
}"""


def open_sidebar(page: Page) -> None:
    page.locator('[data-testid="stExpandSidebarButton"]').click()
    page.wait_for_function(
        "() => { const r = document.querySelector('[data-testid=\"stSidebar\"]').getBoundingClientRect(); "
        "return r.width > 0 && r.left >= -1; }"
    )


def wait_sidebar_closed(page: Page) -> None:
    page.wait_for_function(
        "() => { const r = document.querySelector('[data-testid=\"stSidebar\"]').getBoundingClientRect(); "
        "return r.width === 0 || r.right <= 1; }"
    )


def test_phone_sidebar_closes_after_navigation_and_the_sentence_and_no_toolbar_covers_data(
    browser: Browser, streamlit_server: str
) -> None:
    # A narrow touch window with a desktop browser's user agent: Streamlit's own "mobile" check
    # (navigator.userAgent) does not apply, the width does.
    context = new_context(browser, width=390, height=844)
    page = context.new_page()
    page.goto(f"{streamlit_server}/?lang=en")
    wait_for_app_run(page)
    wait_for_charts(page, 10)
    assert not sidebar_open(page)  # a phone starts with the page, not the sidebar
    no_toolbar_over_data(page, "playground at 390 px")
    ticks = page.evaluate(TICKS_OVERLAP_JS, "pg_chart_concat")
    assert ticks["labels"] >= 8 and ticks["crowded"] == 0, ticks  # h0·0, h0·1, … readable
    screenshot(page, "issue24-phone-playground-390", full=False)

    open_sidebar(page)
    page.locator('[data-testid="stSidebarNavLink"]', has_text="Masks").click()
    wait_for_path(page, "masks")
    wait_for_app_run(page)
    wait_sidebar_closed(page)  # the chosen page is visible, not covered

    open_sidebar(page)
    box = page.locator(".st-key-masks_text textarea")
    box.fill("a dog ran home")
    box.press("Control+Enter")
    wait_for_app_run(page)
    wait_sidebar_closed(page)  # the sentence applied: the page it changed is visible
    expect(page.locator('[data-testid="stMain"]').get_by_text("2 · ran")).to_be_visible()
    wait_for_charts(page)
    no_toolbar_over_data(page, "masks lab at 390 px")
    screenshot(page, "issue24-phone-masks-390", full=False)
    context.close()

"""Issue 24 in Chromium: a 390×844 touch screen (the sidebar gets out of the way, no toolbar over data,
named dimensions that do not run together) and presenter mode's keys on a lab at 1366×768 and on the
decoder at 1920×1080 (with the toolbar check at those widths). Three page sessions in all."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect
from st_browser import (
    assert_no_exception,
    new_context,
    screenshot,
    wait_for_app_run,
    wait_for_charts,
    wait_for_path,
)

pytestmark = pytest.mark.browser

# Every part of a chart that Plotly's toolbar (.modebar, also while it is hidden) overlaps: the plot
# areas, any drawn text (cell numbers, tick labels, titles, legend entries) and colour bars.
TOOLBAR_OVER_DATA_JS = """() => {
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const out = [];
  let bars = 0;
  for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    const bar = chart.querySelector('.modebar');
    if (!bar || bar.getBoundingClientRect().width === 0) continue;
    bars += 1;
    const b = bar.getBoundingClientRect();
    for (const el of chart.querySelectorAll('.nsewdrag, .main-svg text, .legend .bg, .colorbar')) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.height > 0 && hit(b, r) && (el.tagName !== 'text' || el.textContent.trim())) {
        const key = (chart.closest('[class*="st-key-"]')?.className.match(/st-key-(\\S+)/) || [])[1];
        out.push(`${key}: ${el.getAttribute('class') || el.tagName} ${(el.textContent || '').slice(0, 20)}`);
      }
    }
  }
  return {bars, covered: out};
}"""

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

SIDEBAR = '[data-testid="stSidebar"]'


def no_toolbar_over_data(page: Page, where: str) -> None:
    found = page.evaluate(TOOLBAR_OVER_DATA_JS)
    assert found["bars"] > 0, f"{where}: no chart toolbar found"
    assert found["covered"] == [], f"{where}: the toolbar covers {found['covered']}"


def sidebar_open(page: Page) -> bool:
    box = page.locator(SIDEBAR).bounding_box()
    return box is not None and box["width"] > 0 and box["x"] + box["width"] > 1


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


# page, prefix, window, browser language, the position label, the number of slides, and the keys
# pressed with the slide each leads to (the two cases share out →, Space, Page Down, ←, Page Up)
SLIDE_CASES = [
    (
        "masks",
        "masks",
        1366,
        768,
        "en-US",
        "Section {k} of 4",
        4,
        (("ArrowRight", 2), ("Space", 3), ("ArrowLeft", 2)),
    ),
    # Japanese opens the decoder on Gemma 3 (issue 25): its four own sections make 11 slides
    ("decoder", "dc", 1920, 1080, "ja-JP", "節 {k} / 11", 11, (("PageDown", 2), ("PageUp", 1))),
]


@pytest.mark.parametrize(
    ("path", "prefix", "width", "height", "locale", "position", "last", "keys"), SLIDE_CASES
)
def test_presenter_keys_on_a_lab_and_the_decoder(
    browser: Browser, streamlit_server: str, path, prefix, width, height, locale, position, last, keys
) -> None:
    context = new_context(browser, width=width, height=height, locale=locale)
    page = context.new_page()
    page.goto(f"{streamlit_server}/{path}")
    wait_for_app_run(page, timeout_ms=90_000)  # the decoder loads its model on a worker's first visit
    wait_for_charts(page)
    no_toolbar_over_data(page, f"{path} at {width} px")
    page.locator(f".st-key-{prefix}_present_start button").first.click()
    wait_for_app_run(page)
    assert_no_exception(page)
    main = page.locator('[data-testid="stMain"]')

    def at(k: int) -> None:
        expect(main.get_by_text(position.format(k=k), exact=True)).to_be_visible()

    at(1)
    assert not sidebar_open(page)  # the slide has the whole window
    page.wait_for_function(f"() => document.activeElement.closest('.st-key-{prefix}_present_next')")
    for key, slide in (*keys, ("End", last), ("Home", 1)):
        page.keyboard.press(key)
        wait_for_app_run(page)
        at(slide)
    screenshot(page, f"issue24-presenter-{path}-{width}", full=False)
    page.keyboard.press("Escape")
    wait_for_app_run(page)
    expect(page.locator(f".st-key-{prefix}_present_start")).to_have_count(1)  # the page again
    assert page.locator("h1").count() == 1
    context.close()

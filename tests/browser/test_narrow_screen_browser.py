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


# Each inline formula followed by punctuation (")", ",", "、", "。" …): its paragraph is narrowed from
# 420 px (wider than a phone's column) to 200 px, 2 px at a time, and a width at which the punctuation
# starts a line below the formula's end is an orphan. The paragraph's width is restored after.
ORPHANED_PUNCTUATION_JS = r"""() => {
  const orphans = []; let candidates = 0;
  for (const k of document.querySelectorAll('[data-testid="stMain"] .katex')) {
    if (k.closest('.katex-display')) continue;
    let el = k, after = k.nextSibling;
    while (!after && el.parentElement && !el.parentElement.matches('p, li, div')) { el = el.parentElement; after = el.nextSibling; }
    if (!after || after.nodeType !== Node.TEXT_NODE || !/^[)）,.。、:;]/.test(after.textContent)) continue;
    candidates += 1;
    const block = k.closest('p, li') || k.parentElement, width = block.style.width;
    for (let w = 420; w >= 200; w -= 2) {
      block.style.width = `${w}px`;
      const mark = document.createRange(); mark.setStart(after, 0); mark.setEnd(after, 1);
      const p = mark.getBoundingClientRect(), parts = k.getClientRects(), end = parts[parts.length - 1];
      if (p.top > end.top + end.height / 2) { orphans.push(`${after.textContent[0]} after ${k.querySelector('annotation')?.textContent} at ${w} px`); break; }
    }
    block.style.width = width;
  }
  return {candidates, orphans};
}"""


@pytest.mark.parametrize(("lang", "path"), [("en", "masks"), ("ja", "lookalikes")])
def test_punctuation_after_an_inline_formula_stays_on_its_line(
    browser: Browser, streamlit_server: str, lang: str, path: str
) -> None:
    """attention_ui/narrow_fit.py: on a phone a ")" or "、" after an inline formula started a line alone."""
    context = new_context(
        browser, locale="ja-JP" if lang == "ja" else "en-US", width=390, height=844, touch=True
    )
    page = context.new_page()
    page.goto(f"{streamlit_server}/{path}?lang={lang}")
    wait_for_app_run(page)
    page.locator('[data-testid="stMain"] .katex').first.wait_for()
    page.evaluate("document.fonts.ready")
    found = page.evaluate(ORPHANED_PUNCTUATION_JS)
    assert found["candidates"] >= 5 and found["orphans"] == [], found
    screenshot(page, f"phone-inline-math-{path}-{lang}", full=False)
    # the check finds them where KaTeX's parts are drawn as KaTeX draws them (inline-blocks)
    page.add_style_tag(content=".katex .base { display: inline-block !important; }")
    assert len(page.evaluate(ORPHANED_PUNCTUATION_JS)["orphans"]) >= 3
    context.close()

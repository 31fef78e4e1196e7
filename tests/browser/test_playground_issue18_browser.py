"""Issue 18 in a real browser at 1366×768 and 1920×1080, one page load each: a click on a raw-score cell brings the
explainer into view with keyboard focus and frames the cell; the copy-link button copies the
page's URL."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect
from st_browser import assert_no_exception, new_context, screenshot, wait_for_app_run, wait_for_charts

from attention_ui.i18n import translate

pytestmark = pytest.mark.browser

CELL_CENTRE_JS = """([name, i, j]) => {
  const gd = document.querySelector(`.st-key-pg_chart_${name} .js-plotly-plot`);
  const fl = gd._fullLayout, r = gd.getBoundingClientRect();
  return [r.left + fl._size.l + fl.xaxis.l2p(j), r.top + fl._size.t + fl.yaxis.l2p(i)];
}"""


def click_cell(page: Page, name: str, i: int, j: int) -> None:
    page.locator(f".st-key-pg_chart_{name}").scroll_into_view_if_needed()
    page.wait_for_timeout(200)
    x, y = page.evaluate(CELL_CENTRE_JS, [name, i, j])
    page.mouse.click(x, y)
    wait_for_app_run(page)


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)], ids=["1366", "1920"])
def test_click_scrolls_to_the_explainer_and_frames_the_cell(
    browser: Browser, streamlit_server: str, size: tuple[int, int]
) -> None:
    context = new_context(browser, width=size[0], height=size[1])
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=streamlit_server)
    page = context.new_page()
    page.goto(f"{streamlit_server}/?lang=en&seed=7&heads=4")
    wait_for_app_run(page)
    wait_for_charts(page, 10)
    # the copy-link button copies the page's own address, which holds the view
    page.locator(".al-copy-link").click()
    expect(page.locator(".al-copy-status")).to_have_text(translate("en", "playground.share_done"))
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.url and "heads=4" in copied and "seed=7" in copied and "text=" in copied
    assert page.locator('[data-testid="stDownloadButton"]').count() == 0  # no per-table buttons
    screenshot(page, f"share_row_{size[0]}_en", full=False)
    click_cell(page, "raw", 3, 1)
    panel = page.locator(".st-key-pg_cell_panel")
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.classList.contains('st-key-pg_cell_panel')"
    )
    top = panel.evaluate("e => e.getBoundingClientRect().top")
    assert 40 <= top < 200, top  # in view below the header, not ~2,400 px further down
    assert "S_{3,1}" in panel.inner_text() or "3,1" in panel.inner_text()
    shapes = page.evaluate(
        "() => document.querySelector('.st-key-pg_chart_raw .js-plotly-plot').layout.shapes || []"
    )
    assert [(s["x0"], s["y0"]) for s in shapes] == [(0.5, 2.5)]
    screenshot(page, f"explainer_after_click_{size[0]}_en")
    assert_no_exception(page)
    context.close()

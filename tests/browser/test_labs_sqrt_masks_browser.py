"""The "Why √d_k" and "Masks" labs in a real browser: they load, draw their charts, speak Japanese.

Screenshots go to artifacts/screenshots/ (lab_sqrt_en.png, lab_sqrt_ja.png, lab_masks_en.png,
lab_masks_ja.png) to be looked at by eye.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect
from st_browser import (
    PLOTLY_CHART,
    assert_no_exception,
    new_context,
    open_lab,
    screenshot,
    tick_labels,
    wait_for_app_run,
    wait_for_charts,
)

from attention_ui.i18n import translate

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
# These pages compute on every run; on a shared 2-core box under load a run can take far longer
# than the harness's default 30 s, so page loads and chart waits get more room here.
SLOW_MS = 120_000


@pytest.fixture
def ja_page(browser: Browser) -> Iterator[Page]:
    """A browser context whose locale is Japanese: the app starts in Japanese."""
    context = new_context(browser, locale="ja-JP")
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


def chart(page: Page, name: str):
    return page.locator(f".st-key-{name} {PLOTLY_CHART}")


# --- Why √d_k -------------------------------------------------------------------------------------


def test_sqrt_lab_loads_draws_and_validates_the_one_row_input(page: Page, streamlit_server: str) -> None:
    open_lab(page, streamlit_server, "why-sqrt-dk", timeout_ms=SLOW_MS)
    wait_for_charts(page, minimum=7, timeout_ms=SLOW_MS)
    assert_no_exception(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text(
        translate("en", "scaling.title"), timeout=SLOW_MS
    )
    # The variance chart has one tick per power of two in the default range 1 … 256.
    assert tick_labels(chart(page, "scaling_chart_var_raw"), "x") == [str(2**i) for i in range(9)]
    # Error bars are drawn for the measured points.
    expect(chart(page, "scaling_chart_var_raw").locator("g.errorbar").first).to_be_attached(timeout=SLOW_MS)
    # The one-row widget shows one bar per default score.
    expect(chart(page, "scaling_chart_row").locator("g.point")).to_have_count(6, timeout=SLOW_MS)
    assert screenshot(page, "lab_sqrt_en").stat().st_size > 10_000

    # the one-row input is validated (same page session: a lab load costs more than the check)
    box = page.locator(".st-key-scaling_row input")
    box.fill("1, two, 3")
    box.press("Enter")
    wait_for_app_run(page, timeout_ms=SLOW_MS)
    expect(page.locator('[data-testid="stAlert"]')).to_contain_text("“two”", timeout=SLOW_MS)
    assert_no_exception(page)
    box.fill("1 2 3 4")
    box.press("Enter")
    wait_for_app_run(page, timeout_ms=SLOW_MS)
    expect(chart(page, "scaling_chart_row").locator("g.point")).to_have_count(4, timeout=SLOW_MS)
    assert_no_exception(page)


def test_sqrt_lab_in_japanese(ja_page: Page, streamlit_server: str) -> None:
    open_lab(ja_page, streamlit_server, "why-sqrt-dk", timeout_ms=SLOW_MS)
    wait_for_charts(ja_page, minimum=7, timeout_ms=SLOW_MS)
    title = translate("ja", "scaling.title")
    assert CJK.search(title)
    expect(ja_page.get_by_role("heading", level=1)).to_contain_text(title, timeout=SLOW_MS)
    assert_no_exception(ja_page)
    screenshot(ja_page, "lab_sqrt_ja")


# --- Masks --------------------------------------------------------------------------------------------


def test_masks_lab_shows_exact_zero_leakage_side_by_side_and_sliding_window(
    page: Page, streamlit_server: str
) -> None:
    open_lab(page, streamlit_server, "masks", timeout_ms=SLOW_MS)
    wait_for_charts(page, minimum=6, timeout_ms=SLOW_MS)
    assert_no_exception(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text(
        translate("en", "masks.title"), timeout=SLOW_MS
    )
    # The mask map is labelled with the sentence plus the two default [PAD] tokens.
    tokens = ["the", "cat", "sat", "on", "the", "mat", "[PAD]", "[PAD]"]
    assert tick_labels(chart(page, "masks_chart_mask"), "y") == tokens
    # The leakage chart marks all 3 earlier outputs of the correct method as "0 exactly", and draws
    # no bar for it; both mistakes get a bar at every earlier position.
    bars = chart(page, "masks_chart_leak_bars")
    zero = translate("en", "masks.zero_exact")
    expect(bars.locator("g.textpoint text", has_text=zero).first).to_be_visible(timeout=SLOW_MS)
    traces = bars.locator(".js-plotly-plot").evaluate(
        "gd => gd.data.map(t => [t.meta, t.type, (t.y || []).filter(v => v !== null).length])"
    )
    assert ["correct", "scatter", 3] in traces
    assert ["correct", "bar", 0] in traces
    assert ["zero_values", "bar", 3] in traces and ["zero_weights", "bar", 3] in traces
    assert_no_exception(page)
    assert screenshot(page, "lab_masks_en").stat().st_size > 10_000

    # side by side, then the sliding window (same page session)
    page.locator(".st-key-masks_all label").click()
    wait_for_app_run(page, timeout_ms=SLOW_MS)
    wait_for_charts(page, minimum=7, timeout_ms=SLOW_MS)
    expect(chart(page, "masks_chart_all_masks")).to_have_count(1, timeout=SLOW_MS)
    page.locator(".st-key-masks_kind [data-testid='stSelectbox']").click()
    page.get_by_role("option", name=translate("en", "masks.kind_sliding")).click()
    wait_for_app_run(page, timeout_ms=SLOW_MS)
    wait_for_charts(page, minimum=7, timeout_ms=SLOW_MS)
    assert_no_exception(page)
    screenshot(page, "lab_masks_sliding_en")


def test_masks_lab_in_japanese(ja_page: Page, streamlit_server: str) -> None:
    open_lab(ja_page, streamlit_server, "masks", timeout_ms=SLOW_MS)
    wait_for_charts(ja_page, minimum=6, timeout_ms=SLOW_MS)
    title = translate("ja", "masks.title")
    assert CJK.search(title)
    expect(ja_page.get_by_role("heading", level=1)).to_contain_text(title, timeout=SLOW_MS)
    assert_no_exception(ja_page)
    screenshot(ja_page, "lab_masks_ja")

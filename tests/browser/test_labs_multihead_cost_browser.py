"""The multi-head and cost labs in a real browser: they load, draw their charts, speak Japanese, and
the cost page's live measurement runs on a button press and keeps its results across reruns.

Pages are opened by their URL (falling back to the sidebar link if Streamlit answers "Page not
found"); the start page (the playground) is never waited for, so its load does not slow these tests.
Screenshots: artifacts/screenshots/lab_multihead_{en,ja}.png, lab_cost_{en,ja}.png (looked at by eye).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, expect
from st_browser import (
    PLOTLY_CHART,
    TIMEOUT_MS,
    assert_no_exception,
    screenshot,
    tick_labels,
    wait_for_app_run,
)

from attention_ui.i18n import translate

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
# Any drawn trace: heatmaps, bars, lines (the shared wait only knows heatmaps' layer names).
DRAWN = ".heatmaplayer > *, .barlayer > *, .scatterlayer > *"


def open_lab(page: Page, base_url: str, url_path: str, nav_key: str, lang: str) -> Page:
    """Open a lab by its URL; if Streamlit answers "Page not found", click the sidebar link instead.
    Then switch the language on the lab page itself (the start page is not needed at all)."""
    response = page.goto(f"{base_url}/{url_path}")
    assert response is not None and response.ok
    wait_for_app_run(page)
    if page.get_by_text("Page not found").count():
        page.keyboard.press("Escape")
        page.locator('[data-testid="stSidebarNav"] a').filter(has_text=translate("en", nav_key)).first.click()
        wait_for_app_run(page)
    if lang == "ja":
        page.locator('[data-testid="stSidebar"] .st-key-lang [data-testid="stSelectbox"]').click()
        page.get_by_role("option", name="日本語").click()
        wait_for_app_run(page)
        expect(page.locator('[data-testid="stSidebarNav"]')).to_contain_text(translate("ja", nav_key))
    return page


def wait_drawn(page: Page, minimum: int) -> Locator:
    """At least ``minimum`` Plotly charts on the page, every one with a drawn trace."""
    charts = page.locator(PLOTLY_CHART)
    expect(charts.nth(minimum - 1)).to_be_attached(timeout=TIMEOUT_MS)
    page.wait_for_function(
        """([sel, drawn]) => [...document.querySelectorAll(sel)].every(
               (c) => c.querySelector('.main-svg') && c.querySelector(drawn))""",
        arg=[PLOTLY_CHART, DRAWN],
        timeout=TIMEOUT_MS,
    )
    return charts


def chart(page: Page, key: str) -> Locator:
    return page.locator(f".st-key-{key} {PLOTLY_CHART}")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_multihead_page_draws_every_section(page: Page, streamlit_server: str, lang: str) -> None:
    open_lab(page, streamlit_server, "multi-head", "app.nav_multi_head", lang)
    assert page.url.endswith("/multi-head")
    wait_drawn(page, minimum=6)
    assert_no_exception(page)
    title = translate(lang, "multihead.title")
    assert lang == "en" or CJK.search(title)
    expect(page.get_by_role("heading", level=1)).to_contain_text(title)
    # Default: 4 heads on "the cat sat on the mat", one panel (heatmap image) per head.
    heads = chart(page, "mh_chart_heads")
    expect(heads.locator("g.heatmaplayer image")).to_have_count(4)
    assert tick_labels(heads, "y")[:6] == ["the", "cat", "sat", "on", "the", "mat"]
    # One bar per divisor of d_model = 16, labelled with d_k = 16 / h.
    expect(chart(page, "mh_chart_dk").locator("g.point")).to_have_count(5)
    assert [t.strip() for t in chart(page, "mh_chart_dk").locator("text.bartext").all_text_contents()] == [
        "16",
        "8",
        "4",
        "2",
        "1",
    ]
    # Concat has its head boundaries drawn (3 lines between 4 heads).
    expect(chart(page, "mh_chart_concat").locator("g.shapelayer path")).to_have_count(3)
    expect(chart(page, "mh_chart_cost").locator("g.scatterlayer g.trace")).to_have_count(4)
    expect(page.get_by_text(translate(lang, "multihead.split_diff"))).to_be_visible()
    assert screenshot(page, f"lab_multihead_{lang}").stat().st_size > 10_000


def test_multihead_heads_follow_the_slider(page: Page, streamlit_server: str) -> None:
    open_lab(page, streamlit_server, "multi-head", "app.nav_multi_head", "en")
    wait_drawn(page, minimum=6)
    thumb = page.locator(".st-key-mh_heads input[type='range']")
    thumb.focus()
    thumb.press("End")  # h = 16
    wait_for_app_run(page)
    expect(chart(page, "mh_chart_heads").locator("g.heatmaplayer image")).to_have_count(16)
    assert_no_exception(page)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_cost_page_measures_on_request(page: Page, streamlit_server: str, lang: str) -> None:
    open_lab(page, streamlit_server, "cost", "app.nav_cost", lang)
    assert page.url.endswith("/cost")
    wait_drawn(page, minimum=3)  # memory, FLOPs, tile grid
    assert_no_exception(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text(translate(lang, "cost.title"))
    expect(page.get_by_text(translate(lang, "cost.measure_hint"))).to_be_visible()
    expect(chart(page, "co_chart_peak")).to_have_count(0)  # nothing measured yet

    # Smallest limit (n = 128, 256) keeps the test quick, then measure.
    thumb = page.locator(".st-key-co_max_n input[type='range']")
    thumb.focus()
    thumb.press("Home")
    wait_for_app_run(page)
    page.locator(".st-key-co_run button").click()
    wait_for_app_run(page, timeout_ms=120_000)
    peak = chart(page, "co_chart_peak")
    expect(peak).to_have_count(1, timeout=60_000)
    wait_drawn(page, minimum=5)  # + peak memory and time
    assert tick_labels(peak, "x") == ["128", "256"]
    expect(page.get_by_text(re.compile(r"(about|約) \d\.\d\d"))).to_be_visible()

    # Another control's rerun keeps the results.
    page.locator(".st-key-co_causal label").click()
    wait_for_app_run(page)
    expect(chart(page, "co_chart_peak")).to_have_count(1)
    assert_no_exception(page)
    assert screenshot(page, f"lab_cost_{lang}").stat().st_size > 10_000

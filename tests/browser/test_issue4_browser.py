"""Issue 4 in a real browser: Japanese glyphs, shareable URLs, clicking a heatmap cell, presenter mode."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from st_browser import (
    PLOTLY_CHART,
    assert_no_exception,
    new_context,
    screenshot,
    tick_labels,
    wait_for_app_run,
    wait_for_charts,
)

from attention_ui.i18n import translate

pytestmark = pytest.mark.browser

LONG_MS = 150_000  # the shared 2-core machine can be very busy; a slow run is not a failure
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def chart(page: Page, name: str) -> Locator:
    return page.locator(f".st-key-pg_chart_{name} {PLOTLY_CHART}")


def z_values(c: Locator) -> list:
    """The first trace's z matrix as Plotly holds it in the browser."""
    return c.locator(".js-plotly-plot").evaluate("gd => gd.data[0].z")


def current_url(page: Page) -> str:
    """The address bar: Streamlit updates it with history.replaceState, which page.url may lag."""
    return page.evaluate("() => location.href")


def open_at(page: Page, base: str, query: str = "", charts: int = 2) -> Page:
    page.set_default_timeout(LONG_MS)
    page.goto(f"{base}/{query}")
    wait_for_charts(page, minimum=charts, timeout_ms=LONG_MS)
    return page


def expect_choice(page: Page, key: str, text: str) -> None:
    """A selectbox shows ``text`` as its chosen option (the value of its combobox input)."""
    expect(page.locator(f".st-key-{key} input[role=combobox]")).to_have_value(text, timeout=LONG_MS)


def click_cell(c: Locator, row: int, col: int) -> None:
    """Click the centre of cell (row, col) of a heatmap, using Plotly's own axis mapping."""
    c.scroll_into_view_if_needed()
    x, y = c.locator(".js-plotly-plot").evaluate(
        """(gd, [r, k]) => {
            const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
            const box = gd.querySelector('.main-svg').getBoundingClientRect();
            return [box.left + xa._offset + xa.l2p(k), box.top + ya._offset + ya.l2p(r)];
        }""",
        [row, col],
    )
    c.page.mouse.move(x, y)
    c.page.mouse.click(x, y)


def test_japanese_ui_renders_real_glyphs(browser: Browser, streamlit_server: str) -> None:
    context = new_context(browser, locale="ja-JP")
    try:
        page = context.new_page()
        open_at(
            page,
            streamlit_server,
            "?text=%E7%8C%AB%E3%81%8C%E3%83%9E%E3%83%83%E3%83%88%E3%81%AE%E4%B8%8A%E3%81%AB%E5%BA%A7%E3%81%A3%E3%81%9F%E3%80%82",
        )
        assert_no_exception(page)
        expect(page.get_by_role("heading", level=1)).to_contain_text(
            translate("ja", "playground.title"), timeout=LONG_MS
        )
        assert tick_labels(chart(page, "weights"), "x")[:3] == ["猫", "が", "マ"]
        # glyphs really drawn: "猫" must not render as the same box as a character no font has
        same_as_missing = page.evaluate(
            """() => {
                const draw = (ch) => {
                    const c = document.createElement('canvas'); c.width = 40; c.height = 40;
                    const g = c.getContext('2d'); g.font = '32px sans-serif'; g.fillText(ch, 2, 32);
                    return Array.from(g.getImageData(0, 0, 40, 40).data).join(',');
                };
                return draw('猫') === draw('\\u{10FFFD}') || draw('猫') === draw(' ');
            }"""
        )
        assert not same_as_missing
        assert CJK.search(page.locator('[data-testid="stSidebar"]').inner_text())
        shot = screenshot(page, "issue4_japanese_ui", full=False)
        assert shot.stat().st_size > 10_000
    finally:
        context.close()


def test_copied_url_shows_the_same_weights_in_a_new_browser(
    page: Page, browser: Browser, streamlit_server: str
) -> None:
    app = open_at(page, streamlit_server)
    wait_for_charts(app, minimum=2, timeout_ms=LONG_MS)
    box = app.locator('[data-testid="stMain"] .st-key-pg_text textarea')
    box.fill("a dog chased the red ball")
    box.press("Control+Enter")
    wait_for_app_run(app, timeout_ms=LONG_MS)
    seed = app.locator('[data-testid="stSidebar"] .st-key-pg_seed input')
    seed.fill("9")
    seed.press("Enter")
    wait_for_app_run(app, timeout_ms=LONG_MS)
    app.locator(".st-key-pg_head").get_by_text("head 1").click()
    wait_for_app_run(app, timeout_ms=LONG_MS)
    wait_for_charts(app, minimum=2, timeout_ms=LONG_MS)
    app.wait_for_function("() => location.search.includes('head=1')", timeout=LONG_MS)
    url = current_url(app)
    query = parse_qs(urlparse(url).query)
    assert query["text"] == ["a dog chased the red ball"] and query["seed"] == ["9"]
    before = z_values(chart(app, "weights"))

    other = new_context(browser)
    try:
        page = other.new_page()
        page.set_default_timeout(LONG_MS)
        page.goto(url)
        wait_for_charts(page, minimum=2, timeout_ms=LONG_MS)
        assert_no_exception(page)
        assert tick_labels(chart(page, "weights"), "x") == ["a", "dog", "chased", "the", "red", "ball"]
        assert z_values(chart(page, "weights")) == before
        assert page.locator(".st-key-pg_head input[type=radio]:checked").evaluate("e => e.value") is not None
    finally:
        other.close()


def test_clicking_a_heatmap_cell_shows_its_explanation(page: Page, streamlit_server: str) -> None:
    app = open_at(page, streamlit_server)
    wait_for_charts(app, minimum=2, timeout_ms=LONG_MS)
    weights = chart(app, "weights")
    z = z_values(weights)
    expect(app.locator(".st-key-pg_cell_q")).to_have_count(0)  # the panel opens on demand: the click opens it
    click_cell(weights, 3, 1)
    wait_for_app_run(app, timeout_ms=LONG_MS)
    explanation = app.locator(".st-key-pg_cell_explanation")
    expect_choice(app, "pg_cell_q", "3 · on")
    expect_choice(app, "pg_cell_k", "1 · cat")
    expect(explanation).to_contain_text(f"{z[3][1]:.4g}", timeout=LONG_MS)
    explanation.scroll_into_view_if_needed()
    screenshot(app, "issue4_cell_explainer", full=False)
    # a click on the raw-score map selects that cell too
    click_cell(chart(app, "raw"), 2, 4)  # not the top row: the modebar covers its right end
    wait_for_app_run(app, timeout_ms=LONG_MS)
    expect_choice(app, "pg_cell_k", "4 · the")
    expect_choice(app, "pg_cell_q", "2 · sat")
    assert_no_exception(app)


def test_presenter_mode_steps_and_url(page: Page, streamlit_server: str) -> None:
    open_at(page, streamlit_server, "?present=1&step=7", charts=1)
    expect(page.get_by_role("heading", level=1).first).to_contain_text("7.", timeout=LONG_MS)
    expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden(timeout=LONG_MS)
    screenshot(page, "issue4_presenter", full=False)
    page.get_by_role("button", name=translate("en", "playground.present_next")).click()
    wait_for_app_run(page, timeout_ms=LONG_MS)
    page.wait_for_function("() => location.search.includes('step=8')", timeout=LONG_MS)
    assert parse_qs(urlparse(current_url(page)).query)["present"] == ["1"]
    expect(page.get_by_role("heading", level=1).first).to_contain_text("8.", timeout=LONG_MS)

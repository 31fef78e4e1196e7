"""The decoder page with Gemma 3 270M in a real browser, in Japanese (issue 25): the default model
in Japanese, whole-word tick labels, the 18 × 4 overview with the three global layers framed, the
MQA diagram (4 query heads, 1 KV head), the QK-norm and comparison sections. Screenshots at
1366×768 and 390×844: artifacts/screenshots/decoder_gemma_ja*.png. Skipped without the model."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, expect
from st_browser import (
    PLOTLY_CHART,
    assert_no_exception,
    new_context,
    open_lab,
    screenshot,
    tick_labels,
    wait_for_charts,
)

from attention_core.models import gemma3
from attention_ui.i18n import translate

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not gemma3.is_available(), reason="Gemma 3 270M not installed"),
]

SLOW_MS = 180_000  # the first run loads the model (~3 s alone, much longer on a busy machine)


def chart(page: Page, name: str) -> Locator:
    return page.locator(f".st-key-decoder_chart_{name} {PLOTLY_CHART}")


def test_gemma_view_in_japanese(browser, streamlit_server) -> None:
    context = new_context(browser, locale="ja-JP", width=1366, height=768, timeout_ms=SLOW_MS)
    page = context.new_page()
    try:
        open_lab(page, streamlit_server, "decoder", lang="ja", timeout_ms=SLOW_MS)
        wait_for_charts(page, minimum=10, timeout_ms=SLOW_MS)
        assert_no_exception(page)
        assert re.search(r"[?&]model=gemma3", page.url), page.url
        expect(page.get_by_role("heading", name=translate("ja", "decoder.h_mqa"))).to_be_visible()
        labels = tick_labels(chart(page, "weights_0"), "y")
        assert "猫" in labels and "マット" in labels and not any("/3" in lab for lab in labels), labels
        grid = chart(page, "grid")
        assert grid.locator("g.scatterlayer g.trace g.points path").count() == 18 * 4
        assert grid.locator("g.shapelayer path").count() >= 3 + 1  # three global layers + the selected cell
        gqa = chart(page, "gqa").locator("g.scatterlayer g.trace")
        expect(gqa.nth(1).locator("path.point")).to_have_count(4)
        expect(gqa.nth(2).locator("path.point")).to_have_count(1)
        expect(chart(page, "g_q_len")).to_have_count(1)
        expect(page.get_by_role("heading", name=translate("ja", "decoder.cmp_h"))).to_be_visible()
        for width, height in ((1366, 768), (390, 844)):  # one model run, two window sizes
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(500)  # the layout settles
            assert_no_exception(page)
            screenshot(page, f"decoder_gemma_ja_{width}x{height}")
            page.locator(".st-key-decoder_chart_gqa").scroll_into_view_if_needed()
            screenshot(page, f"decoder_gemma_ja_{width}x{height}_mqa", full=False)
    finally:
        context.close()

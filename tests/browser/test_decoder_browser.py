"""The decoder page (SmolLM2-135M) in a real browser, in Japanese, with a Japanese sentence.

One page load covers: Japanese tick labels made of the sentence's characters (no byte symbols),
the 30 × 9 overview, the GQA diagram and maps, the RoPE curve, the next-token bars, and one
generation step that grows the KV cache. Skipped when the model package is not installed.
Screenshots: artifacts/screenshots/decoder_ja*.png.
"""

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
    wait_for_app_run,
    wait_for_charts,
)

from attention_core.models import smollm2
from attention_ui.i18n import translate

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not smollm2.is_available(), reason="decoder model not installed"),
]

SENTENCE = "猫が静かに眠っている。"
SLOW_MS = 120_000  # the first run loads the model (~3 s alone, longer on a busy CI machine)
BYTE_GARBAGE = re.compile(r"[ĠĊÃâ�]")


def chart(page: Page, name: str) -> Locator:
    return page.locator(f".st-key-decoder_chart_{name} {PLOTLY_CHART}")


def test_decoder_page_in_japanese_with_a_japanese_sentence(browser, streamlit_server) -> None:
    context = new_context(browser, timeout_ms=SLOW_MS)
    page = context.new_page()
    try:
        open_lab(page, streamlit_server, "decoder", lang="ja", timeout_ms=SLOW_MS)
        # Japanese starts on Gemma 3 (issue 25); this test is SmolLM2's byte-level view
        page.locator('[data-testid="stSidebar"] .st-key-decoder_model').get_by_text(
            translate("ja", "decoder.model_smollm2"), exact=True
        ).click()
        wait_for_app_run(page, timeout_ms=SLOW_MS)
        box = page.locator('[data-testid="stSidebar"] .st-key-decoder_text textarea')
        box.fill(SENTENCE)
        box.press("Control+Enter")
        wait_for_app_run(page, timeout_ms=SLOW_MS)
        wait_for_charts(page, minimum=8, timeout_ms=SLOW_MS)
        assert_no_exception(page)
        expect(page.get_by_role("heading", name=translate("ja", "decoder.h_gqa"))).to_be_visible()

        # the weight map's labels: Japanese characters (pieces of a character marked k/3), no byte symbols
        labels = tick_labels(chart(page, "weights_0"), "y")
        assert labels and not any(BYTE_GARBAGE.search(lab) for lab in labels), labels
        shown = "".join(labels)
        for ch in "猫静眠":
            assert ch in shown, (ch, labels)
        assert any(re.search(r"\d/3$", lab) for lab in labels), labels  # a piece of a 3-byte character
        # the overview: 30 × 9 click targets; the GQA diagram: 9 query heads, 3 KV heads
        grid = chart(page, "grid")
        expect(grid.locator("g.heatmaplayer image")).to_have_count(1)
        assert grid.locator("g.scatterlayer g.trace g.points path").count() == 270
        expect(
            chart(page, "gqa").locator("g.scatterlayer g.trace").nth(1).locator("path.point")
        ).to_have_count(9)
        expect(chart(page, "next").locator("g.barlayer path")).to_have_count(12)
        expect(page.get_by_text(translate("ja", "decoder.nothing_generated"))).to_be_visible()
        screenshot(page, "decoder_ja")

        # one generation step: the KV cache text, its growth chart and the new attention row appear
        page.get_by_role("button", name=translate("ja", "decoder.next_button")).click()
        wait_for_app_run(page, timeout_ms=SLOW_MS)
        assert_no_exception(page)
        expect(chart(page, "cache")).to_have_count(1)
        expect(chart(page, "rows")).to_have_count(1)
        expect(page.get_by_text(re.compile(r"KV キャッシュには今"))).to_be_visible()
        page.locator(".st-key-decoder_chart_cache").scroll_into_view_if_needed()
        screenshot(page, "decoder_ja_generate", full=False)
    finally:
        context.close()

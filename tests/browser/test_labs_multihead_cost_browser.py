"""The multi-head and cost labs in a real browser: they load, draw their charts, speak Japanese, and
the cost page's live measurement runs on a button press and keeps its results across reruns.

Pages are opened the way a learner goes: the start page, then the lab's sidebar link.
Screenshots: artifacts/screenshots/lab_multihead_{en,ja}.png, lab_cost_{en,ja}.png, lab_block_{en,ja}.png
(looked at by eye). The block page (issue 14) is checked here too: one load per language.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Locator, Page, expect
from st_browser import (
    PLOTLY_CHART,
    assert_no_exception,
    open_lab,
    screenshot,
    tick_labels,
    wait_for_app_run,
    wait_for_charts,
)

from attention_ui.i18n import translate

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def chart(page: Page, key: str) -> Locator:
    return page.locator(f".st-key-{key} {PLOTLY_CHART}")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_multihead_page_draws_every_section(page: Page, streamlit_server: str, lang: str) -> None:
    open_lab(page, streamlit_server, "multi-head", lang)
    assert urlparse(page.url).path == "/multi-head"  # the query holds the learner's sentence
    wait_for_charts(page, minimum=6)
    assert_no_exception(page)
    title = translate(lang, "multihead.title")
    assert lang == "en" or CJK.search(title)
    expect(page.get_by_role("heading", level=1)).to_contain_text(title)
    # Default: 4 heads on the page language's sentence, one panel (heatmap image) per head.
    heads = chart(page, "multihead_chart_heads")
    expect(heads.locator("g.heatmaplayer image")).to_have_count(4)
    if lang == "en":
        assert tick_labels(heads, "y")[:6] == ["the", "cat", "sat", "on", "the", "mat"]
    else:  # one character per token; every other label is shown when they would crowd
        labels = tick_labels(heads, "y")
        assert labels and all(label in "猫がマットの上に座った。" for label in labels), labels
    # One bar per divisor of d_model = 16, labelled with d_k = 16 / h.
    expect(chart(page, "multihead_chart_dk").locator("g.point")).to_have_count(5)
    assert [
        t.strip() for t in chart(page, "multihead_chart_dk").locator("text.bartext").all_text_contents()
    ] == [
        "16",
        "8",
        "4",
        "2",
        "1",
    ]
    # Concat has its head boundaries drawn (3 lines between 4 heads).
    expect(chart(page, "multihead_chart_concat").locator("g.shapelayer path")).to_have_count(3)
    expect(chart(page, "multihead_chart_cost").locator("g.scatterlayer g.trace")).to_have_count(4)
    expect(page.get_by_text(translate(lang, "multihead.split_diff"))).to_be_visible()
    assert screenshot(page, f"lab_multihead_{lang}").stat().st_size > 10_000


def test_multihead_heads_follow_the_slider(page: Page, streamlit_server: str) -> None:
    open_lab(page, streamlit_server, "multi-head", "en")
    wait_for_charts(page, minimum=6)
    thumb = page.locator(".st-key-multihead_heads input[type='range']")
    thumb.focus()
    thumb.press("End")  # h = 16
    wait_for_app_run(page)
    expect(chart(page, "multihead_chart_heads").locator("g.heatmaplayer image")).to_have_count(16)
    assert_no_exception(page)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_cost_page_measures_on_request(page: Page, streamlit_server: str, lang: str) -> None:
    open_lab(page, streamlit_server, "cost", lang)
    assert urlparse(page.url).path == "/cost"  # the query holds the learner's sentence
    wait_for_charts(page, minimum=3)  # memory, FLOPs, tile grid
    assert_no_exception(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text(translate(lang, "cost.title"))
    expect(page.get_by_text(translate(lang, "cost.measure_hint"))).to_be_visible()
    expect(chart(page, "cost_chart_peak")).to_have_count(0)  # nothing measured yet
    # Issue 14: the sliding window's band of tiles and linear attention's weights are drawn too.
    expect(chart(page, "cost_chart_window_tiles")).to_have_count(1)
    expect(chart(page, "cost_chart_linear_row").locator("g.trace.bars")).to_have_count(2)
    expect(page.get_by_text(translate(lang, "cost.win_time_hint"))).to_be_visible()

    # Smallest limit (n = 128, 256) keeps the test quick, then measure.
    thumb = page.locator(".st-key-cost_max_n input[type='range']")
    thumb.focus()
    thumb.press("Home")
    wait_for_app_run(page)
    page.locator(".st-key-cost_run button").click()
    wait_for_app_run(page, timeout_ms=120_000)
    peak = chart(page, "cost_chart_peak")
    expect(peak).to_have_count(1, timeout=60_000)
    wait_for_charts(page, minimum=5)  # + peak memory and time
    assert tick_labels(peak, "x") == ["128", "256"]
    expect(page.get_by_text(re.compile(r"(about|約) \d\.\d\d"))).to_be_visible()

    # Another control's rerun keeps the results.
    page.locator(".st-key-cost_causal label").click()
    wait_for_app_run(page)
    expect(chart(page, "cost_chart_peak")).to_have_count(1)
    assert_no_exception(page)
    assert screenshot(page, f"lab_cost_{lang}").stat().st_size > 10_000


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_block_page_draws_every_section(page: Page, streamlit_server: str, lang: str) -> None:
    open_lab(page, streamlit_server, "block", lang)
    assert urlparse(page.url).path == "/block"  # the query holds the learner's sentence
    wait_for_charts(page, minimum=3)  # stages, depth, FLOPs
    assert_no_exception(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text(translate(lang, "block.title"))
    # seven stages: the residual stream (x, h, y) and four sub-layer inputs/outputs
    expect(chart(page, "block_chart_stages").locator("g.point")).to_have_count(7)
    expect(chart(page, "block_chart_depth").locator("g.scatterlayer g.trace")).to_have_count(2)
    expect(chart(page, "block_chart_flops").locator("g.scatterlayer g.trace")).to_have_count(4)
    # Post-LN: the success message changes with the radio
    post = translate(lang, "block.placement_post")
    page.locator(".st-key-block_placement").get_by_text(post, exact=True).click()
    wait_for_app_run(page)
    expect(page.get_by_text(re.compile(r"^Post-LN[:：]")).first).to_be_visible()
    assert_no_exception(page)
    assert screenshot(page, f"lab_block_{lang}").stat().st_size > 10_000

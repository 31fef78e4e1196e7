"""The positions and inference labs in a real browser, in one test: the positions page in English,
the same page switched to Japanese, then the inference page through its sidebar link (still in
Japanese). Each load checks its charts, its printed differences and takes a screenshot.

Screenshots: artifacts/screenshots/lab_positions_en.png, lab_positions_ja.png, lab_inference_ja.png
(looked at by eye).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, Page, expect
from st_browser import (
    PLOTLY_CHART,
    assert_no_exception,
    open_lab,
    screenshot,
    switch_language,
    wait_for_app_run,
    wait_for_charts,
    wait_for_path,
)

from attention_ui.i18n import translate

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def chart(page: Page, key: str) -> Locator:
    return page.locator(f".st-key-{key} {PLOTLY_CHART}")


def metric_value(page: Page, label: str) -> float:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return float(box.locator('[data-testid="stMetricValue"]').inner_text().replace(",", ""))


def test_positions_and_inference_pages(page: Page, streamlit_server: str) -> None:
    open_lab(page, streamlit_server, "positions", "en")
    wait_for_charts(page, minimum=4)
    assert_no_exception(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text(translate("en", "positions.title"))
    assert metric_value(page, translate("en", "positions.gap_off")) < 1e-12
    assert metric_value(page, translate("en", "positions.gap_on")) > 1e-3
    # three scheme lines; the learned one breaks off at L in the extrapolation plot
    expect(chart(page, "positions_chart_schemes").locator("g.scatterlayer g.trace")).to_have_count(3)
    expect(chart(page, "positions_chart_arrow").locator("g.annotation")).to_have_count(9)
    expect(chart(page, "positions_chart_extrapolation").locator("g.scatterlayer g.trace")).to_have_count(3)
    assert screenshot(page, "lab_positions_en").stat().st_size > 10_000

    switch_language(page, "ja")
    wait_for_charts(page, minimum=4)
    expect(page.get_by_role("heading", level=1)).to_contain_text(translate("ja", "positions.title"))
    assert_no_exception(page)
    assert screenshot(page, "lab_positions_ja").stat().st_size > 10_000

    page.locator('[data-testid="stSidebarNav"] a[href$="/inference"]').click()
    wait_for_path(page, "inference")
    wait_for_app_run(page)
    wait_for_charts(page, minimum=4)
    assert_no_exception(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text(translate("ja", "inference.title"))
    assert metric_value(page, translate("ja", "inference.cache_gap")) < 1e-12
    assert metric_value(page, translate("ja", "inference.change_bidirectional")) > 1e-3
    # 4 query heads, each with its weights and the grey overlay of the causal mask
    expect(chart(page, "inference_chart_groups").locator("g.heatmaplayer image")).to_have_count(8)
    expect(chart(page, "inference_chart_size").locator("g.point")).to_have_count(3)  # g = 1, 3, 9 for SmolLM2
    expect(chart(page, "inference_chart_flops").locator("g.scatterlayer g.trace")).to_have_count(2)
    assert screenshot(page, "lab_inference_ja").stat().st_size > 10_000

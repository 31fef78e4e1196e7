"""Issue 29 in a real browser: the cost lab's ring attention section and the look-alikes lab's
state-space section draw every chart, without an exception, the ring section in English at 1366×768 and
the state-space section in Japanese at 390×844 (a phone).

Screenshots (looked at by eye): artifacts/screenshots/ring_<lang>_<w>_<n>.png and ssm_<lang>_<w>_<n>.png,
one per chart of the section, the chart scrolled into view.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from st_browser import PLOTLY_CHART, assert_no_exception, open_lab, screenshot, wait_for_charts

from attention_ui.i18n import translate

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

SECTIONS = {
    "ring": (
        "cost",
        "ring.title",
        ("ring_schedule", "ring_row", "ring_load", "ring_orders", "ring_times"),
        "cost",
    ),
    "ssm": (
        "lookalikes",
        "ssm.title",
        (
            "ssm_attention",
            "ssm_linear",
            "ssm_ssm_fixed",
            "ssm_ssm_selective",
            "ssm_row",
            "ssm_steps",
            "ssm_state",
        ),
        "lookalikes",
    ),
}


# Two loads only (a browser run costs ~20 s): the ring in English on a laptop, the SSM in Japanese on a phone.
@pytest.mark.parametrize(
    ("section", "lang", "size"), [("ring", "en", (1366, 768)), ("ssm", "ja", (390, 844))]
)
def test_section_draws_every_chart(page: Page, streamlit_server: str, section: str, lang: str, size) -> None:
    url, title, charts, prefix = SECTIONS[section]
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_lab(page, streamlit_server, url, lang)
    wait_for_charts(page, minimum=len(charts))
    assert_no_exception(page)
    expect(page.get_by_role("heading", name=translate(lang, title))).to_be_attached()
    for i, name in enumerate(charts):
        chart = page.locator(f".st-key-{prefix}_chart_{name} {PLOTLY_CHART}")
        chart.scroll_into_view_if_needed()
        expect(chart.locator(".main-svg").first).to_be_visible()
        box = chart.bounding_box()
        assert box is not None and box["width"] <= size[0], f"{name} is wider than the window"
        screenshot(page, f"{section}_{lang}_{size[0]}_{i}", full=False)

"""The "Heads at work" page in a real browser: click a head on the attribution map and the
prediction after the ablation changes (the heading, the sentence and the URL follow).

Opened from a shared link (sentence, layer 0 head 0, whose ablation keeps " Italy" on top), then a
click on layer 1, head 3 of the attribution map, whose zero ablation makes " the" the most probable
next token (measured with attention_core.labs.heads.ablate, checked again here). Screenshots at
1366×768 and 390×844: artifacts/screenshots/heads_*.png. Skipped when the model is not installed.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import numpy as np
import pytest
from playwright.sync_api import Page, expect
from st_browser import (
    PLOTLY_CHART,
    assert_no_exception,
    new_context,
    screenshot,
    wait_for_app_run,
    wait_for_charts,
)

from attention_core.labs import heads as H
from attention_ui.i18n import translate

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not H.is_available("smollm2"), reason="decoder model not installed"),
]

TEXT = "Paris is the capital of France. Rome is the capital of"
SLOW_MS = 120_000
PICK = (1, 3)


def test_click_a_head_and_the_prediction_changes(browser, streamlit_server) -> None:
    m = H.load_model("smollm2")
    enc = m.encode(TEXT)
    p = H.run_pass(enc.ids, m)
    before = m.label(p.ids, int(np.argmax(p.logits)))
    after = m.label(p.ids, int(np.argmax(H.ablate(p, m.weights, *PICK).logits)))
    assert before != after  # the premise of the test, from the core
    context = new_context(browser, width=1366, height=768, timeout_ms=SLOW_MS)
    page: Page = context.new_page()
    try:
        page.goto(f"{streamlit_server}/heads?text={quote(TEXT)}&layer=0&head=0")
        wait_for_app_run(page, timeout_ms=SLOW_MS)
        wait_for_charts(page, minimum=8, timeout_ms=SLOW_MS)
        assert_no_exception(page)
        expect(page.get_by_text(re.compile("the most probable next token is still"))).to_be_visible()
        screenshot(page, "heads_1366", full=False)

        cells = page.locator(f".st-key-heads_chart_dla {PLOTLY_CHART} g.scatterlayer g.trace g.points path")
        expect(cells).to_have_count(270)
        cell = cells.nth(PICK[0] * 9 + PICK[1])
        cell.scroll_into_view_if_needed()
        box = cell.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        wait_for_app_run(page, timeout_ms=SLOW_MS)
        assert_no_exception(page)
        heading = translate("en", "heads.h_ablation", layer=PICK[0], head=PICK[1])
        expect(page.get_by_role("heading", name=heading)).to_be_visible()
        changed = f"the most probable next token changes from {before} to {after}"
        expect(page.get_by_text(changed)).to_be_visible()
        expect(page).to_have_url(re.compile(rf"layer={PICK[0]}\b.*head={PICK[1]}\b"))
        page.get_by_role("heading", name=heading).scroll_into_view_if_needed()
        screenshot(page, "heads_1366_ablated", full=False)
        page.set_viewport_size({"width": 390, "height": 844})
        wait_for_charts(page, minimum=8, timeout_ms=SLOW_MS)
        screenshot(page, "heads_390")
    finally:
        context.close()

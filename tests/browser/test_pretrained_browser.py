"""The playground's pretrained mode in a real browser: switch, overview grid, subwords, Japanese.

Skipped when the optional model package is not installed. Screenshots go to
artifacts/screenshots/pretrained_*.png (looked at by hand when the view changes).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, expect
from st_browser import (
    PLOTLY_CHART,
    assert_no_exception,
    screenshot,
    switch_language,
    tick_labels,
    wait_for_app_run,
    wait_for_charts,
)

from attention_core.models import minilm as pretrained
from attention_ui.i18n import translate

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not pretrained.is_available(), reason="pretrained model not installed"),
]

SENTENCE = "Tokenization makes transformers surprisingly interesting."
TOKENS = ["[CLS]", "token", "##ization", "makes", "transformers", "surprisingly", "interesting", ".", "[SEP]"]
JA_SENTENCE = "猫はマットの上で静かに眠っている。"
# A pretrained rerun draws 15 charts, four of them 384 columns wide, and the first one also loads
# the weights: on a busy two-core CI machine that can take far longer than the default 30 s.
SLOW_MS = 120_000


def chart(page: Page, name: str) -> Locator:
    return page.locator(f".st-key-pg_chart_{name} {PLOTLY_CHART}")


def sidebar(page: Page) -> Locator:
    return page.locator('[data-testid="stSidebar"]')


def choose_pretrained(page: Page, lang: str = "en") -> None:
    sidebar(page).locator(".st-key-pg_weights").get_by_text(
        translate(lang, "pretrained.weights_pretrained")
    ).click()
    wait_for_app_run(page, timeout_ms=SLOW_MS)
    expect(chart(page, "pt_overview")).to_have_count(1, timeout=SLOW_MS)
    wait_for_charts(page, minimum=2, timeout_ms=SLOW_MS)


def enter_sentence(page: Page, text: str) -> None:
    box = page.locator('[data-testid="stMain"] .st-key-pg_text textarea')
    box.fill(text)
    box.press("Control+Enter")
    wait_for_app_run(page, timeout_ms=SLOW_MS)


def full_labels(labels: list[str]) -> bool:
    """Tick labels are tokens, long ones shortened with '…'."""
    return all(
        lab == tok or (lab.endswith("…") and tok.startswith(lab[:-1]))
        for lab, tok in zip(labels, TOKENS, strict=True)
    )


def click_panel(page: Page, layer: int, head: int, lang: str) -> None:
    """Click the middle of overview panel (layer, head) and check that it became the one shown: the
    pickers, the URL, the red frame and the steps' heading all follow."""
    index = layer * 12 + head + 1  # Plotly's axis number of the panel: xy, x2y2, ..., x72y72
    subplot = "xy" if index == 1 else f"x{index}y{index}"
    panel = chart(page, "pt_overview").locator(f"g.draglayer g.{subplot} rect.nsewdrag")
    box = panel.bounding_box()
    assert box is not None and box["width"] > 20, box
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_for_app_run(page, timeout_ms=SLOW_MS)
    expect(page).to_have_url(re.compile(rf"layer={layer}\b.*head={head}\b|head={head}\b.*layer={layer}\b"))
    head_box = page.locator(".st-key-pg_head")
    expect(head_box.get_by_role("combobox")).to_have_value(translate(lang, "playground.head_name", h=head))
    checked = page.locator(".st-key-pg_pt_layer input:checked")
    expect(checked).to_have_count(1)
    assert checked.evaluate("e => e.closest('label').innerText").strip() == translate(
        lang, "pretrained.layer_name", layer=layer
    )
    expect(
        page.get_by_role("heading", name=translate(lang, "pretrained.steps_title", layer=layer))
    ).to_be_visible()
    # the red frame is redrawn around the clicked panel (polled: Plotly redraws after the run)
    centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function(
        """([x, y]) => {
          const r = document.querySelector('.st-key-pg_chart_pt_overview g.shapelayer path')?.getBoundingClientRect();
          return r && r.left <= x && x <= r.right && r.top <= y && y <= r.bottom && r.width < 200;
        }""",
        arg=list(centre),
    )
    # the head picker sits on the overview's level, not a page away
    picker = head_box.bounding_box()
    overview = chart(page, "pt_overview").bounding_box()
    assert picker is not None and overview is not None and 0 < overview["y"] - picker["y"] < 400, (
        picker,
        overview,
    )


def test_pretrained_view_draws_the_72_panel_overview_and_subword_steps(app: Page) -> None:
    wait_for_charts(app, timeout_ms=SLOW_MS)
    enter_sentence(app, SENTENCE)
    choose_pretrained(app)
    assert_no_exception(app)
    overview = chart(app, "pt_overview")
    expect(overview.locator("g.heatmaplayer image")).to_have_count(72)
    expect(overview.locator("g.annotation")).to_have_count(18)  # 12 head titles + 6 layer titles
    weights = chart(app, "weights")
    labels = tick_labels(weights, "y")
    assert len(labels) == len(TOKENS) and full_labels(labels), labels
    expect(sidebar(app)).to_contain_text("d_model = 384")
    screenshot(app, "pretrained_en")
    app.locator(".st-key-pg_chart_pt_overview").scroll_into_view_if_needed()
    screenshot(app, "pretrained_en_overview", full=False)
    click_panel(app, 2, 7, "en")  # 1400×900
    assert_no_exception(app)

    # layer 4, specials hidden: [CLS]/[SEP] leave the maps, the note says rows no longer sum to 1
    app.locator(".st-key-pg_pt_layer").get_by_text(
        translate("en", "pretrained.layer_name", layer=4), exact=True
    ).click()
    wait_for_app_run(app, timeout_ms=SLOW_MS)
    sidebar(app).locator(".st-key-pg_pt_hide_special").get_by_text(
        translate("en", "pretrained.hide_special")
    ).click()
    wait_for_app_run(app, timeout_ms=SLOW_MS)
    expect(weights.locator("g.ytick text")).to_have_count(len(TOKENS) - 2, timeout=SLOW_MS)
    wait_for_charts(app, minimum=2, timeout_ms=SLOW_MS)
    assert "[CLS]" not in tick_labels(weights, "y")
    expect(app.get_by_text(translate("en", "pretrained.hidden_note"))).to_be_visible()
    expect(
        app.get_by_role("heading", name=translate("en", "pretrained.steps_title", layer=4))
    ).to_be_visible()
    assert_no_exception(app)
    screenshot(app, "pretrained_en_layer4_hidden")


def test_pretrained_view_in_japanese_with_a_japanese_sentence(app: Page) -> None:
    wait_for_charts(app, timeout_ms=SLOW_MS)
    switch_language(app, "ja", timeout_ms=SLOW_MS)
    enter_sentence(app, JA_SENTENCE)
    choose_pretrained(app, "ja")
    assert_no_exception(app)
    expect(app.get_by_role("heading", name=translate("ja", "pretrained.overview_title"))).to_be_visible()
    # the English-only tokenizer: [UNK] for unknown kanji, and the note that explains it
    labels = tick_labels(chart(app, "weights"), "y")
    assert labels[0] == "[CLS]" and labels[-1] == "[SEP]" and "[UNK]" in labels, labels
    note = app.locator('[data-testid="stAlert"]').filter(has_text=re.compile(r"\[UNK\]"))
    expect(note.first).to_be_visible()
    expect(chart(app, "pt_overview").locator("g.heatmaplayer image")).to_have_count(72)
    screenshot(app, "pretrained_ja")
    app.set_viewport_size({"width": 1366, "height": 768})
    app.locator(".st-key-pg_chart_pt_overview").scroll_into_view_if_needed()
    click_panel(app, 5, 11, "ja")  # the last panel, at 1366×768
    assert_no_exception(app)
    app.locator(".st-key-pg_pt_layer").scroll_into_view_if_needed()
    screenshot(app, "pretrained_ja_overview", full=False)

"""The playground in a real browser: it loads, draws heatmaps, follows new sentences, speaks Japanese.

AppTest checks the page's Python side; these tests check what a student actually sees: Plotly SVGs
whose tick labels are the tokens, numbers in the cells, and the Japanese UI.
"""

from __future__ import annotations

import re
from collections import defaultdict
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Locator, Page, expect
from st_browser import (
    EXCEPTION,
    PLOTLY_CHART,
    assert_no_exception,
    screenshot,
    switch_language,
    tick_labels,
    wait_for_app_run,
    wait_for_charts,
)

from attention_ui.i18n import translate

pytestmark = pytest.mark.browser

DEFAULT_TOKENS = ["the", "cat", "sat", "on", "the", "mat"]
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def chart(page: Page, name: str) -> Locator:
    """The playground chart drawn with ``key=f"pg_chart_{name}"``."""
    return page.locator(f".st-key-pg_chart_{name} {PLOTLY_CHART}")


def sentence_box(page: Page) -> Locator:
    return page.locator('[data-testid="stMain"] .st-key-pg_text textarea')


def enter_sentence(page: Page, text: str) -> None:
    box = sentence_box(page)
    box.fill(text)
    box.press("Control+Enter")  # st.text_area commits on Ctrl+Enter (or on blur)
    wait_for_app_run(page)


def cell_rows(c: Locator) -> list[list[float]]:
    """The numbers printed in a heatmap's cells, grouped into rows by their on-screen y position."""
    points = c.locator("g.heatmaplayer text").evaluate_all(
        "els => els.map(e => [e.getAttribute('x'), e.getAttribute('y'), e.textContent])"
    )
    rows: dict[float, list[tuple[float, float]]] = defaultdict(list)
    for x, y, text in points:
        if text and text.strip():
            rows[round(float(y), 1)].append((float(x), float(text)))
    return [[v for _, v in sorted(row)] for _, row in sorted(rows.items())]


def test_default_page_loads_and_draws_token_heatmaps(app: Page) -> None:
    # One page load for both checks: loading the playground is the slow part of a browser test.
    wait_for_charts(app, minimum=2)
    assert_no_exception(app)
    expect(app.get_by_role("heading", level=1)).to_contain_text(translate("en", "playground.title"))
    expect(sentence_box(app)).to_have_value(" ".join(DEFAULT_TOKENS))

    weights = chart(app, "weights")
    expect(weights).to_have_count(1)
    # Every query row and key column is labelled with the default sentence's tokens.
    assert tick_labels(weights, "y") == DEFAULT_TOKENS
    assert tick_labels(weights, "x") == DEFAULT_TOKENS
    expect(weights.locator("g.heatmaplayer image")).to_have_count(1)
    # The printed attention weights form a 6x6 table whose rows each add up to 1 (softmax);
    # each cell is rounded to 2 decimals, so a row may be off by up to 6 * 0.005.
    rows = cell_rows(weights)
    assert [len(r) for r in rows] == [6] * 6
    for row in rows:
        assert all(0.0 <= v <= 1.0 for v in row)
        assert sum(row) == pytest.approx(1.0, abs=0.031)
    assert screenshot(app, "playground_en").stat().st_size > 10_000


def test_new_sentences_update_the_heatmaps(app: Page) -> None:
    wait_for_charts(app)
    short = ["the", "dog", "chased", "the", "ball"]
    enter_sentence(app, " ".join(short))
    weights = chart(app, "weights")
    expect(weights.locator("g.ytick text")).to_have_text(short)
    expect(weights.locator("g.xtick text")).to_have_text(short)
    wait_for_charts(app)
    assert [len(r) for r in cell_rows(weights)] == [5] * 5
    # The token matrices (X, Q, K, V, outputs) have one row per token too.
    assert tick_labels(chart(app, "x"), "y") == short

    longer = "a small brown dog chased the red ball across the wet green park".split()
    enter_sentence(app, " ".join(longer))
    expect(weights.locator("g.ytick text")).to_have_count(len(longer))
    expect(weights.locator("g.ytick text")).to_have_text(longer)
    expect(weights.locator("g.xtick text")).to_have_text(longer)
    wait_for_charts(app)
    expect(weights.locator("g.heatmaplayer image")).to_have_count(1)
    assert tick_labels(chart(app, "output"), "y") == longer
    assert_no_exception(app)
    screenshot(app, "playground_long_sentence")


def test_japanese_ui_and_sentence(app: Page) -> None:
    wait_for_charts(app)
    switch_language(app, "ja")
    title = translate("ja", "playground.title")
    assert CJK.search(title), "the Japanese catalog's title should be Japanese"
    expect(app.get_by_role("heading", level=1)).to_contain_text(title)
    sidebar = app.locator('[data-testid="stSidebar"]')
    expect(sidebar).to_contain_text(translate("ja", "app.language"))
    expect(sidebar).to_contain_text(translate("ja", "playground.settings"))

    # A Japanese sentence: each kana/kanji is one token, in order.
    sentence = "猫がマットに座った"
    enter_sentence(app, sentence)
    weights = chart(app, "weights")
    expect(weights.locator("g.ytick text")).to_have_text(list(sentence))
    wait_for_charts(app)
    assert app.locator(EXCEPTION).count() == 0
    # Axis titles are translated too (they come from the catalog, not Plotly defaults).
    expect(weights.locator("g.g-ytitle")).to_contain_text(translate("ja", "playground.axis_query"))
    screenshot(app, "playground_ja")


def test_choosing_a_head_reruns_only_the_per_head_steps(page: Page, streamlit_server: str) -> None:
    # The per-head steps are one st.fragment: a head change must not resend the whole page, and the
    # URL (written at the end of a full run) must still follow the head.
    frames: list[bytes] = []
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda p: frames.append(p if isinstance(p, bytes) else p.encode())),
    )
    page.goto(streamlit_server + "/")
    wait_for_charts(page, minimum=2)
    wait_for_app_run(page)
    frames.clear()
    page.locator('.st-key-pg_head [role="radiogroup"] label').nth(1).click()
    page.wait_for_function("() => new URLSearchParams(location.search).get('head') === '1'", timeout=60_000)
    wait_for_app_run(page)
    assert_no_exception(page)
    sent = b"".join(frames)
    assert translate("en", "playground.step_qkv").encode() in sent  # the per-head steps were redrawn
    for step in ("step_x", "step_all_heads", "step_output"):  # the others were not sent again
        assert translate("en", f"playground.{step}").encode() not in sent, step
    assert translate("en", "playground.head_name", h=1).encode() in sent


def test_long_sentence_draws_the_all_heads_figure_when_asked(page: Page, streamlit_server: str) -> None:
    # 140 tokens: above 128 the all-heads figure waits for its switch; every other step is drawn
    text = " ".join(["cat", "sat", "on", "a", "mat"] * 28)
    page.goto(f"{streamlit_server}/?{urlencode({'max_tokens': 256, 'text': text})}")
    wait_for_charts(page, minimum=10)
    assert_no_exception(page)
    expect(page.locator(PLOTLY_CHART)).to_have_count(10)
    expect(chart(page, "all_heads")).to_have_count(0)
    why = translate("en", "playground.all_heads_on_request", n=140, heads=2, step=7)
    expect(page.get_by_text(why)).to_be_visible()

    page.get_by_text(translate("en", "playground.all_heads_draw"), exact=True).click()
    wait_for_charts(page, minimum=11)
    heads = chart(page, "all_heads")
    expect(heads.locator("g.heatmaplayer image")).to_have_count(2)  # one drawn panel per head
    expect(page.get_by_text(why)).to_have_count(0)
    assert "all_heads=1" in page.evaluate("() => location.search")
    heads.scroll_into_view_if_needed()
    screenshot(page, "playground_all_heads_on_request", full=False)

"""The playground in a real browser: it loads, draws heatmaps, follows new sentences, speaks Japanese
(with real glyphs, not boxes), and a click on a heatmap cell explains that cell (issues 4 and 18: the
explainer scrolls into view with keyboard focus and the cell is framed, at 1366×768 and 1920×1080).

AppTest checks the page's Python side; these tests check what a student actually sees: Plotly SVGs
whose tick labels are the tokens, numbers in the cells, and the Japanese UI. Sharing (the copy-link
button, the address, the export menu) is in test_share_browser.py, presenter mode in
test_presenter_browser.py.
"""

from __future__ import annotations

import re
from collections import defaultdict
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from st_browser import (
    EXCEPTION,
    LONG_MS,
    PLOTLY_CHART,
    assert_no_exception,
    new_context,
    open_at,
    screenshot,
    switch_language,
    tick_labels,
    wait_for_app_run,
    wait_for_charts,
    z_values,
)
from st_browser import (
    pg_chart as chart,
)

from attention_ui.i18n import translate

pytestmark = pytest.mark.browser

DEFAULT_TOKENS = ["the", "cat", "sat", "on", "the", "mat"]
CELL_CENTRE_JS = """([name, i, j]) => {
  const gd = document.querySelector(`.st-key-pg_chart_${name} .js-plotly-plot`);
  const fl = gd._fullLayout, r = gd.getBoundingClientRect();
  return [r.left + fl._size.l + fl.xaxis.l2p(j), r.top + fl._size.t + fl.yaxis.l2p(i)];
}"""


CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


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


def click_cell_of(page: Page, name: str, i: int, j: int) -> None:
    page.locator(f".st-key-pg_chart_{name}").scroll_into_view_if_needed()
    page.wait_for_timeout(200)
    x, y = page.evaluate(CELL_CENTRE_JS, [name, i, j])
    page.mouse.click(x, y)
    wait_for_app_run(page)


def test_default_page_draws_token_heatmaps_and_follows_new_sentences(app: Page) -> None:
    # One page session for both: loading the playground is the slow part of a browser test.
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

    # new sentences: every map follows
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


def test_clicking_a_heatmap_cell_shows_its_explanation(page: Page, streamlit_server: str) -> None:
    # Its own page session: typing new sentences after a chosen cell raised a ValueError in
    # explain_view.chosen_cell (int('2 · sat')) when the two flows were one; reported, not fixed here.
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


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)], ids=["1366", "1920"])
def test_click_scrolls_to_the_explainer_and_frames_the_cell(
    browser: Browser, streamlit_server: str, size: tuple[int, int]
) -> None:
    context = new_context(browser, width=size[0], height=size[1])
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=streamlit_server)
    page = context.new_page()
    page.goto(f"{streamlit_server}/?lang=en&seed=7&heads=4")
    wait_for_app_run(page, timeout_ms=LONG_MS)  # a first view: on a busy machine it may be slow
    wait_for_charts(page, 10)
    # the copy-link button copies the page's own address, which holds the view
    page.locator(".al-copy-link").click()
    expect(page.locator(".al-copy-status")).to_have_text(translate("en", "playground.share_done"))
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.url and "heads=4" in copied and "seed=7" in copied and "text=" in copied
    assert page.locator('[data-testid="stDownloadButton"]').count() == 0  # no per-table buttons
    screenshot(page, f"share_row_{size[0]}_en", full=False)
    click_cell_of(page, "raw", 3, 1)
    panel = page.locator(".st-key-pg_cell_panel")
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.classList.contains('st-key-pg_cell_panel')"
    )
    top = panel.evaluate("e => e.getBoundingClientRect().top")
    assert 40 <= top < 200, top  # in view below the header, not ~2,400 px further down
    assert "S_{3,1}" in panel.inner_text() or "3,1" in panel.inner_text()
    shapes = page.evaluate(
        "() => document.querySelector('.st-key-pg_chart_raw .js-plotly-plot').layout.shapes || []"
    )
    assert [(s["x0"], s["y0"]) for s in shapes] == [(0.5, 2.5)]
    screenshot(page, f"explainer_after_click_{size[0]}_en")
    assert_no_exception(page)
    context.close()

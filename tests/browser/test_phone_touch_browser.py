"""Every page on a phone with touch (issue 35): 390×844, ``has_touch``, taps, never clicks.

One browser context per page (the page in one language, LANGS, as a visitor whose browser is in that
language), on the session's shared server. Each view checks:

* nothing is wider than the screen: every element of the page lies inside the 390 px, or inside a box
  on the screen that clips or scrolls it, and the page itself never scrolls sideways;
* whatever scrolls sideways (a long formula, a wide table) shows a cue at its hidden edge
  (attention_ui/narrow_fit.py), and no display formula is left scrolling that would fit shrunk;
* page links and buttons are at least 44 px tall, chart tick and hover text at least 12 px;
* each of the first charts costs at most one Tab stop: its toolbar has one button in the
  Tab order, and Tab from it leaves the chart (attention_ui/chart_keys.py);
* on the pages with maps a click selects from, a *tap* selects: the tapped cell becomes the chosen
  one (decoder overview, the heads page's attribution map, the playground's step-7 weights map and
  its head-output rows; attention_ui/touch.py).

Screenshots of each view's first screen: artifacts/screenshots/phone_<page>_<lang>.png (a whole phone
page is up to 6000 px tall, and resizing every chart to it for a shot cost more than the checks).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from st_browser import (
    PLOTLY_CHART,
    assert_no_exception,
    new_context,
    open_lab,
    screenshot,
    wait_for_app_run,
    wait_for_charts,
)

from attention_core.labs import heads as H
from attention_ui import narrow_fit
from attention_ui.i18n import translate

PHONE = dict(width=390, height=844)
SLOW_MS = 120_000
TAP_RERUN_MS = 30_000  # a click's rerun takes ~2 s on a busy machine; a dead tap never reruns
PAGES = [
    "",  # the playground
    "why-sqrt-dk",
    "masks",
    "multi-head",
    "cost",
    "block",
    "lookalikes",
    "positions",
    "inference",
    "quiz",
    "decoder",
    "heads",
    "path",
    "worksheet",
    "class_teach",
    "class_join",
    "training",
]
MODEL_PAGES = {"decoder", "heads"}
MIN_TARGET_PX, MIN_TEXT_PX = 44, 12
CHARTS_TABBED = 3  # charts whose Tab stops are counted on each page

# Elements outside the screen that no on-screen box clips or scrolls; boxes that scroll sideways with
# no cue; display formulas that scroll although shrinking (down to narrow_fit.MIN_ZOOM) was possible.
LAYOUT_JS = """([MIN_ZOOM, SLACK]) => {
  const W = window.innerWidth, main = document.querySelector('[data-testid="stMain"]');
  const onScreen = (r) => r.left >= -1 && r.right <= W + 1;
  const held = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible' && onScreen(a.getBoundingClientRect())) return true;
    }
    return false;
  };
  const name = (el) => el.tagName + (el.closest('[data-testid]') ? ' in ' + el.closest('[data-testid]').dataset.testid : '')
    + ': ' + (el.textContent || '').trim().slice(0, 50);
  const wide = [], uncued = [], unshrunk = [];
  for (const el of main.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (!onScreen(r) && !held(el)) wide.push(name(el));
    const s = getComputedStyle(el);
    if ((s.overflowX === 'auto' || s.overflowX === 'scroll') && el.scrollWidth > el.clientWidth + 1) {
      const frame = el.closest('[data-al-more]');
      const cue = s.backgroundImage.includes('radial-gradient')
        || (frame && getComputedStyle(frame, frame.dataset.alMore === 'left' ? '::before' : '::after').content !== 'none');
      if (!cue) uncued.push(name(el) + ` (${el.scrollWidth} > ${el.clientWidth})`);
      if (el.classList.contains('katex-display') && el.scrollWidth > el.clientWidth + SLACK
          && !(parseFloat(el.firstElementChild.style.zoom) <= MIN_ZOOM + 0.01))
        unshrunk.push(name(el));
    }
  }
  const page = document.documentElement.scrollWidth > W + 1 ? [`the page is ${document.documentElement.scrollWidth} px wide`] : [];
  return {wide: page.concat(wide.slice(0, 10)), uncued, unshrunk};
}"""

# Page links and buttons shorter than MIN_TARGET_PX; chart tick and hover text smaller than MIN_TEXT_PX.
SIZES_JS = """([minTarget, minText]) => {
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const targets = [...document.querySelectorAll(
    '[data-testid="stSidebarNavLink"], [data-testid="stPageLink-NavLink"], [data-testid^="stBaseButton"], .al-copy-link'
  )].filter((el) => (el.closest('[data-testid="stSidebar"]') || visible(el)) && el.getBoundingClientRect().height > 0);
  const small = targets.filter((el) => el.getBoundingClientRect().height < minTarget - 0.5)
    .map((el) => `${el.dataset.testid || el.className}: ${(el.textContent || '').trim().slice(0, 30)} ${el.getBoundingClientRect().height}px`);
  const texts = [...document.querySelectorAll(
    '.js-plotly-plot g.xtick text, .js-plotly-plot g.ytick text, .js-plotly-plot g.cbaxis text, .js-plotly-plot .hoverlayer text'
  )];
  const tiny = texts.filter((t) => parseFloat(t.style.fontSize || getComputedStyle(t).fontSize) < minText)
    .map((t) => `${t.textContent.slice(0, 20)} ${t.style.fontSize || getComputedStyle(t).fontSize}`);
  return {small: small.slice(0, 10), tiny: tiny.slice(0, 10), targets: targets.length};
}"""

CHART_OF_FOCUS_JS = """() => {
  const c = document.activeElement && document.activeElement.closest('[data-testid="stPlotlyChart"]');
  return c ? [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].indexOf(c) : -1;
}"""


def open_phone_view(context, base_url: str, path: str, lang: str) -> Page:
    page = context.new_page()
    open_lab(page, base_url, path, lang, timeout_ms=SLOW_MS)
    if page.locator(PLOTLY_CHART).count():
        wait_for_charts(page, timeout_ms=SLOW_MS)
    assert_no_exception(page)
    # narrow_fit runs on the next animation frame after a change; two frames later it is done
    page.evaluate("() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))")
    return page


def check_layout(page: Page, where: str) -> None:
    for _ in range(4):  # a table's columns and the fitting of a formula may follow the run by a frame or two
        found = page.evaluate(LAYOUT_JS, [narrow_fit.MIN_ZOOM, narrow_fit.SLACK_PX])
        if not any(found.values()):
            return
        page.wait_for_timeout(300)
    assert not found["wide"], f"{where}: wider than the 390 px screen: {found['wide']}"
    assert not found["uncued"], f"{where}: scrolls sideways with no cue: {found['uncued']}"
    assert not found["unshrunk"], f"{where}: a display formula scrolls unshrunk: {found['unshrunk']}"


def check_sizes(page: Page, where: str) -> None:
    found = page.evaluate(SIZES_JS, [MIN_TARGET_PX, MIN_TEXT_PX])
    assert found["targets"] > 0, f"{where}: no page links found (the check would pass on nothing)"
    assert not found["small"], f"{where}: touch targets under {MIN_TARGET_PX} px: {found['small']}"
    assert not found["tiny"], f"{where}: chart text under {MIN_TEXT_PX} px: {found['tiny']}"


def check_tab_stops(page: Page, where: str) -> None:
    """From a chart's toolbar, one Tab leaves the chart (for the first CHARTS_TABBED charts)."""
    charts = page.locator(PLOTLY_CHART)
    for n in range(min(CHARTS_TABBED, charts.count())):
        entry = charts.nth(n).locator("button.modebar-btn:not([tabindex='-1'])")
        if not entry.count():  # a chart drawn without a toolbar costs no Tab stop
            continue
        assert entry.count() == 1, f"{where}: chart {n} has {entry.count()} Tab stops"
        entry.first.focus()
        page.keyboard.press("Tab")
        assert page.evaluate(CHART_OF_FOCUS_JS) != n, f"{where}: chart {n} takes two Tab stops in a row"


# --- taps -------------------------------------------------------------------------------------------

POINT_JS = """([key, index]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const trace = gd._fullData.findIndex((t) => t.type === 'scatter' && t.mode === 'markers');
  // Plotly draws scatter traces, in order, as the g.trace groups of its scatter layer
  const layer = gd._fullData.slice(0, trace).filter((t) => t.type === 'scatter').length;
  return {x: gd._fullData[trace].x[index], y: gd._fullData[trace].y[index], layer};
}"""
# The centres of the chart's rectangles (the chosen cell's frame).
FRAMES_JS = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  return (gd.layout.shapes || []).filter((s) => s.type === 'rect')
    .map((s) => [(s.x0 + s.x1) / 2, (s.y0 + s.y1) / 2]);
}"""


def tap_point(page: Page, key: str, index: int) -> dict:
    """Tap (touch, not a mouse) the middle of click target ``index`` of chart ``key``; its data (x, y)."""
    point = page.evaluate(POINT_JS, [key, index])
    chart = page.locator(f".st-key-{key} {PLOTLY_CHART}")
    target = chart.locator("g.scatterlayer g.trace").nth(point["layer"]).locator("g.points path").nth(index)
    target.scroll_into_view_if_needed()
    page.wait_for_timeout(300)  # the scroll settles before the finger lands
    box = target.bounding_box()
    assert box is not None, f"{key}: click target {index} is not drawn"
    page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    try:
        wait_for_app_run(page, timeout_ms=TAP_RERUN_MS)
    except TimeoutError:
        raise AssertionError(
            f"{key}: no rerun within {TAP_RERUN_MS / 1000:.0f} s of a tap on {point}"
        ) from None
    assert_no_exception(page)
    return point


def tap_selects_cell(page: Page, key: str, index: int) -> None:
    """A tap on cell ``index`` frames that cell (decoder overview, heads map, playground weights)."""
    point = page.evaluate(POINT_JS, [key, index])
    assert [point["x"], point["y"]] not in page.evaluate(FRAMES_JS, key), (
        f"{key}: cell {index} already chosen"
    )
    tap_point(page, key, index)
    wait_for_charts(page, timeout_ms=SLOW_MS)
    frames = page.evaluate(FRAMES_JS, key)
    assert [point["x"], point["y"]] in frames, f"{key}: a tap on {point} chose {frames}"


def tap_playground(page: Page, lang: str) -> None:
    tap_selects_cell(page, "pg_chart_weights", 8)  # query 1, key 2 of the 6-token default sentence
    expect(page.locator(".st-key-pg_cell_explanation")).to_be_visible()
    point = tap_point(page, "pg_chart_head_out", 3 * 4 + 1)  # a cell of query row 3
    title = translate(lang, "playground.row_weights", i=int(point["y"]))
    expect(page.locator("svg text", has_text=title).first).to_be_attached()


TAPS = {
    "": tap_playground,
    "decoder": lambda page, lang: tap_selects_cell(page, "dc_chart_grid", 5 * 9 + 4),  # layer 5, head 4
    "heads": lambda page, lang: tap_selects_cell(page, "hd_chart_dla", 1 * 9 + 3),  # layer 1, head 3
}


# One language per page, to keep the suite's time (both languages on every page cost ~350 s of browser
# time here, twice the budget): the pages a tap selects on in English, the others alternating so that
# Japanese, whose labels run longer, is checked on half of them. Screenshots of both languages on every
# page are taken by hand when a page's layout changes.
LANGS = {p: "en" if p in ("", "decoder", "heads") else ("ja", "en")[i % 2] for i, p in enumerate(PAGES)}


@pytest.mark.parametrize("path", PAGES, ids=[p or "playground" for p in PAGES])
def test_page_on_a_phone(browser, streamlit_server: str, path: str) -> None:
    if path in MODEL_PAGES and not H.is_available("smollm2"):
        pytest.skip("decoder model not installed")
    context = new_context(browser, **PHONE, timeout_ms=SLOW_MS, touch=True)
    problems: list[str] = []

    def check(step, *args) -> None:  # every check runs and says what it found, not only the first
        try:
            step(*args)
        except AssertionError as err:
            problems.append(str(err).splitlines()[0])

    try:
        lang = LANGS[path]
        where = f"/{path} ({lang})"
        page = open_phone_view(context, streamlit_server, path, lang)
        check(check_layout, page, where)
        check(check_sizes, page, where)
        screenshot(page, f"phone_{path or 'playground'}_{lang}", full=False)  # the first screen
        check(check_tab_stops, page, where)
        if path in TAPS:
            check(TAPS[path], page, lang)
            check(check_layout, page, where + " after a tap")
        page.close()
    finally:
        context.close()
    assert not problems, "\n".join(problems)

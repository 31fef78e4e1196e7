"""Every page on a phone with touch (issue 35): 390×844, ``has_touch``, taps, never clicks.

One browser context per page (the page in one language, LANGS, as a visitor whose browser is in that
language), on the session's shared server; then the same session switches to the other language (a tap
on the sidebar's language switch) and the page is measured again (issue 42: formulas, targets and words
in both languages). Each view checks:

* nothing is wider than the screen: every element of the page lies inside the 390 px, or inside a box
  on the screen that clips or scrolls it, and the page itself never scrolls sideways;
* no toolbar a touch screen always shows (a table's) is drawn over the element above it;
* whatever scrolls sideways (a long formula, a wide table) shows a cue at its hidden edge
  (attention_ui/narrow_fit.py), and no display formula is left scrolling that would fit shrunk;
* every display formula fits the screen's width (issue 42, point 11: shrunk down to narrow_fit.MIN_ZOOM,
  or wrapped by kit.latex), unless FORMULAS_THAT_SCROLL lists it, and no formula's foot is cut off;
* the playground's sentence box is on the first screen, and a tap reaches it (issue 42, point 8);
* every target is at least 24 × 24 px and the main controls (buttons, page links, text, number and
  select fields) at least 44 px tall (issue 42, point 12; attention_ui/targets.py), in the page and in
  the opened sidebar; chart tick and hover text at least 12 px;
* in Japanese, no English in what Streamlit writes for a screen reader or a tooltip (issue 42, point 13:
  attention_ui/frontend_words.py): no attribute holds a Latin word the Japanese catalogs do not use;
* each of the first charts costs at most one Tab stop: its toolbar has one button in the
  Tab order, and Tab from it leaves the chart (attention_ui/chart_keys.py);
* on the pages with maps a click selects from, a *tap* selects: the tapped cell becomes the chosen
  one (decoder overview, the heads page's attribution map, the playground's step-7 weights map and
  its head-output rows; attention_ui/touch.py).

Screenshots of each view's first screen, in both languages: artifacts/screenshots/phone_<page>_<lang>.png
(a whole phone page is up to 6000 px tall, and resizing every chart to it for a shot cost more than the
checks).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect
from st_browser import (
    PLOTLY_CHART,
    SENTENCE_BOX,
    assert_no_exception,
    assert_on_first_screen,
    new_context,
    open_lab,
    screenshot,
    wait_for_app_run,
    wait_for_charts,
)

from attention_core.labs import heads as H
from attention_ui import narrow_fit, targets
from attention_ui.i18n import LANGUAGE_NAMES, catalog, translate

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
    "code_check",
]
MODEL_PAGES = {"decoder", "heads"}
# What a page's first screen shows without scrolling or opening the sidebar: the playground's
# sentence box (issue 42, point 8)
FIRST_SCREEN = {"": SENTENCE_BOX}
MIN_TEXT_PX = 12
# Display formulas allowed to scroll sideways at 390 px (with narrow_fit's cue): none, every one wraps or
# shrinks to fit. A formula that cannot be split is named here by the start of its TeX.
FORMULAS_THAT_SCROLL: tuple[str, ...] = ()
# The Latin words a Japanese page may show in an attribute: those its catalogs use (d_model, softmax,
# [PAD], Enter ...); anything else there is English from Streamlit's frontend.
JA_LATIN = sorted({w for text in catalog("ja").values() for w in re.findall(r"[A-Za-z]{3,}", text)})
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
  // a toolbar a touch screen always shows (a table's) drawn over the element above its own
  const covered = [...main.querySelectorAll('[data-testid="stElementToolbar"]')]
    .filter((tb) => tb.getClientRects().length > 0 && getComputedStyle(tb).opacity !== '0')
    .filter((tb) => {
      let above = tb.closest('[data-testid="stElementContainer"]')?.previousElementSibling;
      while (above && above.getBoundingClientRect().height === 0) above = above.previousElementSibling;
      return above && above.getBoundingClientRect().bottom > tb.getBoundingClientRect().top + 1;
    }).map((tb) => name(tb.closest('[data-testid="stElementContainer"]').previousElementSibling));
  const page = document.documentElement.scrollWidth > W + 1 ? [`the page is ${document.documentElement.scrollWidth} px wide`] : [];
  return {wide: page.concat(wide.slice(0, 10)), uncued, unshrunk, covered};
}"""

# Display formulas wider than their box, or taller (cut at the foot: the box hides what overflows it),
# each with its box's sizes and the start of its TeX.
FORMULAS_JS = """(SLACK) => [...document.querySelectorAll('[data-testid="stMain"] .katex-display')]
  .filter((box) => box.getClientRects().length > 0
    && (box.scrollWidth > box.clientWidth + SLACK || box.scrollHeight > box.clientHeight + 1))
  .map((box) => {
    const tex = box.querySelector('annotation');
    return {tex: tex ? tex.textContent.trim() : '', width: box.scrollWidth, box: box.clientWidth,
            height: box.scrollHeight, box_height: box.clientHeight};
  })"""

# Targets smaller than [MIN, MIN] (or [MIN, MAIN] tall, the main controls), in the sidebar (``side``) or
# in the page; chart tick and hover text smaller than minText. A radio option, a checkbox and a switch
# are their labels (the input is hidden inside); a field is its input, where a tap must land.
TARGETS_JS = r"""([MIN, MAIN, minText, side]) => {
  const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const where = (el) => !!el.closest('[data-testid="stSidebar"]') === side;
  const found = [], seen = new Set();
  const add = (el, need, what) => {
    if (!el || seen.has(el) || !shown(el) || !where(el)) return;
    seen.add(el);
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return;
    found.push({what, need, w: r.width, h: r.height,
                name: (el.getAttribute('aria-label') || el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 30)});
  };
  const all = (sel) => [...document.querySelectorAll(sel)];
  for (const el of all('button, [role="button"]')) {
    if (el.closest('.modebar, [data-testid="stTooltipHoverTarget"], [data-testid="stHeaderActionElements"], .js-plotly-plot')) continue;
    if (el.closest('[data-testid="stSelectbox"] [role="group"], [data-testid="stTextInputRootElement"]')) add(el, MIN, 'field button');
    else if (el.closest('[data-testid="stNumberInput"]')) add(el, MIN, 'stepper');
    else add(el, MAIN, 'button');
  }
  for (const el of all('[data-testid="stSidebarNavLink"], [data-testid="stPageLink-NavLink"], .al-copy-link')) add(el, MAIN, 'page link');
  for (const el of all('input[type="text"], input[type="number"], input[type="password"], textarea')) add(el, MAIN, 'field');
  for (const el of all('input[type="radio"], input[type="checkbox"]')) add(el.closest('label') || el, MIN, el.type);
  for (const el of all('[data-testid="stTooltipHoverTarget"] button')) add(el, MIN, 'help');
  for (const el of all('[data-testid="stHeaderActionElements"] a')) add(el, MIN, 'heading link');
  for (const el of all('.modebar-btn')) add(el, MIN, 'chart toolbar');
  for (const el of all('[role="slider"], [role="tab"], summary')) add(el, MIN, el.getAttribute('role') || 'summary');
  const small = found.filter((t) => t.w < MIN - 0.5 || t.h < t.need - 0.5)
    .map((t) => `${t.what} ${Math.round(t.w)}×${Math.round(t.h)} (needs ${t.need}): ${t.name}`);
  const texts = side ? [] : [...document.querySelectorAll(
    '.js-plotly-plot g.xtick text, .js-plotly-plot g.ytick text, .js-plotly-plot g.cbaxis text, .js-plotly-plot .hoverlayer text'
  )];
  const tiny = texts.filter((t) => parseFloat(t.style.fontSize || getComputedStyle(t).fontSize) < minText)
    .map((t) => `${t.textContent.slice(0, 20)} ${t.style.fontSize || getComputedStyle(t).fontSize}`);
  return {small: [...new Set(small)].slice(0, 12), tiny: tiny.slice(0, 10), targets: found.length};
}"""

# Attributes (a screen reader's names, tooltips, placeholders) holding a Latin word the Japanese catalogs
# never use, nor the learner's own text (a chart's description names the tokens of an English sentence):
# English that Streamlit's frontend wrote.
ENGLISH_JS = """([allowed, attributes]) => {
  const ok = new Set(allowed), out = new Set();
  for (const box of document.querySelectorAll('textarea, input[type="text"]'))
    for (const word of box.value.match(/[A-Za-z]{3,}/g) || []) ok.add(word);
  for (const el of document.querySelectorAll(attributes.map((a) => `[${a}]`).join(','))) {
    if (el.closest('[data-testid="stSkipToContent"]')) continue;
    for (const a of attributes) {
      const words = ((el.getAttribute(a) || '').match(/[A-Za-z]{3,}/g) || []).filter((w) => !ok.has(w));
      if (words.length) out.add(`${a}="${el.getAttribute(a).slice(0, 50)}"`);
    }
  }
  return [...out].slice(0, 12);
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
    assert not found["covered"], f"{where}: a toolbar covers the element above: {found['covered']}"


def check_formulas(page: Page, where: str) -> None:
    """Every display formula fits its box at 390 px (after narrow_fit's shrinking), or is listed."""
    for _ in range(4):  # the fitting follows the run by a frame or two
        found = page.evaluate(FORMULAS_JS, narrow_fit.SLACK_PX)
        cut = [f for f in found if not any(f["tex"].startswith(tex) for tex in FORMULAS_THAT_SCROLL)]
        if not cut:
            return
        page.wait_for_timeout(300)
    assert not cut, f"{where}: display formulas cut: " + "; ".join(
        f"{f['width']}×{f['height']} px in {f['box']}×{f['box_height']} px: {f['tex'][:60]}" for f in cut
    )


def check_sizes(page: Page, where: str, side: bool = False) -> None:
    """Targets in the page (or in the opened sidebar, ``side``) and the charts' text."""
    found = page.evaluate(TARGETS_JS, [targets.MIN_PX, targets.MAIN_PX, MIN_TEXT_PX, side])
    assert found["targets"] > 0, f"{where}: no targets found (the check would pass on nothing)"
    assert not found["small"], f"{where}: touch targets too small: {found['small']}"
    assert not found["tiny"], f"{where}: chart text under {MIN_TEXT_PX} px: {found['tiny']}"


def check_words(page: Page, where: str) -> None:
    english = page.evaluate(
        ENGLISH_JS, [JA_LATIN, ["aria-label", "title", "data-title", "placeholder", "alt"]]
    )
    assert not english, f"{where}: English in the Japanese interface: {english}"


SIDEBAR_OPEN = '[data-testid="stSidebar"][data-collapsed="false"]'


def other_language(page: Page, lang: str, where: str, check) -> str:
    """Open the sidebar (a tap), measure its targets (``check(check_sizes, …)``), tap the other language
    and close the sidebar again; the page is reloaded in that language, scrolled to its top. Returns
    the language."""
    other = "ja" if lang == "en" else "en"
    page.locator('[data-testid="stExpandSidebarButton"]').tap()
    expect(page.locator(SIDEBAR_OPEN)).to_have_count(1)
    page.wait_for_timeout(400)  # the sidebar's slide-in
    check(check_sizes, page, where + " sidebar", True)
    choice = page.locator('[data-testid="stSidebar"] .st-key-lang label').filter(
        has_text=LANGUAGE_NAMES[other]
    )
    choice.scroll_into_view_if_needed()
    choice.tap()
    wait_for_app_run(page, timeout_ms=SLOW_MS)
    if page.locator(SIDEBAR_OPEN).count():
        page.locator('[data-testid="stSidebarCollapseButton"] button').tap()
        expect(page.locator(SIDEBAR_OPEN)).to_have_count(0)
    if page.locator(PLOTLY_CHART).count():
        wait_for_charts(page, timeout_ms=SLOW_MS)
    assert_no_exception(page)
    page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0)")
    page.evaluate("() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))")
    return other


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
    "decoder": lambda page, lang: tap_selects_cell(page, "decoder_chart_grid", 5 * 9 + 4),  # layer 5, head 4
    "heads": lambda page, lang: tap_selects_cell(page, "heads_chart_dla", 1 * 9 + 3),  # layer 1, head 3
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

        def measure(where: str, lang: str) -> None:
            if path in FIRST_SCREEN:  # before anything scrolls the page
                check(assert_on_first_screen, page, FIRST_SCREEN[path], f"{where}: {FIRST_SCREEN[path]}")
            check(check_layout, page, where)
            check(check_formulas, page, where)
            check(check_sizes, page, where)
            if lang == "ja":
                check(check_words, page, where)
            screenshot(page, f"phone_{path or 'playground'}_{lang}", full=False)  # the first screen

        measure(where, lang)
        check(check_tab_stops, page, where)
        if path in TAPS:
            check(TAPS[path], page, lang)
            check(check_layout, page, where + " after a tap")
        other = other_language(page, lang, where, check)
        measure(f"/{path} ({other}, switched from {lang})", other)
        page.close()
    finally:
        context.close()
    assert not problems, "\n".join(problems)

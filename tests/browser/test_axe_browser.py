"""axe-core (WCAG 2.1 A and AA rules) on every page in English and Japanese, plus the checks axe does
not make on charts: the page language, the tab title, heading order, the contrast of the rendered chart
text, and Tab stops in the chart toolbars (issue 18).

One browser context per language walks the pages through the sidebar navigation (one run per page, no
reloads). axe-core is the pinned npm build that ``scripts/ensure_axe.sh`` fetches (``make browser``).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page
from st_browser import (
    ROOT,
    browser_language,
    new_context,
    wait_for_app_run,
    wait_for_charts,
    wait_for_path,
    wait_until_idle,
)

from attention_ui.i18n import translate

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

AXE_VERSION = "4.14.1"
AXE_JS = ROOT / "artifacts" / "axe-core" / AXE_VERSION / "axe.min.js"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# Violations that come from Streamlit's own markup, which the app cannot change; each with why.
FRAMEWORK_RULES = {
    # The sidebar navigation (stSidebarNav) is a <ul> whose items are wrapped in <div>s (its section
    # headers and the "view more" container), and those <li>s then have no <ul> parent.
    "list": "Streamlit's sidebar navigation puts <div>s directly inside its <ul>",
    "listitem": "Streamlit's sidebar navigation nests its <li>s in <div>s",
}
SERIOUS = ("serious", "critical")
PAGES = [  # url path ("" = the playground), the catalog key of its navigation title
    ("", "app.nav_playground"),
    ("why-sqrt-dk", "app.nav_scaling"),
    ("masks", "app.nav_masks"),
    ("multi-head", "app.nav_multihead"),
    ("cost", "app.nav_cost"),
    ("lookalikes", "app.nav_lookalikes"),
    ("block", "app.nav_block"),
    ("positions", "app.nav_positions"),
    ("inference", "app.nav_inference"),
    ("decoder", "app.nav_decoder"),
    ("heads", "app.nav_heads"),
    ("quiz", "app.nav_quiz"),
    ("path", "app.nav_path"),
    ("worksheet", "app.nav_worksheet"),
    ("class_teach", "app.nav_class_teach"),
    ("class_join", "app.nav_class_join"),
]
NO_CHARTS = {"quiz", "path", "worksheet", "class_teach", "class_join"}  # pages that open without a chart
SLOW_MS = 120_000
MAX_TOOLBAR_STOPS_PER_CHART = 3  # PNG download, reset axes (and Streamlit's own fullscreen button)

# The facts axe does not check on Plotly's SVG: computed in the page from the rendered colours.
FACTS_JS = r"""() => {
  const rgb = (c) => c.match(/[\d.]+/g).slice(0, 3).map(Number);
  const lum = (c) => rgb(c).map((v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const text = [...document.querySelectorAll('.xtick text, .ytick text, .g-xtitle text, .g-ytitle text, .cbaxis text')]
    .filter((e) => e.textContent.trim());
  const ticks = text.map((e) => ratio(getComputedStyle(e).fill, 'rgb(255, 255, 255)'));
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const heads = [...main.querySelectorAll('h1, h2, h3, h4, h5, h6')].filter((e) => e.offsetParent !== null)
    .map((e) => Number(e.tagName[1]));
  // heading anchors (Streamlit slugs heading text: two Japanese titles can slug alike)
  const ids = [...main.querySelectorAll('h1[id], h2[id], h3[id], h4[id], h5[id], h6[id]')].map((e) => e.id);
  const charts = document.querySelectorAll('.js-plotly-plot').length;
  const stops = [...document.querySelectorAll('.modebar a, .modebar button')].filter((e) => e.tabIndex >= 0).length;
  return {lang: document.documentElement.lang, title: document.title, tickMin: ticks.length ? Math.min(...ticks) : null,
          heads, duplicateIds: ids.filter((id, i) => ids.indexOf(id) !== i), charts, stops};
}"""
AXE_RUN_JS = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return result.violations.map((v) => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' '))}));
}"""


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE_JS.exists():
        done = subprocess.run(["bash", "scripts/ensure_axe.sh"], cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0 or not AXE_JS.exists():
            pytest.skip(
                f"axe-core {AXE_VERSION} is not installed (bash scripts/ensure_axe.sh): {done.stderr}"
            )
    return AXE_JS.read_text(encoding="utf-8")


@pytest.fixture
def lang_page(browser: Browser, request) -> Iterator[Page]:
    context = new_context(browser, width=1366, height=768, timeout_ms=SLOW_MS)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


# Each language's walk in two halves (every other page), so that two workers share its ~70 s.
@pytest.mark.parametrize(
    ("lang", "part"),
    [
        ("en", 0),
        ("en", 1),
        ("ja", 0),
        ("ja", 1),
    ],
)
def test_every_page_passes_axe_and_the_chart_checks(
    lang_page: Page, streamlit_server: str, axe_source: str, lang, part
):
    page = lang_page
    browser_language(page, lang)  # a visitor whose browser is in that language (it wins over ?lang=)
    page.goto(f"{streamlit_server}/?lang={lang}")
    wait_for_app_run(page, SLOW_MS)
    problems: list[str] = []
    for url_path, nav_key in PAGES[part::2]:
        if url_path:
            page.locator(f'[data-testid="stSidebarNav"] a[href$="/{url_path}"]').click()
            wait_for_path(page, url_path, SLOW_MS)  # a page may write its state into the query
            wait_for_app_run(page, SLOW_MS)
        if url_path in NO_CHARTS:
            wait_until_idle(page, SLOW_MS)
        else:
            wait_for_charts(page, timeout_ms=SLOW_MS)
        where = f"{lang} /{url_path}"
        facts = page.evaluate(FACTS_JS)
        if facts["lang"] != lang:
            problems.append(f"{where}: <html lang={facts['lang']!r}>")
        if facts["title"] != translate(lang, "app.page_title", page=translate(lang, nav_key)):
            problems.append(f"{where}: tab title {facts['title']!r}")
        heads = facts["heads"]
        if heads.count(1) != 1 or heads[0] != 1:
            problems.append(f"{where}: headings {heads} (one H1, first)")
        jumps = [(a, b) for a, b in zip(heads, heads[1:], strict=False) if b > a + 1]
        if jumps:
            problems.append(f"{where}: heading levels jump {jumps}")
        if facts["duplicateIds"]:
            problems.append(f"{where}: duplicate heading ids {facts['duplicateIds'][:5]}")
        if facts["tickMin"] is not None and facts["tickMin"] < 4.5:
            problems.append(f"{where}: chart text at {facts['tickMin']:.2f}:1 on white")
        if facts["stops"] > MAX_TOOLBAR_STOPS_PER_CHART * facts["charts"]:
            problems.append(f"{where}: {facts['stops']} toolbar Tab stops for {facts['charts']} charts")
        if page.evaluate("() => typeof axe") == "undefined":
            page.evaluate(axe_source)  # once per document: the sidebar navigation keeps the document
        for v in page.evaluate(AXE_RUN_JS, WCAG_TAGS):
            if v["impact"] in SERIOUS and v["id"] not in FRAMEWORK_RULES:
                problems.append(f"{where}: axe {v['id']} ({v['impact']}) at {v['nodes']}")
    assert not problems, "\n".join(problems)

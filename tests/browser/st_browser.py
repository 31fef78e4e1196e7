"""Helpers for the browser tests: find a Chromium, wait for Streamlit runs and Plotly charts, screenshots.

Import in a browser test as ``from st_browser import wait_for_app_run, ...`` (pytest puts this folder
on ``sys.path``). The waiting rules follow Streamlit's own Playwright suite (the websocket is
connected, ``stApp`` reports ``data-test-script-state="notRunning"``, no skeletons are left), plus a
count of the runs the server reports finished, so a wait never returns before the run it waits for
has even started.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import weakref
from pathlib import Path
from urllib.parse import urlparse

from playwright.sync_api import Locator, Page, expect
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"

# Flags for Debian's chromium as root in a container with no network but loopback.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

APP = '[data-testid="stApp"]'
APP_CONNECTED = '[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
REST_PENDING = ".st-key-pg_rest_pending"  # the playground's first view, until steps 2-11 are drawn
SENTENCE_BOX = '[data-testid="stMain"] .st-key-pg_text textarea'  # the playground's sentence
EXCEPTION = '[data-testid="stException"]'
PLOTLY_CHART = '[data-testid="stPlotlyChart"]'

# Plotly trace layers; a chart counts as drawn once one of them has content.
_DRAWN_TRACES = ", ".join(
    f"{layer} > *"
    for layer in (
        ".mlayer",  # cartesian/polar/ternary trace layers: heatmaplayer, barlayer, scatterlayer, ...
        ".heatmaplayer",  # and the same layers wherever Plotly.js 3 puts them (lines: .overplot)
        ".barlayer",
        ".scatterlayer",
        ".pielayer",
        ".funnelarealayer",
        ".treemaplayer",
        ".sunburstlayer",
        ".iciclelayer",
        ".indicatorlayer",
        ".table",
        ".parcoords",
        ".sankey",
        ".geolayer",
    )
)

# True once every Plotly chart is laid out at the width its container now has.
CHARTS_FIT_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].every(
    (gd) => !gd._fullLayout || Math.abs(gd._fullLayout.width - gd.clientWidth) <= 1)"""

POLL_MS = 50  # how often a wait looks again at what the websocket has delivered
# Streamlit's default timeouts are generous because CI shares two cores with a server and a browser.
TIMEOUT_MS = 30_000


def chromium_executable() -> str | None:
    """The Chromium to drive: $CHROMIUM_PATH, then Debian's, else None (= Playwright's own build)."""
    for candidate in (os.environ.get("CHROMIUM_PATH"), "/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("chromium")
    return found


class _Runs:
    """How many script runs the server has reported finished to one page, and how many a wait has seen."""

    def __init__(self) -> None:
        self.finished = 0
        self.seen = 0

    def frame(self, payload) -> None:
        # A run's end is a tiny ForwardMsg (script_finished); deltas and figures are far larger.
        if not isinstance(payload, bytes) or len(payload) > 256:
            return
        msg = ForwardMsg()
        try:
            msg.ParseFromString(payload)
        except Exception:  # not a ForwardMsg we can read: not a run's end either
            return
        if (
            msg.WhichOneof("type") == "script_finished"
            and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
        ):
            self.finished += 1  # a full run or a fragment run completed (one cut short reruns)


_RUNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def watch_runs(page: Page) -> None:
    """Count the runs the server finishes for ``page`` (from its websocket; before it loads)."""
    runs = _RUNS.setdefault(page, _Runs())
    page.on("websocket", lambda ws: ws.on("framereceived", runs.frame))


def new_context(
    browser,
    *,
    locale: str = "en-US",
    width: int = 1400,
    height: int = 900,
    timeout_ms: int = TIMEOUT_MS,
    touch: bool = False,
):
    """A fresh browser context (no cookies, no storage) whose pages count the app's runs; ``touch``:
    a phone (touch screen, mobile viewport), to be tapped."""
    extra = {"has_touch": True, "is_mobile": True} if touch else {}
    context = browser.new_context(locale=locale, viewport={"width": width, "height": height}, **extra)
    context.set_default_timeout(timeout_ms)
    context.on("page", watch_runs)
    return context


def wait_until_idle(page: Page, timeout_ms: int = TIMEOUT_MS) -> None:
    """Wait until the app is connected, no run is going on and no element is still a skeleton."""
    page.locator(APP_CONNECTED).wait_for(state="attached", timeout=timeout_ms)
    # the playground's first view: steps 2-11 follow in the next run (attention_ui/playground/first_screen.py).
    # Waited for before "not running": between the first view's run and the next one the app is idle
    # for a moment, and the note goes while that next run is still running.
    expect(page.locator(REST_PENDING)).to_have_count(0, timeout=timeout_ms)
    page.locator(APP_IDLE).wait_for(state="attached", timeout=timeout_ms)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout_ms)


def wait_for_app_run(page: Page, timeout_ms: int = TIMEOUT_MS) -> None:
    """Wait until a run that finished after the previous call (or after the page loaded) is drawn.

    Call it after an interaction that makes the app rerun (or after loading a page): it returns only
    once the server has reported that rerun finished *and* the page is idle, so what follows sees
    its results, never the previous run's. No fixed delay: the server's own "script finished"
    message (counted by :func:`watch_runs`) says when the run is over.
    """
    runs = _RUNS.get(page)
    if runs is None:
        raise RuntimeError("this page does not count runs: open it in st_browser.new_context")
    deadline = time.monotonic() + timeout_ms / 1000
    while runs.finished <= runs.seen:  # Playwright delivers websocket events while we wait on it
        if time.monotonic() > deadline:
            raise TimeoutError(f"no run finished within {timeout_ms} ms")
        page.wait_for_timeout(POLL_MS)
    wait_until_idle(page, timeout_ms)
    runs.seen = runs.finished


def wait_for_charts(page: Page, minimum: int = 1, timeout_ms: int = TIMEOUT_MS) -> Locator:
    """Wait until at least ``minimum`` Plotly charts are on the page and every one is drawn.

    "Drawn" means Plotly laid the figure out (``_fullLayout``), created its SVG and put at least one
    trace into a trace layer (cartesian, heatmap, polar, pie, table, ...). Returns the chart locator.
    """
    wait_until_idle(page, timeout_ms=timeout_ms)
    assert_no_exception(page)  # fail fast with the error instead of waiting for charts that never come
    charts = page.locator(PLOTLY_CHART)
    expect(charts.nth(minimum - 1)).to_be_attached(timeout=timeout_ms)
    page.wait_for_function(
        """([sel, DRAWN]) => {
            const charts = [...document.querySelectorAll(sel)];
            return charts.length > 0 && charts.every((c) => {
                const gd = c.querySelector('.js-plotly-plot');
                if (!gd || !gd._fullLayout || !c.querySelector('.main-svg')) return false;
                if (!gd.data || gd.data.length === 0) return true;  // an empty figure is drawn once laid out
                return !!c.querySelector(DRAWN);
            });
        }""",
        arg=[PLOTLY_CHART, _DRAWN_TRACES],
        timeout=timeout_ms,
    )
    return charts


# A visitor whose browser is in a language: Streamlit sends navigator.language as st.context.locale.
BROWSER_LOCALES = {"en": "en-US", "ja": "ja-JP"}
BROWSER_LANGUAGE_JS = """Object.defineProperty(navigator, 'language', { get: () => 'LOCALE' });
Object.defineProperty(navigator, 'languages', { get: () => ['LOCALE'] });"""


def browser_language(page: Page, lang: str) -> None:
    """From the next navigation on, ``page``'s browser says it is in ``lang`` (``navigator.language``)."""
    page.add_init_script(BROWSER_LANGUAGE_JS.replace("LOCALE", BROWSER_LOCALES[lang]))


def open_lab(
    page: Page, base_url: str, url_path: str, lang: str | None = None, timeout_ms: int = TIMEOUT_MS
) -> Page:
    """The lab's own link, ``/url_path?lang=lang``, as a shared link is opened by a visitor whose browser
    is in ``lang`` (the browser's language wins over a link's since issue 24, so the page's
    ``navigator.language`` is set to match; no ``lang``: the context's locale decides); waits for its
    run and checks it is the lab (its path, no dialog such as Streamlit's "Page not found").

    (Deep links once raced the legacy ``pages/`` folder on a server's first run; app pages live in
    ``app_pages/`` now, and tests/browser/test_deep_links.py opens links on fresh servers.)
    """
    if lang:
        browser_language(page, lang)
    response = page.goto(f"{base_url}/{url_path}" + (f"?lang={lang}" if lang else ""))
    assert response is not None and response.ok, f"GET /{url_path} answered {response and response.status}"
    wait_for_app_run(page, timeout_ms)
    wait_for_path(page, url_path, timeout_ms)
    assert page.locator('[role="dialog"]').count() == 0, page.locator('[role="dialog"]').first.inner_text()
    return page


def wait_for_path(page: Page, url_path: str, timeout_ms: int = TIMEOUT_MS) -> None:
    """Wait until the address bar's path is ``/url_path``, whatever query the page has written.

    (A glob such as ``**/path`` misses ``/path?seed=0&stop=1``: a page that writes its state into the
    query as soon as it runs would make the wait time out whenever the run is faster than the wait.)
    """
    target = "/" + url_path.strip("/")
    page.wait_for_url(lambda url: urlparse(url).path == target, timeout=timeout_ms)


def switch_language(page: Page, lang: str, timeout_ms: int = TIMEOUT_MS) -> None:
    """Choose ``lang`` in the sidebar's language box (app.py) and wait for the rerun."""
    names = {"en": "English", "ja": "日本語"}
    page.locator('[data-testid="stSidebar"] .st-key-lang label').filter(has_text=names[lang]).click()
    wait_for_app_run(page, timeout_ms)


# Where an element lies against the window, the page unscrolled, and whether it is what a tap at its
# centre reaches (nothing drawn over it, such as the sidebar on a phone).
ON_FIRST_SCREEN_JS = """(el) => {
  const r = el.getBoundingClientRect(), main = document.querySelector('[data-testid="stMain"]');
  const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: innerWidth, height: innerHeight,
          scrolled: (main ? main.scrollTop : 0) + window.scrollY, reached: !!top && (top === el || el.contains(top))};
}"""


def assert_on_first_screen(page: Page, selector: str, what: str) -> None:
    """``selector`` is wholly inside the window of a page nobody has scrolled, and a tap reaches it."""
    box = page.locator(selector).first
    expect(box).to_be_visible()
    at = box.evaluate(ON_FIRST_SCREEN_JS)
    assert at["scrolled"] == 0, f"{what}: the page was scrolled ({at['scrolled']} px)"
    inside = (
        0 <= at["top"] and at["bottom"] <= at["height"] and 0 <= at["left"] and at["right"] <= at["width"]
    )
    assert inside, f"{what} is not on the first screen of {at['width']}×{at['height']}: {at}"
    assert at["reached"], f"{what} is covered: a tap at its centre reaches something else"


def tick_labels(chart: Locator, axis: str = "y") -> list[str]:
    """The tick label texts of one Plotly chart's first ``x`` or ``y`` axis, in DOM order."""
    if axis not in ("x", "y"):
        raise ValueError("axis must be 'x' or 'y'")
    return [t.strip() for t in chart.locator(f"g.{axis}tick text").all_text_contents()]


def assert_no_exception(page: Page) -> None:
    """Fail if Streamlit shows an exception box (``st.exception`` or an uncaught error)."""
    boxes = page.locator(EXCEPTION)
    if boxes.count():
        raise AssertionError(
            "the app shows an exception (details are redacted in the browser by"
            " client.showErrorDetails; the server log under artifacts/logs/ has the traceback):\n"
            + "\n---\n".join(boxes.all_inner_texts())
        )


def screenshot(page: Page, name: str, *, full: bool = True) -> Path:
    """Save a PNG of the app to artifacts/screenshots/<name>.png and return its path.

    Streamlit scrolls inside its own container, so Playwright's ``full_page`` sees only the window;
    with ``full=True`` the window is made as tall as the app's content for the shot, then restored.
    """
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
    path = SCREENSHOTS / f"{safe}.png"
    size = page.viewport_size
    if full and size:
        height = page.evaluate(
            """() => {
                const main = document.querySelector('[data-testid="stMain"]')
                    || document.querySelector('[data-testid="stAppViewContainer"]');
                return main ? main.scrollHeight : document.body.scrollHeight;
            }"""
        )
        tall = max(size["height"], min(int(height), 6000))
        if tall != size["height"]:
            page.set_viewport_size({"width": size["width"], "height": tall})
            page.wait_for_function(CHARTS_FIT_JS)  # Plotly's resize handlers have redrawn every chart
        try:
            page.screenshot(path=str(path), animations="disabled")
        finally:
            if tall != size["height"]:
                page.set_viewport_size(size)
    else:
        page.screenshot(path=str(path), animations="disabled")
    return path


# ---------------------------------------------------------------- the playground and the chart toolbars

LONG_MS = 150_000  # the shared 2-core machine can be very busy; a slow run is not a failure


def pg_chart(page: Page, name: str) -> Locator:
    """The playground chart drawn with ``key=f"pg_chart_{name}"``."""
    return page.locator(f".st-key-pg_chart_{name} {PLOTLY_CHART}")


def z_values(chart: Locator) -> list:
    """The first trace's z matrix as Plotly holds it in the browser."""
    return chart.locator(".js-plotly-plot").evaluate("gd => gd.data[0].z")


def current_url(page: Page) -> str:
    """The address bar: Streamlit updates it with history.replaceState, which page.url may lag."""
    return page.evaluate("() => location.href")


def open_at(page: Page, base: str, query: str = "", charts: int = 2) -> Page:
    """``base/query`` opened with the long timeouts, once ``charts`` charts are drawn."""
    page.set_default_timeout(LONG_MS)
    page.goto(f"{base}/{query}")
    wait_for_charts(page, minimum=charts, timeout_ms=LONG_MS)
    return page


# Every part of a chart that Plotly's toolbar (.modebar, also while it is hidden) overlaps: the plot
# areas, any drawn text (cell numbers, tick labels, titles, legend entries) and colour bars.
TOOLBAR_OVER_DATA_JS = """() => {
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const out = [];
  let bars = 0;
  for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    const bar = chart.querySelector('.modebar');
    if (!bar || bar.getBoundingClientRect().width === 0) continue;
    bars += 1;
    const b = bar.getBoundingClientRect();
    for (const el of chart.querySelectorAll('.nsewdrag, .main-svg text, .legend .bg, .colorbar')) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.height > 0 && hit(b, r) && (el.tagName !== 'text' || el.textContent.trim())) {
        const key = (chart.closest('[class*="st-key-"]')?.className.match(/st-key-(\\S+)/) || [])[1];
        out.push(`${key}: ${el.getAttribute('class') || el.tagName} ${(el.textContent || '').slice(0, 20)}`);
      }
    }
  }
  return {bars, covered: out};
}"""

SIDEBAR = '[data-testid="stSidebar"]'


def no_toolbar_over_data(page: Page, where: str) -> None:
    """Some chart has a toolbar, and no toolbar lies over a chart's data or text."""
    found = page.evaluate(TOOLBAR_OVER_DATA_JS)
    assert found["bars"] > 0, f"{where}: no chart toolbar found"
    assert found["covered"] == [], f"{where}: the toolbar covers {found['covered']}"


def sidebar_open(page: Page) -> bool:
    box = page.locator(SIDEBAR).bounding_box()
    return box is not None and box["width"] > 0 and box["x"] + box["width"] > 1

"""Helpers for the browser tests: find a Chromium, wait for Streamlit runs and Plotly charts, screenshots.

Import in a browser test as ``from st_browser import wait_for_app_run, ...`` (pytest puts this folder
on ``sys.path``). The waiting rules follow Streamlit's own Playwright suite: the websocket is
connected, ``stApp`` reports ``data-test-script-state="notRunning"`` and no skeletons are left.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

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
EXCEPTION = '[data-testid="stException"]'
PLOTLY_CHART = '[data-testid="stPlotlyChart"]'

# Plotly trace layers; a chart counts as drawn once one of them has content.
_DRAWN_TRACES = ", ".join(
    f"{layer} > *"
    for layer in (
        ".mlayer",  # cartesian/polar/ternary trace layers: heatmaplayer, barlayer, scatterlayer, ...
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

# Streamlit's default timeouts are generous because CI shares two cores with a server and a browser.
TIMEOUT_MS = 30_000


def chromium_executable() -> str | None:
    """The Chromium to drive: $CHROMIUM_PATH, then Debian's, else None (= Playwright's own build)."""
    for candidate in (os.environ.get("CHROMIUM_PATH"), "/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("chromium")
    return found


def wait_for_app_run(page: Page, initial_wait_ms: int = 250, timeout_ms: int = TIMEOUT_MS) -> None:
    """Wait until the current script run has finished and its elements are rendered.

    Right after an interaction the app may still report ``notRunning`` for a moment before the
    rerun starts, hence the short initial wait (the same trick as Streamlit's e2e suite). Tests
    that change an input should additionally wait for the visible result they expect.
    """
    page.wait_for_timeout(initial_wait_ms)
    page.locator(APP_CONNECTED).wait_for(state="attached", timeout=timeout_ms)
    page.locator(APP_IDLE).wait_for(state="attached", timeout=timeout_ms)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout_ms)


def wait_for_charts(page: Page, minimum: int = 1, timeout_ms: int = TIMEOUT_MS) -> Locator:
    """Wait until at least ``minimum`` Plotly charts are on the page and every one is drawn.

    "Drawn" means Plotly laid the figure out (``_fullLayout``), created its SVG and put at least one
    trace into a trace layer (cartesian, heatmap, polar, pie, table, ...). Returns the chart locator.
    """
    wait_for_app_run(page, initial_wait_ms=0, timeout_ms=timeout_ms)
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
            page.wait_for_timeout(300)  # let Plotly's resize handlers redraw
        try:
            page.screenshot(path=str(path), animations="disabled")
        finally:
            if tall != size["height"]:
                page.set_viewport_size(size)
    else:
        page.screenshot(path=str(path), animations="disabled")
    return path

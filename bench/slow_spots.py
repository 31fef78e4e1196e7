"""Issue 24, point 11: the slow spots a learner meets, each timed from the click (or the address) to a
settled page, against the one-chart page (bench/one_chart_app.py) measured in the same run.

Two servers side by side, one headless Chromium at 1366×768: ``streamlit run app.py`` and
``streamlit run bench/one_chart_app.py``. Every spot is measured ``--runs`` times in a new browser
context (a new session, as a student opening a link), the spots interleaved and their order rotated,
after one unmeasured warm-up round (the servers' caches then hold what every later visitor finds).
"Settled": the script run has ended, every Plotly chart is drawn, and nothing in the page has changed
for 300 ms; the time is that of the last change. The spots:

* ``one_chart``: the one-chart page's first load (the yardstick: Streamlit + Plotly, nothing of ours);
* ``first_load``: the playground's first load (``/``);
* ``esc_presenter``: Esc in presenter mode (opened at ``/?present=1&step=3``) until the page is back;
* ``pretrained``: the playground's "pretrained" switch (all-MiniLM-L6-v2) until its view is drawn;
* ``decoder``: the sidebar link to the decoder page from the playground;
* ``lab_<name>``: the sidebar link to each lab from the playground.

It prints medians, each spot's ratio to ``one_chart``, and (unless ``--no-cold``) the cold start of
both apps from bench/cold_start.py with its ratio (target <= 1.3x).

    .venv/bin/python bench/slow_spots.py                 # 3 runs per spot
    .venv/bin/python bench/slow_spots.py --runs 1 --no-cold --spots first_load decoder
    .venv/bin/python bench/slow_spots.py --compare /tmp/old   # before/after

Servers run with OPENBLAS_NUM_THREADS=1 (see bench/harness.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cold_start import cold_start  # noqa: E402
from harness import ROOT  # noqa: E402

sys.path.insert(0, str(ROOT))
from harness import ALL_CHARTS_DRAWN_JS, launch_browser, machine, start_server, stop_server  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from attention_ui.i18n import translate  # noqa: E402

QUIET_MS = 300
PRETRAINED = translate("en", "pretrained.weights_pretrained")  # the switch's option
TARGET_COLD_RATIO = 1.3
# each lab by a widget only it has (its sidebar's sentence or first control)
LAB_READY = {
    "masks": ".st-key-masks_text",
    "multi-head": ".st-key-multihead_text",
    "cost": ".st-key-cost_text",
    "block": ".st-key-block_text",
    "lookalikes": ".st-key-lookalikes_text_a",
    "positions": ".st-key-positions_text",
    "inference": ".st-key-inference_text",
}
LABS = tuple(LAB_READY)
TIMEOUT_MS = 90_000
# Installed before any page script: the time of the last change anywhere in the document.
WATCH_JS = """
(() => {
  window.__lastMut = performance.now();
  window.__ranAt = -1;
  const seen = () => {
    window.__lastMut = performance.now();
    const app = document.querySelector('[data-testid="stApp"]');
    if (app && app.getAttribute('data-test-script-state') === 'running') window.__ranAt = performance.now();
  };
  const start = () => new MutationObserver(seen)
    .observe(document.documentElement, {subtree: true, childList: true, attributes: true, characterData: true});
  if (document.documentElement) start(); else document.addEventListener('DOMContentLoaded', start);
})();
"""
SETTLED_JS = """
([t0, minimum, quiet, ready]) => {
  if (ready && !document.querySelector(ready)) return false;
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  if (document.querySelector('.st-key-pg_rest_pending')) return false;  // the playground's steps 2-11 to come
  if (!(ALL_DRAWN)(minimum)) return false;
  // a run was seen after t0, or the spot's own sign is there (a fast run may never show "running")
  return (ready || window.__ranAt > t0) && window.__lastMut > t0 && performance.now() - window.__lastMut > quiet;
}
""".replace("ALL_DRAWN", ALL_CHARTS_DRAWN_JS)


def settle(page, t0: float, charts: int, ready: str | None = None) -> float:
    """Seconds from ``t0`` (the page's performance.now()) to the last change of the settled page
    (``ready``: a selector the settled page has, e.g. the new page's first widget)."""
    page.wait_for_function(SETTLED_JS, arg=[t0, charts, QUIET_MS, ready], polling=50, timeout=TIMEOUT_MS)
    return (page.evaluate("window.__lastMut") - t0) / 1000


def fresh(browser):
    context = browser.new_context(locale="en-US", viewport={"width": 1366, "height": 768})
    context.add_init_script(WATCH_JS)
    page = context.new_page()
    page.set_default_timeout(180_000)
    return context, page


def load(browser, url: str, charts: int = 1) -> float:
    context, page = fresh(browser)
    try:
        page.goto(url)
        return settle(page, 0.0, charts)  # from the navigation's start
    finally:
        context.close()


def after(browser, url: str, action, charts: int = 1, ready: str | None = None) -> float:
    """Open ``url``, let it settle, then time ``action(page)`` until ``ready`` is there and all settled."""
    context, page = fresh(browser)
    try:
        page.goto(url)
        settle(page, 0.0, 1)
        t0 = page.evaluate("performance.now()")
        action(page)
        return settle(page, t0, charts, ready)
    finally:
        context.close()


def sidebar(path: str):
    return lambda page: page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').click()


def app_spots(app: str, tag: str = "") -> dict:
    """name -> function(browser) -> seconds, for the app served at ``app``."""
    out = {
        "first_load": lambda b: load(b, app + "/", 10),
        "esc_presenter": lambda b: after(
            b, app + "/?present=1&step=3", lambda p: p.keyboard.press("Escape"), 10
        ),
        "pretrained": lambda b: after(
            b,
            app + "/",
            lambda p: p.locator(".st-key-pg_weights").get_by_text(PRETRAINED, exact=True).click(),
            5,
        ),
        "decoder": lambda b: after(b, app + "/", sidebar("decoder"), 8),
    }
    for lab in LABS:
        out[f"lab_{lab}"] = lambda b, lab=lab: after(b, app + "/", sidebar(lab), 2, LAB_READY[lab])
    return {name + tag: spot for name, spot in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--spots", nargs="*", default=None, help="only these (one_chart is always measured)")
    ap.add_argument("--no-cold", action="store_true", help="skip the two cold starts")
    ap.add_argument(
        "--compare",
        type=Path,
        default=None,
        help="a copy of the app (e.g. an older commit) measured alongside",
    )
    args = ap.parse_args()
    t_start = time.perf_counter()
    loads = [f"{x:.1f}" for x in __import__("os").getloadavg()]
    app_proc, app = start_server("app.py", "slow-spots-app")
    one_proc, one = start_server("bench/one_chart_app.py", "slow-spots-one")
    table = {"one_chart": lambda b: load(b, one + "/"), **app_spots(app)}
    old_proc = None
    if args.compare:
        old_proc, old = start_server("app.py", "slow-spots-old", cwd=args.compare.resolve())
        table |= app_spots(old, " (old)")
    wanted = lambda n: not args.spots or n.removesuffix(" (old)") in args.spots  # noqa: E731
    names = ["one_chart", *[n for n in table if n != "one_chart" and wanted(n)]]
    times: dict[str, list[float]] = {n: [] for n in names}
    cold: dict[str, float] = {}
    try:
        with sync_playwright() as pw:
            browser = launch_browser(pw)
            for name in names:  # warm-up: the servers' caches, Chromium's
                try:
                    table[name](browser)
                except Exception as err:  # noqa: BLE001
                    print(f"{name}: warm-up did not settle ({type(err).__name__})", flush=True)
            for i in range(args.runs):
                k = i % len(names)
                for name in names[k:] + names[:k]:
                    try:
                        times[name].append(table[name](browser))
                    except Exception as err:  # noqa: BLE001 - a spot that never settled is reported, not fatal
                        print(f"{name}: did not settle ({type(err).__name__})", flush=True)
                    print(
                        f"  {name:24s} {times[name][-1] if times[name] else float('nan'):6.2f} s", flush=True
                    )
            if not args.no_cold:
                for proc in (app_proc, one_proc, old_proc):  # the cold starts run alone
                    if proc is not None:
                        stop_server(proc)
                for script in ("app.py", "bench/one_chart_app.py"):
                    cold[script] = cold_start(browser, script)[1]
            browser.close()
    finally:
        for proc in (app_proc, one_proc, old_proc):
            if proc is not None:
                stop_server(proc)
    base = statistics.median(times["one_chart"])
    for name in names:
        if not times[name]:
            continue
        med = statistics.median(times[name])
        runs = ", ".join(f"{x:.2f}" for x in times[name])
        print(f"{name:18s} {med:6.2f} s  {med / base:5.2f}x one_chart   runs: {runs}")
    if cold:
        a, o = cold["app.py"], cold["bench/one_chart_app.py"]
        verdict = "ok" if a / o <= TARGET_COLD_RATIO else "OVER"
        print(
            f"cold start: app.py {a:.2f} s, one_chart_app.py {o:.2f} s, ratio {a / o:.2f}x "
            f"(target <= {TARGET_COLD_RATIO}x) {verdict}"
        )
    print(
        f"medians of {args.runs} runs after a warm-up, 1366x768; load average at start {' '.join(loads)}, "
        f"at end {machine()}; servers with OPENBLAS_NUM_THREADS=1; {time.perf_counter() - t_start:.0f} s in all"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

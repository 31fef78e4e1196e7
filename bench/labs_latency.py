"""Issue 14's speed target: a widget change on the positions and inference labs redraws within 1.3×
of the playground's change latency, measured side by side in one run.

One ``streamlit run app.py`` server, one Chromium, three pages: the playground (the start page, its
default sentence), ``/positions`` and ``/inference`` (their default sentences). On each page the script
changes the seed ``--changes`` times, interleaved (playground, positions, inference, then rotated), and
times every change the way ``page_latency.py`` does (from the Enter that commits the seed until the
run has finished, every chart is drawn and nothing has changed for 300 ms). It prints the medians and
each lab's ratio to the playground.

    .venv/bin/python bench/labs_latency.py               # 10 changes per page
    .venv/bin/python bench/labs_latency.py --changes 1   # a quick look

Servers run with OPENBLAS_NUM_THREADS=1 (see bench/harness.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ALL_CHARTS_DRAWN_JS, launch_browser, machine, start_server, stop_server  # noqa: E402
from page_latency import Target  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

PAGES = (("playground", "/"), ("positions", "/positions"), ("inference", "/inference"))
# Charts each page draws with its defaults; every timed change waits for all of them (on a busy machine
# the first load can be counted before the last charts exist).
CHARTS = {"playground": 11, "positions": 4, "inference": 4}
TARGET_RATIO = 1.3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", type=int, default=10)
    args = ap.parse_args()
    t_start = time.perf_counter()
    proc, url = start_server("app.py", "labs")
    times: dict[str, list[float]] = {name: [] for name, _ in PAGES}
    charts: dict[str, int] = {}
    try:
        with sync_playwright() as pw:
            browser = launch_browser(pw)
            targets = [Target(browser, name, url + path) for name, path in PAGES]
            for tg in targets:
                tg.page.wait_for_function(ALL_CHARTS_DRAWN_JS, arg=CHARTS[tg.name], timeout=180_000)
                tg.charts = CHARTS[tg.name]
                tg.change_seed()  # warm-up: first figures of this shape, caches
                charts[tg.name] = tg.page.locator('[data-testid="stPlotlyChart"]').count()
            for i in range(args.changes):
                k = i % len(targets)
                for tg in targets[k:] + targets[:k]:
                    ms, _ = tg.change_seed()
                    times[tg.name].append(ms)
            for tg in targets:
                tg.close()
            browser.close()
    finally:
        stop_server(proc)
    base = statistics.median(times["playground"])
    print(f"playground  {base:7.0f} ms  ({charts['playground']} charts)")
    for name, _ in PAGES[1:]:
        med = statistics.median(times[name])
        verdict = "ok" if med / base <= TARGET_RATIO else "OVER"
        print(
            f"{name:11s} {med:7.0f} ms  ({charts[name]} charts)  ratio {med / base:5.2f}x "
            f"(target <= {TARGET_RATIO}x) {verdict}"
        )
    print(
        f"medians of {args.changes} seed changes per page, interleaved; machine: {machine()}; "
        f"server with OPENBLAS_NUM_THREADS=1; {time.perf_counter() - t_start:.0f} s in all"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Issue 14, speed: a widget change on the block page and on the cost page against the playground's
seed change, measured side by side in one browser on one server (ratio target <= 1.3x).

One ``streamlit run app.py`` serves all three pages; each gets its own browser context. Changes are
interleaved (playground, lab, lab, playground, ...) and timed like ``bench/page_latency.py`` (from the
Enter that commits the new value until the run has finished, every chart is drawn and the page has
been quiet for 300 ms). Block page: its seed (every figure is redrawn). Cost page: the number of heads
of section 2 (the whole page reruns; the cached sections are not recomputed). The timing sweeps run
only on a button press and are not part of this.

    .venv/bin/python bench/lab_latency.py              # 8 changes per page
    .venv/bin/python bench/lab_latency.py --changes 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import launch_browser, machine, start_server, stop_server  # noqa: E402
from page_latency import Target  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

# page url path -> (input label, values to cycle through)
LABS = {"block": ("Seed", [str(k) for k in range(1, 40)]), "cost": ("Heads", [str(k) for k in range(2, 40)])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", type=int, default=8)
    args = ap.parse_args()
    proc, base = start_server("app.py", "lab-latency")
    try:
        with sync_playwright() as pw:
            browser = launch_browser(pw)
            print(f"machine: {machine()}")
            for lab, (label, values) in LABS.items():
                pg = Target(browser, "playground", base + "/")
                target = Target(browser, lab, f"{base}/{lab}")
                steps = iter(values)
                pg.change_seed()  # warm-up
                target.commit(label, next(steps))
                times = {"playground": [], lab: []}
                for i in range(args.changes):
                    order = ("pg", "lab") if i % 2 == 0 else ("lab", "pg")
                    for who in order:
                        if who == "pg":
                            times["playground"].append(pg.change_seed()[0])
                        else:
                            times[lab].append(target.commit(label, next(steps))[0])
                pg_ms, lab_ms = statistics.median(times["playground"]), statistics.median(times[lab])
                print(
                    f"{lab:>6}: median {lab_ms:7.0f} ms ({label} change, {target.charts} charts) | playground "
                    f"{pg_ms:7.0f} ms (seed change, {pg.charts} charts) | ratio {lab_ms / pg_ms:.2f}x"
                )
                pg.close()
                target.close()
            browser.close()
    finally:
        stop_server(proc)


if __name__ == "__main__":
    main()

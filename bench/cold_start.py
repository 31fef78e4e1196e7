"""Issue 6, target 6: cold start, from ``streamlit run app.py`` to the first chart drawn (target < 3 s).

Chromium is launched first (not timed). Each run starts a fresh server, polls its health endpoint
every 50 ms, opens the start page (the playground) as soon as it answers, and stops the clock when
the first Plotly chart has its SVG and a drawn trace (and it reports, as "whole first page", when every
chart of the first page is drawn: the playground draws step 1 first on a session's first view). For context the same is measured, interleaved
with the app's runs, for the floor app (bench/floor_app.py: the start page's 11 charts from
precomputed arrays, Streamlit + Plotly with nothing of ours) and for bench/one_chart_app.py (a title
and one 6×6 heatmap: the least a Streamlit page with a Plotly chart can take here).

    .venv/bin/python bench/cold_start.py            # 5 runs each, medians
    .venv/bin/python bench/cold_start.py --smoke    # 1 run of the app (CI)
    .venv/bin/python bench/cold_start.py --compare /tmp/old   # also app.py of another tree, interleaved
                                                    # (e.g. `git archive <commit> | tar -x -C /tmp/old`)

Servers run with OPENBLAS_NUM_THREADS=1 (see bench/harness.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ALL_CHARTS_DRAWN_JS, cold_start_page, launch_browser, machine  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

# The whole first page: every chart it draws drawn and no step still to come (the playground draws
# step 1 first on a session's first view, attention_ui/playground/first_screen.py).
PAGE_DONE_JS = """
(minimum) => !document.querySelector('.st-key-pg_rest_pending') && (ALL_DRAWN)(minimum)
""".replace("ALL_DRAWN", ALL_CHARTS_DRAWN_JS)
PAGE_CHARTS = {"app.py": 11, "bench/floor_app.py": 11, "bench/one_chart_app.py": 1}


def cold_start(
    browser, script: str, whole: list[float] | None = None, cwd: Path | None = None
) -> tuple[float, float]:
    """Seconds from Popen to (healthy, first chart drawn); with ``whole``, the seconds to the whole
    first page drawn (PAGE_CHARTS charts, nothing pending) are appended to it. ``cwd``: the tree the
    script is run from (default: this one)."""
    with cold_start_page(browser, script, "bench-cold-start.log", cwd) as (page, t0, t_healthy, t_first):
        if whole is not None:
            charts = PAGE_CHARTS.get(script, 1)
            page.wait_for_function(PAGE_DONE_JS, arg=charts, polling=50, timeout=120_000)
            whole.append(time.perf_counter() - t0)
        return t_healthy, t_first


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--compare", type=Path, help="another tree whose app.py runs too, interleaved")
    ap.add_argument("--no-floor", action="store_true", help="leave bench/floor_app.py out")
    args = ap.parse_args()
    runs = 1 if args.smoke else args.runs
    scripts = ["app.py"] if args.smoke else ["app.py", "bench/floor_app.py", "bench/one_chart_app.py"]
    if args.no_floor and not args.smoke:
        scripts.remove("bench/floor_app.py")
    trees = {s: None for s in scripts}
    if args.compare:
        other = f"app.py ({args.compare})"
        scripts.insert(1, other)
        trees[other] = args.compare.resolve()
    res: dict[str, list[tuple[float, float]]] = {s: [] for s in scripts}
    whole: dict[str, list[float]] = {s: [] for s in scripts}
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        for i in range(runs):
            for script in scripts[i % len(scripts) :] + scripts[: i % len(scripts)]:  # rotate the order
                run_script = "app.py" if trees[script] else script
                res[script].append(cold_start(browser, run_script, whole[script], trees[script]))
        browser.close()
    for script, rows in res.items():
        healthy_s = statistics.median(h for h, _ in rows)
        chart_s = statistics.median(c for _, c in rows)
        runs_txt = ", ".join(f"{c:.2f}" for _, c in rows)
        target = "   (target < 3 s)" if script == "app.py" else ""
        print(
            f"{script:24s} server healthy {healthy_s:5.2f} s   first chart drawn {chart_s:5.2f} s{target}   runs: {runs_txt}"
            f"   whole first page {statistics.median(whole[script]):5.2f} s"
        )
    if "bench/one_chart_app.py" in res:
        base = statistics.median(c for _, c in res["bench/one_chart_app.py"])
        for script, rows in res.items():
            ratio = statistics.median(c for _, c in rows) / base
            print(
                f"{script:24s} first chart drawn / one-chart page: {ratio:.2f}x (target <= 1.3x for app.py)"
            )
    if "bench/one_chart_app.py" in res:  # per run: each app's time over the one-chart page's of that round
        base_runs = [c for _, c in res["bench/one_chart_app.py"]]
        for script, rows in res.items():
            if script != "bench/one_chart_app.py":
                per = [c / b for (_, c), b in zip(rows, base_runs, strict=True)]
                print(f"{script:24s} per round / one-chart: " + ", ".join(f"{r:.2f}" for r in per))
    print(f"medians of {runs} runs; machine: {machine()}; servers with OPENBLAS_NUM_THREADS=1")
    return 0


if __name__ == "__main__":
    sys.exit(main())

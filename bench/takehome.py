"""Issue 45: the offline lesson and the SCORM package — how long they take to build, how big the
lesson is, and how long the lesson takes to open in Chromium until every chart is drawn.

Targets: the lesson opens (every chart drawn) in ≤ 2 s, is ≤ 6 MB; building the lesson or the SCORM
zip takes ≤ 3 s from the press. The build is timed as the download buttons run it (the same
functions, attention_ui.takehome.build); the open is timed in a fresh Chromium page per repeat, from
navigation start to the last chart's ``Plotly.newPlot`` promise (``data-drawn``), with every network
request refused and counted (there must be none). ``main_thread_s``: the renderer main thread's busy
time until then (CDP Performance ``TaskDuration``: the tasks' wall time, so a loaded machine still
stretches it; compare builds on a quiet machine, or by thread time in a trace).

    python bench/takehome.py                  # the playground's default sentence and a 24-token one, en and ja
    python bench/takehome.py --smoke          # one build and one open, to check the script works
    python bench/takehome.py --json           # one JSON object on stdout
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from attention_core import AttentionConfig, trace_text  # noqa: E402
from attention_ui.i18n import Translator  # noqa: E402
from attention_ui.takehome import build  # noqa: E402

LONG = " ".join(["the cat sat on the mat and looked at the dog"] * 2 + ["while it slept"])

_DRAWN_JS = """() => {
  const charts = document.querySelectorAll('.chart[data-figure]');
  const drawn = document.querySelectorAll('.chart[data-drawn="1"]');
  return charts.length > 0 && drawn.length === charts.length ? performance.now() : 0;
}"""


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def time_builds(t, text: str, config: AttentionConfig, repeats: int) -> dict:
    trace = trace_text(text, config)
    lesson_s, scorm_s, size = [], [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        page = build.playground_lesson(t, trace, text)
        t1 = time.perf_counter()
        build.scorm_zip(t, trace, text)
        t2 = time.perf_counter()
        lesson_s.append(t1 - t0)
        scorm_s.append(t2 - t1)
        size = len(page.encode("utf-8"))
    return {"n": trace.n, "lesson_build_s": _median(lesson_s), "scorm_build_s": _median(scorm_s),
            "lesson_bytes": size, "page": page}  # fmt: skip


def time_open(browser, path: Path, repeats: int) -> dict:
    from st_browser import new_context

    opens, cpu, requests, charts = [], [], 0, 0
    for _ in range(repeats):
        context = new_context(browser)
        seen: list[str] = []
        context.route(
            re.compile(r"^(?!file:).*"),
            lambda route, seen=seen: (seen.append(route.request.url), route.abort()),
        )
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        page.goto(path.as_uri())
        handle = page.wait_for_function(_DRAWN_JS, timeout=60_000)
        opens.append(handle.json_value() / 1000)
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        cpu.append(metrics["TaskDuration"])
        charts = page.locator(".chart[data-drawn='1']:has(svg.main-svg)").count()
        requests += len(seen)
        context.close()
    return {
        "open_s": _median(opens),
        "open_max_s": max(opens),
        "main_thread_s": _median(cpu),
        "requests": requests,
        "charts_with_svg": charts,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    repeats = 1 if args.smoke else args.repeats
    cases = [("default", None, AttentionConfig())]
    if not args.smoke:
        cases.append(
            ("24 tokens, causal, 4 heads", LONG, AttentionConfig(mask="causal", heads=4, d_model=32))
        )
    langs = ("en",) if args.smoke else ("en", "ja")
    results = []
    from playwright.sync_api import sync_playwright
    from st_browser import CHROMIUM_ARGS, chromium_executable

    with sync_playwright() as pw, tempfile.TemporaryDirectory() as tmp:
        browser = pw.chromium.launch(headless=True, executable_path=chromium_executable(), args=CHROMIUM_ARGS)
        try:
            for name, text, config in cases:
                for lang in langs:
                    t = Translator(lang)
                    sentence = text or t("playground.default_text")
                    built = time_builds(t, sentence, config, repeats)
                    path = Path(tmp) / f"lesson_{lang}.html"
                    path.write_text(built.pop("page"), encoding="utf-8")
                    results.append({"case": name, "lang": lang, **built, **time_open(browser, path, repeats)})
        finally:
            browser.close()
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"repeats": repeats, "load": load, "results": results}))
        return 0
    print(f"take-home files, median of {repeats}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for r in results:
        print(
            f"  {r['case']:28s} {r['lang']} n={r['n']:3d}  lesson {r['lesson_bytes'] / 2**20:5.2f} MB  "
            f"build lesson {r['lesson_build_s']:5.2f} s  SCORM zip {r['scorm_build_s']:5.2f} s  "
            f"open {r['open_s']:5.2f} s (max {r['open_max_s']:5.2f} s, main thread {r['main_thread_s']:5.2f} s)  charts {r['charts_with_svg']}  "
            f"requests {r['requests']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

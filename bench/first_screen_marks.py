"""Where a cold start's time goes in the browser: timing marks of the first view (issue 24, point 11).

Like bench/cold_start.py (a fresh server per run, its health polled, the page opened as soon as it
answers), but an init script records, in the page's own clock (ms after navigation start):
- ``ws_open`` and every websocket message (time, bytes): when the server's deltas arrive;
- the first appearance of what the first screen shows (sidebar navigation, widgets, the title, the
  first formula, the first chart element, its Plotly div, its first drawn trace);
- when Plotly's chunk was requested and received (resource timing);
- the main thread's long tasks (> 50 ms) before the first trace, summed.

Each variant is ``[DIR:]SCRIPT``: SCRIPT run from DIR (default: this tree), e.g. a ``git archive``
copy of an older commit, so two trees are compared interleaved in one run:

    .venv/bin/python bench/first_screen_marks.py --runs 5 app.py /tmp/old:app.py bench/one_chart_app.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ROOT, cold_start_page, launch_browser, machine  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

MARKS = {
    "nav": '[data-testid="stSidebarNav"]',
    "widget": '[data-testid="stSidebar"] [data-testid="stSelectbox"]',
    "title": '[data-testid="stMain"] h1',
    "katex": '[data-testid="stMain"] .katex',
    "chart_el": '[data-testid="stMain"] [data-testid="stPlotlyChart"]',
    "plotly_div": '[data-testid="stMain"] .js-plotly-plot',
    "trace": '[data-testid="stMain"] .js-plotly-plot .mlayer > *',
}

INIT_JS = """
(() => {
  const marks = (window.__marks = {});
  const msgs = (window.__msgs = []);
  const tasks = (window.__tasks = []);
  const mark = (k) => { if (!(k in marks)) marks[k] = performance.now(); };
  const WS = window.WebSocket;
  window.WebSocket = new Proxy(WS, {
    construct(target, args) {
      const ws = new target(...args);
      ws.addEventListener("open", () => mark("ws_open"));
      ws.addEventListener("message", (e) => {
        const d = e.data;
        msgs.push([performance.now(), d.size || d.byteLength || d.length || 0]);
      });
      return ws;
    },
  });
  const sel = SELECTORS;
  const check = () => {
    for (const [k, s] of Object.entries(sel)) if (!(k in marks) && document.querySelector(s)) mark(k);
  };
  new MutationObserver(check).observe(document, { childList: true, subtree: true });
  try {
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) tasks.push([e.startTime, e.duration]);
    }).observe({ type: "longtask", buffered: true });
  } catch (e) {}
})();
""".replace("SELECTORS", json.dumps(MARKS))

COLLECT_JS = """() => {
  const plotly = performance.getEntriesByType("resource").find((e) => e.name.includes("PlotlyChart"));
  return {origin: performance.timeOrigin, marks: window.__marks, msgs: window.__msgs, tasks: window.__tasks,
          plotly_req: plotly ? plotly.startTime : null, plotly_got: plotly ? plotly.responseEnd : null};
}"""


DUMP = False


def one_run(browser, variant: str, path: str) -> dict[str, float]:
    where, _, script = variant.rpartition(":")
    cwd = Path(where) if where else ROOT
    start = cold_start_page(browser, script, "bench-first-screen-marks.log", cwd, path, INIT_JS, variant)
    with start as (page, _, t_goto, t_first):
        got = page.evaluate(COLLECT_JS)
    if DUMP:
        print(
            variant,
            "origin",
            got["origin"] / 1000,
            "msgs:",
            [(round(t), n) for t, n in got["msgs"]],
            flush=True,
        )
    m = got["marks"]
    trace = m.get("trace", float("nan"))
    msgs = [t for t, _ in got["msgs"]]
    before = [(s, d) for s, d in got["tasks"] if s < trace]
    row = {"healthy→goto": t_goto, "first chart (s)": t_first, "origin": got["origin"] / 1000}
    row.update({k: m.get(k, float("nan")) for k in ("ws_open", *MARKS)})
    row["msg first"] = msgs[0] if msgs else float("nan")
    row["msgs before trace"] = sum(1 for t in msgs if t < trace)
    row["last msg before trace"] = max((t for t in msgs if t < trace), default=float("nan"))
    row["plotly req"] = got["plotly_req"] or float("nan")
    row["plotly got"] = got["plotly_got"] or float("nan")
    row["long tasks before trace (ms)"] = sum(d for _, d in before)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="+", help="[DIR:]SCRIPT")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--path", default="/")
    ap.add_argument("--each", action="store_true", help="print every run, not only medians")
    ap.add_argument("--dump", action="store_true", help="print every websocket message (ms, bytes)")
    args = ap.parse_args()
    global DUMP
    DUMP = args.dump
    rows: dict[str, list[dict[str, float]]] = {v: [] for v in args.variants}
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        for i in range(args.runs):
            order = args.variants[i % len(args.variants) :] + args.variants[: i % len(args.variants)]
            for v in order:
                rows[v].append(one_run(browser, v, args.path))
                if args.each:
                    print(v, {k: round(x, 2) for k, x in rows[v][-1].items()}, flush=True)
        browser.close()
    keys = list(next(iter(rows.values()))[0])
    width = max(len(v) for v in args.variants)
    print(
        f"{'mark (ms after navigation, medians)':36s}" + "".join(f"{v[-width:]:>{width + 2}s}" for v in rows)
    )
    for k in keys:
        cells = []
        for v in rows:
            vals = [r[k] for r in rows[v] if r[k] == r[k]]
            cells.append(f"{statistics.median(vals):{width + 2}.2f}" if vals else f"{'-':>{width + 2}s}")
        print(f"{k:36s}" + "".join(cells))
    base = args.variants[-1]
    b = statistics.median(r["first chart (s)"] for r in rows[base])
    for v in rows:
        per = [r["first chart (s)"] for r in rows[v]]
        print(
            f"{v:{width}s} first chart / {base}: {statistics.median(per) / b:.2f}x   runs: "
            + ", ".join(f"{x:.2f}" for x in per)
        )
    print(f"{args.runs} runs each, interleaved; machine: {machine()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Issue 6, targets 2-4: playground latency and bytes per rerun in a real browser, against a floor app.

Two servers run side by side: ``streamlit run app.py`` (the playground is the start page) and
``streamlit run bench/floor_app.py`` (same number of heatmaps, same shapes, same layout and colour
scales, drawn from precomputed arrays). One Chromium drives both. For each scenario the script
changes the seed control ``--changes`` times on each app, interleaved (playground, floor, floor,
playground, ...), and for every change measures

* latency: from the Enter key that commits the new seed (timestamped in the page) until the app
  reports ``data-test-script-state="notRunning"``, every Plotly chart has its SVG and a drawn trace,
  and nothing in the main area has changed for 300 ms; the latency ends at the last change seen;
* bytes: the sum of the websocket frames the server sent during that change.

It prints absolute medians, the playground/floor ratio (target <= 1.3x) and bytes per rerun.
Scenarios: ``default`` (the default sentence, 6 tokens), ``n128`` and ``n256`` (d_model 16, 2 heads, no mask, as
the playground starts; beyond two heads at 128 tokens the all-heads figure is drawn on request, so n256
draws 10 charts),
``n256all`` (256 tokens with that figure switched on) and ``n256causal`` (256 tokens with a causal mask: two
more n×n maps). The last two are not run by default.

    .venv/bin/python bench/page_latency.py                      # 10 changes per app and scenario
    .venv/bin/python bench/page_latency.py --scenarios n256 --changes 15
    .venv/bin/python bench/page_latency.py --smoke              # 1 change, default scenario (CI)

Servers run with OPENBLAS_NUM_THREADS=1 (see bench/harness.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ALL_CHARTS_DRAWN_JS, ROOT, launch_browser, machine, start_server, stop_server  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

# scenario -> (tokens, mask, all heads switched on). Without a mask (the playground's default) both apps
# draw 11 charts: X, Q, K, V, raw, scaled, weights, head out, all heads, concat, output; with one, also
# the mask and the masked scores (13). Beyond two heads at 128 tokens the all-heads figure is drawn only
# on request (one chart fewer) unless the scenario switches it on. Each target waits for as many charts
# as it had before the change.
SCENARIOS = {
    "default": (6, "none", False),
    "n128": (128, "none", False),
    "n256": (256, "none", False),
    "n256all": (256, "none", True),
    "n256causal": (256, "causal", False),
}
QUIET_MS = 300

INSTALL_JS = """
() => {
    if (window.__bench) return;
    const b = window.__bench = {t0: null, sawRun: false, idleAt: null, lastMut: 0, lastSide: 0};
    const app = document.querySelector('[data-testid="stApp"]');
    new MutationObserver(() => {
        const state = app.getAttribute('data-test-script-state');
        if (state === 'running') b.sawRun = true;
        else if (state === 'notRunning' && b.sawRun && b.idleAt === null) b.idleAt = performance.now();
    }).observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
    const all = {subtree: true, childList: true, attributes: true, characterData: true};
    const main = document.querySelector('[data-testid="stMain"]');
    new MutationObserver(() => { b.lastMut = performance.now(); }).observe(main, all);
    // The seed input is in the sidebar: the page is settled only when the sidebar is quiet too.
    const side = document.querySelector('[data-testid="stSidebar"]');
    if (side) new MutationObserver(() => { b.lastSide = performance.now(); }).observe(side, all);
    document.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' && b.armed) { b.t0 = performance.now(); b.armed = false; }
    }, true);
}
"""
ARM_JS = (
    "() => { const b = window.__bench; b.armed = true; b.t0 = null; b.sawRun = false; b.idleAt = null;"
    " b.lastMut = 0; b.lastSide = 0; }"
)
# Called once the server has reported the run finished (Target.wait_run_finished). A run whose
# "running" and "notRunning" states reach the page in one render never shows "running" in the DOM
# (a fast run of the floor app), so the run itself is not detected here; idleAt is used when seen.
DONE_JS = """
([minimum, quiet]) => {
    const b = window.__bench;
    const app = document.querySelector('[data-testid="stApp"]');
    if (b.t0 === null || b.lastMut <= b.t0) return false;
    if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (!(ALL_DRAWN)(minimum)) return false;
    return performance.now() - Math.max(b.idleAt || 0, b.lastMut, b.lastSide) > quiet;
}
""".replace("ALL_DRAWN", ALL_CHARTS_DRAWN_JS)
STATE_JS = """() => {
    const b = window.__bench;
    const app = document.querySelector('[data-testid="stApp"]');
    return {t0: b.t0, sawRun: b.sawRun, idleAt: b.idleAt, lastMut: b.lastMut, lastSide: b.lastSide,
            now: performance.now(), state: app && app.getAttribute('data-test-script-state'),
            charts: document.querySelectorAll('[data-testid="stPlotlyChart"]').length,
            exception: document.querySelectorAll('[data-testid="stException"]').length};
}"""
RESULT_JS = "() => { const b = window.__bench; return Math.max(b.idleAt || 0, b.lastMut) - b.t0; }"


def words(n: int) -> str:
    """n distinct-ish word tokens (the tokenizer makes one token per word)."""
    vocab = "the cat sat on a mat while students read notes about attention before an exam".split()
    return " ".join(vocab[i % len(vocab)] for i in range(n))


class Target:
    """One app in one browser page, with a websocket byte counter."""

    def __init__(self, browser, name: str, url: str) -> None:
        self.name = name
        self.context = browser.new_context(locale="en-US", viewport={"width": 1400, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(120_000)
        self.bytes = 0
        self.frames = 0
        self.finished: list[str] = []  # the server's script_finished messages, in order
        self.retries = 0  # changes whose Enter started no run and was made again
        self.page.on("websocket", self._on_ws)
        self.page.goto(url)
        self.page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(
            state="attached"
        )
        self.page.wait_for_function(ALL_CHARTS_DRAWN_JS, arg=1)
        self.page.evaluate(INSTALL_JS)
        self.seed = 0
        self.charts = self.page.locator('[data-testid="stPlotlyChart"]').count()

    def _on_ws(self, ws) -> None:
        def received(payload) -> None:
            self.bytes += len(payload) if isinstance(payload, bytes) else len(payload.encode())
            self.frames += 1
            if isinstance(payload, bytes) and len(payload) <= 256:  # a run's end is a tiny ForwardMsg
                msg = ForwardMsg()
                try:
                    msg.ParseFromString(payload)
                except Exception:  # noqa: BLE001 - not a message we can read: not a run's end either
                    return
                if msg.WhichOneof("type") == "script_finished":
                    self.finished.append(ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished))

        ws.on("framereceived", received)

    def commit(
        self, label: str, value: str, *, textarea: bool = False, setup: bool = False
    ) -> tuple[float, int]:
        """Type ``value`` into the input labelled ``label``, commit it, wait; -> (ms, bytes received).

        A timed change waits for as many charts as the page had; a ``setup`` change (not timed) may
        change how many there are, so it waits for every chart on the page to be drawn.
        """
        minimum = 1 if setup else self.charts
        box = self.page.get_by_label(label, exact=True)
        key = "Control+Enter" if textarea else "Enter"
        for attempt in (1, 2):
            box.fill(value)
            # Enter commits what the input holds: wait until it holds the typed value (a late redraw
            # of the previous run can still reset it on a starved machine).
            expect(box).to_have_value(value, timeout=60_000)
            self.page.evaluate(ARM_JS)
            self.bytes = self.frames = 0
            mark = len(self.finished)
            box.press(key)
            if self.wait_run_finished(mark, 60 if attempt == 1 else 120):
                break
            if attempt == 2:
                state = self.page.evaluate(STATE_JS)
                state.update(server_finished=self.finished[-4:], input=box.input_value())
                raise RuntimeError(f"{self.name}: {label}={value!r} started no run; page state {state}")
            # No run: the Enter was lost (or committed an unchanged value); the clock restarts.
            self.retries += 1
        try:
            self.page.wait_for_function(DONE_JS, arg=[minimum, QUIET_MS], polling=50, timeout=120_000)
        except Exception as exc:  # say what was still missing
            state = self.page.evaluate(STATE_JS)
            state.update(server_finished=self.finished[-4:], input=box.input_value())
            raise RuntimeError(f"{self.name}: {label}={value!r} did not finish; page state {state}") from exc
        return self.page.evaluate(RESULT_JS), self.bytes

    def wait_run_finished(self, mark: int, timeout_s: float) -> bool:
        """True once the server has reported a run finished after ``mark`` (counted from the websocket,
        as tests/browser/st_browser.py does: the DOM's script state can skip "running" entirely)."""
        deadline = time.monotonic() + timeout_s
        while not any(s != "FINISHED_EARLY_FOR_RERUN" for s in self.finished[mark:]):
            if time.monotonic() > deadline:
                return False
            self.page.wait_for_timeout(50)  # Playwright delivers websocket events while it waits
        return True

    def change_seed(self) -> tuple[float, int]:
        self.seed += 1
        return self.commit("Seed", str(self.seed))

    def close(self) -> None:
        self.context.close()


def run_scenario(
    browser, pg_url: str, floor_url: str, n: int, mask: str, all_heads: bool, changes: int
) -> dict:
    pg = Target(browser, "playground", f"{pg_url}/?mask={mask}" + ("&all_heads=1" if all_heads else ""))
    if n != 6:
        pg.commit("Maximum tokens", str(max(n, 64)), setup=True)
        pg.commit("Sentence", words(n), textarea=True, setup=True)
        pg.charts = pg.page.locator('[data-testid="stPlotlyChart"]').count()
    floor = Target(
        browser,
        "floor",
        f"{floor_url}/?n={n}&d_model=16&heads=2&masked={int(mask != 'none')}&all_heads={int(all_heads)}",
    )
    for t in (pg, floor):  # warm-up change: first figures of this shape, caches
        t.change_seed()
    res = {"playground": [], "floor": []}
    for i in range(changes):
        order = (pg, floor) if i % 2 == 0 else (floor, pg)
        for t in order:
            res[t.name].append(t.change_seed())
    res["charts"] = {"playground": pg.charts, "floor": floor.charts}
    pg.close()
    floor.close()
    return res


def summary(name: str, n: int, res: dict, charts: dict) -> dict:
    pg_ms = statistics.median(ms for ms, _ in res["playground"])
    fl_ms = statistics.median(ms for ms, _ in res["floor"])
    pg_b = statistics.median(b for _, b in res["playground"])
    fl_b = statistics.median(b for _, b in res["floor"])
    return dict(
        scenario=name,
        n=n,
        changes=len(res["playground"]),
        charts=charts,
        playground_ms=round(pg_ms),
        floor_ms=round(fl_ms),
        ratio=round(pg_ms / fl_ms, 2),
        playground_bytes=int(pg_b),
        floor_bytes=int(fl_b),
        bytes_ratio=round(pg_b / fl_b, 2),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="one change, default scenario")
    ap.add_argument("--changes", type=int, default=10)
    ap.add_argument("--scenarios", nargs="+", default=["default", "n128", "n256"], choices=list(SCENARIOS))
    ap.add_argument("--json", type=Path, help="also write the summary here")
    ap.add_argument("--app-root", type=Path, help="run app.py from this checkout (e.g. an older commit)")
    args = ap.parse_args()
    if args.smoke:
        args.changes, args.scenarios = 1, ["default"]

    t_start = time.perf_counter()
    pg_proc, pg_url = start_server("app.py", "playground", cwd=args.app_root or ROOT)
    floor_proc, floor_url = start_server("bench/floor_app.py", "floor")
    rows = []
    try:
        with sync_playwright() as pw:
            browser = launch_browser(pw)
            for name in args.scenarios:
                n, mask, all_heads = SCENARIOS[name]
                res = run_scenario(browser, pg_url, floor_url, n, mask, all_heads, args.changes)
                rows.append(summary(name, n, res, res.pop("charts")))
                r = rows[-1]
                print(
                    f"{name:8s} n={n:<4d} playground {r['playground_ms']:6d} ms  floor {r['floor_ms']:6d} ms  "
                    f"ratio {r['ratio']:5.2f}x (target <= 1.3x)   bytes/rerun playground {r['playground_bytes']:>9,d}"
                    f"  floor {r['floor_bytes']:>9,d}  ({r['bytes_ratio']:.2f}x)",
                    flush=True,
                )
            browser.close()
    finally:
        stop_server(pg_proc)
        stop_server(floor_proc)
    print(
        f"medians of {args.changes} seed changes per app, interleaved; machine: {machine()}; "
        f"servers with OPENBLAS_NUM_THREADS=1; {time.perf_counter() - t_start:.0f} s in all"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

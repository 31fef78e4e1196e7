"""Resident memory a Streamlit process gains when it loads the pretrained models (issue 17 sizing).

Starts ``streamlit run bench/model_probe_app.py`` (a probe page that loads each model the way the app
does: the core's once-per-process loaders, then one short sentence), opens it in headless Chromium
and reads the server's memory after each step, in a fresh process per sequence:

* ``minilm``  then ``minilm,smollm2``  (both in one process);
* ``smollm2`` alone;
* ``gemma3`` then ``gemma3,smollm2`` (both decoders in one process).

For each step it prints the process's RSS now and its peak RSS so far (VmHWM: loading passes through
more memory than it keeps). The gain over the idle probe is what a model adds to an app process;
the app's own idle process measured 97 MB in the classroom runs (bench/RESULTS.md).

    .venv/bin/python bench/model_memory.py [--json FILE]

Then the same through the app itself (``streamlit run app.py``, the real decoder page): the first
page opened as the idle figure, then the decoder page with each model chosen in the URL, waiting
until the page has finished running (``APP_SEQUENCES``). The decoder page with Gemma 3 also
tokenizes the learner's sentence with SmolLM2 for its side-by-side table, so that step holds both.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import launch_browser, machine, start_server, stop_server  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

SEQUENCES = {
    "minilm then both": ["", "minilm", "minilm,smollm2"],
    "smollm2 alone": ["", "smollm2"],
    # issue 25: Gemma 3 alone, then both decoders in one process (the decoder page's side-by-side
    # table tokenizes the learner's sentence with both, so a process that shows it holds both)
    "gemma3 then both": ["", "gemma3", "gemma3,smollm2"],
}


SENTENCE_URL = "text=The+cat+sat+on+the+mat+because+it+was+tired"
APP_SEQUENCES = {
    "app: decoder, gemma3": ["/", f"/decoder?model=gemma3&{SENTENCE_URL}"],
    "app: decoder, smollm2 then gemma3": [
        "/", f"/decoder?model=smollm2&{SENTENCE_URL}", f"/decoder?model=gemma3&{SENTENCE_URL}",
    ],
}  # fmt: skip
SETTLED = """() => document.querySelector('[data-testid="stApp"]')
    ?.getAttribute('data-test-script-state') === 'notRunning'"""


def memory_mb(pid: int) -> tuple[float, float]:
    """(RSS now, peak RSS) of the server process, in MB (its children, if any, counted in RSS)."""
    proc = psutil.Process(pid)
    rss = sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)])
    hwm = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) * 1024
    return rss / 2**20, hwm / 2**20


def visit_probe(page, base: str, load: str) -> tuple[str, str]:
    """The probe page loading ``load``: ``-> (row label, what the page said)``."""
    page.goto(f"{base}/?load={load}")
    page.get_by_text("probe done:").wait_for()
    if page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]').count():
        raise RuntimeError(f"the probe failed for {load!r}: {page.inner_text('body')[:400]}")
    return load or "nothing (idle probe)", page.get_by_text("probe done:").inner_text()


def visit_app(page, base: str, path: str) -> tuple[str, str]:
    """One of the app's own pages, until its script run has finished: ``-> (row label, note)``."""
    page.goto(base + path)
    page.wait_for_selector('[data-testid="stApp"]')
    page.wait_for_timeout(500)  # the script run starts after the websocket opens
    page.wait_for_function(SETTLED)
    if page.locator('[data-testid="stException"]').count():
        raise RuntimeError(f"{path} raised: {page.inner_text('body')[:400]}")
    return path.split("&")[0], "app page settled"


def run_sequence(browser, script: str, steps: list[str], visit) -> list[dict]:
    """``steps`` visited in order in one fresh ``streamlit run script`` process: RSS after each, and
    the gain over the first (the idle figure)."""
    proc, base = start_server(script, "model-memory", timeout_s=120)
    rows = []
    try:
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        page = context.new_page()
        page.set_default_timeout(300_000)
        for step in steps:
            label, said = visit(page, base, step)
            rss, peak = memory_mb(proc.pid)
            rows.append({"load": label, "rss_mb": round(rss, 1), "peak_mb": round(peak, 1), "page": said})
        context.close()
    finally:
        stop_server(proc)
    idle = rows[0]["rss_mb"]
    for r in rows:
        r["gain_mb"] = round(r["rss_mb"] - idle, 1)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args()
    out = {}
    with sync_playwright() as pw:
        browser = launch_browser(pw)
        runs = [(n, "bench/model_probe_app.py", steps, visit_probe) for n, steps in SEQUENCES.items()]
        runs += [(n, "app.py", paths, visit_app) for n, paths in APP_SEQUENCES.items()]
        for name, script, steps, visit in runs:
            out[name] = run_sequence(browser, script, steps, visit)
            for r in out[name]:
                print(f"{name:18s} {r['load']:22s} RSS {r['rss_mb']:7.1f} MB  (+{r['gain_mb']:6.1f} MB over idle)  "
                      f"peak {r['peak_mb']:7.1f} MB   [{r['page']}]", flush=True)  # fmt: skip
        browser.close()
    print(f"machine: {machine()}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Soak: 500 reruns in one session must grow memory by less than 50 MB.

    .venv/bin/python bench/soak.py                    # 500 AppTest reruns in this process
    .venv/bin/python bench/soak.py --server --reruns 200   # a real server driven by Chromium

Default mode: one AppTest session of the whole app (app.py -> playground), the same script runner,
caches and session state a server uses, rerun 500 times with changing settings: a new seed, sentence,
d_model, heads or mask on every rerun, visiting the lab pages now and then, so the bounded caches
fill and evict. Memory is this process's RSS, measured after a warm-up of 50 reruns (imports,
first-time caches) and at the end; growth must stay under --limit MB.

--server: ``streamlit run`` on a loopback port and one Chromium tab changing the seed; memory is
the server process tree's RSS (this is closer to a deployment but each rerun also pays for the
browser drawing ~15 charts, so it is much slower on a busy machine).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

WORDS = "the cat sat on a mat while students read notes about attention and softmax weights".split()
MASKS = ("none", "causal", "padding", "causal+padding")
LABS = (
    "app_pages/scaling.py",
    "app_pages/masks.py",
    "app_pages/multihead.py",
    "app_pages/lookalikes.py",
)


def rss_mb(pid: int | None = None) -> float:
    return psutil.Process(pid or os.getpid()).memory_info().rss / 2**20


def soak_apptest(reruns: int, warmup: int) -> tuple[float, float, list[float]]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page("app_pages/playground.py")
    at.run()
    samples, before = [], None
    for i in range(reruns + warmup):
        if i == warmup:
            gc.collect()
            before = rss_mb()
        if i % 100 == 99:  # a visit to a lab and back, as a student would
            at.switch_page(LABS[(i // 100) % len(LABS)])
            at.run()
            at.switch_page("app_pages/playground.py")
            at.run()
        step = i % 5
        if step == 0:
            at.number_input(key="pg_seed").set_value(i % 97)
        elif step == 1:
            words = [WORDS[(i * 7 + j) % len(WORDS)] for j in range(3 + i % 12)]
            at.text_area(key="pg_text").input(" ".join(words) + f" s{i}")
        elif step == 2:
            at.number_input(key="pg_d_model").set_value((8, 16, 24, 32)[i % 4])
            at.number_input(key="pg_heads").set_value((1, 2, 4, 8)[i % 4])
        elif step == 3:
            at.selectbox(key="pg_mask").set_value(MASKS[i % 4])
        else:
            at.toggle(key="pg_tables").set_value(bool(i % 2))
        at.run()
        if at.exception:
            raise SystemExit(f"rerun {i}: the app raised {at.exception}")
        if i % 50 == 49:
            samples.append(rss_mb())
            print(f"  rerun {i + 1:4d}: RSS {samples[-1]:.0f} MB", flush=True)
    gc.collect()
    return before, rss_mb(), samples


async def soak_server(reruns: int, warmup: int) -> tuple[float, float, list[float]]:
    from classroom_load import RUN_COUNTER, finish_run, free_port, start_server, stop_server, tree_rss_mb
    from playwright.async_api import async_playwright

    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    from st_browser import CHROMIUM_ARGS, chromium_executable

    port = free_port()
    log = ROOT / "artifacts" / "logs" / "soak_server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    server = start_server(port, log, ttl=5)
    samples, before = [], None
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(
                headless=True, executable_path=chromium_executable(), args=CHROMIUM_ARGS
            )
            context = await browser.new_context(viewport={"width": 1000, "height": 700})
            await context.add_init_script(RUN_COUNTER)
            page = await context.new_page()
            await page.goto(f"http://127.0.0.1:{port}/")
            box = page.locator('[data-testid="stSidebar"] .st-key-pg_seed input')
            await box.wait_for(timeout=120_000)
            for i in range(reruns + warmup):
                if i == warmup:
                    before = tree_rss_mb(server.pid)
                n = await page.evaluate("window.__runsDone")
                await box.fill(str(i % 97 + 1 if i % 97 != (i - 1) % 97 else 0))
                await box.press("Enter")
                await finish_run(page, n, 120_000)
                if await page.locator('[data-testid="stException"]').count():
                    raise SystemExit(f"rerun {i}: the app shows an exception")
                if i % 50 == 49:
                    samples.append(tree_rss_mb(server.pid))
                    print(f"  rerun {i + 1:4d}: server RSS {samples[-1]:.0f} MB", flush=True)
            await browser.close()
        return before, tree_rss_mb(server.pid), samples
    finally:
        stop_server(server)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reruns", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--limit", type=float, default=50.0, help="allowed growth in MB")
    ap.add_argument("--server", action="store_true", help="real server + Chromium instead of AppTest")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.server:
        before, after, _ = asyncio.run(soak_server(args.reruns, args.warmup))
        what = "server process tree RSS"
    else:
        before, after, _ = soak_apptest(args.reruns, args.warmup)
        what = "AppTest process RSS"
    growth = after - before
    print(
        f"soak: {args.reruns} reruns after {args.warmup} warm-up reruns in {time.perf_counter() - t0:.0f} s"
    )
    print(
        f"{what}: before {before:.0f} MB, after {after:.0f} MB, growth {growth:+.1f} MB (limit {args.limit:.0f} MB)"
    )
    ok = growth < args.limit
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

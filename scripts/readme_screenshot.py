"""Take the README screenshot (docs/playground.png) from the real app.

    .venv/bin/python scripts/readme_screenshot.py --anchor step-softmax   # the README picture

Starts ``streamlit run app.py`` headless on a free loopback port, opens the playground in Chromium
(the same one the browser tests use), waits until the app and its Plotly charts are drawn, saves a
PNG reduced to a 256-colour palette (kept under 300 KB), and stops the server.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402  (Pillow comes with Streamlit)
from playwright.sync_api import sync_playwright  # noqa: E402
from st_browser import (  # noqa: E402
    CHARTS_FIT_JS,
    CHROMIUM_ARGS,
    chromium_executable,
    new_context,
    wait_for_app_run,
    wait_for_charts,
)

from bench.harness import server_cmd  # noqa: E402

MAX_BYTES = 300_000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise SystemExit("streamlit did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lang", choices=("en", "ja"), default="en")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "playground.png")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=860)
    parser.add_argument("--anchor", default="", help="scroll to this heading anchor first, e.g. step-softmax")
    args = parser.parse_args()

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = server_cmd("app.py", port)
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        wait_healthy(url, proc)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_executable(), args=CHROMIUM_ARGS)
            locale = "ja-JP" if args.lang == "ja" else "en-US"
            page = new_context(browser, locale=locale, width=args.width, height=args.height).new_page()
            page.goto(url + "/")
            wait_for_app_run(page)
            wait_for_charts(page)
            if args.anchor:
                page.locator(f"#{args.anchor}").scroll_into_view_if_needed()
                page.locator(f"#{args.anchor}").evaluate("e => e.scrollIntoView({block: 'start'})")
            page.wait_for_function(CHARTS_FIT_JS)  # the scroll moved nothing that is still redrawing
            raw = args.out.with_suffix(".raw.png")
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(raw), animations="disabled")
            browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)

    image = Image.open(raw).convert("RGB")
    raw.unlink()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(args.out, optimize=True)
    size = args.out.stat().st_size
    print(f"{args.out} {image.size[0]}x{image.size[1]} {size // 1024} KB")
    if size > MAX_BYTES:
        raise SystemExit(f"{args.out} is {size} bytes, over {MAX_BYTES}")


if __name__ == "__main__":
    main()

"""Shared bits of the browser benchmarks: start a Streamlit server, launch Chromium, wait for charts.

Servers run with ``OPENBLAS_NUM_THREADS=1`` (and the other BLAS thread variables): on this shared
two-core machine BLAS thread oversubscription made NumPy up to 10x slower.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))  # the browser tests' Chromium settings, shared
from st_browser import CHROMIUM_ARGS, chromium_executable  # noqa: E402

LOGS = ROOT / "artifacts" / "logs"
ONE_THREAD = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
PLOTLY_CHART = '[data-testid="stPlotlyChart"]'

# True once every Plotly chart on the page has its SVG and at least one drawn trace.
ALL_CHARTS_DRAWN_JS = """
(minimum) => {
    const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
    return charts.length >= minimum && charts.every((c) => {
        const gd = c.querySelector('.js-plotly-plot');
        return gd && gd._fullLayout && c.querySelector('.main-svg') && c.querySelector('.mlayer > *');
    });
}
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def healthy(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as response:
            return response.status == 200 and response.read().strip() == b"ok"
    except OSError:
        return False


def server_cmd(script: str, port: int, *extra: str) -> list[str]:
    """``streamlit run script`` headless on 127.0.0.1:port, no usage statistics, no file watcher
    (the benchmarks, the browser tests and the README screenshot all start the app like this)."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        script,
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        *extra,
    ]


def spawn_server(script: str, port: int, log, cwd: Path = ROOT) -> subprocess.Popen:
    """Start :func:`server_cmd` in its own process group with one BLAS thread, output to ``log``."""
    return subprocess.Popen(
        server_cmd(script, port),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, **ONE_THREAD},
    )


def start_server(
    script: str, name: str, timeout_s: float = 90, cwd: Path = ROOT
) -> tuple[subprocess.Popen, str]:
    """``streamlit run script`` on a free loopback port, in its own process group; waits until healthy."""
    LOGS.mkdir(parents=True, exist_ok=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = (LOGS / f"bench-{name}.log").open("w", encoding="utf-8")
    proc = spawn_server(script, port, log, cwd)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        if healthy(base):
            return proc, base
        time.sleep(0.1)
    stop_server(proc)
    raise RuntimeError(f"{script} did not start; see {LOGS / f'bench-{name}.log'}")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@contextmanager
def cold_start_page(
    browser,
    script: str,
    log_name: str,
    cwd: Path | None = None,
    path: str = "/",
    init_js: str | None = None,
    what: str | None = None,
) -> Iterator[tuple[object, float, float, float]]:
    """One cold start, timed from the server's spawn: a fresh browser context and page first (not
    timed; ``init_js`` added to it), then a server for ``script`` run from ``cwd`` (default: this
    tree), its health polled every 50 ms, ``path`` opened as soon as it answers, until the first chart
    is drawn. Yields ``(page, t0, seconds to healthy, seconds to the first chart)``, t0 on
    ``time.perf_counter``'s clock; the context is closed and the server stopped after. Output goes to
    ``LOGS / log_name``; ``what`` names the script in the error if it does not start.
    (bench/cold_start.py and bench/first_screen_marks.py.)"""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    LOGS.mkdir(parents=True, exist_ok=True)
    log = (LOGS / log_name).open("w", encoding="utf-8")
    context = browser.new_context(locale="en-US", viewport={"width": 1400, "height": 900})
    if init_js is not None:
        context.add_init_script(init_js)
    page = context.new_page()
    t0 = time.perf_counter()
    proc = spawn_server(script, port, log, cwd or ROOT)
    try:
        while not healthy(base):
            if proc.poll() is not None or time.perf_counter() - t0 > 120:
                raise RuntimeError(f"{what or script} did not start; see {LOGS / log_name}")
            time.sleep(0.05)
        t_healthy = time.perf_counter() - t0
        page.goto(base + path)
        page.wait_for_function(ALL_CHARTS_DRAWN_JS, arg=1, polling=50, timeout=120_000)
        yield page, t0, t_healthy, time.perf_counter() - t0
    finally:
        context.close()
        stop_server(proc)
        log.close()


def tree_cpu_s(*pids: int) -> float:
    """CPU seconds (user + system) so far of these processes and all their children, each counted
    once; a process gone (or out of reach) counts nothing. (The classroom benches.)"""
    import psutil  # only the classroom benches need it

    seen, total = set(), 0.0
    for pid in pids:
        try:
            p = psutil.Process(pid)
            procs = [p, *p.children(recursive=True)]
        except psutil.Error:
            continue
        for x in procs:
            if x.pid in seen:
                continue
            seen.add(x.pid)
            try:
                t = x.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
    return total


def launch_browser(pw):
    return pw.chromium.launch(headless=True, executable_path=chromium_executable(), args=CHROMIUM_ARGS)


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{os.cpu_count()} CPUs, {model}, load average {load:.1f}"

"""Classroom load: one Streamlit server, N students at once, each with their own sentence.

    .venv/bin/python bench/classroom_load.py            # 20 sessions x 10 control changes
    .venv/bin/python bench/classroom_load.py --smoke    # 2 sessions x 2 changes (CI)

Starts ``streamlit run app.py`` on a free loopback port (its own process group, stopped at the end),
opens one headless Chromium with one browser context per student and drives the playground like a
class would: each student types a sentence containing a unique token (``student07``), then makes
control changes (d_model, heads, mask, seed, padding, positional encoding...).

Pass criteria (exit 0 only if all hold):
  * 0 errors: no Streamlit exception box, no browser console error or page error, no timeout;
  * isolation: after every change a student's token chips and tick labels contain their own token
    and no other student's;
  * the server lets go of closed sessions: its active-session gauge (/_stcore/metrics, connected
    sessions) returns to 0. Streamlit keeps a disconnected session's state for
    server.disconnectedSessionTTL (5 s here, --ttl) so a reconnect can resume it; "after" memory
    is read once that time has passed.
Prints p50/p95 latency per change (action until the URL shows it and the run is over), and the server's memory
(RSS of the whole process tree) before the class, at the peak, and after the sessions closed.
Loopback only; bounded in time (--deadline). Figures depend on the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from playwright.async_api import Page, async_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from harness import server_cmd  # noqa: E402  (this folder is on sys.path when the script runs)
from st_browser import CHROMIUM_ARGS, chromium_executable  # noqa: E402

STUDENT = re.compile(r"student\d\d")
WORDS = ["cat", "dog", "bird", "fish", "tree", "book", "lamp", "rain", "moon", "star"]
# Control changes, cycled: (widget key, value typed into the number input) or a special action.
CHANGES = [
    ("pg_d_model", "32"),
    ("pg_heads", "4"),
    ("mask", "causal"),
    ("pg_seed", "{i}"),
    ("pg_pad", "2"),
    ("pg_d_model", "24"),
    ("pg_heads", "3"),
    ("positional", ""),
    ("pg_seed", "{i}7"),
    ("pg_pad", "0"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, log: Path, ttl: int) -> subprocess.Popen:
    cmd = server_cmd("app.py", port, "--server.disconnectedSessionTTL", str(ttl))
    with log.open("w") as fh:
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/_stcore/health"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.read().strip() == b"ok":
                    return proc
        except OSError:
            time.sleep(0.3)
    stop_server(proc)
    raise SystemExit(f"server did not start; see {log}")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def tree_rss_mb(pid: int) -> float:
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return float("nan")
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total / 2**20


def active_sessions(base: str) -> int | None:
    """Streamlit's own gauge of connected sessions, from /_stcore/metrics (None if not found)."""
    try:
        with urllib.request.urlopen(f"{base}/_stcore/metrics", timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(("active_sessions", "session_active")) and not line.startswith("#"):
            return int(float(line.split()[-1]))
    return None


@dataclass
class Student:
    index: int
    token: str
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    step: str = "start"  # the action under way, named in an error
    retries: int = 0  # changes committed a second time because no rerun started (see act)


class Sampler:
    """Samples the server tree's RSS every 0.5 s to find the peak."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._task = pid, 0.0, None

    async def _run(self) -> None:
        while True:
            self.peak = max(self.peak, tree_rss_mb(self.pid))
            await asyncio.sleep(0.5)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        if self._task:
            self._task.cancel()


# Done = the page's URL holds the new value (the app writes its whole view into the URL at the end
# of every run) and the app is not running. A run counter alone missed reruns on a starved client:
# when "started" and "finished" reach React in one batch, the state attribute never changes.
START_WAIT_S = 90  # the change is not in the URL this long after it was made: commit it again
URL_PARAM = {
    "text": "text",
    "pg_d_model": "d_model",
    "pg_heads": "heads",
    "mask": "mask",
    "pg_seed": "seed",
    "pg_pad": "pad",
    "positional": "pos",
}
SHOWS_JS = """([name, value]) => new URL(location.href).searchParams.get(name) === value"""
DONE_JS = SHOWS_JS.replace(
    "=> ",
    "=> document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state') === 'notRunning' && ",
)


async def commit(page: Page, change: tuple[str, str], student: Student) -> float:
    """Perform one change in the sidebar; returns the time the committing key or click happened."""
    key, value = change
    sidebar = page.locator('[data-testid="stSidebar"]')
    if key == "text":
        box = sidebar.locator(".st-key-pg_text textarea")
        await box.fill(value)
        t0 = time.perf_counter()
        await box.press("Control+Enter")
    elif key == "mask":  # a late redraw can close the list before it is used: open it again, like a person
        for attempt in range(3):
            await sidebar.locator(".st-key-pg_mask").click()
            option = page.locator('[role="option"]').nth(1)  # the second mask kind (causal)
            try:
                await option.wait_for(state="visible", timeout=30_000)
                t0 = time.perf_counter()
                await option.click(timeout=30_000)
                break
            except Exception:
                if attempt == 2:
                    raise
                student.retries += 1
    elif key == "positional":
        t0 = time.perf_counter()
        await sidebar.locator(".st-key-pg_positional label").click()
    else:
        box = sidebar.locator(f".st-key-{key} input")
        await box.fill(value)
        t0 = time.perf_counter()
        await box.press("Enter")
    return t0


async def act(page: Page, change: tuple[str, str], student: Student, timeout_ms: int) -> None:
    """Make one change and wait until the page shows it; records the latency from the first attempt.

    On a starved client (20 Chromium tabs on the server's own cores) a key press can land before
    the input has taken the typed value, and then no rerun starts: a student would press Enter
    again, and so does this driver when the URL does not show the new value after START_WAIT_S
    (at most twice more; each retry is counted and printed, not hidden).
    """
    key, value = change
    param = URL_PARAM[key]
    if key == "positional":  # a toggle: the expected value is the opposite of the current one
        current = await page.evaluate(f"new URL(location.href).searchParams.get('{param}')")
        value = "0" if current in (None, "1") else "1"
    elif key == "mask":
        value = "causal"
    else:
        value = value.format(i=student.index)
    t0 = await commit(page, (key, value), student)
    for attempt in range(3):
        try:
            await page.wait_for_function(SHOWS_JS, arg=[param, value], timeout=START_WAIT_S * 1000)
            break
        except Exception:
            if attempt == 2:
                raise
            student.retries += 1
            await commit(page, (key, value), student)
    await page.wait_for_function(DONE_JS, arg=[param, value], timeout=timeout_ms)
    student.latencies.append(time.perf_counter() - t0)


async def check_isolation(page: Page, student: Student, step: str, timeout_ms: int) -> None:
    main = page.locator('[data-testid="stMain"]')
    exceptions = await page.locator('[data-testid="stException"]').count()
    if exceptions:
        student.errors.append(f"{step}: {exceptions} exception box(es)")
    # The rerun is over; give the browser time to draw the weight map with this student's labels
    # (on a loaded client Plotly can lag the script by seconds). Missing after that is a failure.
    try:
        await page.wait_for_function(
            """(tok) => [...document.querySelectorAll('.st-key-pg_chart_weights g.ytick text')]
                          .some((t) => t.textContent.includes(tok))""",
            arg=student.token,
            timeout=timeout_ms,
        )
    except Exception:
        pass  # reported below as a missing token
    text = await main.inner_text()
    ticks = " ".join(await main.locator(".st-key-pg_chart_weights g.ytick text").all_text_contents())
    seen = set(STUDENT.findall(text)) | set(STUDENT.findall(ticks))
    if student.token not in STUDENT.findall(text):
        student.leaks.append(f"{step}: own token {student.token} missing from the chips")
    if student.token not in ticks:
        student.leaks.append(f"{step}: own token {student.token} missing from the tick labels")
    if seen - {student.token}:
        student.leaks.append(f"{step}: sees other students' tokens {sorted(seen - {student.token})}")


async def run_student(
    browser, base: str, student: Student, changes: int, timeout_ms: int, start_gate
) -> None:
    context = await browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    context.set_default_timeout(timeout_ms)  # fill/click wait too when the client machine is busy
    page = await context.new_page()
    page.on("console", lambda m: m.type == "error" and student.errors.append(f"console: {m.text[:200]}"))
    page.on("pageerror", lambda e: student.errors.append(f"pageerror: {str(e)[:200]}"))
    try:
        await page.goto(base + "/", timeout=timeout_ms)
        await page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(
            state="attached", timeout=timeout_ms
        )
        await page.locator(".st-key-pg_text textarea").wait_for(timeout=timeout_ms)
        await start_gate.wait()  # everyone starts typing at once, like a class told to go
        sentence = f"{student.token} reads the {WORDS[student.index % len(WORDS)]} notes"
        student.step = "sentence"
        await act(page, ("text", sentence), student, timeout_ms)
        await check_isolation(page, student, "sentence", timeout_ms)
        for c in range(changes):
            change = CHANGES[c % len(CHANGES)]
            student.step = f"change {c + 1} {change[0]}"
            await act(page, change, student, timeout_ms)
            await check_isolation(page, student, f"change {c + 1} {change[0]}", timeout_ms)
    except Exception as exc:  # a timeout or a vanished element is an error of this session
        student.errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]} (at {student.step})")
        shot = ROOT / "artifacts" / "screenshots" / f"classroom_{student.token}.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        try:  # what the student saw when it went wrong
            await page.screenshot(path=str(shot), full_page=True, timeout=30_000)
        except Exception:
            pass
    finally:
        await context.close()


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


async def main_async(args) -> dict:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = ROOT / "artifacts" / "logs" / "classroom_load_server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    server = start_server(port, log, args.ttl)
    result: dict = {"sessions": args.sessions, "changes": args.changes}
    try:
        # one warm-up visit so "before" is the idle app, not an unimported one
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(
                headless=True, executable_path=chromium_executable(), args=CHROMIUM_ARGS
            )
            warm = Student(99, "student99")
            gate = asyncio.Event()
            gate.set()
            await run_student(browser, base, warm, 0, args.timeout * 1000, gate)
            await asyncio.sleep(args.ttl + 3)
            result["rss_before_mb"] = tree_rss_mb(server.pid)
            sampler = Sampler(server.pid)
            sampler.start()
            students = [Student(i, f"student{i:02d}") for i in range(1, args.sessions + 1)]
            gate = asyncio.Event()
            t0 = time.perf_counter()
            tasks = [
                asyncio.create_task(run_student(browser, base, s, args.changes, args.timeout * 1000, gate))
                for s in students
            ]
            await asyncio.sleep(0.5)
            gate.set()
            try:
                await asyncio.wait_for(asyncio.gather(*tasks), timeout=args.deadline)
            except TimeoutError:
                for s in students:
                    s.errors.append("deadline reached")
            result["wall_s"] = time.perf_counter() - t0
            result["sessions_seen_during"] = active_sessions(base)
            await browser.close()
        sampler.stop()
        result["rss_peak_mb"] = max(sampler.peak, tree_rss_mb(server.pid))
        # Closed tabs: Streamlit drops a session once its websocket is gone for disconnectedSessionTTL.
        deadline = time.monotonic() + args.ttl + 30
        while time.monotonic() < deadline and (active_sessions(base) or 0) > 0:
            await asyncio.sleep(1)
        await asyncio.sleep(args.ttl + 2)
        result["active_sessions_after"] = active_sessions(base)
        result["rss_after_mb"] = tree_rss_mb(server.pid)
    finally:
        stop_server(server)
    lat = [x for s in students for x in s.latencies]
    result.update(
        changes_timed=len(lat),
        p50_s=pct(lat, 50),
        p95_s=pct(lat, 95),
        max_s=max(lat) if lat else float("nan"),
        retries=sum(s.retries for s in students),
        errors=[f"{s.token}: {e}" for s in students for e in s.errors],
        leaks=[f"{s.token}: {e}" for s in students for e in s.leaks],
    )
    expected = args.sessions * (args.changes + 1)
    result["passed"] = (
        not result["errors"]
        and not result["leaks"]
        and len(lat) == expected
        and result["active_sessions_after"] in (0, None)
    )
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument(
        "--changes", type=int, default=10, help="control changes per session (after the sentence)"
    )
    ap.add_argument("--smoke", action="store_true", help="2 sessions x 2 changes, for CI")
    ap.add_argument("--ttl", type=int, default=5, help="server.disconnectedSessionTTL for this run (s)")
    ap.add_argument("--timeout", type=int, default=240, help="per-step timeout (s)")
    ap.add_argument("--deadline", type=int, default=1500, help="whole class must finish within (s)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args(argv)
    if args.smoke:
        args.sessions, args.changes, args.deadline = 2, 2, 240
    r = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(r, indent=1))
    else:
        print(
            f"classroom load: {r['sessions']} sessions x {r['changes']} changes (+1 sentence each), "
            f"{r['changes_timed']} reruns timed in {r['wall_s']:.1f} s"
        )
        print(f"latency per change: p50 {r['p50_s']:.2f} s, p95 {r['p95_s']:.2f} s, max {r['max_s']:.2f} s")
        print(
            f"errors: {len(r['errors'])}; isolation failures: {len(r['leaks'])}; "
            f"changes made again (not shown after {START_WAIT_S} s, or a list closed before its option was clicked): {r['retries']}"
        )
        for line in (r["errors"] + r["leaks"])[:20]:
            print("  " + line)
        print(
            f"server RSS (process tree): before {r['rss_before_mb']:.0f} MB, peak {r['rss_peak_mb']:.0f} MB, "
            f"after close {r['rss_after_mb']:.0f} MB; active sessions after close: {r['active_sessions_after']}"
        )
        print("PASS" if r["passed"] else "FAIL")
    return 0 if r["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

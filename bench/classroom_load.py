"""Classroom load: N students at once, each with their own sentence, on one server or behind HAProxy.

    .venv/bin/python bench/classroom_load.py            # 20 sessions x 10 control changes, one server
    .venv/bin/python bench/classroom_load.py --smoke    # 2 sessions x 2 changes (CI)
    .venv/bin/python bench/classroom_load.py --proxy 2             # the same class through HAProxy, 2 processes
    .venv/bin/python bench/classroom_load.py --proxy 2 --kill-one  # ... and one process killed mid-class
    .venv/bin/python bench/classroom_load.py --proxy 2 --models minilm  # + memory with the model loaded

Starts ``streamlit run app.py`` on a free loopback port (its own process group, stopped at the end),
or with ``--proxy N`` N of them behind HAProxy (deploy/serve_class.py, the ``make serve-class``
setup), opens one headless Chromium with one browser context per student and drives the playground
like a class would: each student types a sentence containing a unique token (``student07``), then
makes control changes (d_model, heads, mask, seed, padding, positional encoding...).

Pass criteria (exit 0 only if all hold):
  * 0 errors: no Streamlit exception box, no browser console error or page error, no timeout;
  * isolation: after every change a student's token chips and tick labels contain their own token
    and no other student's;
  * the view holds: after every change the URL (which the app rewrites from the session's state at
    the end of each run) still shows every setting the student made before;
  * the server lets go of closed sessions: its active-session gauge (/_stcore/metrics, connected
    sessions) returns to 0. Streamlit keeps a disconnected session's state for
    server.disconnectedSessionTTL (5 s here, --ttl) so a reconnect can resume it; "after" memory
    is read once that time has passed.
  With --proxy, also:
  * stickiness: a student stays on the process they landed on (HAProxy's cookie), step after step;
  * with --kill-one: when half of the class's changes are done, the process with the most students is
    killed (SIGKILL). Its students must reconnect to another process (a fresh session there, rebuilt
    from the URL) and finish every change with their own view; every other student must never
    disconnect, nor change process.
Prints p50/p95 latency per change (action until the URL shows it and the run is over), how the
students spread over the processes, and each process's memory (RSS of its process tree) before the
class, at the peak and after the sessions closed, plus its CPU time (server CPU per change).
``--models minilm`` then opens one pretrained-weights page per process and reads its memory again.
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
from playwright.async_api import BrowserContext, Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))
sys.path.insert(0, str(ROOT / "deploy"))
from harness import server_cmd, tree_cpu_s  # noqa: E402  (this folder is on sys.path when the script runs)
from st_browser import CHROMIUM_ARGS, chromium_executable  # noqa: E402

T0 = time.monotonic()
STUDENT = re.compile(r"student\d\d")
WORDS = ["cat", "dog", "bird", "fish", "tree", "book", "lamp", "rain", "moon", "star"]
# Control changes, cycled: (widget key, value typed into the number input) or a special action.
CHANGES = [
    ("pg_d_model", "32"), ("pg_heads", "4"), ("mask", "causal"), ("pg_seed", "{i}"), ("pg_pad", "2"),
    ("pg_d_model", "24"), ("pg_heads", "3"), ("positional", ""), ("pg_seed", "{i}7"), ("pg_pad", "0"),
]  # fmt: skip
REPLICA_COOKIE = "attnlab_replica"  # HAProxy's stickiness cookie (deploy/haproxy.cfg)
# Pages that load a pretrained model into the process (cached once per process), for --models.
MODEL_VISITS = {
    "minilm": "/?weights=pretrained&text=the+students+read+the+notes+together",
    # TODO(decoder page): no app page loads SmolLM2 yet (issue 13's page, app_pages/decoder.py, is being
    # built). Put that page's URL here, e.g. "/decoder?text=...", one that runs the model and draws
    # a chart, and run `bench/classroom_load.py --proxy 2 --models minilm,smollm2`. Until then the
    # per-process figure comes from `bench/model_memory.py` (a probe page that loads the model the
    # same way, smollm2.load_model() once per process): +510 MB alone, +649 MB with MiniLM.
    "smollm2": None,
}


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


def _tree(pid: int) -> list[psutil.Process]:
    try:
        proc = psutil.Process(pid)
        return [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def tree_rss_mb(pid: int) -> float:
    procs = _tree(pid)
    if not procs:
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


class Servers:
    """What the class connects to: one Streamlit server (``server``), or N behind HAProxy (r1..rN)."""

    def __init__(self, replicas: int, ttl: int) -> None:
        self.replicas, self.cluster, self.proc = replicas, None, None
        if replicas:
            from serve_class import Cluster

            run_dir = ROOT / "artifacts" / "classroom_load_proxy"
            args = ["--browser.gatherUsageStats", "false", "--server.disconnectedSessionTTL", str(ttl)]
            self.cluster = Cluster(replicas, free_port(), run_dir=run_dir, streamlit_args=args, quiet=True)
            self.cluster.start()
            self.base = self.cluster.url
        else:
            port = free_port()
            log = ROOT / "artifacts" / "logs" / "classroom_load_server.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            self.proc = start_server(port, log, ttl)
            self.base = f"http://127.0.0.1:{port}"

    def names(self) -> list[str]:
        return [r.name for r in self.cluster.replicas] if self.cluster else ["server"]

    def pid(self, name: str) -> int | None:
        if self.cluster:
            r = self.cluster.replica(name)
            return r.pid if r.alive() else None
        return self.proc.pid if self.proc.poll() is None else None

    def direct_url(self, name: str) -> str:
        return self.cluster.replica(name).url if self.cluster else self.base

    def stop(self) -> None:
        if self.cluster:
            self.cluster.stop()
        else:
            stop_server(self.proc)


@dataclass
class Student:
    index: int
    token: str
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    step: str = "start"  # the action under way, named in an error
    retries: int = 0  # changes committed a second time because no rerun started (see act)
    view: dict[str, str] = field(default_factory=dict)  # URL values this student has set so far
    replicas: list[str] = field(default_factory=list)  # the process (cookie) after each step
    disconnects: int = 0  # websocket closes seen by the page
    killed_at: float | None = None  # set when this student's process is killed (--kill-one)
    reconnected_at: float | None = None  # the page is connected again after that
    recovered_s: float | None = None  # kill -> first change finished on another process
    lost_changes: int = 0  # changes in flight when the process died, made again
    settled: bool = False  # a change committed after the reconnection has taken effect
    settled_s: float | None = None  # kill -> that change done
    page: Page | None = None
    timeline: list[str] = field(default_factory=list)  # what happened when (for the killed ones)

    def note(self, what: str) -> None:
        self.timeline.append(f"{time.monotonic() - T0:.1f} {what}")


class Sampler:
    """Samples each server process tree's RSS every 0.5 s to find the peaks."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids, self.peak, self._task = pids, dict.fromkeys(pids, 0.0), None

    async def _run(self) -> None:
        while True:
            for name, pid in self.pids.items():
                rss = tree_rss_mb(pid)
                if rss == rss:  # not NaN: the process is still there
                    self.peak[name] = max(self.peak[name], rss)
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
URL_PARAMS_JS = "() => Object.fromEntries(new URL(location.href).searchParams)"


async def commit(page: Page, change: tuple[str, str], student: Student) -> float:
    """Perform one change (the sentence at the top of the page, the rest in the sidebar); returns the
    time the committing key or click happened."""
    key, value = change
    sidebar = page.locator('[data-testid="stSidebar"]')
    if key == "text":
        box = page.locator('[data-testid="stMain"] .st-key-pg_text textarea')
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
                student.note("mask list closed: open it again")
    elif key == "positional":
        t0 = time.perf_counter()
        await sidebar.locator(".st-key-pg_positional label").click()
    else:
        box = sidebar.locator(f".st-key-{key} input")
        await box.fill(value)
        t0 = time.perf_counter()
        await box.press("Enter")
    return t0


async def shown_or_lost(page: Page, param: str, value: str, student: Student) -> bool:
    """Wait up to START_WAIT_S for the URL to show the change; False = commit it again.

    After its process is killed, a student's browser reconnects to another process, which has no
    session for it and makes a fresh one. Streamlit's client does not rerun on a reconnect (it
    expects its old session back), so that session's first run is the student's next change, and
    its first run takes the view from the URL (the playground's rule for a new session), which
    undoes the change itself; so is a change in flight when the process died. A student sees the
    control jump back and makes the change again; so does this driver, 10 s after the reconnection
    (each counted as a lost change).
    """
    started = time.monotonic()
    while time.monotonic() - started < START_WAIT_S:
        try:
            await page.wait_for_function(SHOWS_JS, arg=[param, value], timeout=5_000)
            return True
        except PlaywrightTimeout:
            moved = student.reconnected_at is not None and not student.settled
            if moved and time.monotonic() - max(started, student.reconnected_at) > 10:
                student.lost_changes += 1
                student.note(f"{param}={value} not applied after the move")
                return False
    return False
    return False


async def act(page: Page, change: tuple[str, str], student: Student, timeout_ms: int) -> None:
    """Make one change and wait until the page shows it; records the latency from the first attempt.

    On a starved client (20 Chromium tabs on the server's own cores) a key press can land before
    the input has taken the typed value, and then no rerun starts: a student would press Enter
    again, and so does this driver when the URL does not show the new value after START_WAIT_S
    (at most twice more; each retry is counted and printed, not hidden). The same covers a change
    made while the student's process was being killed (--kill-one).
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
    committed_at = time.monotonic()
    t0 = await commit(page, (key, value), student)
    student.note(f"committed {param}={value}")
    for attempt in range(3):
        if await shown_or_lost(page, param, value, student):
            break
        if attempt == 2:
            raise TimeoutError(f"the URL never showed {param}={value}")
        student.retries += 1
        student.note(f"commit {param}={value} again")
        await commit(page, (key, value), student)
    await page.wait_for_function(DONE_JS, arg=[param, value], timeout=timeout_ms)
    student.latencies.append(time.perf_counter() - t0)
    student.note(f"done {param}={value}")
    if student.reconnected_at is not None and committed_at > student.reconnected_at and not student.settled:
        student.settled = True
        student.settled_s = time.monotonic() - student.killed_at
    # The view holds: every value set before is still in the URL the app wrote at the end of this run
    # (a session rebuilt from defaults would have written the defaults).
    shown = await page.evaluate(URL_PARAMS_JS)
    lost = {k: (v, shown.get(k)) for k, v in student.view.items() if k != param and shown.get(k) != v}
    if lost:
        student.errors.append(f"{student.step}: view lost, URL has {lost} (set, shown)")
    student.view[param] = value


async def replica_of(context: BrowserContext) -> str:
    for c in await context.cookies():
        if c["name"] == REPLICA_COOKIE:
            return c["value"]
    return "server"


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


async def new_context(browser, base: str, timeout_ms: int, replica: str | None = None) -> BrowserContext:
    context = await browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    context.set_default_timeout(timeout_ms)  # fill/click wait too when the client machine is busy
    if replica:  # pin this browser to one process, as HAProxy's cookie would
        await context.add_cookies([{"name": REPLICA_COOKIE, "value": replica, "url": base}])
    return context


async def run_student(
    browser,
    base: str,
    student: Student,
    changes: int,
    timeout_ms: int,
    start_gate,
    replica: str | None = None,
) -> None:
    context = await new_context(browser, base, timeout_ms, replica)
    page = await context.new_page()
    student.page = page
    page.on("console", lambda m: m.type == "error" and student.errors.append(f"console: {m.text[:200]}"))
    page.on("pageerror", lambda e: student.errors.append(f"pageerror: {str(e)[:200]}"))
    # Streamlit's client logs a warning for every websocket close (and reconnects by itself).
    page.on(
        "console",
        lambda m: "WebSocket onclose" in m.text and setattr(student, "disconnects", student.disconnects + 1),
    )

    async def after_step(step: str) -> None:
        await check_isolation(page, student, step, timeout_ms)
        where = await replica_of(context)
        if student.replicas and where != student.replicas[-1]:
            if student.killed_at is not None and student.recovered_s is None:
                student.recovered_s = time.monotonic() - student.killed_at  # moved after its process died
            else:
                student.errors.append(f"{step}: moved from {student.replicas[-1]} to {where} (stickiness)")
        student.replicas.append(where)

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
        await after_step("sentence")
        for c in range(changes):
            change = CHANGES[c % len(CHANGES)]
            student.step = f"change {c + 1} {change[0]}"
            await act(page, change, student, timeout_ms)
            await after_step(f"change {c + 1} {change[0]}")
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


async def kill_one_when_half_done(
    servers: Servers, students: list[Student], expected: int, kill: dict
) -> None:
    """When half of the class's changes are done, SIGKILL the process that holds the most students."""
    while sum(len(s.latencies) for s in students) < expected / 2:
        await asyncio.sleep(0.5)
    where = {s.token: s.replicas[-1] for s in students if s.replicas}
    counts = {n: list(where.values()).count(n) for n in servers.names()}
    victim = max(counts, key=lambda n: (counts[n], n == servers.names()[0]))
    now = time.monotonic()
    for s in students:
        if where.get(s.token) == victim:
            s.killed_at = now
            s.note(f"{victim} killed")
    kill.update(replica=victim, after_changes=sum(len(s.latencies) for s in students),
                students=[s.token for s in students if s.killed_at is not None])  # fmt: skip
    kill["cpu_s_at_kill"] = tree_cpu_s(servers.pid(victim))  # its CPU time is gone with it
    await asyncio.to_thread(servers.cluster.kill, victim)
    moved = [s for s in students if s.killed_at is not None]
    await asyncio.gather(*(watch_reconnect(s) for s in moved))
    kill["reconnect_s"] = [
        round(s.reconnected_at - s.killed_at, 1) if s.reconnected_at is not None else None for s in moved
    ]


APP_CONNECTED = '[data-testid="stApp"][data-test-connection-state="CONNECTED"]'


async def watch_reconnect(student: Student, timeout_s: float = 120) -> None:
    """Time until the student's page, which lost its websocket with the killed process, is connected again."""
    page, deadline = student.page, time.monotonic() + timeout_s
    seen_down = False
    try:
        while time.monotonic() < deadline:  # the client notices the closed socket, then reconnects
            if not await page.locator(APP_CONNECTED).count():
                seen_down = True
            elif seen_down or (student.disconnects and time.monotonic() - student.killed_at > 3):
                student.reconnected_at = time.monotonic()
                student.note("connected again")
                return
            await asyncio.sleep(0.05)
    except Exception:  # the page was closed meanwhile (the student is done)
        pass


async def watch_processes(servers: Servers, kill: dict, tasks: list, result: dict) -> None:
    """A server process that dies without this run killing it ends the class at once, as a failure."""
    while True:
        await asyncio.sleep(2)
        dead = [n for n in servers.names() if servers.pid(n) is None and n != kill.get("replica")]
        if dead:
            result["died"] = dead
            for t in tasks:
                t.cancel()
            return


async def model_memory(browser, servers: Servers, models: list[str], timeout_ms: int) -> dict:
    """Open one page per process that loads each model; RSS of every process afterwards."""
    out: dict = {}
    for model in models:
        path = MODEL_VISITS.get(model)
        if path is None:
            out[model] = (
                "no app page loads this model yet (see MODEL_VISITS; bench/model_memory.py measures it)"
            )
            continue
        per: dict = {}
        for name in servers.names():
            pid = servers.pid(name)
            if pid is None:
                continue
            context = await new_context(browser, servers.base, timeout_ms, name if servers.cluster else None)
            page = await context.new_page()
            await page.goto(servers.base + path, timeout=timeout_ms)
            await page.wait_for_function(
                """() => document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state') === 'notRunning'
                         && document.querySelectorAll('[data-testid="stPlotlyChart"] .main-svg').length > 0
                         || document.querySelector('[data-testid="stAlertContentError"]')""",
                timeout=timeout_ms,
            )
            missing = await page.locator('[data-testid="stAlertContentError"]').count()
            landed = await replica_of(context)
            await context.close()
            if missing:
                out[model] = "not installed (make model)"
                break
            if landed != name and servers.cluster:
                per[name] = f"landed on {landed}"
                continue
            per[name] = round(tree_rss_mb(pid), 1)
        else:
            out[model] = per
    return out


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


async def main_async(args) -> dict:
    servers = Servers(args.proxy, args.ttl)
    result: dict = {"sessions": args.sessions, "changes": args.changes, "processes": len(servers.names()),
                    "load_average_start": os.getloadavg()}  # fmt: skip
    timeout_ms = args.timeout * 1000
    expected = args.sessions * (args.changes + 1)
    kill: dict = {}
    students: list[Student] = []
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(
                headless=True, executable_path=chromium_executable(), args=CHROMIUM_ARGS
            )
            # one warm-up visit per process so "before" is the idle app, not an unimported one
            gate = asyncio.Event()
            gate.set()
            for name in servers.names():
                warm = Student(99, "student99")
                pin = name if servers.cluster else None
                await run_student(browser, servers.base, warm, 0, timeout_ms, gate, pin)
            await asyncio.sleep(args.ttl + 3)
            pids = {n: servers.pid(n) for n in servers.names()}
            before = {n: (tree_rss_mb(p), tree_cpu_s(p)) for n, p in pids.items()}
            proxy_pid = servers.cluster.haproxy.pid if servers.cluster else None
            proxy_cpu0 = tree_cpu_s(proxy_pid) if proxy_pid else 0.0
            sampler = Sampler(pids)
            sampler.start()
            students = [Student(i, f"student{i:02d}") for i in range(1, args.sessions + 1)]
            gate = asyncio.Event()
            t0 = time.perf_counter()
            tasks = [
                asyncio.create_task(run_student(browser, servers.base, s, args.changes, timeout_ms, gate))
                for s in students
            ]
            killer = None
            if args.kill_one:
                killer = asyncio.create_task(kill_one_when_half_done(servers, students, expected, kill))
            watchdog = asyncio.create_task(watch_processes(servers, kill, tasks, result))
            await asyncio.sleep(0.5)
            gate.set()
            try:
                await asyncio.wait_for(asyncio.gather(*tasks), timeout=args.deadline)
            except TimeoutError:
                for s in students:
                    s.errors.append("deadline reached")
            except asyncio.CancelledError:
                if "died" not in result:
                    raise
            watchdog.cancel()
            if killer is not None and not killer.done():
                killer.cancel()
                kill["error"] = "the class finished before half of its changes were done"
            result["wall_s"] = time.perf_counter() - t0
            result["sessions_seen_during"] = {
                n: active_sessions(servers.direct_url(n)) for n in servers.names()
            }
            sampler.stop()
            live = {n: p for n, p in pids.items() if servers.pid(n) == p}
            cpu_after = {n: tree_cpu_s(p) for n, p in live.items()}
            if proxy_pid:
                result["haproxy_cpu_s"] = tree_cpu_s(proxy_pid) - proxy_cpu0
                result["haproxy_rss_mb"] = tree_rss_mb(proxy_pid)
            peak = {n: max(sampler.peak[n], tree_rss_mb(p)) for n, p in live.items()}
            # Closed tabs: Streamlit drops a session once its websocket is gone for disconnectedSessionTTL.
            deadline = time.monotonic() + args.ttl + 30
            while time.monotonic() < deadline and any(
                (active_sessions(servers.direct_url(n)) or 0) > 0 for n in live
            ):
                await asyncio.sleep(1)
            await asyncio.sleep(args.ttl + 2)
            sessions_after = {n: active_sessions(servers.direct_url(n)) for n in live}
            after = {n: tree_rss_mb(p) for n, p in live.items()}
            models = await model_memory(browser, servers, args.models, timeout_ms) if args.models else {}
            await browser.close()
    finally:
        servers.stop()
    result["load_average_end"] = os.getloadavg()
    lat = [x for s in students for x in s.latencies]
    first = {s.token: s.replicas[0] for s in students if s.replicas}
    last = {s.token: s.replicas[-1] for s in students if s.replicas}
    result["per_process"] = {
        n: {
            "students_landed": list(first.values()).count(n),
            "students_at_end": list(last.values()).count(n),
            "rss_before_mb": before[n][0],
            "rss_peak_mb": peak.get(n, sampler.peak[n]),
            "rss_after_mb": after.get(n),
            "cpu_s": (cpu_after[n] if n in cpu_after else kill.get("cpu_s_at_kill", float("nan")))
            - before[n][1],
            "active_sessions_after": sessions_after.get(n),
            "killed": n not in live,
        }
        for n in servers.names()
    }
    for model, per in models.items():
        for n in servers.names():
            result["per_process"][n][f"rss_with_{model}_mb"] = per.get(n) if isinstance(per, dict) else per
    result["models"] = models
    if kill:
        moved = [s for s in students if s.killed_at is not None]
        kill["moved_to"] = {s.token: s.replicas[-1] for s in moved}
        kill["recovery_s"] = [round(s.recovered_s, 1) if s.recovered_s is not None else None for s in moved]
        kill["first_new_change_done_s"] = [
            round(s.settled_s, 1) if s.settled_s is not None else None for s in moved
        ]
        kill["lost_changes"] = sum(s.lost_changes for s in moved)
        kill["timelines"] = {s.token: s.timeline for s in moved}
        kill["others_disconnects"] = sum(s.disconnects for s in students if s.killed_at is None)
        kill["moved_disconnects"] = sum(s.disconnects for s in moved)
        for s in moved:
            if s.replicas[-1] == kill["replica"] or s.recovered_s is None:
                s.errors.append(f"still on the killed process {kill['replica']} at the end")
        for s in students:
            if s.killed_at is None and s.disconnects:
                s.errors.append(
                    f"{s.disconnects} websocket disconnect(s) although its process was not killed"
                )
        result["kill"] = kill
    # Totals, as the single-server run always reported them.
    result["rss_before_mb"] = sum(v["rss_before_mb"] for v in result["per_process"].values())
    result["rss_peak_mb"] = sum(v["rss_peak_mb"] for v in result["per_process"].values())
    result["rss_after_mb"] = sum(v["rss_after_mb"] or 0 for v in result["per_process"].values())
    result["active_sessions_after"] = (
        None if any(v is None for v in sessions_after.values()) else sum(sessions_after.values())
    )
    cpu = [
        v["cpu_s"]
        for v in result["per_process"].values()
        if v["cpu_s"] is not None and v["cpu_s"] == v["cpu_s"]
    ]
    result.update(
        changes_timed=len(lat),
        p50_s=pct(lat, 50),
        p95_s=pct(lat, 95),
        max_s=max(lat) if lat else float("nan"),
        server_cpu_s=sum(cpu),
        server_cpu_per_change_s=sum(cpu) / len(lat) if lat else float("nan"),
        retries=sum(s.retries for s in students),
        errors=[f"{s.token}: {e}" for s in students for e in s.errors],
        leaks=[f"{s.token}: {e}" for s in students for e in s.leaks],
    )
    if "died" in result:
        result["errors"].insert(
            0, f"server process(es) {result['died']} died during the class, not killed by this run"
        )
    result["passed"] = (
        not result["errors"] and not result["leaks"] and len(lat) == expected
        and result["active_sessions_after"] in (0, None) and "error" not in kill
    )  # fmt: skip
    return result


def report(r: dict) -> None:
    proxy = " behind HAProxy" if "r1" in r["per_process"] else ""
    print(f"classroom load: {r['sessions']} sessions x {r['changes']} changes (+1 sentence each) on "
          f"{r['processes']} process(es){proxy}, {r['changes_timed']} reruns timed in {r['wall_s']:.1f} s")  # fmt: skip
    la0, la1 = r["load_average_start"], r["load_average_end"]
    print(f"load average (1/5/15 min): {la0[0]:.1f}/{la0[1]:.1f}/{la0[2]:.1f} at the start, "
          f"{la1[0]:.1f}/{la1[1]:.1f}/{la1[2]:.1f} at the end")  # fmt: skip
    print(f"latency per change: p50 {r['p50_s']:.2f} s, p95 {r['p95_s']:.2f} s, max {r['max_s']:.2f} s")
    print(f"server CPU: {r['server_cpu_s']:.1f} s in all, {r['server_cpu_per_change_s']:.3f} s per change")
    if "haproxy_cpu_s" in r:
        print(f"HAProxy: CPU {r['haproxy_cpu_s']:.2f} s during the class, RSS {r['haproxy_rss_mb']:.0f} MB")
    print(f"errors: {len(r['errors'])}; isolation failures: {len(r['leaks'])}; "
          f"changes made again (not shown after {START_WAIT_S} s, lost with a killed process, or a list "
          f"closed before its option was clicked): {r['retries']}")  # fmt: skip
    for line in (r["errors"] + r["leaks"])[:20]:
        print("  " + line)
    loaded = [m for m, v in r["models"].items() if isinstance(v, dict)]
    for name, p in r["per_process"].items():
        extra = "".join(f", with {m} loaded {p[f'rss_with_{m}_mb']} MB" for m in loaded)
        after = "killed" if p["killed"] else f"after close {p['rss_after_mb']:.0f} MB"
        cpu = "-" if p["cpu_s"] is None else f"{p['cpu_s']:.1f} s"
        print(f"{name}: students landed {p['students_landed']}, at the end {p['students_at_end']}; "
              f"RSS before {p['rss_before_mb']:.0f} MB, peak {p['rss_peak_mb']:.0f} MB, {after}{extra}; "
              f"CPU {cpu}; active sessions after close: {p['active_sessions_after']}")  # fmt: skip
    for model, value in r["models"].items():
        if not isinstance(value, dict):
            print(f"{model}: {value}")
    if "kill" in r:
        k = r["kill"]
        if "error" in k:
            print(f"kill: {k['error']}")
        else:
            print(f"killed {k['replica']} after {k['after_changes']} changes, holding {len(k['students'])} students; "
                  f"they moved to {sorted(set(k['moved_to'].values()))}; connected again after {k.get('reconnect_s')} s, "
                  f"first step done there after {k['recovery_s']} s, first change made after the reconnection "
                  f"done after {k.get('first_new_change_done_s')} s; changes lost (in flight, or undone by the new "
                  f"session's first run) and made again: "
                  f"{k['lost_changes']}; websocket disconnects: {k['moved_disconnects']} among them, "
                  f"{k['others_disconnects']} among the others")  # fmt: skip
    print(f"server RSS (all processes): before {r['rss_before_mb']:.0f} MB, peak {r['rss_peak_mb']:.0f} MB, "
          f"after close {r['rss_after_mb']:.0f} MB; active sessions after close: {r['active_sessions_after']}")  # fmt: skip
    print("PASS" if r["passed"] else "FAIL")


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument(
        "--changes", type=int, default=10, help="control changes per session (after the sentence)"
    )
    ap.add_argument("--smoke", action="store_true", help="2 sessions x 2 changes, for CI")
    ap.add_argument("--proxy", type=int, default=0, metavar="N",
                    help="N Streamlit processes behind HAProxy (deploy/serve_class.py) instead of one server")  # fmt: skip
    ap.add_argument("--kill-one", action="store_true",
                    help="with --proxy: SIGKILL the busiest process when half of the changes are done")  # fmt: skip
    ap.add_argument(
        "--models", default="", help=f"after the class, memory with these loaded: {','.join(MODEL_VISITS)}"
    )
    ap.add_argument("--ttl", type=int, default=5, help="server.disconnectedSessionTTL for this run (s)")
    ap.add_argument("--timeout", type=int, default=240, help="per-step timeout (s)")
    ap.add_argument("--deadline", type=int, default=1500, help="whole class must finish within (s)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    if unknown := set(args.models) - set(MODEL_VISITS):
        ap.error(f"unknown model(s) {sorted(unknown)}; known: {sorted(MODEL_VISITS)}")
    if args.kill_one and args.proxy < 2:
        ap.error("--kill-one needs --proxy 2 or more (someone must be left to take the students)")
    if args.smoke:
        args.sessions, args.changes, args.deadline = 2, 2, 240
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops the servers too, as Ctrl-C does
    r = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(r, indent=1))
    else:
        report(r)
    return 0 if r["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""A lecture hall: N protocol-level students, a real Chromium teacher, HAProxy and P app processes.

    .venv/bin/python bench/hall.py --students 300                  # one run, 2 processes, SQLite
    .venv/bin/python bench/hall.py --students 300 --replicas 3 --store postgresql
    .venv/bin/python bench/hall.py --table --json bench/results/hall_table.json   # the issue's table
    .venv/bin/python bench/hall.py --table --replicas 3            # the same with 3 (or 4) processes
    .venv/bin/python bench/hall.py --table --store postgresql      # ... with PostgreSQL as the store
    .venv/bin/python bench/hall.py --smoke                         # the test suite's short run
    .venv/bin/python bench/hall.py --students 100 --teacher-log    # + the teacher's tabs: errors, screenshots

``--table`` runs N = 50, 100, 200, 300 and 300 again, each on a fresh cluster once the machine's
1-minute load average is under 1.5 again (at most 3 minutes' wait), prints each run and then the
table (exit status 0 only if every run holds).

Each student is a websocket client in this process that speaks Streamlit's own protocol
(tests/browser/st_protocol.py, shared with the attack tests' client) the way a student's phone page
does: it loads the join page through HAProxy (which gives it its own stickiness cookie; Streamlit
its XSRF cookie), asks for ``/_stcore/health`` and ``/_stcore/host-config`` (and the two 404s of a
deep link), opens the websocket with those cookies, runs ``class_join``, submits the join form
with its code and nickname (s000, s001, ...), keeps the cookie the page's script sets, and then
drives the page's ``run_every`` watcher as the frontend does: it sets a timer of the interval the
server's ``auto_rerun`` names for the fragment, clears every timer when a full run starts, and on each
tick sends a ``rerun_script`` with the fragment's id, ``is_auto_rerun``, its widget values and the
hashes of the large messages it keeps (Streamlit then sends a reference instead of a chart it
already has). It takes a run the server starts by itself (the class bell's ring,
attention_ui/classroom/ring.py) as a page does: the run's messages are the news. When
a poll opens it waits a few seconds (seeded), picks option i mod n (a fragment rerun of the page's
live part, as the radio does), then presses Send (a second one, with the button's trigger) and waits for
the page's acknowledgement ("Answer B received").

The teacher is a real Chromium: it starts the class on the class page, moves the step in
presenter mode every ``--step-every`` seconds (clicking Next), and keeps the class panel open in a
second tab, where it opens the poll (the panel's button) while the steps go on.

What a phone page does that these clients do not: download and run the frontend (~6 MB of
JavaScript and fonts, served from HAProxy's cache after the first), draw anything (Plotly, KaTeX:
on a phone that is its own processor, here it would be the servers' cores), run the page's
watchdog script (student_view.py: a page that lost a run or its timer clicks a hidden button),
reconnect after a dropped websocket, keep every widget's value (they send the ones they set), or
answer the server's websocket pings any differently (the websockets library answers them; no app
heartbeat is sent, as a page outside an embedding host sends none).

Printed per run: joins and how long they took; per step and student, the delay from the teacher's
press (the moment the presenter's page got the click: its input event's own time, read in the page;
Playwright first spends 0.4-2 s here checking that the button is visible and still, which a
teacher's hand does not, so that figure is printed apart, "from the bench's call") until the
student's page has the new step (its caption and then the step's chart, or the end
of the run for a step without a chart; a student whose first news is a later step counts from then):
p50, p95 and max; answers sent, acknowledged, stored (read from the store) and counted on the
teacher's panel (the histogram's title), stored answers never confirmed to their student, and how
soon the panel showed the poll and each answer; CPU (average and busiest second while the teacher
steps) and peak RSS per process (each app, HAProxy, this process, the teacher's Chromium); HAProxy's
backend state changes and failed health checks; the load average before and after.
Exit status 0 only if the run holds (see HOLDS: follow p95 ≤ 3 s, no backend down, every stored
answer confirmed, every student joined and answered, the panel within 2 s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import sys
import time
from collections import deque
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import websockets
from playwright.async_api import async_playwright

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "bench", ROOT / "tests" / "browser", ROOT / "deploy"):
    sys.path.insert(0, str(_p))
import st_protocol as proto  # noqa: E402
from classroom_live import BENCH_CHROMIUM_ARGS, live_cluster, pct, start_class  # noqa: E402
from st_browser import chromium_executable  # noqa: E402

STEP_RE = re.compile(r"step (\d+) of (\d+)")
POLL_RE = re.compile(r"\*\*Poll (\d+)\*\* \((open|closed|answer revealed)\)")
ACK_RE = re.compile(r"^Answer ([A-Z]) received")
COOKIE_RE = re.compile(r'document\.cookie = ("(?:[^"\\]|\\.)*")')
JOIN_AT_ONCE = 25  # students loading the join page at the same moment (a hall scans the code in waves)
JOIN_TIMEOUT_S = 120
RUN_TIMEOUT_S = 60
ACK_TIMEOUT_S = 60
THINK_S = [2.0, 12.0]  # a student reads the question this long before choosing
CHOOSE_TO_SEND_S = (0.5, 1.5)
PANEL_POLL_S = 0.25
MAX_STEPS = 11
HOLDS = {"follow_p95_s": 3.0, "panel_s": 2.0}
TABLE_NS = (50, 100, 200, 300, 300)
RECEIVED = [0]  # messages all students of the current run received so far (the sampler's timeline)
SUMMARIES: dict[str, tuple[str, str | None]] = {}  # a large message's hash -> (element kind, text): shared


# ----------------------------------------------------------------------------- HTTP, as a page loads
async def http_get(base: str, path: str, cookies: dict[str, str]) -> tuple[int, dict[str, str]]:
    """One GET through HAProxy with these cookies; (status, cookies the response sets)."""
    parts = urlsplit(base)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
    jar = "; ".join(f"{k}={v}" for k, v in cookies.items())
    head = f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\nAccept: */*\r\n"
    writer.write((head + (f"Cookie: {jar}\r\n" if jar else "") + "\r\n").encode())
    await writer.drain()
    raw = await reader.read()
    writer.close()
    with suppress(Exception):
        await writer.wait_closed()
    header = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    status = int(header[0].split()[1])
    got = {}
    for line in header[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "set-cookie":
            k, _, v = value.strip().split(";", 1)[0].partition("=")
            got[k] = v
    return status, got


# ----------------------------------------------------------------------------- one student
@dataclass
class Student:
    index: int
    hall: Hall
    nick: str = ""
    cookies: dict = field(default_factory=dict)
    page_hash: str = ""
    joined_s: float | None = None
    replica: str = "?"
    arrived: dict = field(default_factory=dict)  # step -> time the page had it (caption, then chart or end)
    captioned: dict = field(default_factory=dict)  # step -> time its caption arrived
    acks: dict = field(default_factory=dict)  # poll -> (letter, time)
    sent: dict = field(default_factory=dict)  # poll -> (letter, time Send was pressed)
    errors: list = field(default_factory=list)
    closed: str | None = None

    def __post_init__(self) -> None:
        self.nick = f"s{self.index:03d}"
        self.ws = None
        self.timers: dict[str, tuple[float, asyncio.Task]] = {}
        self.cache: dict[str, list] = {}  # hash -> [run count when last used, fragment id]
        self.runs = 0
        self.max_age = 2
        self.values: dict[str, object] = {}  # widget id -> the value this page holds
        self.widgets: dict[str, tuple] = {}  # widget id -> (kind, proto, fragment id) of the last run
        self.run_frags: list[str] = []
        self.run_step: int | None = None
        self.run_poll: tuple[int, str] | None = None
        self.run_done = asyncio.Event()
        self.polls_seen: set[int] = set()
        self.rng = random.Random(self.index)
        self.query = ""
        self.last_message = 0.0
        self.log: deque = deque(maxlen=40)  # the last messages, for a student that stops following
        self.closing = False

    # -- sending
    async def send(self, *, widgets=None, fragment: str = "", auto: bool = False, first: bool = False):
        if self.ws is None:
            return
        self.run_done.clear()
        msg = proto.rerun_script(
            page="class_join" if first else "", query=self.query, widgets={**self.values, **(widgets or {})},
            page_script_hash="" if first else self.page_hash, fragment_id=fragment, auto=auto,
            cached_hashes=list(self.cache), url=f"{self.hall.base}/class_join?{self.query}",
        )  # fmt: skip
        try:
            await self.ws.send(msg)
        except websockets.ConnectionClosed as exc:
            self.closed = self.closed or f"send: {exc}"

    async def ticking(self, fragment: str, interval: float) -> None:
        while True:  # setInterval: every interval, whatever the last tick's run is doing
            await asyncio.sleep(interval)
            await self.send(fragment=fragment, auto=True)

    def clear_timers(self, ids=None) -> None:
        for fid in list(self.timers) if ids is None else ids:
            entry = self.timers.pop(fid, None)
            if entry:
                entry[1].cancel()

    # -- receiving
    async def receive(self) -> None:
        try:
            async for raw in self.ws:
                self.last_message = time.time()
                RECEIVED[0] += 1
                self.handle(proto.parse(raw), self.last_message)
        except websockets.ConnectionClosed as exc:
            self.closed = self.closed or f"closed: {exc}"
        except Exception as exc:  # a bug of this client: said, not hidden in an unread task
            self.errors.append(f"receiving: {type(exc).__name__}: {exc}")
            raise
        finally:
            if not self.closing and self.closed is None and self.ws.close_code is not None:
                self.closed = f"closed by the server ({self.ws.close_code})"
            self.clear_timers()

    def handle(self, fwd, now: float) -> None:
        kind = fwd.WhichOneof("type")
        self.log.append((round(now % 1000, 2), kind, (proto.element(fwd) or ("",))[0] or fwd.script_finished
                         if kind in ("delta", "script_finished") else list(fwd.metadata.run.fragment_ids)[:1]))  # fmt: skip
        if kind == "new_session":
            self.page_hash = fwd.new_session.page_script_hash or self.page_hash
            self.max_age = fwd.new_session.config.max_cached_message_age or self.max_age
            self.run_frags = proto.run_fragments(fwd)
            if not self.run_frags:  # a full run: the frontend clears every run_every timer
                self.clear_timers()
                self.widgets = {}
            self.run_step, self.run_poll = None, None
        elif kind == "navigation":  # with st.navigation, the page running is named here
            self.page_hash = fwd.navigation.page_script_hash or self.page_hash
        elif kind == "auto_rerun":
            fid, interval = fwd.auto_rerun.fragment_id, fwd.auto_rerun.interval
            if fid and self.timers.get(fid, (None,))[0] != interval:
                self.clear_timers([fid])
                self.timers[fid] = (
                    interval,
                    asyncio.get_running_loop().create_task(self.ticking(fid, interval)),
                )
        elif kind == "stop_auto_rerun":
            self.clear_timers(list(fwd.stop_auto_rerun.fragment_ids))
        elif kind == "script_finished":
            if fwd.script_finished != fwd.FINISHED_EARLY_FOR_RERUN:
                self.runs += 1
                for h, entry in list(self.cache.items()):  # the frontend's cache expiry
                    if self.run_frags and (not entry[1] or entry[1] not in self.run_frags):
                        continue
                    if self.runs - entry[0] > self.max_age:
                        del self.cache[h]
                if self.run_step is not None and self.run_step not in self.arrived:
                    self.arrived[self.run_step] = now
                self.run_done.set()
        elif kind == "ref_hash":
            entry = self.cache.get(fwd.ref_hash)
            if entry is None:
                self.errors.append("a reference to a message it does not have")
                return
            entry[0] = self.runs
            self.element(*SUMMARIES.get(fwd.ref_hash, ("?", None)), fwd, now)
        elif kind == "delta":
            el = proto.element(fwd)
            if el is None:
                return
            text = proto.element_text(*el)
            if el[0] == "html":
                text = el[1].body
            if fwd.metadata.cacheable and fwd.hash:
                SUMMARIES.setdefault(fwd.hash, (el[0], text if el[0] != "html" else None))
                self.cache[fwd.hash] = [self.runs, fwd.delta.fragment_id]
            if getattr(el[1], "id", ""):
                self.widgets[el[1].id] = (el[0], el[1], fwd.delta.fragment_id)
            self.element(el[0], text, fwd, now)

    def element(self, kind: str, text: str | None, fwd, now: float) -> None:
        if kind == "plotly_chart" and self.run_step is not None and self.run_step not in self.arrived:
            self.arrived[self.run_step] = now
        if text is None:
            return
        if kind == "markdown" and (m := STEP_RE.search(text)):
            self.run_step = int(m.group(1))
            self.captioned.setdefault(self.run_step, now)
        elif kind == "markdown" and (m := POLL_RE.search(text)):
            self.run_poll = (int(m.group(1)), m.group(2))
        elif kind == "alert" and (m := ACK_RE.match(text)) and self.run_poll:
            self.acks.setdefault(self.run_poll[0], (m.group(1), now))
        elif kind == "html" and "document.cookie" in text:
            for literal in COOKIE_RE.findall(text):
                pair = json.loads(literal).split(";", 1)[0]
                name, _, value = pair.partition("=")
                if "max-age=0" in literal:
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = value
        if self.run_poll and self.run_poll[1] == "open" and self.run_poll[0] not in self.polls_seen:
            if any(k == "button" and "cls_send_" in wid for wid, (k, _, _) in self.widgets.items()):
                self.polls_seen.add(self.run_poll[0])
                asyncio.get_running_loop().create_task(self.answer(self.run_poll[0]))

    # -- what the student does
    async def run(self, *, widgets=None, fragment: str = "", first: bool = False) -> None:
        await self.send(widgets=widgets, fragment=fragment, first=first)
        await asyncio.wait_for(self.run_done.wait(), RUN_TIMEOUT_S)

    def widget_id(self, part: str, kind: str | None = None) -> str:
        found = [w for w, (k, _, _) in self.widgets.items() if part in w and (kind is None or k == kind)]
        if len(found) != 1:
            raise LookupError(f"{part}: {len(found)} widgets")
        return found[0]

    async def wait_widget(self, part: str, kind: str | None = None) -> str:
        """The widget once the page shows it: a step change's full run redraws the poll box, and a
        student taps only what is on the screen."""
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while True:
            try:
                return self.widget_id(part, kind)
            except LookupError:
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.1)

    async def join(self, code: str) -> None:
        hall, t0 = self.hall, time.time()
        self.query = f"code={code}&lang=en"
        status, got = await http_get(hall.base, f"/class_join?{self.query}", {})
        self.cookies.update(got)
        for path in ("/class_join/_stcore/health", "/class_join/_stcore/host-config",
                     "/_stcore/health", "/_stcore/host-config"):  # fmt: skip
            _, got = await http_get(hall.base, path, self.cookies)
            self.cookies.update(got)
        self.replica = self.cookies.get("attnlab_replica", "?")
        jar = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        self.ws = await websockets.connect(
            hall.base.replace("http", "ws", 1) + "/_stcore/stream",
            subprotocols=proto.subprotocols(self.cookies.get("_streamlit_xsrf")),
            additional_headers={"Origin": hall.base, "Cookie": jar},
            ping_interval=None, max_size=None, open_timeout=JOIN_TIMEOUT_S,
        )  # fmt: skip
        asyncio.get_running_loop().create_task(self.receive())
        await self.run(first=True)
        form = {self.widget_id("cls_join_code"): code, self.widget_id("cls_join_nick"): self.nick,
                self.widget_id("FormSubmitter:cls_join_form"): True}  # fmt: skip
        await self.run(widgets=form)
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while not self.captioned and time.monotonic() < deadline:
            self.run_done.clear()
            with suppress(TimeoutError):
                await asyncio.wait_for(self.run_done.wait(), 1)
        if not self.captioned:
            raise RuntimeError("joined, but no step shown")
        self.joined_s = time.time() - t0

    async def answer(self, seq: int) -> None:
        try:
            await asyncio.sleep(self.rng.uniform(*THINK_S))
            radio = await self.wait_widget("cls_choice_", "radio")
            _, rproto, fragment = self.widgets[radio]
            choice = self.index % len(rproto.options)
            self.values[radio] = rproto.options[choice]
            await self.run(fragment=fragment)  # choosing an option reruns the poll box
            await asyncio.sleep(self.rng.uniform(*CHOOSE_TO_SEND_S))
            button = await self.wait_widget("cls_send_", "button")
            self.sent[seq] = (chr(65 + choice), time.time())
            await self.send(widgets={button: True}, fragment=self.widgets[button][2])
            deadline = time.monotonic() + ACK_TIMEOUT_S
            while seq not in self.acks and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
        except Exception as exc:  # noqa: BLE001 - one student's failure is a figure, not the run's end
            self.errors.append(f"poll {seq}: {type(exc).__name__}: {exc}")

    async def close(self) -> None:
        self.closing = True
        self.clear_timers()
        if self.ws is not None:
            with suppress(Exception):
                await self.ws.close()


# ----------------------------------------------------------------------------- the machine's side
class Sampler:
    """Once a second: CPU and RSS of each process, HAProxy's view of its backends, the load average."""

    def __init__(self, cluster, chromium_pids) -> None:
        self.cluster = cluster
        self.procs = {r.name: r.pid for r in cluster.replicas}
        self.procs["haproxy"] = cluster.haproxy.pid
        self.procs["generator"] = os.getpid()
        self.chromium_pids = chromium_pids
        self.samples: list[tuple[float, dict[str, float], dict[str, float]]] = []
        self.received: list[int] = []  # per sample: messages all students had received (bursts show)
        self.states: list[tuple[float, str, str]] = []  # (time, server, new status)
        self.last_state: dict[str, str] = {}
        self.checks0: dict[str, tuple[int, int]] = {}
        self.checks: dict[str, tuple[int, int]] = {}
        self.loads = [os.getloadavg()]
        self._task = None

    @staticmethod
    def _tree(pid):
        try:
            p = psutil.Process(pid)
            return [p, *p.children(recursive=True)]
        except psutil.Error:
            return []

    def _read(self) -> tuple[dict, dict]:
        cpu, rss = {}, {}
        groups = {**{k: self._tree(v) for k, v in self.procs.items() if k != "generator"}}
        groups["generator"] = [psutil.Process(os.getpid())]
        groups["chromium"] = [p for pid in self.chromium_pids() for p in self._tree(pid)]
        for name, procs in groups.items():
            c = r = 0.0
            for p in procs:
                with suppress(psutil.Error):
                    t = p.cpu_times()
                    c += t.user + t.system
                    r += p.memory_info().rss
            cpu[name], rss[name] = c, r / 2**20
        return cpu, rss

    def _haproxy(self) -> None:
        try:
            stats = self.cluster.stats()
        except OSError:
            return
        now = time.time()
        for name, row in stats.items():
            status = row.get("status", "?")
            if self.last_state.get(name) not in (None, status):
                self.states.append((now, name, status))
            self.last_state[name] = status
            counts = (int(row.get("chkfail") or 0), int(row.get("chkdown") or 0))
            self.checks0.setdefault(name, counts)
            self.checks[name] = counts

    async def _run(self) -> None:
        while True:
            cpu, rss = await asyncio.to_thread(self._read)
            self.samples.append((time.time(), cpu, rss))
            self.received.append(RECEIVED[0])
            await asyncio.to_thread(self._haproxy)
            await asyncio.sleep(max(0.0, 1.0 - (time.time() - self.samples[-1][0])))

    def start(self) -> None:
        self._haproxy()
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        self.loads.append(os.getloadavg())
        if self._task:
            self._task.cancel()

    def cpu_between(self, t0: float, t1: float) -> dict[str, tuple[float, float]]:
        """Per process: (average %, busiest 1-s %) of one core between t0 and t1."""
        s = [x for x in self.samples if t0 - 1.5 <= x[0] <= t1 + 1.5]
        out = {}
        if len(s) < 2:
            return out
        for name in s[0][1]:
            rates = [
                100 * (b[1].get(name, 0) - a[1].get(name, 0)) / max(1e-6, b[0] - a[0])
                for a, b in zip(s, s[1:], strict=False)
            ]
            total = 100 * (s[-1][1].get(name, 0) - s[0][1].get(name, 0)) / max(1e-6, s[-1][0] - s[0][0])
            out[name] = (total, max(rates))
        return out

    def peak_rss(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for _, _, rss in self.samples:
            for k, v in rss.items():
                out[k] = max(out.get(k, 0.0), v)
        return out


PROFILE_PARTS = {  # where a busy app process spends its time (stack contains ...)
    "script threads (ScriptRunner)": "_run_script_thread",
    "  the student page's slide (render_step)": "render_step",
    "  Plotly (figures, to_json)": "plotly/",
    "  element ids": "compute_and_register_element_id",
    "  message hashes (populate_hash_if_needed)": "populate_hash_if_needed",
    "  the watcher's tick (watch)": "watch (attention_ui/classroom/student_view",
    "_write_to_self (one self-pipe write per message)": "_write_to_self",
    "event loop (_run_once)": "_run_once",
    "  websocket send (uvicorn/websockets)": "websockets/",
    "SQLite": "sqlite",
}


def profile_summary(path: Path) -> list[str]:
    """Shares of py-spy's active samples (its raw format: one stack per line, then a count)."""
    total, parts, leaf = 0, dict.fromkeys(PROFILE_PARTS, 0), {}
    for line in path.read_text(errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        count = int(n)
        total += count
        for name, needle in PROFILE_PARTS.items():
            if needle in stack:
                parts[name] += count
        top = stack.split(";")[-1]
        leaf[top] = leaf.get(top, 0) + count
    if not total:
        return ["no samples"]
    out = [f"{total} active samples"]
    out += [f"{name}: {100 * c / total:.0f} %" for name, c in parts.items()]
    out += ["busiest leaf functions:"]
    out += [f"  {100 * c / total:4.1f} % {f}" for f, c in sorted(leaf.items(), key=lambda x: -x[1])[:12]]
    return out


def haproxy_log_states(cluster, since: float) -> list[str]:
    """HAProxy's own lines about a server going DOWN or UP (its log is the run folder's haproxy.log)."""
    try:
        lines = cluster.haproxy_log.read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [ln.strip()[:200] for ln in lines if re.search(r"Server \S+ is (DOWN|UP)|no server available", ln)]


# ----------------------------------------------------------------------------- the class
# In the teacher's tabs, from their first script: when the page got each press (the input event's own
# time, on the machine's clock) and when it sent each message to the server. Playwright's click()
# first waits for the button to be visible and still; a teacher's hand does not, so the follow time
# counts from the press the page got (and the bench's call to it is printed beside it).
PRESS_TIMES_JS = """
window.__presses = []; window.__sends = [];
document.addEventListener('pointerdown', (e) => window.__presses.push(performance.timeOrigin + e.timeStamp), true);
const __send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) { window.__sends.push(Date.now()); return __send.call(this, data); };
"""

PRESENTER_STATE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const title = document.querySelector('h1');  // the slide's heading: "3. Raw scores QKᵀ"
    return [title && title.innerText.slice(0, 40), app && app.getAttribute('data-test-script-state'), app && app.getAttribute('data-test-connection-state')];
}"""


class Hall:
    def __init__(self, args, cluster, db) -> None:
        self.args, self.cluster, self.db = args, cluster, db
        self.base = cluster.url
        self.students: list[Student] = []
        self.clicks: dict[int, float] = {}
        self.panel_counts: list[tuple[float, int]] = []
        self.poll_open_click: float | None = None
        self.poll_on_panel: float | None = None
        self.stored_at: dict[int, float] = {}  # the class's step -> when this process first read it
        self.page_errors: list[str] = []  # a teacher tab that crashed (the panel then stays empty)
        self.tab_events: list[str] = []  # the teacher's tabs: websockets opened and closed, console errors
        self.tabs_closing = False
        self.presses: list[float] = []  # the presenter tab's own times (ms since the epoch): PRESS_TIMES_JS
        self.sends: list[float] = []
        self.panel_presses: list[float] = []

    def watch_tab(self, page, name: str) -> None:
        """The teacher's tab's websockets (opened, closed) and console errors, with the time: a tab that
        stops following says when and how here."""

        def note(what: str) -> None:
            if self.tabs_closing:  # the run's own end closes every websocket: not an event
                return
            self.tab_events.append(f"{time.strftime('%H:%M:%S')} {name}: {what}"[:300])

        frames: deque = deque(maxlen=40)  # the last messages the tab received, summed up

        def frame(payload) -> None:
            with suppress(Exception):
                fwd = proto.parse(payload if isinstance(payload, bytes) else payload.encode("latin-1"))
                kind = fwd.WhichOneof("type")
                what = kind
                if kind == "delta":
                    what = f"delta {fwd.delta.WhichOneof('type')}"
                    el = proto.element(fwd)
                    if el:
                        what += f" {el[0]}"
                elif kind == "new_session":
                    what = f"new_session fragments {list(fwd.metadata.run.fragment_ids)[:2]}"
                elif kind == "script_finished":
                    what = f"script_finished {fwd.script_finished}"
                path = list(fwd.metadata.delta_path)
                frames.append(f"{time.time() % 100:.2f} {what} path={path} frag={fwd.delta.fragment_id[:8]}")

        def on_error(e) -> None:
            note(f"page error: {e}")
            for f in list(frames):
                note(f"  received before it: {f}")

        def on_ws(ws) -> None:
            note(f"websocket opened {ws.url[-30:]}")
            ws.on("framereceived", frame)
            ws.on("close", lambda _ws: note("websocket closed"))
            ws.on("socketerror", lambda err: note(f"websocket error {err}"))

        page.on("websocket", on_ws)
        page.on("console", lambda m: m.type in ("error", "warning") and note(f"console {m.type}: {m.text}"))
        page.on("pageerror", on_error)

    async def store_watch(self, sid: str, token: str) -> None:
        """When the teacher's step reached the store (the click's own delay, apart from the students')."""
        while True:
            with suppress(Exception):
                info = await asyncio.to_thread(self.db.teacher_session, sid, token)
                self.stored_at.setdefault(int(info.view.get("step") or 1), time.time())
            await asyncio.sleep(0.1)

    async def panel_watch(self, panel) -> None:
        js = """() => {
            const box = document.querySelector('.st-key-cls_live_poll');
            const t = box && box.querySelector('.gtitle');
            return [box ? box.innerText : '', t ? t.textContent : ''];
        }"""
        while True:
            with suppress(Exception):
                text, title = await panel.evaluate(js)
                now = time.time()
                if self.poll_on_panel is None and "Poll 1" in text and self.poll_open_click is not None:
                    self.poll_on_panel = now
                    if self.args.teacher_log:  # (monotonic: the clock of the servers' traces)
                        self.tab_events.append(f"{time.strftime('%H:%M:%S')} panel shows the poll at"
                                               f" monotonic {time.monotonic():.3f}")  # fmt: skip
                if m := re.search(r"Answers: (\d+)", title or ""):
                    n = int(m.group(1))
                    if not self.panel_counts or self.panel_counts[-1][1] != n:
                        self.panel_counts.append((now, n))
            await asyncio.sleep(PANEL_POLL_S)

    async def run(self) -> dict:
        RECEIVED[0] = 0
        args, r = self.args, {"students": self.args.students, "replicas": self.args.replicas,
                              "store": self.args.store, "load_before": os.getloadavg()}  # fmt: skip
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(headless=True, executable_path=chromium_executable(),
                                               args=BENCH_CHROMIUM_ARGS)  # fmt: skip
            driver = [p.pid for p in psutil.Process().children() if "node" in p.name() or "playwright" in " ".join(p.cmdline()[:2])]  # fmt: skip
            sampler = Sampler(self.cluster, lambda: driver)
            sampler.start()
            try:
                tctx, presenter, code, sid, token = await start_class(browser, self.base)
                await tctx.add_init_script(PRESS_TIMES_JS)  # the tabs opened from here on ...
                await presenter.evaluate("() => {" + PRESS_TIMES_JS + "}")  # ... and the one open
                panel = await tctx.new_page()
                for name, page in (("presenter", presenter), ("panel", panel)):
                    page.on("crash", lambda _p, n=name: self.page_errors.append(f"teacher's {n} tab crashed at"
                                                                                f" {time.strftime('%H:%M:%S')}"))  # fmt: skip
                    if args.teacher_log:
                        self.watch_tab(page, name)
                await panel.goto(f"{self.base}/class_teach?lang=en")
                await panel.locator(".st-key-cls_open button").wait_for()
                await presenter.locator(".st-key-cls_to_presenter button").click()
                await presenter.locator(".st-key-pg_present_next button").wait_for()
                watcher = asyncio.get_running_loop().create_task(self.panel_watch(panel))
                stored = asyncio.get_running_loop().create_task(self.store_watch(sid, token))

                # 1. The hall joins, JOIN_AT_ONCE at a time.
                self.students = [Student(i, self) for i in range(args.students)]
                gate = asyncio.Semaphore(JOIN_AT_ONCE)

                async def join(s: Student) -> None:
                    async with gate:
                        try:
                            await asyncio.wait_for(s.join(code), JOIN_TIMEOUT_S)
                        except Exception as exc:  # noqa: BLE001
                            s.errors.append(f"join: {type(exc).__name__}: {exc}")

                t_join = time.time()
                await asyncio.gather(*(join(s) for s in self.students))
                r["join_s"] = time.time() - t_join
                joined = [s for s in self.students if s.joined_s is not None]
                r["joined"] = len(joined)
                r["join_each_s"] = (
                    pct([s.joined_s for s in joined], 0.5),
                    pct([s.joined_s for s in joined], 0.95),
                )
                r["spread"] = {
                    k: sum(1 for s in joined if s.replica == k) for k in sorted({s.replica for s in joined})
                }
                t_idle = time.time()
                await asyncio.sleep(args.settle)
                r["idle_cpu"] = sampler.cpu_between(t_idle + 1.5, time.time() - 1.5)  # (the window's edges)

                # 2. The teacher steps every few seconds; the poll opens at --poll-at, answers come meanwhile.
                t_steps, step = time.time(), 1
                spy = None
                if args.profile:  # py-spy on the first app process while the teacher steps
                    out = ROOT / "bench" / "out" / f"hall_profile_{args.students}.txt"
                    out.parent.mkdir(parents=True, exist_ok=True)
                    spy = await asyncio.create_subprocess_exec(
                        str(Path(sys.executable).parent / "py-spy"), "record", "--pid",
                        str(self.cluster.replicas[0].pid), "--rate", "50", "--nonblocking", "--format", "raw",
                        "--duration", str(int(args.steps * args.step_every)), "--output", str(out),
                        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
                    )  # fmt: skip
                for n in range(args.steps):
                    step += 1
                    self.clicks[step] = time.time()
                    # (on the clock of the servers' traces, bench/streamlit_session_trace)
                    if args.teacher_log:
                        self.tab_events.append(f"{time.strftime('%H:%M:%S')} click to step {step} at "
                                               f"monotonic {time.monotonic():.3f}")  # fmt: skip
                    await presenter.locator(".st-key-pg_present_next button").click()
                    if n + 1 == args.poll_at:
                        self.poll_open_click = time.time()
                        if args.teacher_log:
                            self.tab_events.append(f"{time.strftime('%H:%M:%S')} click to open the poll at"
                                                   f" monotonic {time.monotonic():.3f}")  # fmt: skip
                        await panel.locator(".st-key-cls_open button").click()
                    if args.teacher_log:  # the presenter tab just before the next click
                        await asyncio.sleep(max(0.0, self.clicks[step] + args.step_every - time.time() - 0.3))
                        with suppress(Exception):
                            state = await presenter.evaluate(PRESENTER_STATE_JS)
                            self.tab_events.append(
                                f"{time.strftime('%H:%M:%S')} presenter before step {step + 1}: {state}"
                            )
                    await asyncio.sleep(max(0.0, self.clicks[step] + args.step_every - time.time()))
                t_steps_end = time.time()
                with suppress(Exception):
                    self.presses, self.sends = await presenter.evaluate(
                        "() => [window.__presses, window.__sends]"
                    )
                    self.panel_presses = await panel.evaluate("() => window.__presses")
                if spy is not None:
                    await spy.wait()
                    r["profile"] = profile_summary(out)
                if args.poll_at > args.steps:  # no step left to overlap with: open it now
                    self.poll_open_click = time.time()
                    await panel.locator(".st-key-cls_open button").click()
                # 3. Wait until every joined student has had the last step and an answer settled.
                deadline = time.monotonic() + args.drain
                while time.monotonic() < deadline and not self._settled(joined, step):
                    await asyncio.sleep(0.5)
                await asyncio.sleep(2 * PANEL_POLL_S + 2.5)  # the panel's last refresh
                watcher.cancel()
                stored.cancel()
                r["cpu"] = sampler.cpu_between(t_steps, t_steps_end)
                for name, page in (("presenter", presenter), ("panel", panel)) if args.teacher_log else ():
                    with suppress(Exception):  # what the teacher's tabs showed at the end (bench/out)
                        await page.screenshot(
                            path=str(ROOT / "bench" / "out" / f"hall_{args.students}_{name}.png")
                        )
                with suppress(Exception):  # what the panel showed at the end (a panel that stopped: why)
                    r["panel_text"] = (await panel.locator("body").inner_text(timeout=10_000))[-600:]
                r["stored"] = [
                    (nick, choice) for seq, nick, choice in self.db.export_answers(sid, token) if seq == 1
                ]
            finally:
                sampler.stop()
                await asyncio.gather(*(s.close() for s in self.students))
                self.tabs_closing = True
                await browser.close()
        r.update(self._figures(joined, step, sampler))
        r["load_after"] = sampler.loads[-1]
        return r

    def _settled(self, joined, last_step) -> bool:
        if any(last_step not in s.arrived and not any(k >= last_step for k in s.arrived) for s in joined):
            return False
        return all(1 in s.acks or (1 in s.sent and time.time() - s.sent[1][1] > ACK_TIMEOUT_S) or s.closed
                   for s in joined)  # fmt: skip

    def _pressed(self, presses: list[float], called: float) -> float | None:
        """The first press a tab got after the bench's call at ``called`` (seconds), or None."""
        return next((p / 1000 for p in presses if p / 1000 >= called - 0.05), None)

    def _figures(self, joined, last_step, sampler) -> dict:
        r: dict = {}
        # Each step counts from the press the presenter's page got (the bench's call when the page's
        # times are missing): Playwright's own checks before a click are not the teacher's.
        starts = {k: self._pressed(self.presses, c) or c for k, c in self.clicks.items()}
        delays, per_step, skipped, missing, from_call = [], {}, 0, 0, []
        for step, start in sorted(starts.items()):
            row = []
            for s in joined:
                later = [t for k, t in s.arrived.items() if k >= step]
                if not later:
                    missing += 1
                    continue
                if step not in s.arrived:
                    skipped += 1
                row.append(min(later) - start)
                from_call.append(min(later) - self.clicks[step])
            per_step[step] = row
            delays += row
        r["follow"] = (pct(delays, 0.5), pct(delays, 0.95), max(delays, default=float("nan")))
        r["follow_from_call"] = (
            pct(from_call, 0.5),
            pct(from_call, 0.95),
            max(from_call, default=float("nan")),
        )
        r["follow_per_step"] = {k: (pct(v, 0.5), pct(v, 0.95), max(v, default=float("nan"))) for k, v in per_step.items()}  # fmt: skip
        r["follow_skipped"], r["follow_missing"] = skipped, missing
        # Where a click's time goes: the bench's call -> the page got the press -> the page sent its
        # message -> the store had the step (None: not seen).
        parts = {}
        for k, c in sorted(self.clicks.items()):
            press = self._pressed(self.presses, c)
            send = None if press is None else next((x / 1000 for x in self.sends if x / 1000 >= press), None)
            stored = self.stored_at.get(k)
            parts[k] = tuple(None if a is None or b is None else round(b - a, 2)
                             for a, b in ((c, press), (press, send), (send, stored)))  # fmt: skip
        r["click_parts"] = parts
        # The teacher's press until the store had the step (None: never), and the students' part alone.
        r["click_to_store"] = {k: round(self.stored_at[k] - c, 2) if k in self.stored_at else None
                               for k, c in sorted(starts.items())}  # fmt: skip
        from_store = [d - (self.stored_at[k] - starts[k]) for k, row in per_step.items() if k in self.stored_at
                      for d in row]  # fmt: skip
        r["store_to_student"] = (
            pct(from_store, 0.5),
            pct(from_store, 0.95),
            max(from_store, default=float("nan")),
        )
        acked = {s.nick: s.acks[1][0] for s in joined if 1 in s.acks}
        sent = {s.nick: s.sent[1] for s in joined if 1 in s.sent}
        r["answers_sent"], r["answers_acked"] = len(sent), len(acked)
        r["ack_delay"] = (pct([s.acks[1][1] - s.sent[1][1] for s in joined if 1 in s.acks and 1 in s.sent], 0.5),
                          pct([s.acks[1][1] - s.sent[1][1] for s in joined if 1 in s.acks and 1 in s.sent], 0.95))  # fmt: skip
        r["_acked"] = acked
        r["panel_count"] = self.panel_counts[-1][1] if self.panel_counts else 0
        poll_press = (
            None if self.poll_open_click is None else self._pressed(self.panel_presses, self.poll_open_click)
        )
        r["poll_on_panel_s"] = (
            None if self.poll_on_panel is None else self.poll_on_panel - (poll_press or self.poll_open_click)
        )
        ack_times = sorted(s.acks[1][1] for s in joined if 1 in s.acks)
        lags = []
        for k, t in enumerate(ack_times, start=1):
            shown = next((ts for ts, n in self.panel_counts if n >= k), None)  # (before the ack: no lag)
            lags.append(float("inf") if shown is None else max(0.0, shown - t))
        r["panel_lag"] = (pct(lags, 0.5), pct(lags, 0.95), max(lags, default=float("nan")))
        r["states"] = [(round(t - sampler.samples[0][0], 1), n, st) for t, n, st in sampler.states]
        r["checks"] = {k: (v[0] - sampler.checks0.get(k, (0, 0))[0], v[1] - sampler.checks0.get(k, (0, 0))[1])
                       for k, v in sampler.checks.items()}  # fmt: skip
        r["haproxy_log"] = haproxy_log_states(self.cluster, 0)
        r["rss"] = sampler.peak_rss()
        t0 = sampler.samples[0][0] if sampler.samples else 0.0
        r["timeline"] = [  # per second: time, CPU s of each process so far, messages received so far
            (round(t - t0, 1), {k: round(v, 2) for k, v in cpu.items()}, n)
            for (t, cpu, _), n in zip(sampler.samples, sampler.received, strict=True)
        ]
        r["marks"] = {"steps": [round(c - t0, 1) for c in sorted(self.clicks.values())]}
        for s in joined:
            if not any(k >= last_step for k in s.arrived):
                s.errors.append(f"last step shown {max(s.arrived, default=None)}; run_every timers {len(s.timers)};"
                                f" last message {time.time() - s.last_message:.0f} s ago; {list(s.log)[-12:]}")  # fmt: skip
        for s in joined:  # an answer sent and not acknowledged: what the student's page received last
            if 1 in s.sent and 1 not in s.acks:
                s.errors.append(f"answer {s.sent[1][0]} sent at {s.sent[1][1] % 1000:.2f}, no acknowledgement;"
                                f" received last {list(s.log)[-14:]}")  # fmt: skip
        r["tab_events"] = self.tab_events
        r["errors"] = self.page_errors + [f"{s.nick}: {e}" for s in self.students for e in s.errors]
        r["closed"] = [f"{s.nick}: {s.closed}" for s in self.students if s.closed]
        return r


def verdict(r: dict, timing: bool = True) -> list[str]:
    """What went wrong (empty: the run holds). ``timing=False`` (the test suite's --smoke run): only
    what must hold on any machine, however loaded (joins, steps, answers, the panel's count)."""
    out = []
    stored = dict(r["stored"])
    acked = r["_acked"]
    if r["joined"] < r["students"]:
        out.append(f"{r['students'] - r['joined']} never joined")
    if timing and r["follow"][1] > HOLDS["follow_p95_s"]:
        out.append(f"follow p95 {r['follow'][1]:.1f} s > {HOLDS['follow_p95_s']:g} s")
    if r["follow_missing"]:
        out.append(f"{r['follow_missing']} (student, step) never shown")
    downs = [s for s in r["states"] if s[2] != "UP"]  # a server coming UP (its first check) is no failure
    if timing and (downs or any(v[1] for v in r["checks"].values())):
        out.append(f"HAProxy marked a backend down: {downs or r['checks']}")
    unconfirmed = sorted(set(stored) - set(acked))
    if unconfirmed:
        out.append(
            f"{len(unconfirmed)} stored answers never confirmed to their student ({', '.join(unconfirmed[:5])})"
        )
    lost = sorted(n for n in acked if n not in stored or chr(65 + stored[n]) != acked[n])
    if lost:
        out.append(f"{len(lost)} acknowledged answers not stored as acknowledged ({', '.join(lost[:5])})")
    if r["answers_sent"] < r["joined"]:
        out.append(f"{r['joined'] - r['answers_sent']} students never got to answer")
    if r["panel_count"] != len(stored):
        out.append(f"the panel counted {r['panel_count']} of {len(stored)} stored answers"
                   f" (it showed: {r.get('panel_text', '?')[-200:]!r})")  # fmt: skip
    if r["poll_on_panel_s"] is None or (timing and r["poll_on_panel_s"] > HOLDS["panel_s"]):
        shown = r["poll_on_panel_s"]
        out.append(
            "the poll never reached the panel"
            if shown is None
            else f"the poll reached the panel after {shown:.1f} s"
        )
    if timing and r["panel_lag"][2] > HOLDS["panel_s"]:
        out.append(f"an answer reached the panel {r['panel_lag'][2]:.1f} s after its acknowledgement")
    if r["closed"]:
        out.append(f"{len(r['closed'])} websockets closed")
    broken = [e for e in r.get("tab_events", []) if "page error" in e or "websocket closed" in e]
    if broken:  # the teacher's tab threw or lost its connection (Streamlit's page does not recover)
        out.append(f"the teacher's tab broke: {broken[0][:160]}")
    return out


def report(r: dict, timing: bool = True) -> bool:
    la0, la1 = r["load_before"], r["load_after"]
    print(f"\n== {r['students']} students, {r['replicas']} app processes behind HAProxy, {r['store']}; "
          f"load average {la0[0]:.2f}/{la0[1]:.2f}/{la0[2]:.2f} before, {la1[0]:.2f}/{la1[1]:.2f}/{la1[2]:.2f} after")  # fmt: skip
    print(f"joined {r['joined']} of {r['students']} in {r['join_s']:.1f} s (each: p50 {r['join_each_s'][0]:.2f} s,"
          f" p95 {r['join_each_s'][1]:.2f} s); per process {r['spread']}")  # fmt: skip
    f = r["follow"]
    print(f"follow (the teacher's press -> the step's chart on the page): p50 {f[0]:.2f} s, p95 {f[1]:.2f} s,"
          f" max {f[2]:.2f} s; students who skipped a step {r['follow_skipped']}, never shown {r['follow_missing']}")  # fmt: skip
    c = r["follow_from_call"]
    print(f"  from the bench's click call instead (Playwright's checks first): p50 {c[0]:.2f} s, p95 {c[1]:.2f} s,"
          f" max {c[2]:.2f} s")  # fmt: skip
    print(f"  the teacher's press -> the store has the step (s): {r['click_to_store']}")
    print("  of which (s): the bench's call -> the page's press / -> the page sent it / -> the store: "
          + ", ".join(f"{k}: {a}/{b}/{c}" for k, (a, b, c) in r.get("click_parts", {}).items()))  # fmt: skip
    g = r["store_to_student"]
    print(
        f"  the store has the step -> the student has it: p50 {g[0]:.2f} s, p95 {g[1]:.2f} s, max {g[2]:.2f} s"
    )
    print("  per step p50/p95/max: " + ", ".join(f"{k}: {a:.1f}/{b:.1f}/{c:.1f}" for k, (a, b, c) in r["follow_per_step"].items()))  # fmt: skip
    print(f"answers: sent {r['answers_sent']}, acknowledged {r['answers_acked']} (send -> ack p50 {r['ack_delay'][0]:.2f} s,"
          f" p95 {r['ack_delay'][1]:.2f} s), stored {len(r['stored'])}, counted on the teacher's panel {r['panel_count']}")  # fmt: skip
    print(f"teacher's panel: the poll shown {r['poll_on_panel_s'] if r['poll_on_panel_s'] is None else round(r['poll_on_panel_s'], 2)} s"
          f" after the press; each acknowledged answer counted there after p50 {r['panel_lag'][0]:.2f} s,"
          f" p95 {r['panel_lag'][1]:.2f} s, max {r['panel_lag'][2]:.2f} s")  # fmt: skip
    idle = {k: v[0] for k, v in r.get("idle_cpu", {}).items() if re.fullmatch(r"r\d+", k)}
    if idle:
        # (% of a core -> ms of a core per second, per student; a page checks every few seconds, and
        # its websocket's heartbeats and the bell's rounds count here too)
        per_s = {k: round(10 * v / max(1, r["spread"].get(k, 1)), 1) for k, v in idle.items()}
        print(f"following, nothing changing: CPU per app process {', '.join(f'{k} {v:.0f} %' for k, v in idle.items())}"
              f" = {per_s} ms of a core per student per second")  # fmt: skip
    print("CPU while the teacher steps (% of one core, average / busiest second), peak RSS:")
    for name, (avg, peak) in r["cpu"].items():
        print(f"  {name:10s} {avg:5.0f} % / {peak:4.0f} %   {r['rss'].get(name, 0):6.0f} MB")
    print(
        f"HAProxy: state changes {r['states'] or 'none'}; failed checks / marked down per server {r['checks']}"
    )
    for line in r["haproxy_log"][:10]:
        print(f"  {line}")
    for line in r.get("tab_events", [])[:20]:
        print(f"  teacher {line}")
    for line in (r["errors"] + r["closed"])[:15]:
        print(f"  {line}")
    wrong = verdict(r, timing)
    print(
        "what went wrong: "
        + ("; ".join(wrong) if wrong else "nothing")
        + ("\nHOLDS" if not wrong else "\nFAILS")
    )
    return not wrong


QUIET_LOAD, QUIET_WAIT_S = 1.5, 180.0


def wait_for_quiet() -> None:
    """Until the 1-minute load average is under QUIET_LOAD (at most QUIET_WAIT_S; the run then says
    the load it started at, as every run does)."""
    deadline = time.monotonic() + QUIET_WAIT_S
    while os.getloadavg()[0] >= QUIET_LOAD and time.monotonic() < deadline:
        time.sleep(5)


def table(rows: list[dict]) -> None:
    r0 = rows[0]
    print(f"\n{r0['replicas']} app processes behind HAProxy, {r0['store']}, the clients on the same machine"
          f" ({os.cpu_count()} cores)")  # fmt: skip
    print("\n| students | follow p50 / p95 / max (s) | p95 from the bench's call (s) | poll on the panel (s) |"
          " answers acknowledged / stored / on the panel | CPU per app process during steps (avg / 1-s peak) |"
          " load average before → after | what went wrong |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        apps = [v for k, v in r["cpu"].items() if re.fullmatch(r"r\d+", k)]
        cpu = ", ".join(f"{a:.0f} % / {p:.0f} %" for a, p in apps)
        wrong = "; ".join(verdict(r)) or "–"
        panel = "–" if r["poll_on_panel_s"] is None else f"{r['poll_on_panel_s']:.1f}"
        print(f"| {r['students']} | {r['follow'][0]:.1f} / {r['follow'][1]:.1f} / {r['follow'][2]:.1f} |"
              f" {r['follow_from_call'][1]:.1f} | {panel} | {r['answers_acked']} / {len(r['stored'])} / {r['panel_count']} | {cpu} |"
              f" {r['load_before'][0]:.1f} → {r['load_after'][0]:.1f} | {wrong} |")  # fmt: skip


async def one_run(args) -> dict:
    env = {"ATTENTION_LAB_JOINS_PER_ADDRESS": str(max(100, 2 * args.students))}
    with live_cluster(args.store, args.replicas, env=env) as (cluster, db, _stats):
        hall = Hall(args, cluster, db)
        r = await hall.run()
        r["run_dir"] = str(cluster.run_dir)
        return r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=300)
    ap.add_argument("--replicas", type=int, default=2, help="app processes behind HAProxy")
    ap.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    ap.add_argument("--steps", type=int, default=10, help="teacher's Next clicks (at most 10)")
    ap.add_argument("--step-every", type=float, default=5.0, help="seconds between the teacher's steps")
    ap.add_argument("--poll-at", type=int, default=3, help="the poll opens with this step (1-based)")
    ap.add_argument("--settle", type=float, default=8.0, help="seconds of following before the first step")
    ap.add_argument("--drain", type=float, default=90.0, help="after the last step, wait at most this long")
    ap.add_argument("--smoke", action="store_true",
                    help="the test suite's run: 20 students, 2 steps 4 s apart, no timing verdict")  # fmt: skip
    ap.add_argument(
        "--table", action="store_true", help=f"N = {', '.join(map(str, TABLE_NS))}: the issue's table"
    )
    ap.add_argument("--profile", action="store_true",
                    help="py-spy (50 Hz) on the first app process while the teacher steps (bench/requirements-bench.txt)")  # fmt: skip
    ap.add_argument("--teacher-log", action="store_true",
                    help="record the teacher's tabs (websockets, console and page errors, the presenter's state"
                         " before each click) and screenshot them into bench/out at the end")  # fmt: skip
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    if args.smoke:
        args.students, args.steps, args.step_every, args.poll_at, args.settle, args.drain = (
            20,
            2,
            4.0,
            1,
            2.0,
            60.0,
        )
        THINK_S[:] = [0.5, 3.0]
    args.steps = max(1, min(args.steps, MAX_STEPS - 1))
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    rows = []
    for n in TABLE_NS if args.table else (args.students,):
        args.students = n
        if args.table:  # each run starts on a quiet machine: the previous run's load first dies down
            wait_for_quiet()
        r = asyncio.run(one_run(args))
        ok = report(r, timing=not args.smoke)
        rows.append(r)
        sys.stdout.flush()
    if args.table:
        table(rows)
    if args.json:
        args.json.write_text(json.dumps([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows],
                                        indent=1, default=str))  # fmt: skip
    return 0 if (ok and not args.table) or (args.table and all(not verdict(r) for r in rows)) else 1


if __name__ == "__main__":
    raise SystemExit(main())

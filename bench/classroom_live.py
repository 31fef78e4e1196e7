"""Live class under load: a teacher and N students in headless Chromium through HAProxy in front
of 2 app processes (deploy/serve_class.py, as ``make serve-class``), P polls, SQLite or PostgreSQL.

    .venv/bin/python bench/classroom_live.py                     # 30 students, 5 polls, both stores
    .venv/bin/python bench/classroom_live.py --store sqlite --kill-poll 3   # + one process killed in poll 3
    .venv/bin/python bench/classroom_live.py --smoke             # 3 students, 2 polls, kill in poll 2

The teacher's browser starts the class on the class page and moves the step in presenter mode; the
polls are opened, closed and revealed through the store with the teacher's key read from the
teacher's browser cookie (what the class page's buttons call). Each student's phone-sized page
(390×844) joins with the code and a nickname (s00, s01, ...), and answers each poll (choice i mod 4),
waiting for the page's acknowledgement.

Reported:
  * time from the teacher's click on Next until 50 % / 95 % / 100 % of the students show the new
    step (a 100 ms timer in each page notes when its caption first says it);
  * answers acknowledged (the student's page said "received") vs. counted by the store, per poll;
    and that every acknowledged answer (nickname, choice) is among the counted ones;
  * pages that their watchdog redrew (attention_ui/classroom/student_view.py: the page had lost its
    1-s timer, or a run on its way from the server);
  * server CPU (both processes) per student per minute, store statements per second (each process
    counts its own, ATTENTION_LAB_STORE_STATS), the load average before and after;
  * with --kill-poll K: one process (the one with more students) is SIGKILLed when half the answers
    of poll K are in; its students' pages reconnect through HAProxy to the other process (their
    cookie brings their identity back); the time until each follows the teacher's next step.
Exit status 0 only if acknowledged == counted for every poll and every student followed every step.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import psutil
from playwright.async_api import async_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))
sys.path.insert(0, str(ROOT / "deploy"))
from serve_class import Cluster, free_port  # noqa: E402
from st_browser import CHROMIUM_ARGS, chromium_executable  # noqa: E402

from attention_ui.classroom import questions  # noqa: E402
from bench.harness import tree_cpu_s  # noqa: E402
from classroom.postgres_store import PostgresStore  # noqa: E402
from classroom.sqlite_store import SqliteStore  # noqa: E402
from classroom.throwaway_postgres import ThrowawayPostgres  # noqa: E402

# Each student page is its own context (cookies, storage) in one shared browser; Chromium must not
# slow the timers of pages it considers in the background (the page's 1-s watcher is a timer).
BENCH_CHROMIUM_ARGS = [*CHROMIUM_ARGS, "--disable-background-timer-throttling",
                       "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"]  # fmt: skip
TIMEOUT_MS = 60_000
JOIN_WAVE = 5  # students joining at once (a class does not all scan the code in the same second)
JOIN_TRY_MS = 45_000  # one try at joining; two tries, then the student counts as not joined
ANSWER_TRY_MS = 20_000  # one try at answering; a page that lost its process tries again after reconnecting
ANSWER_TRIES = 3
FOLLOW_TIMEOUT_S = 30  # a page that has not shown a step after this is reported as not following
IDLE_S = 20  # students following with nothing changing: the watchers' own cost
OUT = ROOT / "bench" / "out"
SEEN_JS = """
window.__seen = window.__seen || {};
setInterval(() => {
  for (const el of document.querySelectorAll('[data-testid="stCaptionContainer"]')) {
    const m = el.innerText.match(/step (\\d+) of 11/);
    if (m && !(m[1] in window.__seen)) window.__seen[m[1]] = Date.now();
  }
}, 100);
"""


def pct(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def browser_pids() -> list[int]:
    """This process's Playwright driver and the Chromium it launched (not the servers)."""
    out = []
    for c in psutil.Process().children(recursive=False):
        try:
            if "node" in c.name() or "playwright" in " ".join(c.cmdline()[:2]):
                out.append(c.pid)
        except psutil.Error:
            pass
    return out


def store_queries(folder: Path) -> int:
    import json

    total = 0
    for f in folder.glob("*.json"):
        try:
            total += json.loads(f.read_text())["queries"]
        except (OSError, ValueError, KeyError):
            pass
    return total


def log_count(cluster, needle: str) -> int:
    n = 0
    for r in cluster.replicas:
        try:
            n += r.log.read_text(errors="replace").count(needle)
        except OSError:
            pass
    return n


async def follow_times(pages, step, t0_ms, timeout_s=FOLLOW_TIMEOUT_S):
    """Seconds from t0 until each page noted ``step`` (None: never within the timeout)."""
    deadline = time.monotonic() + timeout_s
    out = [None] * len(pages)

    async def seen_at(p):
        try:
            return await p.evaluate(f"() => (window.__seen || {{}})['{step}'] || null")
        except Exception:
            return None

    while time.monotonic() < deadline and None in out:
        todo = [i for i, x in enumerate(out) if x is None]
        for i, seen in zip(todo, await asyncio.gather(*(seen_at(pages[i]) for i in todo)), strict=True):
            if seen:
                out[i] = (seen - t0_ms) / 1000
        await asyncio.sleep(0.25)
    return out


WS_FRAMES: dict = {}  # page -> [frames sent, frames received, time of the last sent, of the last received]


def watch_socket(page) -> None:
    """Count the page's websocket frames: a page that stops following either stops sending its
    1-s ticks (the browser lost its timer) or sends them and hears nothing back (the server)."""
    counts = WS_FRAMES.setdefault(page, [0, 0, 0.0, 0.0])

    def on_ws(ws) -> None:
        def sent(_):
            counts[0] += 1
            counts[2] = time.monotonic()

        def received(_):
            counts[1] += 1
            counts[3] = time.monotonic()

        ws.on("framesent", sent)
        ws.on("framereceived", received)

    page.on("websocket", on_ws)


async def describe(page, name: str, tag: str) -> str:
    """A page that did not follow: its screenshot (bench/out/) and the start of its text."""
    OUT.mkdir(parents=True, exist_ok=True)
    try:
        await page.screenshot(path=str(OUT / f"live_{tag}_{name}.png"))
        text = (await page.locator("body").inner_text(timeout=5_000)).replace("\n", " | ")[:300]
        state = await page.locator('[data-testid="stApp"]').get_attribute(
            "data-test-script-state", timeout=5_000
        )
        conn = await page.locator('[data-testid="stApp"]').get_attribute(
            "data-test-connection-state", timeout=5_000
        )
    except Exception as exc:
        return f"{name}: (could not read the page: {type(exc).__name__})"
    frames = ""
    if page in WS_FRAMES:
        sent0, got0 = WS_FRAMES[page][:2]
        await asyncio.sleep(5)
        c = WS_FRAMES[page]
        now = time.monotonic()
        frames = (f"websocket in 5 s: {c[0] - sent0} frames sent, {c[1] - got0} received; last sent"
                  f" {now - c[2]:.1f} s ago, last received {now - c[3]:.1f} s ago; ")  # fmt: skip
    return f"{name}: script {state}, connection {conn}; {frames}text: {text[-160:]}"


async def watchdog_redraws(pages) -> dict:
    """Pages whose watchdog (student_view.py) redrew them because they had seen no run for a while:
    {student: "N quiet, M showing another state"}: N times the page had asked for no rerun for
    WATCHDOG_QUIET_S (its 1-s timer gone), M times it showed another state than its watcher said."""
    out = {}
    for i, p in pages:
        try:
            c = await p.evaluate("() => window.__alClassWatchdog || {}")
        except Exception:
            continue
        if c.get("resyncs"):
            states = "; ".join(
                f"should show {x[0]} (step {x[2]}), showed {x[1]} (step {x[3]})" for x in c.get("states", [])
            )
            out[f"s{i:02d}"] = (
                f"{c.get('quiet', 0)} quiet, {c.get('mismatch', 0)} showing another state ({states})"
            )
    return out


async def answer(page, choice, acks, nick, seq):
    for _ in range(ANSWER_TRIES):
        try:
            box = page.locator(".st-key-cls_poll_box")
            await box.get_by_text(re.compile(rf"Poll {seq}\b")).wait_for(timeout=ANSWER_TRY_MS)
            await box.locator('[role="radiogroup"] label').nth(choice).click(timeout=ANSWER_TRY_MS)
            await page.locator('[class*="st-key-cls_send_"] button:enabled').click(timeout=ANSWER_TRY_MS)
            await page.get_by_text(f"Answer {chr(65 + choice)} received").wait_for(timeout=ANSWER_TRY_MS)
            acks.append((seq, nick, choice))
            return
        except Exception:
            await asyncio.sleep(1)


async def start_class(browser, url: str):
    """The teacher starts a class on the class page in a 1366×768 context of ``browser``; returns
    (context, page, join code, session id, teacher key), the key read from the browser's cookie."""
    tctx = await browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-US")
    tctx.set_default_timeout(TIMEOUT_MS)
    teacher = await tctx.new_page()
    await teacher.goto(f"{url}/class_teach?lang=en")
    await teacher.locator(".st-key-cls_start button").click()
    await teacher.get_by_text("Join code:").wait_for()
    code = "".join(
        re.search(r"\b([A-Z0-9]{3})-([A-Z0-9]{3})\b", await teacher.locator("body").inner_text()).groups()
    )
    cookie, deadline = None, time.monotonic() + 30
    while cookie is None and time.monotonic() < deadline:
        cookie = next(
            (c["value"] for c in await tctx.cookies() if c["name"] == "attnlab_class_teacher"), None
        )
        await asyncio.sleep(0.2)
    if cookie is None:
        raise RuntimeError("the teacher's page set no key cookie within 30 s")
    sid, token = cookie.split(".", 1)
    return tctx, teacher, code, sid, token


@contextmanager
def live_cluster(store_kind: str, replicas: int = 2, env: dict | None = None, streamlit_args=()):
    """``replicas`` app processes behind HAProxy on a new SQLite file or a throwaway PostgreSQL
    database, each process counting its store statements; yields (cluster, the same store opened
    here, the statistics folder). Everything is stopped and the temporary folder kept (its logs)."""
    tmp = Path(tempfile.mkdtemp(prefix="attnlab-live-"))
    stats = tmp / "stats"
    pg = None
    env = {
        "ATTENTION_LAB_STORE_STATS": str(stats),
        "ATTENTION_LAB_DATA_DIR": str(tmp / "data"),
        **(env or {}),
    }
    if store_kind == "postgresql":
        pg = ThrowawayPostgres().start()
        env["ATTENTION_LAB_DATABASE_URL"] = pg.create_database("live")
    else:
        env["ATTENTION_LAB_DATABASE_URL"] = ""
    cluster = Cluster(replicas, free_port(), run_dir=tmp / "run", quiet=True, env=env,
                      streamlit_args=["--browser.gatherUsageStats", "false", *streamlit_args])  # fmt: skip
    db = None
    try:
        cluster.start()
        db = (
            PostgresStore(env["ATTENTION_LAB_DATABASE_URL"])
            if pg
            else SqliteStore(tmp / "data" / "classroom.sqlite3")
        )
        yield cluster, db, stats
    finally:
        if db is not None:
            db.close()
        cluster.stop()
        if pg:
            pg.stop()


async def run_class(cluster, db, *, store_kind: str, students: int, polls: int, kill_poll: int | None,
                    stats: Path | None = None, idle_s: float = IDLE_S, restart_after_kill: bool = False) -> dict:  # fmt: skip
    """One class on a running cluster (``db``: the same store, opened by this process for the
    teacher's poll actions). Returns the figures; see :func:`report`."""
    result: dict = {"store": store_kind, "students": students, "polls": polls, "load_before": os.getloadavg(),
                    "join_failed": [], "not_following": []}  # fmt: skip
    gone0 = log_count(cluster, "does not exist anymore")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(headless=True, executable_path=chromium_executable(),
                                           args=BENCH_CHROMIUM_ARGS)  # fmt: skip
        try:
            tctx, teacher, code, sid, token = await start_class(browser, cluster.url)
            await teacher.locator(".st-key-cls_to_presenter button").click()
            await teacher.locator(".st-key-pg_present_next button").wait_for()

            pages, wave = [], asyncio.Semaphore(JOIN_WAVE)

            async def join(i):
                async with wave:
                    ctx = await browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US")
                    ctx.set_default_timeout(TIMEOUT_MS)
                    await ctx.add_init_script(SEEN_JS)
                    p = await ctx.new_page()
                    watch_socket(p)
                    for _attempt in range(2):  # a page that did not come up under load is opened once more
                        try:
                            await p.goto(f"{cluster.url}/class_join?code={code}&lang=en", timeout=JOIN_TRY_MS)
                            following = p.get_by_text(re.compile(r"step \d+ of 11"))
                            nick = p.locator(".st-key-cls_join_nick input")
                            await following.or_(nick).first.wait_for(timeout=JOIN_TRY_MS)
                            if not await following.count():  # not joined yet (a reload keeps a join: cookie)
                                await nick.fill(f"s{i:02d}")
                                await p.locator('[data-testid="stFormSubmitButton"] button').click()
                            await following.wait_for(timeout=JOIN_TRY_MS)
                            pages.append((i, p))
                            return
                        except Exception:
                            result["join_retries"] = result.get("join_retries", 0) + 1
                    result["join_failed"].append(f"s{i:02d}")
                    await ctx.close()

            t_join = time.monotonic()
            await asyncio.gather(*(join(i) for i in range(students)))
            pages.sort(key=lambda x: x[0])
            result["join_s"] = round(time.monotonic() - t_join, 1)
            result["joined"] = len(pages)
            student_pages = [p for _, p in pages]
            where = {}
            for i, p in pages:
                where[i] = next(
                    (c["value"] for c in await p.context.cookies() if c["name"] == "attnlab_replica"), "?"
                )
            result["spread"] = {r: list(where.values()).count(r) for r in sorted(set(where.values()))}

            def server_cpu():
                return {r.name: tree_cpu_s(r.pid) for r in cluster.replicas if r.pid}

            # 1. Idle: every student follows, nothing changes: what the watchers alone cost.
            n = len(pages)
            if idle_s > 0:
                c0, b0, q0, t0 = (
                    server_cpu(),
                    tree_cpu_s(*browser_pids()),
                    store_queries(stats) if stats else 0,
                    time.monotonic(),
                )
                await asyncio.sleep(idle_s)
                c1, b1, q1, dt = (
                    server_cpu(),
                    tree_cpu_s(*browser_pids()),
                    store_queries(stats) if stats else 0,
                    time.monotonic() - t0,
                )
                if n and dt > 0:
                    result["idle"] = {
                        "seconds": round(dt, 1),
                        "server_cpu_s_per_student_minute": round(
                            sum(c1[k] - c0[k] for k in c0) / n / (dt / 60), 3
                        ),
                        "browser_cpu_s_per_student_minute": round((b1 - b0) / n / (dt / 60), 3),
                        "queries_per_s": round((q1 - q0) / dt, 1) if stats else None,
                    }

            # 2. The class: a step change, then a poll, P times.
            cpu0, bcpu0 = server_cpu(), tree_cpu_s(*browser_pids())
            q0, t0 = store_queries(stats) if stats else 0, time.monotonic()
            step, acks, follows, per_poll, killed, victim_cpu = 1, [], [], [], None, 0.0

            async def move(tag):
                nonlocal step
                step += 1
                click_ms = time.time() * 1000
                await teacher.locator(".st-key-pg_present_next button").click()
                times = await follow_times(student_pages, step, click_ms)
                for (i, p), x in zip(pages, times, strict=True):
                    if x is None:
                        what = await describe(p, f"s{i:02d}", f"{store_kind}_step{step}")
                        try:  # does a reload bring it back? (the student's cookie restores them)
                            await p.reload(timeout=JOIN_TRY_MS)
                            await p.get_by_text(f"step {step} of 11").wait_for(timeout=JOIN_TRY_MS)
                            what += "; after a reload it follows again"
                        except Exception:
                            what += "; a reload did not bring it back"
                        result["not_following"].append(f"step {step} ({tag}): {what}")
                return times

            for seq in range(1, polls + 1):
                times = await move(f"poll {seq}")
                follows.append(times)
                q = questions.quiz_question(questions.QUIZ_KINDS[seq % len(questions.QUIZ_KINDS)], seed=seq)
                poll = db.open_poll(sid, token, q.question, q.n_choices, q.correct, step)
                tasks = [
                    asyncio.create_task(answer(p, i % q.n_choices, acks, f"s{i:02d}", seq)) for i, p in pages
                ]
                if kill_poll == seq:
                    deadline = time.monotonic() + 60
                    while sum(1 for a in acks if a[0] == seq) < n // 2 and time.monotonic() < deadline:
                        await asyncio.sleep(0.2)
                    victim = max(result["spread"], key=result["spread"].get)
                    victim_cpu = tree_cpu_s(cluster.replica(victim).pid)  # its CPU up to the kill
                    kill_t = time.monotonic()
                    cluster.kill(victim)
                    killed = {
                        "replica": victim,
                        "students": result["spread"][victim],
                        "at_acks": sum(1 for a in acks if a[0] == seq),
                    }
                await asyncio.gather(*tasks)
                db.close_poll(sid, token, poll.poll_id, reveal=True)
                tally = db.tallies(sid, token)[-1]
                acked = sum(1 for a in acks if a[0] == seq)
                per_poll.append({"poll": seq, "acknowledged": acked, "counted": tally.total})
                print(f"[{store_kind}] poll {seq}: followed 50 % {pct([x for x in times if x is not None], 0.5):.2f} s,"
                      f" 95 % {pct([x for x in times if x is not None], 0.95):.2f} s, missing {times.count(None)};"
                      f" acknowledged {acked}, counted {tally.total}", flush=True)  # fmt: skip
                if killed and "follow_after_kill" not in killed:
                    times = await move("after the kill")
                    moved = [
                        x for (i, _), x in zip(pages, times, strict=True) if where[i] == killed["replica"]
                    ]
                    killed["follow_after_kill"] = {"all_max_s": max((x for x in times if x is not None), default=None),
                                                   "moved_max_s": max((x for x in moved if x is not None), default=None),
                                                   "missing": times.count(None),
                                                   "kill_to_followed_s": round(time.monotonic() - kill_t, 1)}  # fmt: skip
                    follows.append(times)
            elapsed = time.monotonic() - t0
            cpu1, bcpu1 = server_cpu(), tree_cpu_s(*browser_pids())
            result["watchdog_redraws"] = await watchdog_redraws(pages)
            queries = (store_queries(stats) - q0) if stats else None
            counted = set(db.export_answers(sid, token))
            shown = [x for f in follows for x in f if x is not None]
            result.update(
                per_poll=per_poll,
                acked_all_counted=set(acks) <= counted,
                ack_total=len(acks),
                counted_total=len(counted),
                follow_p50_s=round(pct(shown, 0.5), 2),
                follow_p95_s=round(pct(shown, 0.95), 2),
                follow_50pct_per_step=[round(pct([x for x in f if x is not None], 0.5), 2) for f in follows],
                follow_95pct_per_step=[round(pct([x for x in f if x is not None], 0.95), 2) for f in follows],
                follow_missing=sum(f.count(None) for f in follows),
                minutes=round(elapsed / 60, 2),
                cpu_s={
                    k: round((victim_cpu if k == (killed or {}).get("replica") else cpu1[k]) - cpu0[k], 1)
                    for k in cpu0
                },  # fmt: skip
                browser_cpu_s=round(bcpu1 - bcpu0, 1),
                killed=killed,
                queries_per_s=None if queries is None else round(queries / elapsed, 1),
                fragment_gone_logged=log_count(cluster, "does not exist anymore") - gone0,
            )
            total_cpu = sum(result["cpu_s"].values())
            result["cpu_s_per_student_minute"] = round(total_cpu / max(1, n) / (elapsed / 60), 3)
            result["browser_cpu_s_per_student_minute"] = round(
                result["browser_cpu_s"] / max(1, n) / (elapsed / 60), 3
            )
            result["load_after"] = os.getloadavg()
        finally:
            await browser.close()
    if killed and restart_after_kill:
        cluster.restart(killed["replica"])
    return result


async def run(store_kind: str, students: int, polls: int, kill_poll: int | None) -> dict:
    with live_cluster(store_kind) as (cluster, db, stats):
        return await run_class(cluster, db, store_kind=store_kind, students=students, polls=polls,
                               kill_poll=kill_poll, stats=stats)  # fmt: skip


def report(r: dict) -> bool:
    print(f"\n== store {r['store']}: {r['joined']} of {r['students']} students joined in {r['join_s']} s"
          f" (retries {r.get('join_retries', 0)}, not joined {r['join_failed'] or 'none'}), {r['polls']} polls,"
          f" spread {r['spread']}")  # fmt: skip
    print(
        f"load average before {tuple(round(x, 2) for x in r['load_before'])}, after {tuple(round(x, 2) for x in r['load_after'])}"
    )
    if r.get("idle"):
        i = r["idle"]
        print(f"idle {i['seconds']} s (watchers only): server {i['server_cpu_s_per_student_minute']} CPU s,"
              f" browser {i['browser_cpu_s_per_student_minute']} CPU s per student per minute;"
              f" store statements/s {i['queries_per_s']}")  # fmt: skip
    print(f"step change -> shown: 50 % {r['follow_50pct_per_step']} s, 95 % {r['follow_95pct_per_step']} s per step;"
          f" over all steps p50 {r['follow_p50_s']} s, p95 {r['follow_p95_s']} s; never shown {r['follow_missing']}")  # fmt: skip
    for line in r["not_following"]:
        print(f"  not following, {line}")
    for p in r["per_poll"]:
        print(f"poll {p['poll']}: acknowledged {p['acknowledged']}, counted {p['counted']}")
    print(
        f"every acknowledged answer counted: {r['acked_all_counted']} ({r['ack_total']} acknowledged, {r['counted_total']} counted)"
    )
    print(f"server CPU {r['cpu_s']} s over {r['minutes']} min = {r['cpu_s_per_student_minute']} CPU s per student"
          f" per minute; browsers {r['browser_cpu_s']} s = {r['browser_cpu_s_per_student_minute']} CPU s per student"
          f" per minute")  # fmt: skip
    print(f"store statements/s (both processes): {r['queries_per_s']}")
    print(f"server log 'fragment ... does not exist anymore': {r['fragment_gone_logged']} times")
    print(f"pages the watchdog redrew: {r.get('watchdog_redraws') or 'none'}")
    if r["killed"]:
        print(f"killed {r['killed']}")
    ok = r["acked_all_counted"] and r["follow_missing"] == 0 and not r["join_failed"]
    if not r["killed"]:
        ok = ok and all(p["acknowledged"] == p["counted"] for p in r["per_poll"])
    print("PASS" if ok else "FAIL")
    return ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--polls", type=int, default=5)
    ap.add_argument("--store", choices=("sqlite", "postgresql", "both"), default="both")
    ap.add_argument("--kill-poll", type=int, default=None, help="kill one process during this poll")
    ap.add_argument("--smoke", action="store_true", help="3 students, 2 polls, a kill in poll 2, SQLite")
    args = ap.parse_args(argv)
    if args.smoke:
        args.students, args.polls, args.store, args.kill_poll = 3, 2, "sqlite", 2
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    stores = ("sqlite", "postgresql") if args.store == "both" else (args.store,)
    ok = True
    for kind in stores:
        ok = report(asyncio.run(run(kind, args.students, args.polls, args.kill_poll))) and ok
        sys.stdout.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

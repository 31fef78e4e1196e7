"""A live class in Chromium: one teacher and two students (one on a 390×844 phone, in Japanese)
through HAProxy in front of two app processes that share one SQLite store (deploy/serve_class.py).

The second test sends, at protocol level, the 1-s tick a busy browser sends from the page it is
leaving (the class panel, or presenter mode) while the server already runs the next page: no run
of the page left may follow (it blanked the projector once). The third test makes a phone lose a
whole redraw and then its 1-s timer on purpose (what Streamlit's server can do under load) and
checks that its watchdog brings it back to the teacher's step. The last test is the benchmark's smoke run (bench/classroom_live.py on this cluster): three
students, two polls, one process killed during the second poll.

Start from the class page, the projector's join code and QR code, join from the phones, follow the
presenter's step (the time each phone took is printed), open a poll, answer, live count, reveal,
reload the teacher's page (control resumes from the browser's cookie), export the CSV, end.
The teacher's key never appears in the page's text or address. Screenshots:
artifacts/screenshots/class_<who>_<moment>.png (projector 1920×1080 and 1366×768, phone 390×844,
both languages).
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from st_browser import (
    BROWSER_LOCALES,
    ROOT,
    assert_no_exception,
    browser_language,
    new_context,
    screenshot,
    wait_for_app_run,
)

sys.path.insert(0, str(ROOT / "deploy"))
from serve_class import Cluster, free_port  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]
SLOW_MS = 90_000
CODE = re.compile(r"\b([A-Z0-9]{3})-([A-Z0-9]{3})\b")
# The open poll's options (the sidebar's language switch is a radio group too, off-screen on a phone)
POLL_OPTIONS = '.st-key-cls_poll_box [role="radiogroup"] label'


@pytest.fixture(scope="module")
def class_data(tmp_path_factory) -> Path:
    """The cluster's data folder (its one SQLite file)."""
    return tmp_path_factory.mktemp("classdata")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, class_data) -> Iterator[Cluster]:
    data = class_data
    c = Cluster(2, free_port(), run_dir=tmp_path_factory.mktemp("classrun"), quiet=True,
                streamlit_args=["--browser.gatherUsageStats", "false"],
                env={"ATTENTION_LAB_DATA_DIR": str(data), "ATTENTION_LAB_DATABASE_URL": ""})  # fmt: skip
    try:
        c.start()
    except SystemExit as exc:
        pytest.fail(f"{exc}\n(`make test` installs HAProxy through scripts/ensure_haproxy.sh)", pytrace=False)
    try:
        yield c
    finally:
        c.stop()


def body(page: Page) -> str:
    return page.locator("body").inner_text()


def teacher_token(page: Page) -> str | None:
    value = next((c["value"] for c in page.context.cookies() if c["name"] == "attnlab_class_teacher"), None)
    return value.split(".", 1)[1] if value else None


def no_key_shown(page: Page, token: str) -> None:
    assert token not in body(page) and token not in page.url


def test_live_class_teacher_and_two_phones(browser, cluster: Cluster) -> None:
    base = cluster.url
    teacher_ctx = new_context(browser, width=1920, height=1080, timeout_ms=SLOW_MS)
    phone_ctx = new_context(browser, locale="ja-JP", width=390, height=844, timeout_ms=SLOW_MS)
    laptop_ctx = new_context(browser, width=1366, height=768, timeout_ms=SLOW_MS)
    try:
        teacher = teacher_ctx.new_page()
        teacher.goto(f"{base}/class_teach?lang=en")
        wait_for_app_run(teacher, SLOW_MS)
        teacher.locator(".st-key-cls_start button").click()
        expect(teacher.get_by_text("Join code:")).to_be_visible(timeout=SLOW_MS)
        code = "".join(CODE.search(body(teacher)).groups())
        expect(teacher.locator('[data-testid="stImage"] svg, [data-testid="stImage"] img')).to_have_count(1)
        token = None
        deadline = time.monotonic() + 30
        while token is None and time.monotonic() < deadline:
            token = teacher_token(teacher)  # set by the page's script after the start
            time.sleep(0.2)
        assert token and len(token) >= 43
        no_key_shown(teacher, token)

        phones = {}
        for name, ctx, nick in (("phone", phone_ctx, "ハナ"), ("laptop", laptop_ctx, "<i>Ben</i>")):
            p = ctx.new_page()
            p.goto(f"{base}/class_join?code={code.lower()}")
            wait_for_app_run(p, SLOW_MS)
            p.locator(".st-key-cls_join_nick input").fill(nick)
            p.locator('[data-testid="stFormSubmitButton"] button').click()
            expect(p.get_by_text(re.compile(r"(step|ステップ) 1 / 11|step 1 of 11"))).to_be_visible(
                timeout=SLOW_MS
            )
            # shown as typed, as text (after the step's chart: wait for the end of the run)
            expect(p.get_by_text(nick, exact=False)).to_be_visible(timeout=SLOW_MS)
            assert nick in body(p)
            assert p.locator("i", has_text="Ben").count() == 0
            phones[name] = p
        assert "ハナ" not in body(phones["laptop"]) and "Ben" not in body(phones["phone"])
        screenshot(phones["phone"], "class_phone_ja_joined")

        # presenter mode: the projector's strip and the step the phones follow
        teacher.locator(".st-key-cls_to_presenter button").click()
        expect(teacher.locator(".st-key-pg_present_next button")).to_be_visible(timeout=SLOW_MS)
        expect(teacher.get_by_text("Join code:")).to_be_visible()
        no_key_shown(teacher, token)
        screenshot(teacher, "class_projector_1920_en", full=False)
        for step in (2, 3):
            teacher.locator(".st-key-pg_present_next button").click()
            t0 = time.monotonic()
            for name, p in phones.items():
                expect(p.get_by_text(re.compile(rf"(step {step} of 11|ステップ {step} / 11)"))).to_be_visible(
                    timeout=SLOW_MS
                )
                print(f"step {step}: {name} followed after {time.monotonic() - t0:.2f} s")
        teacher.set_viewport_size({"width": 1366, "height": 768})
        screenshot(teacher, "class_projector_1366_en", full=False)
        screenshot(phones["phone"], "class_phone_ja_step3")

        # a poll: which key wins the last row
        teacher.locator(".st-key-cls_present_panel button").click()
        expect(teacher.locator(".st-key-cls_open button")).to_be_visible(timeout=SLOW_MS)
        teacher.locator(".st-key-cls_open button").click()
        for name, p in phones.items():
            radio = p.locator(POLL_OPTIONS)
            expect(radio.first).to_be_visible(timeout=SLOW_MS)
            radio.nth(0 if name == "phone" else 1).click()
            p.locator('[class*="st-key-cls_send_"] button').click()
            expect(p.get_by_text(re.compile("received|受け付けました"))).to_be_visible(timeout=SLOW_MS)
        screenshot(phones["phone"], "class_phone_ja_answered")
        expect(teacher.get_by_text("Answers: 2")).to_be_visible(timeout=SLOW_MS)
        screenshot(teacher, "class_teacher_1366_en_poll")
        teacher.locator('[class*="st-key-cls_reveal_"] button').click()
        for p in phones.values():
            expect(p.get_by_text(re.compile("Right answer|正解："))).to_be_visible(timeout=SLOW_MS)
        screenshot(phones["phone"], "class_phone_ja_revealed")
        screenshot(phones["laptop"], "class_laptop_en_revealed")

        # a reload: control resumes from the cookie; Japanese projector
        browser_language(teacher, "ja")  # the receiver's browser language wins over a link's (issue 24)
        teacher.goto(f"{base}/class_teach?lang=ja")
        expect(teacher.get_by_text("参加コード")).to_be_visible(timeout=SLOW_MS)
        no_key_shown(teacher, token)
        teacher.set_viewport_size({"width": 1920, "height": 1080})
        screenshot(teacher, "class_teacher_1920_ja_after_reload")
        with teacher.expect_download() as dl:
            teacher.locator(".st-key-cls_export button").click()
        csv_text = open(dl.value.path(), encoding="utf-8").read()
        assert "ハナ" in csv_text and "<i>Ben</i>" in csv_text and csv_text.count("\noption,") == 4
        teacher.locator(".st-key-cls_present_panel button, .st-key-cls_to_presenter button").first.click()
        expect(teacher.locator(".st-key-pg_present_next button")).to_be_visible(timeout=SLOW_MS)
        screenshot(teacher, "class_projector_1920_ja", full=False)
        teacher.locator(".st-key-cls_present_panel button").click()
        expect(teacher.locator(".st-key-cls_end button")).to_be_visible(timeout=SLOW_MS)
        teacher.locator(".st-key-cls_end button").click()
        teacher.locator(".st-key-cls_end_yes button").click()  # it asks first
        for p in phones.values():
            expect(p.get_by_text(re.compile("has ended|終わりました"))).to_be_visible(timeout=SLOW_MS)
        for p in (teacher, *phones.values()):
            assert_no_exception(p)
    finally:
        for ctx in (teacher_ctx, phone_ctx, laptop_ctx):
            ctx.close()


def _switch_pages(w, page: str, button: str, tick: str | None) -> list:
    """Press ``button`` on the page whose script hash is ``page`` (it switches pages: st.switch_page)
    and, once the server has started the other page's run, send the ``tick`` of this page's
    ``run_every`` fragment that a browser sends when its timer fires before it has seen the click's
    run (a busy browser or server). Returns the server's messages until the other page's run has
    finished and a second has gone by with nothing more."""
    from st_protocol import rerun_script
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    w.send(rerun_script(page_script_hash=page, widgets={button: True}))
    messages, switched, done = [], False, False
    deadline = time.monotonic() + SLOW_MS / 1000
    while time.monotonic() < deadline:
        fwd = w.receive(timeout=1.0)
        if fwd is None:
            if done:
                break
            continue
        messages.append(fwd)
        status = fwd.script_finished if fwd.WhichOneof("type") == "script_finished" else None
        if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN and not switched:  # the other page's run starts now
            switched = True
            if tick:
                w.send(rerun_script(page_script_hash=page, fragment_id=tick, auto=True))
        done = done or (switched and status == ForwardMsg.FINISHED_SUCCESSFULLY)
    assert switched and done, [m.WhichOneof("type") for m in messages]
    return messages


def _of(messages: list, kind: str) -> list:
    return [getattr(m, kind) for m in messages if m.WhichOneof("type") == kind]


def _switched(w, messages: list, left: str, drawn_key: str) -> tuple[str, list[str]]:
    """The page the messages' last run is on, and its ``run_every`` fragments; checks that no run
    after the switch named the page ``left`` and that the element keyed ``drawn_key`` was drawn."""
    from st_protocol import element

    runs = [(m.new_session.page_script_hash, list(m.metadata.run.fragment_ids))
            for m in messages if m.WhichOneof("type") == "new_session"]  # fmt: skip
    assert not [r for r in runs if r[0] == left and r[1]], runs  # a fragment run of the page left
    drawn = [el[1].id for el in map(element, messages) if el is not None and getattr(el[1], "id", "")]
    w.widgets.update(dict.fromkeys(drawn, "drawn"))
    assert runs[-1][0] != left and any(i.endswith("-" + drawn_key) for i in drawn), (runs, drawn)
    return runs[-1][0], [a.fragment_id for a in _of(messages, "auto_rerun")]


def test_a_tick_of_the_page_just_left_does_not_blank_the_next(cluster: Cluster) -> None:
    """The projector once went blank after "Presenter mode" (a CI run on two busy cores): the class
    panel's 1-s tick, sent before the browser saw the click's run, reached the server during the
    playground's run; Streamlit ran it after that run as a fragment run of the class panel, and its
    frontend clears the whole page on a run that names another page (attention_ui/server_fixes.py,
    fix 4). Both ways, at protocol level (a browser cannot be made to send the tick at that moment):
    the class panel to presenter mode with the panel's live tick, and (another teacher) back with
    the presenter strip's count tick. No run after the switch names the page left, and the page
    switched to is drawn."""
    from st_wire import Wire

    for back in (False, True):
        with Wire(cluster.url, timeout=SLOW_MS / 1000) as w:
            w.run("class_teach", query="lang=en")
            started = w.run("class_teach", query="lang=en", widgets={w.widget("cls_start"): True})
            panel = _of(started, "navigation")[-1].page_script_hash
            ticks = [a.fragment_id for a in _of(started, "auto_rerun")]
            assert len(ticks) == 1  # the panel's one live fragment
            to_presenter = _switch_pages(w, panel, w.widget("cls_to_presenter"), None if back else ticks[0])
            presenter, ticks = _switched(w, to_presenter, panel, "pg_present_next")
            if back:
                assert len(ticks) == 1  # the strip's count of students
                to_panel = _switch_pages(w, presenter, w.widget("cls_present_panel"), ticks[0])
                _switched(w, to_panel, presenter, "cls_to_presenter")


# Before Streamlit's code runs: note the interval timers of run_every fragments (their callback asks
# for a fragment rerun), so that the test can take them away as a lost "auto-rerun" message would.
FRAGMENT_TIMERS_JS = """
window.__alFragmentTimers = [];
const realSetInterval = window.setInterval;
window.setInterval = function (fn, ms, ...rest) {
  const id = realSetInterval.call(window, fn, ms, ...rest);
  if (typeof fn === "function" && String(fn).includes("sendUpdateWidgetsMessage")) window.__alFragmentTimers.push(id);
  return id;
};
"""


def test_a_page_that_lost_a_run_or_its_timer_follows_again(
    browser, cluster: Cluster, class_data: Path
) -> None:
    """Streamlit's server may drop what a finished run still had queued for the browser (when the
    browser's next request starts a new script runner first; issue 27 saw pages stop following
    under load). Both losses are made here on purpose, and the student page still follows the
    teacher, redrawn by its watchdog:

    * the whole full run that drew the teacher's new step never reaches the browser (the test drops
      the server's websocket messages until that run has gone by): the page keeps its 1-s timer
      but shows the old step while the server counts the new one as drawn. The watcher's ticks
      say which state the page should show; it shows another, so the watchdog redraws it. Without
      that comparison the page stays on the old step.
    * the watcher's timer is gone in the browser (a full run cleared it, its auto-rerun message
      was lost): the class bell still rings the page when the teacher moves on, and that run sets
      the timer again; while nothing changes, the page sees no run for WATCHDOG_QUIET_S and
      redraws itself, which sets the timer again too."""
    from attention_ui.classroom.student_view import WATCHDOG_MISMATCH_S, WATCHDOG_QUIET_S
    from classroom.sqlite_store import SqliteStore

    db = SqliteStore(class_data / "classroom.sqlite3")
    db.migrate()  # the app's processes migrate the file on their first class, maybe not yet
    ctx = new_context(browser, width=390, height=844, timeout_ms=SLOW_MS)
    drop = {"until_after": None, "seen_at": None, "dropped": 0}

    def route(ws) -> None:  # the page's websocket, through the test: the server's messages may be dropped
        server = ws.connect_to_server()

        def from_server(message) -> None:
            wanted = drop["until_after"]
            if wanted is not None:
                if drop["seen_at"] is None and isinstance(message, bytes) and wanted in message:
                    drop["seen_at"] = time.monotonic()  # the lost run's caption; drop the rest of it too
                if drop["seen_at"] is None or time.monotonic() - drop["seen_at"] < 1.0:
                    drop["dropped"] += 1
                    return
                drop["until_after"] = None
            ws.send(message)

        server.on_message(from_server)

    try:
        cls = db.start_session()
        ctx.add_init_script(FRAGMENT_TIMERS_JS)
        p = ctx.new_page()
        p.route_web_socket(re.compile(r".*/_stcore/stream.*"), route)
        p.goto(f"{cluster.url}/class_join?code={cls.code}&lang=en")
        wait_for_app_run(p, SLOW_MS)
        p.locator(".st-key-cls_join_nick input").fill("Kim")
        p.locator('[data-testid="stFormSubmitButton"] button').click()
        expect(p.get_by_text("step 1 of 11")).to_be_visible(timeout=SLOW_MS)
        expect(p.locator(".st-key-cls_resync")).to_be_hidden()  # the watchdog's button is never shown

        # 1. The run that draws step 2 is lost on its way.
        drop["until_after"] = b"step 2 of 11"
        t0 = time.monotonic()
        db.set_view(cls.session_id, cls.teacher_token, {"step": 2})
        while drop["until_after"] is not None and time.monotonic() - t0 < 30:
            p.wait_for_timeout(100)
        assert drop["until_after"] is None and drop["dropped"] > 0, drop
        expect(p.get_by_text("step 1 of 11")).to_be_visible()  # really lost: the page is behind
        expect(p.get_by_text("step 2 of 11")).to_be_visible(timeout=(WATCHDOG_MISMATCH_S + 10) * 1000)
        print(f"after a lost run the page followed after {time.monotonic() - t0:.1f} s")
        assert p.evaluate("() => window.__alClassWatchdog.resyncs") == 1

        # 2. The watcher's timer is lost: the class bell still rings the page when the class moves
        # on (its run starts from the server), well before the watchdog would, and that run gives
        # the page its timer back.
        p.wait_for_function("() => window.__alFragmentTimers.length > 0", timeout=SLOW_MS)
        p.evaluate("() => window.__alFragmentTimers.splice(0).forEach(clearInterval)")
        t0 = time.monotonic()
        db.set_view(cls.session_id, cls.teacher_token, {"step": 3})
        expect(p.get_by_text("step 3 of 11")).to_be_visible(timeout=WATCHDOG_QUIET_S * 1000)
        print(f"without its timer the page was rung after {time.monotonic() - t0:.1f} s")
        assert p.evaluate("() => window.__alClassWatchdog.resyncs") == 1
        p.wait_for_function("() => window.__alFragmentTimers.length > 0", timeout=SLOW_MS)

        # 3. The timer is lost while nothing changes (no ring): the page asks for no run, and after
        # WATCHDOG_QUIET_S its watchdog redraws it, which sets the timer again.
        p.evaluate("() => window.__alFragmentTimers.splice(0).forEach(clearInterval)")
        p.wait_for_function(
            "() => window.__alClassWatchdog.resyncs === 2", timeout=(2 * WATCHDOG_QUIET_S + 10) * 1000
        )
        p.wait_for_function("() => window.__alFragmentTimers.length > 0", timeout=SLOW_MS)
        db.set_view(cls.session_id, cls.teacher_token, {"step": 4})
        expect(p.get_by_text("step 4 of 11")).to_be_visible(timeout=WATCHDOG_QUIET_S * 1000)
        assert_no_exception(p)
    finally:
        ctx.close()
        db.close()


def test_a_teacher_panel_that_lost_its_connection_reloads(
    browser, cluster: Cluster, class_data: Path
) -> None:
    """Under load the class panel's frontend closed its websocket and never connected again: a white
    panel counting nothing (bench/RESULTS.md, "Why the teacher stops"). Here the test cuts the tab's
    websocket and refuses every new one (Streamlit's own retries then never get through) until the
    page navigates: the panel's watchdog sees the server's health check answer and reloads, and
    the class comes back from the teacher's cookie. Without the watchdog the tab stays cut off."""
    from attention_ui.classroom.teacher_view import RELOAD_AFTER_S
    from classroom.sqlite_store import SqliteStore

    db = SqliteStore(class_data / "classroom.sqlite3")
    db.migrate()
    cls = db.start_session()
    ctx = new_context(browser, width=1366, height=768, timeout_ms=SLOW_MS)
    ctx.add_cookies([{"name": "attnlab_class_teacher", "value": f"{cls.session_id}.{cls.teacher_token}",
                      "url": cluster.url}])  # fmt: skip
    cut, sockets, loads = {"on": False, "refused": 0}, [], []

    def route(ws) -> None:
        if cut["on"]:
            cut["refused"] += 1
            ws.close()
            return
        ws.connect_to_server()
        sockets.append(ws)

    def navigated(request) -> None:  # a reload: its page may connect again
        if request.is_navigation_request():
            cut["on"] = False

    try:
        p = ctx.new_page()
        p.route_web_socket(re.compile(r".*/_stcore/stream.*"), route)
        p.on("request", navigated)
        p.on("load", lambda _: loads.append(time.monotonic()))
        p.goto(f"{cluster.url}/class_teach?lang=en")
        wait_for_app_run(p, SLOW_MS)
        expect(p.get_by_text(re.compile(r"Students here:\s*0"))).to_be_visible(timeout=SLOW_MS)
        expect(p.locator(".st-key-cls_teach_watchdog")).to_be_hidden()
        p.wait_for_function("() => !!window.__alPanelWatchdog", timeout=SLOW_MS)
        loaded, t0 = len(loads), time.monotonic()
        cut["on"] = True
        sockets[-1].close()
        p.wait_for_function(
            "() => window.__alPanelWatchdog && window.__alPanelWatchdog.down > 0", timeout=SLOW_MS
        )
        deadline = time.monotonic() + RELOAD_AFTER_S + 60
        while len(loads) == loaded and time.monotonic() < deadline:
            p.wait_for_timeout(250)
        assert len(loads) > loaded, f"no reload; {cut['refused']} websockets refused"
        print(f"the panel reloaded {time.monotonic() - t0:.1f} s after its connection was cut")
        assert cut["refused"] > 0  # Streamlit really tried to reconnect, and could not
        wait_for_app_run(p, SLOW_MS)
        expect(p.get_by_text(re.compile(r"Students here:\s*0"))).to_be_visible(timeout=SLOW_MS)
        assert_no_exception(p)
    finally:
        ctx.close()
        db.close()


def test_bench_smoke_three_students_and_a_killed_process(cluster: Cluster, class_data: Path) -> None:
    """bench/classroom_live.py's class on this cluster: 3 phones, 2 polls, the process with more
    students SIGKILLed when half the answers of poll 2 are in (started again afterwards). Every
    acknowledged answer is counted, and every page follows the teacher's next step on the other
    process. Its own Chromium runs in a thread (the bench is asyncio, this suite sync)."""
    import asyncio
    import threading

    from bench import classroom_live
    from classroom.sqlite_store import SqliteStore

    db, out = SqliteStore(class_data / "classroom.sqlite3"), {}

    def go() -> None:
        try:
            out["r"] = asyncio.run(classroom_live.run_class(cluster, db, store_kind="sqlite", students=3, polls=2,
                                                            kill_poll=2, idle_s=0, restart_after_kill=True))  # fmt: skip
        except Exception as exc:  # reported by the assertion below
            out["error"] = repr(exc)

    th = threading.Thread(target=go)
    th.start()
    th.join(240)
    db.close()
    assert not th.is_alive() and "error" not in out, out.get("error")
    r = out["r"]
    classroom_live.report(r)  # the figures, in the test's output
    assert r["joined"] == 3 and not r["join_failed"]
    assert r["per_poll"][0] == {"poll": 1, "acknowledged": 3, "counted": 3}
    assert r["acked_all_counted"] and r["ack_total"] >= 3 + r["killed"]["at_acks"]
    assert r["killed"]["follow_after_kill"]["missing"] == 0 and r["follow_missing"] == 0, r["not_following"]
    assert all(rep.alive() for rep in cluster.replicas)  # started again for whatever runs next


# Every 15 ms: the step the projector's H1 shows ("4. ..."), noted when it changes (point 7 of
# issue 34: the projector must never go back to a step it has left).
STEPS_SHOWN_JS = """() => {
  window.__shown = [];
  setInterval(() => {
    const h = document.querySelector('[data-testid="stMain"] h1');
    const m = h && h.innerText.match(/^(\\d+)\\./);
    const n = m ? Number(m[1]) : null;
    if (n !== null && window.__shown[window.__shown.length - 1] !== n) window.__shown.push(n);
  }, 15);
}"""
CHART_BOTTOM_JS = """() => {
  const c = document.querySelector('.st-key-pg_slide_chart .js-plotly-plot, [class*="st-key-pg_slide_wide_"] .js-plotly-plot');
  const r = c && c.getBoundingClientRect();
  return r ? {top: r.top, bottom: r.bottom, height: r.height, window: innerHeight} : null;
}"""
LECTURE_TEXT = "every student in the back row reads this long sentence"


def present_lecture(teacher_ctx, base: str) -> tuple[Page, str]:
    """The teacher presents LECTURE_TEXT from step 1 and starts a class there; returns their page
    and the join code."""
    teacher = teacher_ctx.new_page()
    teacher.goto(f"{base}/?lang=en&present=1&step=1&text={LECTURE_TEXT.replace(' ', '+')}")
    wait_for_app_run(teacher, SLOW_MS)
    teacher.locator(".st-key-cls_present_start button").click()
    expect(teacher.get_by_text("Join code:")).to_be_visible(timeout=SLOW_MS)
    # issue 42 point 7: the run right after the start drew two cookie scripts' boxes above the slide
    # and cut its chart's x axis; the whole chart is on the screen from the start
    wait_for_app_run(teacher, SLOW_MS)
    chart_fits(teacher, teacher.viewport_size["height"])
    return teacher, "".join(CODE.search(body(teacher)).groups())


def presses(page: Page, key: str, n: int, gap_ms: int = 150) -> None:
    for i in range(n):
        if i:
            page.wait_for_timeout(gap_ms)
        page.keyboard.press(key)


def projected_step(page: Page) -> int:
    return int(re.match(r"(\d+)\.", page.locator('[data-testid="stMain"] h1').first.inner_text()).group(1))


def chart_fits(page: Page, height: int) -> dict:
    page.wait_for_function(f"() => ({CHART_BOTTOM_JS})() !== null", timeout=SLOW_MS)
    page.wait_for_timeout(500)  # Plotly's resize after the layout settled
    box = page.evaluate(CHART_BOTTOM_JS)
    assert box["bottom"] <= height + 1 and box["height"] >= 300, box
    return box


def qr_texts(png: bytes, scale: float) -> list[str]:
    """The QR codes zxing-cpp reads in a screenshot scaled by ``scale`` (as the back row sees it)."""
    import io

    import zxingcpp
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("L")
    img = img.resize((int(img.width * scale), int(img.height * scale)), Image.Resampling.BILINEAR)
    return [r.text for r in zxingcpp.read_barcodes(img)]


def to_panel(teacher, arrived: str) -> None:
    """The presenter's "Class panel" press, pressed once more if the panel (``arrived``) has not come
    within 20 s while the button is still there. Under load the presenter can lose a press: the open
    issue 47 measures it with bench/hall.py --teacher-log (an idle, connected presenter page whose
    click never reaches the server). The second press lets the rest of the lecture still be checked;
    the loss itself stays the issue's, not this test's."""
    teacher.locator(".st-key-cls_present_panel button").click()
    try:
        teacher.locator(arrived).wait_for(state="visible", timeout=20_000)
    except PlaywrightTimeoutError:
        again = teacher.locator(".st-key-cls_present_panel button")
        if again.count() and again.first.is_visible():
            again.first.click()


# Its one known flake (a fresh-clone run on 2026-12-02 projected step 6 where three fast presses should
# have ended on 5) was a press resolved against a page a run behind; the presenter keys' queue was fixed
# for it (commit ac47c00), and the test runs in make test again.
def test_a_lecture_reloads_fast_clicks_explore_and_the_back_row(browser, cluster: Cluster) -> None:
    """Issue 34 points 1-8 as a lecture: the teacher presents their own sentence with a class of a
    phone (Japanese, touch) and a laptop; three clicker presses 150 ms apart (all count, the
    projector never goes back); a student explores on their own while the teacher moves on; the
    join-code slide (big enough, its QR code read from a half-size screenshot); the slide fits the
    window with the class strip; a reload of the class panel, a poll on the projected sentence,
    the CSV right after the reveal; back to presenter mode at the class's step; the end asks first
    and its results survive a reload."""
    from attention_core import trace_text
    from attention_ui.playground.settings import DEFAULTS, read_config

    config, _ = read_config({k[3:]: v for k, v in DEFAULTS.items() if k.startswith("pg_")})
    n_tokens = trace_text(LECTURE_TEXT, config, max_tokens=DEFAULTS["pg_max_tokens"]).n
    assert n_tokens != 6  # not the default sentence's count, or point 2 would pass by luck
    base = cluster.url
    teacher_ctx = new_context(browser, width=1920, height=1080, timeout_ms=SLOW_MS)
    phone_ctx = new_context(browser, locale="ja-JP", width=390, height=844, timeout_ms=SLOW_MS, touch=True)
    laptop_ctx = new_context(browser, width=1366, height=768, timeout_ms=SLOW_MS)
    try:
        teacher, code = present_lecture(teacher_ctx, base)
        phone, laptop = phone_ctx.new_page(), laptop_ctx.new_page()
        for p, nick in ((phone, "ハナ"), (laptop, "Ben")):
            p.goto(f"{base}/class_join?code={code}")
            wait_for_app_run(p, SLOW_MS)
            if p is phone:  # issue 42 point 7: 25 characters are named as such, not as the box's 1000
                p.locator(".st-key-cls_join_nick input").fill("x" * 25)
                p.locator('[data-testid="stFormSubmitButton"] button').tap()
                expect(p.get_by_text("このニックネームは 25 文字です")).to_be_visible(timeout=SLOW_MS)
                assert "1000" not in body(p)
            p.locator(".st-key-cls_join_nick input").fill(nick)
            submit = p.locator('[data-testid="stFormSubmitButton"] button')
            submit.tap() if p is phone else submit.click()
            expect(p.get_by_text(re.compile(r"(step 1 of 11|ステップ 1 / 11)"))).to_be_visible(
                timeout=SLOW_MS
            )

        # 7. three clicker presses 150 ms apart: steps 2, 3, 4 in order, never back
        teacher.evaluate(STEPS_SHOWN_JS)
        presses(teacher, "ArrowRight", 3)
        state_js = (
            "() => [window.__shown, window.__alPresenterQueue, window.__alPresenterDrawn, location.search]"
        )
        try:
            teacher.wait_for_function("() => window.__shown.includes(4)", timeout=SLOW_MS)
        except Exception:
            pytest.fail(f"not at step 4: {teacher.evaluate(state_js)}")
        teacher.wait_for_timeout(1500)  # a late run would show itself here
        shown = teacher.evaluate(state_js)
        assert shown[0] == [1, 2, 3, 4], shown
        assert "step=4" in teacher.url
        for p in (phone, laptop):
            expect(p.get_by_text(re.compile(r"(step 4 of 11|ステップ 4 / 11)"))).to_be_visible(
                timeout=SLOW_MS
            )

        # 9. a phone's first screen has the step's chart (it used to start below it on every step)
        phone.wait_for_function(
            "() => document.querySelector('.st-key-cls_slide .js-plotly-plot')", timeout=SLOW_MS
        )
        top = phone.locator(".st-key-cls_slide .js-plotly-plot").first.bounding_box()["y"]
        screenshot(phone, "class_lecture_phone_ja_step4", full=False)
        assert top < 844 - 150, top  # at least 150 px of it on the first screen (step 4: ~660 px)

        # 5. the slide fits the projector with the class strip
        chart_fits(teacher, 1080)
        screenshot(teacher, "class_lecture_projector_1920_en", full=False)

        # 3. the laptop explores on its own; the teacher's next step does not pull it back
        laptop.locator(".st-key-cls_explore button").click()
        expect(laptop.get_by_text("The teacher is at step 4")).to_be_visible(timeout=SLOW_MS)
        laptop.locator(".st-key-cls_own_next button").click()
        expect(laptop.get_by_role("heading", name=re.compile(r"^5\. "))).to_be_visible(timeout=SLOW_MS)
        teacher.keyboard.press("ArrowRight")
        expect(phone.get_by_text("ステップ 5 / 11", exact=False)).to_be_visible(timeout=SLOW_MS)
        expect(laptop.get_by_text("The teacher is at step 5")).to_be_visible(timeout=SLOW_MS)
        laptop.locator(".st-key-cls_own_next button").click()
        expect(laptop.get_by_role("heading", name=re.compile(r"^6\. "))).to_be_visible(timeout=SLOW_MS)
        laptop.wait_for_timeout(2500)  # two watcher ticks
        expect(laptop.get_by_text("The teacher is at step 5")).to_be_visible()

        # 6. the join code for the back row; a clicker press closes it, back at the same step
        for width, height in ((1920, 1080), (1366, 768)):
            teacher.set_viewport_size({"width": width, "height": height})
            teacher.locator(".st-key-cls_present_code button").click()
            big = teacher.locator(".st-key-cls_code_big p")
            expect(big).to_have_text(f"{code[:3]}-{code[3:]}", timeout=SLOW_MS)
            qr = teacher.locator(".st-key-cls_code_qr img, .st-key-cls_code_qr svg").first
            teacher.wait_for_timeout(300)
            text_box, qr_box = big.bounding_box(), qr.bounding_box()
            assert text_box["height"] >= 0.10 * height and text_box["y"] + text_box["height"] <= height, (
                text_box
            )
            assert qr_box["height"] >= 0.40 * height and qr_box["y"] + qr_box["height"] <= height, qr_box
            png = teacher.screenshot(
                path=str(screenshot(teacher, f"class_code_slide_{width}_en", full=False))
            )
            assert qr_texts(png, 0.5) == [f"{base}/class_join?code={code}"], qr_texts(png, 1.0)
            assert "names this computer itself" in body(teacher)  # the cluster is on 127.0.0.1
            teacher.keyboard.press("ArrowRight")
            expect(big).to_have_count(0, timeout=SLOW_MS)
            assert projected_step(teacher) == 5
        chart_fits(teacher, 768)
        screenshot(teacher, "class_lecture_projector_1366_en", full=False)
        teacher.set_viewport_size({"width": 1920, "height": 1080})
        # a press at once after "Show the join code" (before its slide is drawn) closes it too: it
        # used to count from the step on the screen and move the class on (issue 34 point 7)
        clicks = teacher.evaluate("() => window.__alPresenterQueue.clicks")
        teacher.locator(".st-key-cls_present_code button").click()
        teacher.keyboard.press("ArrowRight")
        teacher.wait_for_function(
            f"() => window.__alPresenterQueue.clicks > {clicks} && !window.__alPresenterQueue.pumping",
            timeout=SLOW_MS,
        )
        teacher.wait_for_timeout(1500)  # a late run would show itself here
        assert (projected_step(teacher), big.count()) == (5, 0), teacher.evaluate(state_js)

        # 1, 2. the class panel reloaded: a poll on the projected sentence, then back at step 5
        to_panel(teacher, ".st-key-cls_open button")
        expect(teacher.locator(".st-key-cls_open button")).to_be_visible(timeout=SLOW_MS)
        teacher.reload()
        expect(teacher.locator(".st-key-cls_open button")).to_be_visible(timeout=SLOW_MS)
        wait_for_app_run(teacher, SLOW_MS)
        teacher.locator(".st-key-cls_open button").click()  # the first question: the shape of QKᵀ
        expect(teacher.get_by_text(f"has {n_tokens} tokens")).to_be_visible(timeout=SLOW_MS)
        for p in (phone, laptop):
            expect(p.get_by_text(re.compile(rf"{n_tokens} (tokens|トークン)"))).to_be_visible(timeout=SLOW_MS)
            radio = p.locator(POLL_OPTIONS)
            radio.first.tap() if p is phone else radio.first.click()
            send = p.locator('[class*="st-key-cls_send_"] button')
            send.tap() if p is phone else send.click()
            expect(p.get_by_text(re.compile("received|受け付けました"))).to_be_visible(timeout=SLOW_MS)
        expect(teacher.get_by_text("Answers: 2")).to_be_visible(timeout=SLOW_MS)
        # issue 42 point 7: the histogram's words are read from the back of the room (they were 11-12 px)
        sizes = (
            teacher.locator(".st-key-cls_live_poll .js-plotly-plot")
            .first.locator("g.xtick text, g.ytick text, text.bartext")
            .evaluate_all("els => els.map(e => parseFloat(getComputedStyle(e).fontSize))")
        )
        assert len(sizes) >= 6 and min(sizes) >= 18, sizes
        teacher.locator('[class*="st-key-cls_reveal_"] button').click()
        expect(teacher.get_by_text(re.compile("Right answer"))).to_be_visible(timeout=SLOW_MS)
        screenshot(teacher, "class_lecture_panel_1920_en_revealed", full=False)
        screenshot(phone, "class_lecture_phone_ja_revealed", full=False)

        # 4. the CSV right after the reveal (no reload): both answers, a UTF-8 byte-order mark
        with teacher.expect_download() as dl:
            teacher.locator(".st-key-cls_export button").click()
        raw = open(dl.value.path(), "rb").read()
        assert raw.startswith(b"\xef\xbb\xbf"), raw[:20]
        rows = raw.decode("utf-8-sig").splitlines()
        options = [r.split(",") for r in rows if r.startswith("option,")]
        assert sum(int(r[6]) for r in options) == 2 and {r[2] for r in options} == {"5"}, rows
        assert "ハナ" in raw.decode("utf-8-sig")

        teacher.locator(".st-key-cls_to_presenter button").click()
        expect(teacher.locator(".st-key-pg_present_next button")).to_be_visible(timeout=SLOW_MS)
        assert projected_step(teacher) == 5 and "step=5" in teacher.url
        phone.wait_for_timeout(2500)  # two watcher ticks: nothing moved the class
        expect(phone.get_by_text("ステップ 5 / 11", exact=False)).to_be_visible()
        shown = re.sub(r"\s+", "", body(phone))  # step 5's shape line: M ∈ R^{n×n} of the projected sentence
        assert f"M∈R{n_tokens}×{n_tokens}" in shown, shown[-300:]

        # issue 42 point 6: on the next step with a chart (7), the revealed poll's box comes after the
        # chart, which starts on the phone's first screen (the box above it put it at ~590 px of 844)
        teacher.keyboard.press("ArrowRight")
        teacher.keyboard.press("ArrowRight")
        phone.wait_for_function(PHONE_CHART_JS, arg=7, timeout=SLOW_MS)
        phone.wait_for_timeout(500)  # Plotly's layout settled
        box = phone.evaluate(PHONE_CHART_JS, 7)
        screenshot(phone, "class_lecture_phone_ja_step7_after_reveal", full=False)
        assert box["top"] <= 0.6 * 844 and box["bottom"] <= 844, box
        expect(phone.get_by_text("正解：", exact=False)).to_be_attached()  # still there, below

        # 8. ending asks first; the results stay downloadable after a reload
        to_panel(teacher, ".st-key-cls_end button")
        teacher.locator(".st-key-cls_end button").click()
        expect(teacher.locator(".st-key-cls_end_yes button")).to_be_visible(timeout=SLOW_MS)
        teacher.wait_for_timeout(1500)
        # issue 42 point 7: the question in the window (it came at the 1080-px panel's bottom edge)
        for name in ("cls_end_yes", "cls_end_no"):
            yes = teacher.locator(f".st-key-{name} button").bounding_box()
            assert yes["y"] >= 0 and yes["y"] + yes["height"] <= 1080 * 0.75, (name, yes)
        screenshot(teacher, "class_lecture_end_dialog_1920_en", full=False)
        expect(phone.get_by_text("終わりました")).to_have_count(0)
        teacher.locator(".st-key-cls_end_yes button").click()
        expect(phone.get_by_text(re.compile("終わりました"))).to_be_visible(timeout=SLOW_MS)
        teacher.reload()
        expect(teacher.get_by_text(re.compile(rf"Class {code[:3]}-{code[3:]} has ended"))).to_be_visible(
            timeout=SLOW_MS
        )
        with teacher.expect_download() as dl:
            teacher.locator(".st-key-cls_export button").click()
        assert open(dl.value.path(), encoding="utf-8-sig").read().count("\noption,") == 4
        for p in (teacher, phone, laptop):
            assert_no_exception(p)
    finally:
        for ctx in (teacher_ctx, phone_ctx, laptop_ctx):
            ctx.close()


# Where the phone's first chart of the step is, in the window (the slide's first Plotly chart).
PHONE_CHART_JS = """(step) => {
  const c = document.querySelector('.st-key-cls_slide .js-plotly-plot');
  const h = document.querySelector('.st-key-cls_slide h3');
  if (!c || !c._fullLayout || !h || !h.innerText.startsWith(step + '.')) return null;
  const r = c.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, height: r.height};
}"""
# Every step with a chart for LECTURE_TEXT (no mask: steps 5 and 6 say so instead of drawing one).
PHONE_STEPS = (1, 2, 3, 4, 7, 8, 9, 10, 11)
# Streamlit's frontend looks for its server at the page's own path first (issue 34 point 9,
# docs/deployment.md "A page's own address"): these two 404s on a direct load are expected.
PROBE_404 = ("/class_join/_stcore/health", "/class_join/_stcore/host-config")


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_a_phone_sees_each_steps_chart_on_its_first_screen(browser, cluster: Cluster, lang: str) -> None:
    """Issue 34 point 9: a joined phone (390×844, touch) that follows the teacher sees the step's
    chart on its first screen on every step: its top within the first 60 % of the window (it was
    at ~500-540 px of 844, the issue saw ~660), and all of a chart that is under 55 % of the
    window's height. The page is not scrolled: what a student sees when the teacher's step
    arrives. Nothing is lost: the code, the nickname and the "explore" button come after the step.
    The phone's console has no error but the two 404s of Streamlit's server probe (PROBE_404)."""
    teacher_ctx = new_context(browser, width=1920, height=1080, timeout_ms=SLOW_MS)
    phone_ctx = new_context(browser, locale=BROWSER_LOCALES[lang], width=390, height=844, timeout_ms=SLOW_MS,
                            touch=True)  # fmt: skip
    nick = "ハナ" if lang == "ja" else "Hana"
    try:
        teacher, code = present_lecture(teacher_ctx, cluster.url)
        phone = phone_ctx.new_page()
        errors = []
        phone.on(
            "console", lambda m: m.type == "error" and errors.append((m.text, m.location.get("url", "")))
        )
        browser_language(phone, lang)
        phone.goto(f"{cluster.url}/class_join?code={code}")
        wait_for_app_run(phone, SLOW_MS)
        phone.locator(".st-key-cls_join_nick input").fill(nick)
        phone.locator('[data-testid="stFormSubmitButton"] button').tap()
        boxes = {}
        for step in PHONE_STEPS:
            while (shown := projected_step(teacher)) < step:
                teacher.keyboard.press("ArrowRight")
                teacher.wait_for_function(
                    "(n) => (document.querySelector('[data-testid=stMain] h1')?.innerText || '').startsWith(n + '.')",
                    arg=shown + 1,
                    timeout=SLOW_MS,
                )
            phone.wait_for_function(PHONE_CHART_JS, arg=step, timeout=SLOW_MS)
            phone.wait_for_timeout(500)  # Plotly's layout settled
            box = phone.evaluate(PHONE_CHART_JS, step)
            assert phone.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTop") == 0
            boxes[step] = {k: round(v) for k, v in box.items()}
            screenshot(phone, f"class_phone_{lang}_first_screen_step{step}", full=False)
        print(f"{lang}: the chart per step (px of 844): {boxes}")
        for step, box in boxes.items():
            assert box["top"] <= 0.6 * 844, (step, box)
            if box["height"] <= 0.55 * 844:
                assert box["bottom"] <= 844, (step, box)
        expect(phone.locator(".st-key-cls_explore button")).to_be_visible()
        expect(phone.get_by_text(f"{code[:3]}-{code[3:]}")).to_be_visible()
        expect(phone.get_by_text(nick)).to_be_visible()
        screenshot(phone, f"class_phone_{lang}_first_screen_step11_full")
        unexpected = [e for e in errors if not (e[0].startswith("Failed to load resource: the server responded "
                                                                "with a status of 404") and e[1].endswith(PROBE_404))]  # fmt: skip
        assert not unexpected, errors
        assert_no_exception(phone)
    finally:
        teacher_ctx.close()
        phone_ctx.close()

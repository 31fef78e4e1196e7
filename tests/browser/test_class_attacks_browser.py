"""Issue 34, points 10-12, against the real app behind HAProxy (deploy/serve_class.py, one process):
the security review's attacks, each tried from Chromium and asserted blocked.

- wrong join codes, each from a fresh browser context (new cookies, so a new XSRF cookie): slowed
  after the free tries all the same (the throttle keys on the address HAProxy saw, classroom/client.py);
- joins from one address with fresh cookies: capped per class;
- the same from a script that speaks Streamlit's websocket protocol itself (tests/browser/st_wire.py:
  Chromium sends no extra header on a websocket, so only a script can forge X-Forwarded-For where
  the app reads it), with a new forged X-Forwarded-For each time: through HAProxy (which drops it),
  and straight to the app's port from this machine, past HAProxy (issue 42 point 3: the app believed
  the header from any loopback peer, and such a script joined past the cap and guessed codes
  without a wait). It lacks the run's proxy secret, so it is this machine's one address, capped
  and slowed like the browsers;
- the teacher key file: its download address no longer answers a client without a session once
  its short life is over (it answered 200 130 s after the tab closed);
- the teacher-key cookie is Secure on a page served over HTTPS.

The limits are lowered through the environment so that a few page loads show them
(ATTENTION_LAB_WRONG_CODE_FREE_TRIES=2, ATTENTION_LAB_JOINS_PER_ADDRESS=1, key file 2 s).
"""

from __future__ import annotations

import re
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect
from st_browser import ROOT, new_context, wait_for_app_run
from st_wire import Wire

sys.path.insert(0, str(ROOT / "deploy"))
from serve_class import Cluster, free_port  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]
SLOW_MS = 60_000
CODE = re.compile(r"\b([A-Z0-9]{3})-([A-Z0-9]{3})\b")
FREE, JOINS, KEY_TTL_S = 2, 1, 2
MORE_GUESSES = 5  # after FREE: the last one must arrive within 32 s of the one before


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    env = {
        "ATTENTION_LAB_DATA_DIR": str(tmp_path_factory.mktemp("attackdata")), "ATTENTION_LAB_DATABASE_URL": "",
        "ATTENTION_LAB_WRONG_CODE_FREE_TRIES": str(FREE), "ATTENTION_LAB_JOINS_PER_ADDRESS": str(JOINS),
        "ATTENTION_LAB_KEY_FILE_TTL_S": str(KEY_TTL_S),
    }  # fmt: skip
    c = Cluster(1, free_port(), run_dir=tmp_path_factory.mktemp("attackrun"), quiet=True,
                streamlit_args=["--browser.gatherUsageStats", "false"], env=env)  # fmt: skip
    c.data_dir = Path(env["ATTENTION_LAB_DATA_DIR"])
    try:
        c.start()
    except SystemExit as exc:
        pytest.fail(f"{exc}\n(`make test` installs HAProxy through scripts/ensure_haproxy.sh)", pytrace=False)
    try:
        yield c
    finally:
        c.stop()


OUTCOMES = ("does not belong", "Too many wrong", "already joined", "step 1 of 11")


def _outcome(p) -> str:
    """The page's text once it shows the answer to its first submit."""
    deadline = time.monotonic() + 90  # the answer can take long on a busy machine
    text = ""
    while time.monotonic() < deadline:
        text = p.locator("body").inner_text()
        if any(s in text for s in OUTCOMES):
            break
        time.sleep(0.1)
    return text


def _join(browser, base: str, code: str, forged: str) -> str:
    """A join attempt from a brand-new browser (no cookies, so a new XSRF cookie), with a forged
    X-Forwarded-For on its HTTP requests (not on its websocket: Chromium adds none there); the
    page's text once it answers."""
    ctx = new_context(browser, width=1000, height=800, timeout_ms=SLOW_MS)
    ctx.set_extra_http_headers({"X-Forwarded-For": forged})
    try:
        p = ctx.new_page()
        p.goto(f"{base}/class_join?code={code}&lang=en")
        wait_for_app_run(p, SLOW_MS)
        p.locator('[data-testid="stFormSubmitButton"] button').click()
        return _outcome(p)
    finally:
        ctx.close()


def _wire_join(base: str, code: str, forged: str, source: str | None = None) -> str:
    """A join attempt by a script on its own websocket, with this forged X-Forwarded-For on it
    (``source``: the loopback address it connects from)."""
    with Wire(base, headers={"X-Forwarded-For": forged}, timeout=SLOW_MS / 1000, source=source) as w:
        w.run("class_join", query=f"code={code}&lang=en")
        w.run("class_join", query=f"code={code}&lang=en",
              widgets={w.widget("cls_join_code"): code, w.widget("FormSubmitter:cls_join_form"): True})  # fmt: skip
        return w.text()


def test_forged_widget_values_are_refused_and_raise_nothing(cluster: Cluster) -> None:
    """Issue 42 point 7: a script sends widget values of another type than the widget's, or options
    never offered: the language switch a number, the nickname a number, the poll's radio a number,
    a float, a boolean or a text that is none of its options. Streamlit takes the message's value
    type for the widget and, drawing it, wrote our value into that type: an uncaught TypeError in
    the server log (and the page's error box). Now the page resets what it did not offer, says
    what it can, stores nothing, and the log has no traceback; a real choice still counts. (Before
    the attacks below: they make this machine's address wait.)"""
    from classroom.sqlite_store import SqliteStore

    db = SqliteStore(cluster.data_dir / "classroom.sqlite3")
    db.migrate()
    log = cluster.replicas[0].log
    start = log.stat().st_size
    try:
        s = db.start_session()
        query = f"code={s.code}&lang=en"
        with Wire(cluster.replicas[0].url, timeout=SLOW_MS / 1000) as w:
            w.run("class_join", query=query)
            for value in (7, 1.5):
                w.run("class_join", query=query, widgets={w.widget("-lang"): value})
                assert "Join a class" in w.text() and "encountered an error" not in w.text(), w.text()
            submit, code = w.widget("FormSubmitter:cls_join_form"), w.widget("cls_join_code")
            w.run(
                "class_join",
                query=query,
                widgets={code: s.code, w.widget("cls_join_nick"): 12345, submit: True},
            )
            assert "A nickname must be text." in w.text(), w.text()
            w.run("class_join", query=query, widgets={code: s.code, submit: True})
            assert "step 1 of 11" in w.text(), w.text()
            question = {
                "kind": "scores_shape",
                "n": 3,
                "d_k": 4,
                "labels": ["3 × 3", "3 × 4", "4 × 4", "4 × 3"],
            }
            poll = db.open_poll(s.session_id, s.teacher_token, question, 4, 0, 1)
            w.run("class_join", query=query)
            radio, send = w.widget(f"cls_choice_{poll.poll_id}"), w.widget(f"cls_send_{poll.poll_id}")
            for value in (2, 1.5, True, "E. 9 × 9", "B. 3 × 4"):
                w.run("class_join", query=query, widgets={radio: value})  # chosen (the button is then on)
                w.run("class_join", query=query, widgets={radio: value, send: True})
                assert "encountered an error" not in w.text(), (value, w.text())
                taken = "received" in w.text()
                assert taken == (value == "B. 3 × 4"), (value, w.text())
        assert db.tallies(s.session_id, s.teacher_token)[-1].counts == (0, 1, 0, 0)
        logged = log.read_text(errors="replace")[start:]
        assert "Traceback" not in logged and "Error" not in logged, logged[-3000:]
    finally:
        db.close()


def test_rotating_cookies_and_forged_addresses_do_not_escape_the_limits(browser, cluster: Cluster) -> None:
    base = cluster.url
    teacher_ctx = new_context(browser, width=1366, height=768, timeout_ms=SLOW_MS)
    try:
        teacher = teacher_ctx.new_page()
        teacher.goto(f"{base}/class_teach?lang=en")
        wait_for_app_run(teacher, SLOW_MS)
        teacher.locator(".st-key-cls_start button").click()
        expect(teacher.get_by_text("Join code:")).to_be_visible(timeout=SLOW_MS)
        code = "".join(CODE.search(teacher.locator("body").inner_text()).groups())

        # point 11: joins with fresh cookies from one address stop at the cap
        results = [_join(browser, base, code, f"198.51.100.{i}") for i in range(JOINS + 1)]
        assert all("step 1 of 11" in r for r in results[:JOINS]), results
        assert f"already joined this class {JOINS} times" in results[JOINS], results[JOINS]
        # a script with its own websocket and a new forged address each time: through HAProxy, and
        # (issue 42 point 3) straight to the app's port on this machine: the same address as above
        direct = cluster.replicas[0].url
        results = [
            _wire_join(url, code, f"198.51.100.{50 + i}")
            for i, url in enumerate((base, direct, direct, direct))
        ]
        assert all(f"already joined this class {JOINS} times" in r for r in results), results
        # ... while the proxy's own clients are told apart by the address it saw, believed on the run's
        # secret: two other loopback addresses ("machines") join through it, one identity each
        for source in ("127.0.0.2", "127.0.0.3"):
            assert "step 1 of 11" in _wire_join(base, code, "6.6.6.6", source=source)
        assert f"already joined this class {JOINS} times" in _wire_join(
            base, code, "6.6.6.7", source="127.0.0.2"
        )

        # point 10: wrong codes, each browser with new cookies and another forged address. After the
        # FREE free tries a guess must come 2, 4, 8 ... s after the last failure (classroom/store.py),
        # so a guess that took longer than that to arrive (a busy machine) is merely wrong, not
        # refused: the guesses go on until one is refused, and one soon is, as the wait doubles each
        # time. A throttle keyed on the cookie or the forged address would never refuse a fresh one.
        wrong = [_join(browser, base, "QQQQQQ", f"203.0.113.{i}") for i in range(FREE)]
        assert all("does not belong" in r for r in wrong), wrong
        for i in range(MORE_GUESSES):
            wrong.append(_join(browser, base, "QQQQQQ", f"203.0.113.{100 + i}"))
            if "Too many wrong join codes" in wrong[-1]:
                break
        assert "Too many wrong join codes" in wrong[-1], wrong
        # ... and wrong codes sent there are slowed as this machine's: the wait above goes on (a
        # guess that came after its end is merely wrong and makes the next wait twice as long)
        direct_wrong = []
        for i in range(MORE_GUESSES):
            direct_wrong.append(_wire_join(direct, "QQQQQQ", f"203.0.113.{200 + i}"))
            if "Too many wrong join codes" in direct_wrong[-1]:
                break
        assert "Too many wrong join codes" in direct_wrong[-1], direct_wrong

        # point 12: the key file is made on the click and its address dies soon after
        with teacher.expect_download() as info:
            teacher.get_by_role("button", name="Save the teacher key (file)").click()
        download = info.value
        token = next(c["value"] for c in teacher_ctx.cookies() if c["name"] == "attnlab_class_teacher").split(
            ".", 1
        )[1]
        assert token in open(download.path(), encoding="utf-8").read()
        url = download.url
        assert "/media/" in url
    finally:
        teacher_ctx.close()
    time.sleep(KEY_TTL_S + 1.5)
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(url, timeout=10)  # a client with no session, no cookie
    assert err.value.code == 404


def test_the_teacher_key_cookie_is_secure_over_https(browser, monkeypatch) -> None:
    from attention_ui.classroom import state

    scripts: list[str] = []
    monkeypatch.setattr(state.st, "html", lambda body, **k: scripts.append(body))
    state.set_cookie(state.TEACHER_COOKIE, "sid.key", 3600)
    page_html = "<!doctype html><html><body>" + scripts[0] + "</body></html>"
    ctx = new_context(browser, width=800, height=600)
    try:
        for scheme in ("https", "http"):
            ctx.route(
                f"{scheme}://class.test/",
                lambda route: route.fulfill(body=page_html, content_type="text/html"),
            )
            page = ctx.new_page()
            page.goto(f"{scheme}://class.test/")
            # the page's script has set it once the page itself sees it (a busy machine once read the
            # jar before that)
            page.wait_for_function(f"document.cookie.includes('{state.TEACHER_COOKIE}=')", timeout=30_000)
            cookie = next(
                c for c in ctx.cookies(f"{scheme}://class.test/") if c["name"] == state.TEACHER_COOKIE
            )
            assert cookie["secure"] is (scheme == "https"), (scheme, cookie)
            ctx.clear_cookies()
            page.close()
    finally:
        ctx.close()

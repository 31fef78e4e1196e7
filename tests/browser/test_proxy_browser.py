"""Two app processes behind HAProxy, as ``make serve-class`` runs them (deploy/serve_class.py).

One test, one cluster, two students (two browser contexts = two cookie jars, like two laptops):
  * through the proxy, XSRF and CORS behave as on a single server: an XSRF token issued by one
    process is accepted by the other, a request without it is refused, and a websocket from a
    foreign origin is refused; both processes were started with one shared cookie secret that is
    neither on their command line nor in HAProxy's config;
  * the two students land on different processes (least connections) and stay there change after
    change (HAProxy's cookie), each process holding exactly its one session; each downloads the
    trace its own process built (a /media/ request that must reach that process);
  * the second student's static files come from HAProxy's cache;
  * one process is stopped (SIGTERM): its student's browser reconnects through the proxy to the other
    process, where a fresh session rebuilds the view from the URL (sentence and settings), and her
    first change there sticks at the first attempt (the value her browser sends wins over the
    URL); the other student never disconnects, nor moves;
  * neither student ever sees the other's tokens.
Screenshots: artifacts/screenshots/proxy_<student>_<moment>.png.
"""

from __future__ import annotations

import http.client
import signal
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from st_browser import (
    ROOT,
    assert_no_exception,
    new_context,
    screenshot,
    tick_labels,
    wait_for_app_run,
    wait_for_charts,
    wait_until_idle,
)

sys.path.insert(0, str(ROOT / "deploy"))
from serve_class import (  # noqa: E402
    HAPROXY_SECRET_ENV,
    PROXY_SECRET_ENV,
    SECRET_ENV,
    Cluster,
    free_port,
    healthy,
    upload_status,
)

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

COOKIE = "attnlab_replica"
CONNECTED = '[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
SLOW_MS = 90_000  # two servers, HAProxy and Chromium on two shared cores
TOKENS = {"alice": "tokalpha", "bob": "tokbravo"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    errors = []
    for attempt in range(2):  # a probed free port can be taken before the process binds it
        c = Cluster(2, free_port(), run_dir=tmp_path_factory.mktemp(f"class{attempt}"), quiet=True,
                    streamlit_args=["--browser.gatherUsageStats", "false"])  # fmt: skip
        try:
            c.start()
            break
        except SystemExit as exc:  # no HAProxy
            pytest.fail(f"{exc}\n(`make test` installs it through scripts/ensure_haproxy.sh)", pytrace=False)
        except RuntimeError as exc:
            errors.append(str(exc))
    else:
        pytest.fail("could not start the cluster:\n" + "\n\n".join(errors), pytrace=False)
    try:
        yield c
    finally:
        c.stop()


def _cookie(context: BrowserContext) -> str | None:
    return next((c["value"] for c in context.cookies() if c["name"] == COOKIE), None)


def _active_sessions(url: str) -> int:
    with urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=10) as r:
        text = r.read().decode()
    line = next(x for x in text.splitlines() if x.startswith("active_sessions") and not x.startswith("#"))
    return int(float(line.split()[-1]))


def _websocket_handshake(port: int, origin: str, replica: str) -> int:
    """Status of a websocket upgrade to /_stcore/stream through the proxy (101 = accepted)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/_stcore/stream", headers={
        "Host": f"127.0.0.1:{port}", "Origin": origin, "Connection": "Upgrade", "Upgrade": "websocket",
        "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Protocol": "streamlit", "Cookie": f"{COOKIE}={replica}",
    })  # fmt: skip
    status = conn.getresponse().status
    conn.close()
    return status


def _check_http_through_proxy(cluster: Cluster) -> None:
    base = cluster.url
    with urllib.request.urlopen(f"{base}/_stcore/health", timeout=10) as r:
        cookies = dict(c.split(";")[0].split("=", 1) for c in r.headers.get_all("Set-Cookie"))
    token, issuer = cookies["_streamlit_xsrf"], cookies[COOKIE]
    other = "r2" if issuer == "r1" else "r1"
    # 400 = past the XSRF check (the upload names no session); 403 = refused by the XSRF check.
    assert upload_status(base, token, other, True) == 400, (
        "an XSRF token from one process must work on the other"
    )
    assert upload_status(base, token, other, False) == 403, "a request without the XSRF token must be refused"
    for replica in ("r1", "r2"):
        assert _websocket_handshake(cluster.port, base, replica) == 101
        assert _websocket_handshake(cluster.port, "http://evil.example", replica) == 403
    req = urllib.request.Request(f"{base}/_stcore/health", headers={"Origin": "http://evil.example"})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.headers.get("Access-Control-Allow-Origin") is None
    # One cookie secret for the deployment, handed over in the environment only.
    secrets = []
    for r in cluster.replicas:
        environ = Path(f"/proc/{r.pid}/environ").read_bytes().split(b"\0")
        secrets.append(next(v.split(b"=", 1)[1] for v in environ if v.startswith(SECRET_ENV.encode() + b"=")))
        assert cluster.secret.encode() not in Path(f"/proc/{r.pid}/cmdline").read_bytes()
    assert secrets[0] == secrets[1] == cluster.secret.encode() and len(cluster.secret) >= 32
    assert cluster.secret not in cluster.config_path.read_text()
    # and one proxy secret, which HAProxy adds to each request (issue 42 point 3): in the environment
    # of HAProxy and of every app process, never on a command line nor in the config file
    proxy = cluster.proxy_secret.encode()
    for pid, name in [(r.pid, PROXY_SECRET_ENV) for r in cluster.replicas] + [
        (cluster.haproxy.pid, HAPROXY_SECRET_ENV)
    ]:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        assert name.encode() + b"=" + proxy in environ, name
        assert proxy not in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert cluster.proxy_secret not in cluster.config_path.read_text() and len(cluster.proxy_secret) >= 43


def _download(page: Page, button: str) -> str:
    """Open the export menu and click a download button whose file is built on click; -> its path.

    The file is built by a rerun the click starts; a click that lands while the previous run is
    still settling can be swallowed by the re-rendered button, so the click is made once more.
    """
    for attempt in range(2):
        wait_until_idle(page)
        try:
            if not page.locator(button).is_visible():  # the downloads live in the export menu
                page.locator('[data-testid="stPopover"] button').first.click()
            with page.expect_download(timeout=SLOW_MS // 3 if attempt == 0 else SLOW_MS) as download:
                page.locator(button).click()
            return download.value.path()
        except PlaywrightTimeoutError:
            if attempt:
                raise
    raise AssertionError("unreachable")


def _open(browser: Browser, cluster: Cluster, who: str) -> tuple[BrowserContext, Page, dict]:
    context = new_context(browser, timeout_ms=SLOW_MS)
    page = context.new_page()
    seen = {"disconnects": 0, "static": [], "errors": []}
    page.on(
        "console",
        lambda m: "WebSocket onclose" in m.text and seen.__setitem__("disconnects", seen["disconnects"] + 1),
    )
    page.on("pageerror", lambda e: seen["errors"].append(str(e)[:200]))
    page.on("response", lambda r: "/static/js/" in r.url and seen["static"].append(r.headers))
    page.goto(f"{cluster.url}/?text={TOKENS[who]}+reads+the+notes&seed=7")
    wait_for_charts(page, timeout_ms=SLOW_MS)
    return context, page, seen


def _sees_only_own(page: Page, who: str) -> None:
    mine, theirs = TOKENS[who], [t for w, t in TOKENS.items() if w != who]
    page.wait_for_function(
        """(tok) => [...document.querySelectorAll('.st-key-pg_chart_weights g.ytick text')]
                      .some((t) => t.textContent.includes(tok))""",
        arg=mine,
        timeout=SLOW_MS,
    )
    ticks = " ".join(tick_labels(page.locator(".st-key-pg_chart_weights")))
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert mine in ticks and mine in text, f"{who} does not see their own token"
    assert not any(t in ticks or t in text for t in theirs), f"{who} sees another student's token"


def _change_seed(page: Page, seed: str, again_after_ms: int | None = None) -> int:
    """Type a seed and wait until the app's URL shows it; returns how many times it had to be made."""
    box = page.locator('[data-testid="stSidebar"] .st-key-pg_seed input')
    shown = "(v) => new URL(location.href).searchParams.get('seed') === v"
    for attempt in (1, 2):
        box.fill(seed)
        box.press("Enter")
        try:
            page.wait_for_function(
                shown, arg=seed, timeout=again_after_ms if attempt == 1 and again_after_ms else SLOW_MS
            )
            break
        except Exception:
            if attempt == 2 or not again_after_ms:
                raise
    wait_for_app_run(page, timeout_ms=SLOW_MS)
    return attempt


def test_two_students_stay_on_their_process_and_survive_one_stopping(
    cluster: Cluster, browser: Browser
) -> None:
    t0 = time.monotonic()
    _check_http_through_proxy(cluster)

    ctx_a, alice, seen_a = _open(browser, cluster, "alice")
    ctx_b, bob, seen_b = _open(browser, cluster, "bob")
    home_a, home_b = _cookie(ctx_a), _cookie(ctx_b)
    assert {home_a, home_b} == {"r1", "r2"}, f"both students landed on {home_a}/{home_b}: not spread"
    # The second visitor's bundles came from HAProxy's cache (it adds Age; Streamlit does not).
    assert any("age" in h for h in seen_b["static"]), "no static file was served from HAProxy's cache"

    # Sticky: changes go back to the same process, which holds exactly that student's session.
    assert _change_seed(alice, "42") == 1
    assert _change_seed(bob, "43") == 1
    assert (_cookie(ctx_a), _cookie(ctx_b)) == (home_a, home_b)
    for r in cluster.replicas:
        assert _active_sessions(r.url) == 1, f"{r.name} holds {_active_sessions(r.url)} sessions, expected 1"
    _sees_only_own(alice, "alice")
    _sees_only_own(bob, "bob")
    # A download is built by the session's own process and fetched over HTTP (/media/...): without
    # stickiness that request could reach the other process, which does not have the file.
    for page, who in ((alice, "alice"), (bob, "bob")):
        data = Path(_download(page, ".st-key-pg_dl_json button")).read_text(encoding="utf-8")
        assert TOKENS[who] in data and not any(t in data for w, t in TOKENS.items() if w != who)
    screenshot(alice, "proxy_alice_before", full=False)

    # Alice's process is stopped. Her browser reconnects through the proxy to Bob's process.
    stopped = cluster.replica(home_a)
    cluster.kill(home_a, signal.SIGTERM)
    assert not healthy(stopped.url)
    deadline = time.monotonic() + SLOW_MS / 1000
    while seen_a["disconnects"] == 0 and time.monotonic() < deadline:
        alice.wait_for_timeout(100)
    assert seen_a["disconnects"] >= 1, "Alice's page never noticed that her process stopped"
    alice.locator(CONNECTED).wait_for(state="attached", timeout=SLOW_MS)
    # The page still shows her view. Streamlit's client does not rerun on a reconnect (it expects
    # its session back), so the new process's session starts with her next change; that first run
    # takes the rest of the view from the URL, and the value her browser sent wins: the change
    # sticks the first time (it used to be undone by the URL and had to be made again).
    attempts = _change_seed(alice, "44", again_after_ms=20_000)
    assert attempts == 1, "Alice's first change after the move was undone"
    assert _cookie(ctx_a) == home_b, "Alice's browser was not moved to the remaining process"
    url = alice.evaluate("() => Object.fromEntries(new URL(location.href).searchParams)")
    assert url["text"] == "tokalpha reads the notes" and url["seed"] == "44"
    _sees_only_own(alice, "alice")
    assert_no_exception(alice)
    assert _active_sessions(cluster.replica(home_b).url) == 2
    screenshot(alice, "proxy_alice_after_move", full=False)

    # Bob noticed nothing: same process, never disconnected, his changes still work.
    assert _change_seed(bob, "45") == 1
    assert _cookie(ctx_b) == home_b and seen_b["disconnects"] == 0
    _sees_only_own(bob, "bob")
    assert seen_a["errors"] == [] and seen_b["errors"] == []
    print(f"proxy test: {time.monotonic() - t0:.1f} s after the cluster started")
    ctx_a.close()
    ctx_b.close()

"""Browser test harness: a real ``streamlit run app.py`` server and a headless Chromium.

Fixtures
--------
``streamlit_server`` (session)  base URL of a server started on a free loopback port. Under xdist every
                                worker is its own session, so each worker gets its own server and port.
``browser`` (session)           Playwright Chromium: $CHROMIUM_PATH, Debian's /usr/bin/chromium or
                                chromium-browser, else Playwright's own build.
``page`` (function)             a fresh browser context (English locale, 1400x900) per test; on failure a
                                screenshot goes to artifacts/screenshots/FAILED-<test>.png.
``app`` (function)              ``page`` opened at the app and waited for (see st_browser.wait_for_app_run).

Every test in this folder is marked ``browser`` (added below if a file forgets), and ``make test`` runs
them in their own pytest process after the rest of the suite: ``pytest -m browser``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Error, Page, sync_playwright
from st_browser import CHROMIUM_ARGS, ROOT, chromium_executable, new_context, screenshot, wait_for_app_run

from bench.harness import free_port, healthy, server_cmd

SERVER_START_TIMEOUT_S = 90
LOGS = ROOT / "artifacts" / "logs"
SERVER_LOG = LOGS / f"streamlit-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.log"


def _stop(proc: subprocess.Popen) -> None:
    """Terminate the server and everything it spawned (it leads its own process group)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _start_server(log_path: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    cmd = server_cmd("app.py", port)
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group, so teardown can kill all of it
        )
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if healthy(base_url):
            return proc, base_url
        time.sleep(0.3)
    _stop(proc)
    raise RuntimeError(f"streamlit did not become healthy on {base_url}; log tail:\n{_tail(log_path)}")


@pytest.fixture(scope="session")
def streamlit_server() -> Iterator[str]:
    """Start ``streamlit run app.py`` headless on a free port; yield its base URL; stop it at the end."""
    LOGS.mkdir(parents=True, exist_ok=True)
    log_path = SERVER_LOG
    errors = []
    for _attempt in range(3):  # a free port can be taken between probing and binding
        try:
            proc, base_url = _start_server(log_path)
            break
        except RuntimeError as exc:
            errors.append(str(exc))
    else:
        pytest.fail("could not start the Streamlit server:\n" + "\n\n".join(errors), pytrace=False)
    try:
        yield base_url
    finally:
        _stop(proc)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    executable = chromium_executable()
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(headless=True, executable_path=executable, args=CHROMIUM_ARGS)
        except Error as exc:
            pytest.fail(
                f"cannot launch Chromium ({executable or 'Playwright build'}): {exc}\n"
                "Run `make test` (or `bash scripts/ensure_browser.sh`) to install one.",
                pytrace=False,
            )
        yield browser
        browser.close()


# The files whose tests take longest, with their seconds in a fresh-clone CI run on two cores (the
# slowest tests of `make test`'s --durations list). They run first, the longest first: xdist's `load`
# scheduler hands out tests in collection order, so a file left at the end (test_bench_smoke.py is
# collected after tests/browser/) kept one worker busy for minutes while the other had finished.
# A file keeps its own order (its module fixtures, such as a class's cluster, start once per worker).
SLOW_FILES_S = {
    "tests/browser/test_class_browser.py": 230,  # a cluster; the lecture ~55 s, bench smoke ~47 s, ...
    "tests/browser/test_axe_browser.py": 220,  # 4 × ~55 s: every page in each language, in halves
    "tests/test_bench_smoke.py": 200,  # the classroom load smoke ~66 s, then the other benches
    "tests/browser/test_hostile_browser.py": 60,
    "tests/browser/test_pretrained_browser.py": 60,
    "tests/browser/test_packaging_browser.py": 45,  # a wheel built and installed into a fresh venv
}


def _slow_first(items: list[pytest.Item]) -> None:
    """Reorder ``items`` in place: SLOW_FILES_S's files first, longest first; the rest as collected.
    The same on every xdist worker (a stable sort on a fixed table), as xdist requires."""
    root = Path(__file__).resolve().parents[2]
    gone = [name for name in SLOW_FILES_S if not (root / name).exists()]
    if gone:  # a renamed file would silently lose its place at the front
        warnings.warn(f"tests/browser/conftest.py SLOW_FILES_S names missing files: {gone}", stacklevel=1)

    def weight(item: pytest.Item) -> int:
        try:
            return SLOW_FILES_S.get(item.path.resolve().relative_to(root).as_posix(), 0)
        except ValueError:
            return 0

    items.sort(key=lambda item: -weight(item))


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects, so `-m "not browser"` never starts a browser here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.browser)
    _slow_first(items)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = new_context(browser)
    page = context.new_page()
    try:
        yield page
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            try:
                shot = screenshot(page, f"FAILED-{request.node.name}", full=False)
                print(f"screenshot of the failure: {shot}")
            except Error:
                pass
            # The browser only shows redacted errors; the traceback is in the server's log.
            print(f"--- tail of {SERVER_LOG} ---\n{_tail(SERVER_LOG)}")
        context.close()


@pytest.fixture
def app(page: Page, streamlit_server: str) -> Page:
    """The app's start page, loaded and idle."""
    response = page.goto(streamlit_server + "/")
    assert response is not None and response.ok, f"GET / answered {response and response.status}"
    page.locator('[data-testid="stAppViewContainer"]').wait_for(state="attached")
    wait_for_app_run(page)
    return page

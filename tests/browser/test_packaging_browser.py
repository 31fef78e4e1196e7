"""``pip install`` and the ``attention-lab`` command, as a user meets them (issue 45).

One wheel is built from the checkout (hatchling, the pinned build backend of pyproject.toml, from the
dev requirements: no build isolation), installed into a fresh virtualenv outside the checkout with
its pinned dependencies from the package index as a user gets them (pip's own cache makes a second
run quick; ``--no-compile`` skips writing .pyc files, which was most of the install's CPU time), and
then used from another directory with no PYTHONPATH: ``attention-lab trace --text … --json`` prints
the trace, ``attention-lab run --port P`` serves the app from the installed files, its health
endpoint answers and the playground draws in Chromium. One server start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
from conftest import _stop
from st_browser import ROOT, new_context, screenshot, wait_for_charts

from attention_core import AttentionConfig, trace_text
from bench.harness import free_port

INSTALL_TIMEOUT_S = 600


def _env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["ATTENTION_LAB_DATA_DIR"] = str(tmp_path / "data")
    return env


def test_wheel_installs_and_the_command_serves_the_app(browser, tmp_path) -> None:
    wheels, venv, elsewhere = tmp_path / "wheels", tmp_path / "venv", tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = dict(capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "-q", "-w", str(wheels), str(ROOT)], **run)  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("attention_lab-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                                "--no-compile", str(wheel)], **run)  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    env = _env(tmp_path)
    command = str(venv / "bin" / "attention-lab")

    # the installed files answer, not the checkout's
    where = subprocess.run([str(python), "-c", "import attention_lab.cli as c, attention_core; "
                            "print(c.app_root()); print(attention_core.__file__)"],
                           cwd=elsewhere, env=env, **run)  # fmt: skip
    app_root, core_file = where.stdout.split()
    assert app_root.startswith(str(venv)) and core_file.startswith(str(venv)), where.stdout + where.stderr

    traced = subprocess.run(
        [command, "trace", "--text", "the cat sat", "--json"], cwd=elsewhere, env=env, **run
    )
    assert traced.returncode == 0, traced.stderr
    data = json.loads(traced.stdout)
    assert data["tokens"] == ["the", "cat", "sat"]
    assert np.allclose(np.asarray(data["weights"]), trace_text("the cat sat", AttentionConfig()).weights)
    refused = subprocess.run([command, "lesson", "--text", "x", "--heads", "3", "-o", "x.html"],
                             cwd=elsewhere, env=env, **run)  # fmt: skip
    assert (
        refused.returncode == 2 and refused.stderr.startswith("error: ") and refused.stderr.count("\n") == 1
    )
    # a lesson from the installed wheel: its cartesian plotly.js asset came with it
    made = subprocess.run([command, "lesson", "--text", "the cat sat", "-o", "made.html"],
                          cwd=elsewhere, env=env, **run)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "plotly.js (cartesian - minified) v" in (Path(elsewhere) / "made.html").read_text(encoding="utf-8")

    port = free_port()
    log = (tmp_path / "server.log").open("w", encoding="utf-8")
    proc = subprocess.Popen([command, "run", "--port", str(port), "--address", "127.0.0.1", "--",
                             "--server.headless", "true"], cwd=elsewhere, env=env, stdin=subprocess.DEVNULL,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        deadline, answer = time.monotonic() + 120, ""
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as response:
                    answer = response.read().decode()
                    break
            except OSError:
                time.sleep(0.5)
        assert answer == "ok", (tmp_path / "server.log").read_text()
        context = new_context(browser)
        try:
            page = context.new_page()
            page.goto(base)
            charts = wait_for_charts(page, minimum=1, timeout_ms=90_000)
            assert charts.first.locator(".main-svg").count() >= 1
            screenshot(page, "takehome_installed_app", full=False)
        finally:
            context.close()
    finally:
        _stop(proc)
        log.close()

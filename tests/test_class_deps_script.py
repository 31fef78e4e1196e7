"""How `make run`, `make serve-class` and `make test` get the live class's PyICU (requirements-class.txt):
scripts/ensure_class_deps.sh run on a PATH of stand-ins (no pkg-config, a user who is not root, a
python that records what pip was asked), and the Makefile's recipes read with `make -n`.

`make run` must start the app on a laptop that cannot build PyICU (no ICU headers, not root, macOS):
one line says what the live class is missing and how to add it, and the script succeeds. `make
serve-class` and `make test` need PyICU: there the script fails with what to install."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "ensure_class_deps.sh"
BASH = shutil.which("bash")


def stand_in(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


def run(tmp_path: Path, *, optional: bool, uid: int = 1000, icu: bool = False, apt: bool = False,
        pip_rc: int = 0, stamp_first: bool = False, again: bool = False):  # fmt: skip
    """The script on a PATH that holds only what it needs, plus the stand-ins asked for; returns
    (exit status, its output, the commands pip and apt-get were given, the stamp)."""
    bin_dir, venv = tmp_path / "bin", tmp_path / "venv"
    calls = tmp_path / "calls.txt"
    if again:  # a second start on the same machine
        shutil.rmtree(bin_dir)
        calls.unlink(missing_ok=True)
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    bin_dir.mkdir()
    for tool in ("dirname", "touch", "rm"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    stand_in(bin_dir / "id", f"echo {uid}")
    if icu:
        stand_in(bin_dir / "pkg-config", "exit 0")
        stand_in(bin_dir / "c++", "exit 0")
    if apt:
        stand_in(bin_dir / "apt-get", f'echo "apt-get $*" >> {calls}')
    stand_in(venv / "bin" / "python", f'echo "python $*" >> {calls}; echo "pip said this"; exit {pip_rc}')
    stamp = venv / ".class-deps"
    if stamp_first:
        stamp.touch()
        os.utime(stamp, (2**31, 2**31))  # newer than requirements-class.txt
    python = str(venv / "bin" / "python")
    args = [BASH, str(SCRIPT), *(["--optional"] if optional else []), python, str(stamp)]
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    said = calls.read_text().splitlines() if calls.exists() else []
    return proc.returncode, proc.stdout + proc.stderr, said, stamp


def test_make_run_without_icu_says_one_line_and_goes_on(tmp_path):
    rc, out, calls, stamp = run(tmp_path, optional=True)
    assert rc == 0 and calls == [] and not stamp.exists()
    assert len(out.strip().splitlines()) == 1, out
    for words in ("Live class off", "PyICU", "sudo apt-get install libicu-dev pkg-config g++",
                  "docs/running.md", "make run again", "the rest of the app works"):  # fmt: skip
        assert words in out, (words, out)


def test_serve_class_and_test_without_icu_fail_saying_what_to_install(tmp_path):
    rc, out, calls, stamp = run(tmp_path, optional=False)
    assert rc == 1 and calls == [] and not stamp.exists()
    assert "sudo apt-get install libicu-dev pkg-config g++" in out and "brew install icu4c" in out


@pytest.mark.parametrize("optional", [True, False], ids=["make run", "make test"])
def test_where_icu_can_be_built_pyicu_is_installed(tmp_path, optional):
    rc, out, calls, stamp = run(tmp_path, optional=optional, icu=True)
    assert rc == 0 and stamp.exists(), out
    assert calls == [f"python -m pip install -q -r {SCRIPT.parent}/../requirements-class.txt"]


def test_as_root_with_apt_the_headers_are_installed_first(tmp_path):
    rc, out, calls, stamp = run(tmp_path, optional=True, uid=0, apt=True)
    assert rc == 0 and stamp.exists(), out
    assert calls[0].startswith("apt-get install") and "libicu-dev pkg-config g++" in calls[0]
    assert calls[1].startswith("python -m pip install -q -r ")


def test_make_run_when_the_build_fails_says_so_in_one_line_and_keeps_pips_output(tmp_path):
    rc, out, calls, stamp = run(tmp_path, optional=True, icu=True, pip_rc=1)
    log = tmp_path / "venv" / "pyicu-build.log"
    assert rc == 0 and not stamp.exists()
    assert len(out.strip().splitlines()) == 1 and "did not build" in out and str(log) in out, out
    assert "pip said this" in log.read_text()
    rc, out, calls, _ = run(tmp_path, optional=True, icu=True, pip_rc=1, again=True)  # the next start
    assert rc == 0 and calls == [] and len(out.strip().splitlines()) == 1 and "remove it to try again" in out
    rc, out, _, _ = run(tmp_path / "again", optional=False, icu=True, pip_rc=1)
    assert rc == 1 and "pip said this" in out  # make test: the build's own output, and a failure


def test_an_up_to_date_stamp_does_nothing(tmp_path):
    assert run(tmp_path, optional=True, stamp_first=True)[:3] == (0, "", [])


def dry_run(target: str, tmp_path: Path) -> list[str]:
    proc = subprocess.run(["make", "-n", target, f"VENV={tmp_path}/venv"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if "ensure_class_deps.sh" in line or "streamlit run" in line
            or "serve_class.py" in line]  # fmt: skip


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_makefile_needs_pyicu_for_a_class_and_the_tests_and_tries_it_for_make_run(tmp_path):
    venv = f"{tmp_path}/venv"
    assert dry_run("run", tmp_path) == [
        f"bash scripts/ensure_class_deps.sh --optional {venv}/bin/python {venv}/.class-deps",
        f"{venv}/bin/python -m streamlit run app.py --server.port 8501",
    ]
    needed = f"bash scripts/ensure_class_deps.sh {venv}/bin/python {venv}/.class-deps"
    assert dry_run("serve-class", tmp_path)[0] == needed
    assert dry_run("test", tmp_path)[0] == needed
    requirements = (ROOT / "requirements.txt").read_text()
    assert "PyICU" not in "".join(line for line in requirements.splitlines() if not line.startswith("#"))
    assert "-r requirements-class.txt" in (ROOT / "requirements-dev.txt").read_text()

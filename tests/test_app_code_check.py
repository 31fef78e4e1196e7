"""The code check page (issue 44) with AppTest: off unless the session is local (or the operator says
so), and when on: a right implementation passes, a trap fails with the step located, an escape is
refused; in English and Japanese. Also the gate's rule as a pure function."""

from __future__ import annotations

import pytest

from attention_core.codecheck import templates
from attention_ui.code_check import gate
from tests.apptest_pages import messages, no_exception, open_page, texts
from tests.codecheck_helpers import RIGHT

PAGE = "app_pages/code_check.py"

WRONG_AXIS = RIGHT.replace("m = S.max(axis=-1", "m = S.max(axis=0").replace("E.sum(axis=-1", "E.sum(axis=0")


@pytest.fixture
def check_on(monkeypatch):
    monkeypatch.setenv(gate.ENV, "1")


def shown(at) -> str:
    """Every text block and message box on the page, and the report's tables."""
    boxes = [v for values in messages(at).values() for v in values] + [s.value for s in at.success]
    tables = [df.value.to_string() for df in at.dataframe]
    return "\n".join([texts(at), *boxes, *tables, *(c.value for c in at.code)])


def press_check(at, code: str):
    at.text_area(key="cc_code").set_value(code)
    at.button(key="cc_check").click().run()
    no_exception(at)
    return shown(at)


def test_off_when_the_address_is_unknown_and_says_why(monkeypatch):
    monkeypatch.delenv(gate.ENV, raising=False)
    monkeypatch.delenv(gate.CLASS_ENV, raising=False)
    at = open_page(PAGE)
    assert at.button(key="cc_check").disabled
    assert "cannot tell whether you are on the computer it runs on" in shown(at)
    assert at.text_area(key="cc_code").value == templates.one_step_removed()


def test_off_under_serve_class(monkeypatch):
    monkeypatch.delenv(gate.ENV, raising=False)
    monkeypatch.setenv(gate.CLASS_ENV, "1")
    at = open_page(PAGE, lang="ja")
    assert at.button(key="cc_check").disabled
    assert "クラス用サーバ" in shown(at)


def test_right_code_passes_a_wrong_axis_is_located_an_escape_is_refused(check_on):
    at = open_page(PAGE)
    assert not at.button(key="cc_check").disabled
    page = press_check(at, RIGHT)
    assert "Pass: everything you wrote gives the core's answer" in page
    page = press_check(at, WRONG_AXIS)
    assert (
        "Not yet" in page
        and "the softmax weights" in page
        and "your variable `E` differs from the softmax weights" in page
    )
    assert at.get("plotly_chart")  # the map of where it differs
    page = press_check(at, "import os\nprint(os.environ)")
    assert "Your code was not run" in page and "`import os` is not allowed" in page


def test_in_japanese_a_stopped_loop_says_why(check_on):
    at = open_page(PAGE, lang="ja")
    page = press_check(at, "while True:\n    pass")
    assert "CPU 時間 2 秒を超えた" in page or "10 秒以内に終わらなかった" in page


def test_the_load_button_replaces_the_code(check_on):
    at = open_page(PAGE)
    at.text_area(key="cc_code").set_value("x = 1").run()
    at.radio(key="cc_preset").set_value("empty").run()
    assert at.text_area(key="cc_code").value == "x = 1"  # choosing a preset loses nothing
    at.button(key="cc_load").click().run()
    assert at.text_area(key="cc_code").value == templates.TEMPLATE


@pytest.mark.parametrize(
    "env, ip, host, forwarded, expected",
    [
        ({}, None, "localhost:8501", [], (True, "local")),
        ({}, None, "127.0.0.1:8501", [], (True, "local")),
        ({}, None, "[::1]:8501", [], (True, "local")),
        ({}, None, "LOCALHOST", [], (True, "local")),
        ({}, "10.0.0.7", "localhost:8501", [], (False, "off_remote")),
        ({}, None, "localhost:8501", ["203.0.113.9"], (False, "off_remote")),
        ({}, None, "localhost:8501", [" "], (True, "local")),
        ({}, None, "lab.example.org", [], (False, "off_remote")),
        ({}, None, "192.168.1.5:8501", [], (False, "off_remote")),
        ({}, None, None, [], (False, "off_unknown")),
        ({}, None, "  ", [], (False, "off_unknown")),
        ({"ATTENTION_LAB_SERVE_CLASS": "1"}, None, "localhost", [], (False, "off_class")),
        (
            {"ATTENTION_LAB_CODE_CHECK": "1", "ATTENTION_LAB_SERVE_CLASS": "1"},
            "10.0.0.7",
            "x.org",
            [],
            (True, "forced_on"),
        ),
        ({"ATTENTION_LAB_CODE_CHECK": "0"}, None, "localhost", [], (False, "off_env")),
        ({"ATTENTION_LAB_CODE_CHECK": " 1 "}, None, None, [], (True, "forced_on")),
        ({"ATTENTION_LAB_CODE_CHECK": "yes"}, None, "lab.example.org", [], (False, "off_remote")),
    ],
)
def test_gate(env, ip, host, forwarded, expected):
    assert gate.decide(env, ip, host, forwarded) == expected


def test_host_name():
    assert gate.host_name("[::1]:8501") == "::1"
    assert gate.host_name("[::1") == "::1"
    assert gate.host_name("Example.org:80") == "example.org"
    assert gate.host_name("::1") == "::1"
    assert gate.host_name("") is None
    assert gate.is_loopback_name("127.1.2.3") and not gate.is_loopback_name("128.0.0.1")
    assert not gate.is_loopback_name(None)

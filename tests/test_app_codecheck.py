"""The code check page (issue 44) with AppTest: off unless the session is local (or the operator says
so), and when on: a right implementation passes, a trap fails with the step located, an escape is
refused; in English and Japanese. Also the gate's rule as a pure function."""

from __future__ import annotations

from functools import partial

import pytest

from attention_core.codecheck import templates
from attention_ui import kit
from attention_ui.codecheck import gate
from attention_ui.i18n import translate
from tests.apptest_pages import messages, no_exception, open_page, texts
from tests.codecheck_helpers import RIGHT, RIGHT_MULTI_HEAD

PAGE = "app_pages/codecheck.py"

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
    at.text_area(key="codecheck_code").set_value(code)
    at.button(key="codecheck_check").click().run()
    no_exception(at)
    return shown(at)


def test_off_when_the_address_is_unknown_and_says_why(monkeypatch):
    monkeypatch.delenv(gate.ENV, raising=False)
    monkeypatch.delenv(gate.CLASS_ENV, raising=False)
    at = open_page(PAGE)
    assert at.button(key="codecheck_check").disabled
    assert "cannot tell whether you are on the computer it runs on" in shown(at)
    assert at.text_area(key="codecheck_code").value == templates.one_step_removed()


def test_off_under_serve_class(monkeypatch):
    monkeypatch.delenv(gate.ENV, raising=False)
    monkeypatch.setenv(gate.CLASS_ENV, "1")
    at = open_page(PAGE, lang="ja")
    assert at.button(key="codecheck_check").disabled
    assert "クラス用サーバ" in shown(at)


def test_right_code_passes_a_wrong_axis_is_located_an_escape_is_refused(check_on):
    at = open_page(PAGE)
    assert not at.button(key="codecheck_check").disabled
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


SCALED_LATE = RIGHT.replace("S = Q @ K.T / np.sqrt(d_k)", "S = Q @ K.T").replace(
    "return A @ V", "return A @ V / np.sqrt(d_k)"
)
MERGED_WITHOUT_TRANSPOSE = (
    RIGHT
    + """
def multi_head(X, W_Q, W_K, W_V, W_O, mask):
    heads = [attention(X, W_Q[i], W_K[i], W_V[i], mask, W_Q.shape[2]) for i in range(W_Q.shape[0])]
    concat = np.stack(heads).reshape(X.shape[0], -1)
    return concat @ W_O
"""
)

WRONG_AXIS_MULTI = RIGHT_MULTI_HEAD.replace("axis=-1", "axis=-2")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_traps_names_and_explanations_in_both_languages(check_on, lang):
    """The names and the reasons come from the code generator's catalog (code.mut_<name>, _why); the
    cases are a list of lines (no table: it reads on a phone without scrolling sideways)."""
    t = partial(translate, lang)
    at = open_page(PAGE, lang=lang)
    page = press_check(at, RIGHT.replace("/ np.sqrt(d_k)", "/ d_k"))
    assert t("codecheck.trap_named_attention", name=t("code.mut_divide_by_d_k")) in page
    assert t("code.mut_divide_by_d_k_why") in page
    assert not at.dataframe
    for case, status in (("random_shapes", "fail"), ("d_k_1", "pass")):  # √1 = 1: right on d_k = 1
        key = "codecheck.case_line_detail" if status == "fail" else "codecheck.case_line"
        line = t(key, case=t(f"codecheck.case_{case}"), status=t(f"codecheck.status_{status}"), detail="@")
        assert line.split("@")[0] in page  # the case by name, then pass or fail, on one line
    page = press_check(at, SCALED_LATE)  # two traps with the same numbers: both, and said so
    assert t("codecheck.traps_named_attention") in page
    for name in ("scale_after_softmax", "scale_after_weighted_sum"):
        assert t("code.mut_" + name) in page and t(f"code.mut_{name}_why") in page
    sentence = t("codecheck.case_sentence")
    assert t("codecheck.gap_title", case=sentence) in page.replace("\\", "")  # as text: it wraps
    page = press_check(at, MERGED_WITHOUT_TRANSPOSE)
    label = t("code.mut_heads_merged_without_transpose")
    assert t("codecheck.trap_named_multi_head", name=label) in page
    assert t("codecheck.step_concat") in page and "`concat`" in page  # where multi_head first differs
    page = press_check(at, WRONG_AXIS_MULTI)  # a head-first difference: the first head that differs
    assert t("codecheck.trap_named_multi_head", name=t("code.mut_softmax_wrong_axis")) in page
    assert t("codecheck.gap_title_head", case=sentence, head=0) in page.replace("\\", "")


def test_in_japanese_a_stopped_loop_says_why(check_on):
    at = open_page(PAGE, lang="ja")
    page = press_check(at, "while True:\n    pass")
    assert "CPU 時間 2 秒を超えた" in page or "10 秒以内に終わらなかった" in page


def test_the_load_button_replaces_the_code(check_on):
    at = open_page(PAGE)
    at.text_area(key="codecheck_code").set_value("x = 1").run()
    at.radio(key="codecheck_preset").set_value("empty").run()
    assert at.text_area(key="codecheck_code").value == "x = 1"  # choosing a preset loses nothing
    at.button(key="codecheck_load").click().run()
    assert at.text_area(key="codecheck_code").value == templates.TEMPLATE


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


def test_a_learners_error_message_is_shown_as_text_not_markdown(check_on):
    """The cases are Markdown list items now: a message the learner's code raises is their text, and
    stays inert (no link, no bold, no formula)."""
    source = 'def attention(X, W_Q, W_K, W_V, mask, d_k):\n    raise ValueError("**b** [l](http://x.org) $x$ <i>")\n'
    at = open_page(PAGE)
    press_check(at, source)
    items = [m.value for m in at.markdown if "http" in m.value]
    assert items and all("[l](http" not in m and "**b**" not in m and "<i>" not in m for m in items)
    assert all(kit.escape_markdown("**b** [l](http://x.org) $x$ <i>") in m for m in items)

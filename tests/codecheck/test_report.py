"""A check's report as text (attention_core/codecheck/report.py), as the command line prints it: for a
right program, a known trap, a refused program, one that defines nothing, an error and a wrong shape,
checked in this process on two hidden cases (tests/codecheck_helpers.py ``check_in_process``)."""

from __future__ import annotations

import dataclasses
import warnings

import pytest

from attention_core.codecheck.cases import hidden_cases, reference
from attention_core.codecheck.report import error_text, report_text
from attention_core.codecheck.verdict import LearnerError, build_report
from tests.codecheck_helpers import RIGHT, attention, check_in_process

CASES = [c for c in hidden_cases() if c.name in ("causal", "masked_row")]
ATTENTION = "def attention(X, W_Q, W_K, W_V, mask, d_k):\n    return "


def text(source: str, trap_names=None) -> list[str]:
    return report_text(check_in_process(source, CASES), trap_names).splitlines()


def test_a_right_program_passes_case_by_case():
    assert text(RIGHT) == [
        "attention: pass",
        "  pass  a causal mask",
        "  pass  a query with every key masked",
        "PASS",
    ]


def test_a_trap_is_said_by_its_readable_name_after_where_the_numbers_first_differ():
    lines = text(attention(scale="S = Q @ K.T / d_k"), {"divide_by_d_k": "dividing by d_k"})
    assert lines[0] == "attention: FAIL" and lines[-1] == "FAIL"
    assert lines[1].startswith("  FAIL  a causal mask: ") and " entries differ, by up to " in lines[1]
    assert lines[2].strip().startswith("agrees with the core up to the values V = X W_V; your variable S")
    assert (
        lines[-2] == "On every case, your attention gives the same numbers as a known trap: dividing by d_k."
    )
    assert "known trap: divide_by_d_k." in "\n".join(text(attention(scale="S = Q @ K.T / d_k")))


def test_code_that_is_not_run_or_defines_nothing_says_so_without_a_verdict_line():
    assert text("import os\n") == [
        "Your code was not run:",
        "  line 1: import os is not allowed: the check offers only numpy (import numpy as np)",
    ]
    assert text("x = 1\n") == [
        "Define attention(X, W_Q, W_K, W_V, mask, d_k) or one of the step functions",
        "(scores, scale, apply_mask, softmax, weighted_sum, multi_head).",
    ]


def test_an_error_and_a_wrong_shape_are_said_per_case():
    lines = text(ATTENTION + "X[:, 99]\n")
    assert lines[1].startswith("  error a causal mask: line 2: IndexError: index 99 is out of bounds")
    lines = text(ATTENTION + "(X @ W_V)[:, :1]\n")
    assert lines[1:3] == [
        "  FAIL  a causal mask: shape 6×1, expected 6×4",
        "  FAIL  a query with every key masked: shape 4×1, expected 4×3",
    ]


@pytest.mark.parametrize(
    "error, said",
    [
        (LearnerError(3, code="memory"), "line 3: used more than 512 MB of memory and was stopped"),
        (LearnerError(None, "ValueError: boom"), "your code: ValueError: boom"),
        (
            LearnerError(5, code="np_attribute", name="load"),
            "line 5: np.load is not available in the check (array maths only)",
        ),
        (LearnerError(None, code="no_run"), "it was not run on this case"),
        (
            LearnerError(None, code="attribute", name="tofile"),
            "line ?: .tofile is not available in the check",
        ),
    ],
    ids=["memory", "message", "refusal", "not_run", "no_line"],
)
def test_error_text(error, said):
    assert error_text(error) == said


def test_what_the_program_printed_is_shown_and_a_cut_is_said():
    assert text("print('hi')\n" + RIGHT)[-3:] == ["Printed:", "hi", "PASS"]
    assert text("print('hiX')\n" + RIGHT)[-2] == "hiX"  # only the last line break goes
    assert text("print('hi  ')\n" + RIGHT)[-2] == "hi  "
    cut = text("print('x' * 20000)\n" + RIGHT)
    assert cut[-2:] == ["(printed text cut here)", "PASS"] and cut[-4] == "Printed:"


def test_traps_with_the_same_numbers_are_named_together_and_a_nan_row_is_said():
    lines = text(attention(scale="S = Q @ K.T", out="A = A / np.sqrt(d_k)\nreturn A @ V"))
    assert lines[-3:-1] == [
        "On every case, your attention gives the same numbers as each of these known traps: "
        "scale_after_softmax, scale_after_weighted_sum.",
        "They give the same numbers as each other on every case of the check, so it cannot tell which one"
        " you wrote.",
    ]
    no_guard = "E = np.exp(S - S.max(axis=-1, keepdims=True))\nA = E / E.sum(axis=-1, keepdims=True)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the learner's 0/0 on the masked row
        lines = text(attention(scale="S = Q @ K.T", soft=no_guard))
    assert lines[-3:] == [
        "On every case, your attention gives the same numbers as a known trap: no_scaling.",
        "Counted as equal: rows where a query has no key left to read, which your code makes NaN (0/0)"
        " and the trap zeros, as the contract asks.",
        "FAIL",
    ]


def test_step_functions_say_what_they_make_and_the_first_that_differs():
    lines = text("def scores(Q, K):\n    return Q @ K.T\n\ndef scale(S, d_k):\n    return S / d_k\n")
    assert lines[0] == "scores (makes the raw scores Q Kᵀ): pass"
    assert lines[3] == "scale (makes the scaled scores Q Kᵀ / √d_k): FAIL"
    assert "The first step that differs: scale." in lines


def test_a_killed_run_an_error_on_loading_a_scalar_and_an_unnamed_case():
    refs = {(c.name, c.multi): reference(c) for c in CASES}
    killed = build_report(None, "cpu", CASES, refs, {})
    assert report_text(killed) == "Your code took longer than 2 s of CPU time and was stopped."
    assert text("import numpy as np\nraise ValueError('boom')\n") == [
        "Your code raised an error while it was loaded: line 2: ValueError: boom",
        "FAIL",
    ]
    assert text(ATTENTION + "0.0\n")[1] == "  FAIL  a causal mask: shape a scalar, expected 6×4"
    mine = [dataclasses.replace(CASES[0], name="mine")]  # a case the report has no words for: its name
    assert report_text(check_in_process(RIGHT, mine)).splitlines()[1] == "  pass  mine"


def test_without_a_variable_to_compare_the_next_step_is_named():
    lines = text("import numpy as np\n" + ATTENTION + "(X @ W_V) * 2\n")
    assert lines[2] == "        the next step, the queries Q = X W_Q, has no variable of yours to compare"

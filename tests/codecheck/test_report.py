"""A check's report as text (attention_core/codecheck/report.py), as the command line prints it: for a
right program, a known trap, a refused program, one that defines nothing, an error and a wrong shape,
checked in this process on two hidden cases (tests/codecheck_helpers.py ``check_in_process``)."""

from __future__ import annotations

import pytest

from attention_core.codecheck.cases import hidden_cases
from attention_core.codecheck.report import error_text, report_text
from attention_core.codecheck.verdict import LearnerError
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
    ],
    ids=["memory", "message", "refusal", "not_run"],
)
def test_error_text(error, said):
    assert error_text(error) == said

"""The code check end to end (issue 44), through the real worker: the right implementation passes, each
trap written by hand as a learner would is named from the code generator's catalogue, an exception
points at the learner's line, step functions and multi_head are checked. (The command line is in
test_check_cli.py, the attacks in codecheck/test_sandbox.py, the verdict's logic in codecheck/test_verdict.py.)"""

from __future__ import annotations

import textwrap

import pytest

from attention_core.codecheck.check import all_cases, check_cases
from attention_core.codecheck.templates import TEMPLATE, one_step_removed
from attention_core.codegen import one_head_function
from attention_core.config import AttentionConfig
from tests import codecheck_helpers
from tests.codecheck_helpers import RIGHT as RIGHT_BY_HAND
from tests.codecheck_helpers import RIGHT_SOFTMAX, attention

sandbox = codecheck_helpers.sandbox  # the module's sandbox (a warm spare), as a fixture

CASES = all_cases("the cat sat on the mat", AttentionConfig(mask="causal"))
RIGHT = attention()
WRONG_AXIS_SOFTMAX = RIGHT_SOFTMAX.replace("axis=-1", "axis=0")
# each trap as a learner would write it -> the catalogue's names it must be recognised by
BY_HAND = [
    ("divide_by_d_k", attention(scale="S = Q @ K.T / d_k"), ("divide_by_d_k",)),
    ("no_scaling", attention(scale="S = Q @ K.T"), ("no_scaling",)),
    (
        "scale_after_softmax",  # the same output as scaling after the weighted sum: both are named
        attention(scale="S = Q @ K.T", out="A = A / np.sqrt(d_k)\nreturn A @ V"),
        ("scale_after_softmax", "scale_after_weighted_sum"),
    ),
    ("softmax_wrong_axis", attention(soft=WRONG_AXIS_SOFTMAX), ("softmax_wrong_axis",)),
    (
        "no_max_subtraction",
        attention(soft="E = np.exp(S)\nt = E.sum(axis=-1, keepdims=True)\nA = E / np.where(t == 0, 1, t)"),
        ("no_max_subtraction",),
    ),
    ("k_not_transposed", attention(scale="S = Q @ K / np.sqrt(d_k)"), ("k_not_transposed",)),
    ("weights_transposed", attention(out="return A.T @ V"), ("weights_transposed",)),
]


def test_the_right_implementation_and_the_generated_one_pass(sandbox):
    for source in (RIGHT, RIGHT_BY_HAND, one_head_function()):
        report = check_cases(source, CASES, sandbox)
        assert report.verdict == "pass", report
        assert [c.case for c in report.function("attention").cases] == [c.name for c in CASES if not c.multi]


@pytest.mark.parametrize("trap, source, names", BY_HAND, ids=[b[0] for b in BY_HAND])
def test_a_trap_written_by_hand_is_named(sandbox, trap, source, names):
    report = check_cases(source, CASES, sandbox)
    assert report.verdict == "fail" and report.traps == names


def test_the_preset_with_a_step_removed_runs_and_names_the_missing_step(sandbox):
    assert "TODO" in one_step_removed() and one_step_removed() != TEMPLATE
    report = check_cases(one_step_removed(), CASES, sandbox)
    assert report.verdict == "fail" and report.traps == ("no_scaling",)
    empty = check_cases(TEMPLATE, CASES, sandbox)
    assert empty.verdict == "fail" and empty.traps == ()


def test_an_exception_points_at_the_learners_line(sandbox):
    source = attention(out="A = A @ W_Q\nreturn A @ V")  # [n, n] @ [d_model, d_k]: a shape error
    report = check_cases(source, CASES, sandbox)
    error = report.function("attention").cases[0].error
    assert error.line == 12 and "matmul" in error.message and "Traceback" not in error.message


def test_step_functions_are_checked_one_by_one_and_the_first_wrong_is_named(sandbox):
    steps = textwrap.dedent(
        """
        import numpy as np
        def scores(Q, K):
            return Q @ K.T
        def scale(S, d_k):
            return S / np.sqrt(d_k)
        def apply_mask(S, mask):
            return S if mask is None else np.where(mask, S, -np.inf)
        def softmax(S):
            m = S.max(axis=0, keepdims=True)
            E = np.exp(S - np.where(np.isfinite(m), m, 0))
            t = E.sum(axis=0, keepdims=True)
            return E / np.where(t == 0, 1, t)
        """
    )
    report = check_cases(steps, CASES, sandbox)
    assert [f.function for f in report.functions] == ["scores", "scale", "apply_mask", "softmax"]
    assert report.function("scores").passed and report.function("scale").passed
    assert report.function("apply_mask").passed
    assert report.first_wrong_step.function == "softmax"
    assert report.traps == ("softmax_wrong_axis",)  # the steps chained give that trap's output


def test_multi_head_is_checked_on_the_sentence_and_four_heads(sandbox):
    source = RIGHT + textwrap.dedent(
        """

        def multi_head(X, W_Q, W_K, W_V, W_O, mask):
            heads = [attention(X, W_Q[i], W_K[i], W_V[i], mask, W_Q.shape[2]) for i in range(W_Q.shape[0])]
            return np.concatenate(heads, axis=-1) @ W_O
        """
    )
    report = check_cases(source, CASES, sandbox)
    assert report.verdict == "pass"
    assert [c.case for c in report.function("multi_head").cases] == ["sentence", "four_heads"]
    wrong = source.replace("axis=-1) @ W_O", "axis=0)[: X.shape[0]] @ W_O")
    assert not check_cases(wrong, CASES, sandbox).function("multi_head").passed
    # the heads merged without the transpose, in a loop: the trap named, the merge located
    merged = source.replace(
        "return np.concatenate(heads, axis=-1) @ W_O",
        "concat = np.stack(heads).reshape(X.shape[0], -1)\n    return concat @ W_O",
    )
    report = check_cases(merged, CASES, sandbox)
    assert report.multi_traps == ("heads_merged_without_transpose",) and report.traps == ()
    loc = report.function("multi_head").first_failure.location
    assert (loc.step, loc.variable, loc.agrees_up_to) == ("concat", "concat", "heads")

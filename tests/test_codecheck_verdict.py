"""The code check's verdict logic (attention_core/codecheck/verdict.py), without a worker: replies are
built here the way the worker writes them. Every expected value is written out by hand or comes from
the core's reference, never from the function under test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.codecheck import verdict as V
from attention_core.codecheck.cases import Case, hidden_cases, reference
from attention_core.codecheck.policy import Refusal
from attention_core.codecheck.wire import WireError, decode_array, encode_array

CAUSAL = next(c for c in hidden_cases() if c.name == "causal")
REF = reference(CAUSAL)
MULTI = next(c for c in hidden_cases() if c.multi)


def run(value=None, **extra) -> dict:
    out = dict(extra)
    if value is not None:
        out["value"] = encode_array(np.asarray(value, dtype=float))
    return out


# --- comparing ---------------------------------------------------------------------------------


def test_agree_counts_a_very_negative_value_as_masked_only_below_the_floor():
    expected = np.array([-np.inf, -np.inf, -np.inf, 1.0])
    actual = np.array([-1e9, -1e4, -1e3, 1.0 + 1e-7])
    assert V.agree(actual, expected).tolist() == [True, True, False, True]


def test_agree_uses_the_tolerances_and_nan_only_when_asked():
    expected = np.array([1.0, 1.0, 0.0, np.nan])
    actual = np.array([1.0 + 2e-5, 1.0 + 5e-6, 2e-8, np.nan])
    assert V.agree(actual, expected).tolist() == [False, True, False, False]
    assert V.agree(actual, expected, nan_equal=True).tolist() == [False, True, False, True]
    assert V.agree(np.array([5e-9]), np.array([0.0])).tolist() == [True]


def test_same_needs_both_values_or_neither():
    a = np.ones((2, 2))
    assert V.same(None, None)
    assert not V.same(a, None) and not V.same(None, a)
    assert not V.same(a, np.ones((2, 3)))
    assert V.same(a, a.copy())
    assert not V.same(np.array([np.nan]), np.array([np.nan]))
    assert V.same(np.array([np.nan]), np.array([np.nan]), nan_equal=True)


def test_compare_says_nothing_for_an_equal_array():
    assert V.compare(REF.weights + 1e-12, REF.weights) is None


def test_compare_counts_and_measures_the_gap():
    expected = np.array([[1.0, 2.0], [3.0, 4.0]])
    actual = np.array([[1.0, 2.5], [3.0, 3.0]])
    d = V.compare(actual, expected)
    assert (d.count, d.total, d.max_abs, d.shape_ok) == (2, 4, 1.0, True)
    assert d.gap.tolist() == [[0.0, 0.5], [0.0, 1.0]]
    assert (d.actual_shape, d.expected_shape) == ((2, 2), (2, 2))


def test_compare_marks_a_non_finite_difference_as_infinite():
    expected = np.array([1.0, 2.0, 3.0])
    actual = np.array([1.0, np.nan, 3.5])
    d = V.compare(actual, expected)
    assert d.count == 2 and math.isinf(d.max_abs)
    assert d.gap[0] == 0.0 and math.isinf(d.gap[1]) and d.gap[2] == 0.5


def test_compare_of_different_shapes():
    d = V.compare(np.ones((3, 2)), np.ones((2, 3)))
    assert (d.count, d.total, d.shape_ok, d.gap) == (6, 6, False, None) and math.isinf(d.max_abs)
    assert (d.actual_shape, d.expected_shape) == ((3, 2), (2, 3))


# --- locating the first wrong step ----------------------------------------------------------------


def test_locate_finds_the_wrong_softmax_after_right_scores():
    wrong = REF.weights.T.copy()
    variables = [("Q", REF.Q), ("K", REF.K), ("V", REF.V), ("S", REF.masked), ("A", wrong)]
    loc = V.locate(variables, REF)
    assert (loc.step, loc.variable, loc.agrees_up_to) == ("weights", "A", "masked")
    assert loc.difference.count == V.compare(wrong, REF.weights).count


def test_locate_compares_a_wrong_variable_with_the_step_it_is_closest_to():
    S = REF.scores / CAUSAL.d_k  # divided by d_k instead of √d_k
    loc = V.locate([("Q", REF.Q), ("K", REF.K), ("S", S)], REF)
    assert (loc.step, loc.variable, loc.agrees_up_to) == ("scaled", "S", "K")
    assert loc.difference is not None and loc.difference.count > 0


def test_locate_skips_variables_before_the_last_match_and_of_other_shapes():
    junk = np.zeros_like(REF.scores)  # named before the right scores: not the one that went wrong
    odd = np.ones((2, 2))  # no step has this shape
    wrong = REF.weights * 2
    variables = [("junk", junk), ("S", REF.scores), ("odd", odd), ("W", wrong)]
    loc = V.locate(variables, REF)
    assert (loc.step, loc.variable, loc.agrees_up_to) == ("weights", "W", "scores")


def test_locate_with_no_comparable_variable_names_the_next_step():
    loc = V.locate([("S", REF.scaled)], REF)
    assert (loc.step, loc.variable, loc.agrees_up_to, loc.difference) == ("masked", None, "scaled", None)
    nothing = V.locate([], REF)
    assert (nothing.step, nothing.variable, nothing.agrees_up_to) == ("Q", None, None)


def test_locate_when_nothing_matches_compares_from_the_start():
    loc = V.locate([("Q", REF.Q + 1.0)], REF)
    assert (loc.step, loc.variable, loc.agrees_up_to) == ("Q", "Q", None)


def test_locate_when_the_right_output_was_not_returned():
    loc = V.locate([("out", REF.output)], REF)
    assert (loc.step, loc.variable, loc.agrees_up_to, loc.difference) == ("output", None, "output", None)


def test_distance_puts_a_wrong_kind_of_value_first():
    expected = np.array([-np.inf, 1.0])
    assert V._distance(np.array([0.0, 1.0]), expected) == (1, 0.0)
    assert V._distance(np.array([-1e9, 2.0]), expected) == (0, 1.0)
    assert V._distance(np.array([1.0, 1.0]), np.zeros(2)) == (0, math.sqrt(2))


# --- runs ----------------------------------------------------------------------------------------


def test_learner_error_reads_the_worker_fields():
    e = V.learner_error({"line": 3, "message": "ZeroDivisionError: division by zero"})
    assert (e.line, e.message, e.code, e.name) == (3, "ZeroDivisionError: division by zero", None, None)
    m = V.learner_error({"line": None, "memory": True})
    assert (m.line, m.code) == (None, "memory")
    r = V.learner_error({"line": "7", "code": "attribute", "name": "tofile"})
    assert (r.line, r.code, r.name) == (None, "attribute", "tofile")
    assert V.learner_error({"message": 5}).message is None
    assert len(V.learner_error({"message": "x" * 900}).message) == 500


def test_run_value_refuses_a_bad_array():
    assert V.run_value({}) is None
    assert V.run_value({"value": {"shape": [2], "f8": "AAAA"}}) is None
    assert V.run_value(run([1.0, 2.0])).tolist() == [1.0, 2.0]


def test_case_result_of_each_kind():
    expected = REF.output
    assert V.case_result(None, "c", expected).error.code == "no_run"
    err = V.case_result({"error": {"line": 2, "message": "boom"}}, "c", expected)
    assert (err.status, err.error.line, err.error.message) == (V.ERROR, 2, "boom")
    assert V.case_result({"not_numbers": "str"}, "c", expected).note == "not_numbers:str"
    big = V.case_result({"shape_only": [1000, 1000]}, "c", expected)
    assert (big.status, big.note) == (V.FAIL, "shape_only:1000×1000")
    assert V.case_result({"shape_only": ["a"]}, "c", expected).note == "shape_only:?"
    assert V.case_result({}, "c", expected).note == "no_value"
    ok = V.case_result(run(expected), "c", expected)
    assert (ok.status, ok.difference, ok.case) == (V.PASS, None, "c")


def test_a_failing_attention_is_located_only_with_its_reference():
    wrong = REF.output + 1.0
    variables = [
        ["Q", encode_array(REF.Q)],
        ["A", encode_array(REF.weights.T)],
        "junk",
        ["x", {"shape": "bad"}],
    ]
    with_ref = V.case_result(run(wrong, locals=variables), "causal", REF.output, REF)
    assert with_ref.status == V.FAIL and with_ref.location.variable == "A"
    assert with_ref.location.step == "weights"
    without = V.case_result(run(wrong, locals=variables), "causal", REF.output)
    assert without.location is None and without.difference.count == REF.output.size


# --- traps ---------------------------------------------------------------------------------------

RIGHT = {"a": np.ones(2), "b": np.zeros(2)}


def test_a_trap_is_named_when_the_learner_equals_it_everywhere():
    trap = {"a": np.full(2, 2.0), "b": None}  # raises on b
    assert V.name_traps({"a": np.full(2, 2.0), "b": None}, {"t": trap}, RIGHT) == ("t",)
    assert V.name_traps({"a": np.full(2, 2.0), "b": np.zeros(2)}, {"t": trap}, RIGHT) == ()


def test_no_trap_for_a_right_learner_or_a_trap_that_is_always_right():
    assert V.name_traps(dict(RIGHT), {"t": {"a": np.ones(2), "b": np.zeros(2)}}, RIGHT) == ()
    learner = {"a": np.ones(2), "b": np.ones(2)}  # wrong on b only
    always_right = {"a": np.ones(2), "b": np.zeros(2)}
    assert V.name_traps(learner, {"r": always_right, "t": dict(learner)}, RIGHT) == ("t",)
    assert V.name_traps({}, {"t": {}}, {}) == ()


def test_traps_agree_on_nan():
    nan = {"a": np.array([np.nan, 1.0]), "b": np.zeros(2)}
    assert V.name_traps(dict(nan), {"t": dict(nan), "u": {"a": np.ones(2), "b": np.ones(2)}}, RIGHT) == ("t",)


# --- whole reports -------------------------------------------------------------------------------

ONE = [c for c in hidden_cases() if not c.multi][:2]
REFS = {(c.name, c.multi): reference(c) for c in (*ONE, MULTI)}


def reply_for(outputs: dict[tuple[str, str], np.ndarray | dict], defined: list[str], **extra) -> dict:
    runs = []
    for (fn, case), value in outputs.items():
        runs.append({"fn": fn, "case": case, **(value if isinstance(value, dict) else run(value))})
    return {"defined": defined, "runs": runs, "printed": "", "printed_cut": False, **extra}


def test_killed_and_refused_and_empty_reports():
    killed = V.build_report(None, "cpu", ONE, REFS, {})
    assert (killed.verdict, killed.killed, killed.cases) == ("killed", "cpu", tuple(c.name for c in ONE))
    assert V.build_report({"x": 1}, "strange", ONE, REFS, {}).killed == "crash"
    assert V.build_report(None, None, ONE, REFS, {}).verdict == "killed"
    refused = V.build_report(
        {"refused": [{"line": 2, "code": "import", "name": "os"}, "junk"]}, None, ONE, REFS, {}
    )
    assert refused.verdict == "refused" and refused.refusals == (Refusal(2, "import", "os"),)
    assert (
        V.build_report({"refused": [{"line": "2", "code": "c", "name": "n"}]}, None, ONE, REFS, {})
        .refusals[0]
        .line
        is None
    )
    module = V.build_report({"module_error": {"line": 4, "message": "NameError: x"}}, None, ONE, REFS, {})
    assert (module.verdict, module.module_error.line) == ("fail", 4)
    nothing = V.build_report(
        {"defined": ["helper"], "printed": "hi", "printed_cut": True}, None, ONE, REFS, {}
    )
    assert (nothing.verdict, nothing.printed, nothing.printed_cut) == ("nothing", "hi", True)


def test_a_right_program_passes_every_function_on_every_case():
    outputs = {("attention", c.name): REFS[(c.name, False)].output for c in ONE}
    outputs |= {("softmax", c.name): REFS[(c.name, False)].weights for c in ONE}
    outputs[("multi_head", MULTI.name)] = REFS[(MULTI.name, True)].output
    report = V.build_report(
        reply_for(outputs, ["attention", "softmax", "multi_head"]), None, [*ONE, MULTI], REFS, {}
    )
    assert report.verdict == "pass" and report.traps == () and report.first_wrong_step is None
    assert [f.function for f in report.functions] == ["attention", "softmax", "multi_head"]
    assert [c.case for c in report.function("attention").cases] == [c.name for c in ONE]
    assert [c.case for c in report.function("multi_head").cases] == [MULTI.name]
    assert report.function("scale") is None


def test_step_functions_are_compared_with_their_own_step_and_the_first_wrong_is_named():
    outputs = {}
    for c in ONE:
        ref = REFS[(c.name, False)]
        outputs[("scale", c.name)] = ref.scores  # forgot to divide
        outputs[("softmax", c.name)] = ref.weights
        outputs[("weighted_sum", c.name)] = ref.output * 2
        outputs[("chain", c.name)] = ref.output * 2
    report = V.build_report(reply_for(outputs, ["softmax", "weighted_sum", "scale"]), None, ONE, REFS, {})
    assert report.verdict == "fail"
    assert [f.function for f in report.functions] == ["scale", "softmax", "weighted_sum"]
    assert report.function("softmax").passed and not report.function("scale").passed
    assert report.first_wrong_step.function == "scale"
    assert report.function("scale").first_failure.case == ONE[0].name


def test_the_trap_is_read_from_attention_else_from_the_chained_steps():
    trap = {c.name: REFS[(c.name, False)].output * 3 for c in ONE}
    chained = {("chain", c.name): trap[c.name] for c in ONE}
    chained |= {("softmax", c.name): REFS[(c.name, False)].weights * 3 for c in ONE}
    by_chain = V.build_report(reply_for(chained, ["softmax"]), None, ONE, REFS, {"three": trap})
    assert by_chain.traps == ("three",)
    direct = {("attention", c.name): trap[c.name] for c in ONE} | chained
    both = V.build_report(reply_for(direct, ["attention", "softmax"]), None, ONE, REFS, {"three": trap})
    assert both.traps == ("three",)
    wrong_attention = {("attention", c.name): REFS[(c.name, False)].output for c in ONE} | chained
    right = V.build_report(
        reply_for(wrong_attention, ["attention", "softmax"]), None, ONE, REFS, {"three": trap}
    )
    assert right.traps == ()  # attention is right: its output, not the chain's, decides
    multi_only = {("multi_head", MULTI.name): REFS[(MULTI.name, True)].output * 3}
    no_one_head = V.build_report(
        reply_for(multi_only, ["multi_head"]), None, [*ONE, MULTI], REFS, {"three": trap}
    )
    assert no_one_head.traps == () and no_one_head.verdict == "fail"


def test_unknown_function_names_and_bad_runs_are_ignored():
    reply = reply_for(
        {("attention", ONE[0].name): REFS[(ONE[0].name, False)].output}, ["attention", "helper"]
    )
    reply["runs"].append("junk")
    report = V.build_report(reply, None, ONE[:1], REFS, {})
    assert [f.function for f in report.functions] == ["attention"] and report.verdict == "pass"


# --- the wire --------------------------------------------------------------------------------------


def test_arrays_round_trip_and_bad_ones_are_refused():
    a = np.array([[1.5, -np.inf], [np.nan, 2.0]])
    back = decode_array(encode_array(a))
    assert back.shape == (2, 2) and back[0, 0] == 1.5 and np.isneginf(back[0, 1]) and np.isnan(back[1, 0])
    assert decode_array(encode_array(np.array([True, False]))).tolist() == [True, False]
    for bad in (
        [],
        {"shape": [2, -1], "f8": ""},
        {"shape": [10**6], "f8": ""},
        {"shape": [1, 1, 1, 1], "f8": ""},
        {"shape": [2]},
        {"shape": [1], "f8": "!!"},
        {"shape": [2], "f8": "AAAAAAAAAAA="},
        {"shape": [True], "f8": ""},
    ):
        with pytest.raises(WireError):
            decode_array(bad)


def test_case_reference_of_a_fully_masked_row_is_zero():
    case = next(c for c in hidden_cases() if c.name == "masked_row")
    assert np.all(reference(case).output[2] == 0.0) and np.all(reference(case).weights[2] == 0.0)
    assert isinstance(case, Case) and case.d_k == 2 and case.n == 4

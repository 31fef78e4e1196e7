"""The code check's verdict logic (attention_core/codecheck/verdict.py), without a worker: replies are
built here the way the worker writes them. Every expected value is written out by hand or comes from
the core's reference, never from the function under test."""

from __future__ import annotations

import math
import warnings

import numpy as np

from attention_core.codecheck import verdict as V
from attention_core.codecheck.cases import hidden_cases, reference
from attention_core.codecheck.policy import Refusal
from attention_core.codecheck.wire import encode_array

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


def test_compare_gives_no_gap_where_the_values_agree_without_being_equal():
    expected = np.array([1.0, -np.inf, 2.0])
    actual = np.array([1.0 + 1e-9, -1e9, 3.0])  # within the tolerance; masked either way; wrong
    d = V.compare(actual, expected)
    assert d.gap.tolist() == [0.0, 0.0, 1.0] and d.count == 1 and d.max_abs == 1.0


def test_comparing_extreme_values_warns_nothing():
    """inf − inf and 1e308 − (−1e308) happen in a learner's wrong output: the check stays silent."""
    actual = np.array([np.inf, 1e308, np.nan, -np.inf])
    expected = np.array([-np.inf, -1e308, 1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert V.agree(actual, expected).tolist() == [False, False, False, False]
        d = V.compare(actual, expected)
        assert d.count == 4 and math.isinf(d.max_abs)
        assert V._distance(actual, expected)[0] == 3  # -inf for a number, NaN, -inf vs -inf's place
        V._distance(np.array([1e308, 1.0]), np.array([-1e308, 2.0]))
        assert V.compare(np.array([np.inf, 1.0]), np.array([np.inf, 2.0])).gap.tolist() == [0.0, 1.0]


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


def test_locate_after_only_the_queries_match():
    junk = np.zeros_like(REF.weights)  # before Q: not where the code went wrong
    variables = [("junk", junk), ("Q", REF.Q), ("W", REF.weights * 2)]
    loc = V.locate(variables, REF)
    assert (loc.variable, loc.agrees_up_to) == ("W", "Q")


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
    no_run = V.case_result(None, "c", expected)
    assert (no_run.case, no_run.status, no_run.error.code) == ("c", V.ERROR, "no_run")
    err = V.case_result({"error": {"line": 2, "message": "boom"}}, "c", expected)
    assert (err.case, err.status, err.error.line, err.error.message) == ("c", V.ERROR, 2, "boom")
    assert V.case_result({"not_numbers": "str"}, "c", expected).note == "not_numbers:str"
    assert V.case_result({"not_numbers": "x" * 100}, "c", expected).note == "not_numbers:" + "x" * 60
    empty = V.case_result({}, "c", expected)
    assert (empty.case, empty.status) == ("c", V.FAIL)
    big = V.case_result({"shape_only": [1000, 1000]}, "c", expected)
    assert (big.status, big.note) == (V.FAIL, "shape_only:1000×1000")
    assert V.case_result({"shape_only": ["a"]}, "c", expected).note == "shape_only:?"
    assert V.case_result({}, "c", expected).note == "no_value"
    ok = V.case_result(run(expected), "c", expected)
    assert (ok.status, ok.difference, ok.case) == (V.PASS, None, "c")


def test_the_learners_variables_skip_what_is_not_a_named_array():
    good = encode_array(REF.Q)
    raw = [7, "junk", {"a": 1}, [5, good], ["Z", good, "extra"], ["bad", {"shape": "x"}], ["n" * 100, good]]
    assert [(name, a.shape) for name, a in V._variables(raw)] == [("n" * 60, REF.Q.shape)]
    assert V._variables("not a list") == [] and V._variables(None) == []


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


def test_a_trap_is_named_only_with_numbers_that_show_it():
    """Raising everywhere the trap raises is no evidence: some case must give the trap's numbers."""
    only_raises = {"a": None, "b": None}
    assert V.name_traps(dict(only_raises), {"t": dict(only_raises)}, RIGHT) == ()
    # equal on a, but a is where the trap is right: b (both raise) shows nothing either
    right_on_a = {"a": np.ones(2), "b": None}
    assert V.name_traps(dict(right_on_a), {"t": dict(right_on_a)}, RIGHT) == ()
    # one case with the trap's own wrong numbers is enough
    shows = {"a": np.full(2, 3.0), "b": None}
    assert V.name_traps(dict(shows), {"t": dict(shows)}, RIGHT) == ("t",)


def test_a_learner_right_but_for_the_zero_row_rule_is_given_no_trap():
    """Even a trap whose numbers are the learner's: a NaN row where the core has zeros is the zero-row
    rule (its own case says so), not a mistake of the catalogue."""
    core = {"a": ZERO_ROW, "b": np.ones((1, 2))}
    learner = {"a": NAN_ROW, "b": np.ones((1, 2))}
    assert V.name_traps(learner, {"t": dict(learner)}, core) == ()
    assert V.name_traps({"a": NAN_ROW, "b": np.zeros((1, 2))}, {"t": dict(learner)}, core) == ()


def test_several_traps_are_named_in_the_catalogues_order():
    learner = {"a": np.full(2, 2.0), "b": np.ones(2)}
    traps = {"z": dict(learner), "other": {"a": np.ones(2), "b": np.ones(2)}, "a": dict(learner)}
    assert V.name_traps(learner, traps, RIGHT) == ("z", "a")


NAN_ROW = np.array([[1.0, 2.0], [np.nan, np.nan]])
ZERO_ROW = np.array([[1.0, 2.0], [0.0, 0.0]])


def test_like_trap_counts_a_learners_nan_row_as_the_traps_zero_row():
    assert V.like_trap(NAN_ROW, ZERO_ROW)
    assert not V.like_trap(ZERO_ROW, NAN_ROW)  # only that way round: the trap keeps the zero row
    assert not V.like_trap(np.array([[1.0, 2.0], [np.nan, 0.0]]), ZERO_ROW)  # the whole row, not a part
    assert not V.like_trap(NAN_ROW, np.array([[1.0, 2.0], [0.0, 1e-3]]))  # zeros, not small numbers
    assert not V.like_trap(np.array([[1.5, 2.0], [np.nan, np.nan]]), ZERO_ROW)  # the rest must agree
    assert V.like_trap(np.array([np.nan, np.nan]), np.array([np.nan, np.nan]))  # 1-D: NaN is NaN
    assert not V.like_trap(np.array([np.nan, np.nan]), np.zeros(2))  # and no rows to excuse
    assert V.like_trap(None, None) and not V.like_trap(NAN_ROW, None) and not V.like_trap(None, ZERO_ROW)
    assert not V.like_trap(NAN_ROW, ZERO_ROW.T.copy()[:, :1])


def test_a_trap_match_says_when_a_nan_row_was_counted_as_the_traps_zeros():
    right = {"a": np.array([[1.0, 1.0], [5.0, 5.0]]), "b": np.ones((1, 2))}
    trap = {"a": ZERO_ROW, "b": np.full((1, 2), 4.0)}  # b shows the trap's own numbers
    learner = {"a": NAN_ROW, "b": np.full((1, 2), 4.0)}
    assert V.trap_match("attention", learner, {"t": trap}, right) == V.TrapMatch("attention", ("t",), True)
    exact = V.trap_match("multi_head", dict(trap), {"t": trap}, right)
    assert exact == V.TrapMatch("multi_head", ("t",), False)
    assert V.trap_match("attention", dict(right), {"t": trap}, right) is None
    # a NaN row alone is no evidence: without b, the trap never shows its own numbers
    assert V.name_traps({"a": NAN_ROW}, {"t": {"a": ZERO_ROW}}, {"a": right["a"]}) == ()
    # a learner right but for the NaN row names nothing: that is the zero-row rule, not a trap
    core = {"a": ZERO_ROW, "b": np.ones((1, 2))}
    near = {"a": ZERO_ROW, "b": np.full((1, 2), 2.0)}  # a trap right on a, wrong on b
    assert V.trap_match("attention", {"a": NAN_ROW, "b": np.ones((1, 2))}, {"t": near}, core) is None


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
    names = tuple(c.name for c in ONE)
    for report in (refused, module, nothing):  # every kind of report keeps the cases and the printout
        assert report.cases == names
    said = {"printed": "said", "printed_cut": True}
    assert (
        V.build_report(
            {"refused": [{"line": 1, "code": "c", "name": "n"}], **said}, None, ONE, REFS, {}
        ).printed
        == "said"
    )
    assert V.build_report({"module_error": {"line": 1}, **said}, None, ONE, REFS, {}).printed_cut
    assert V.build_report({"defined": []}, None, ONE, REFS, {}).printed == ""  # nothing printed
    long = V.build_report({"defined": [], "printed": "x" * 30_000}, None, ONE, REFS, {})
    assert long.printed == "x" * 20_000


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
    assert report.cases == (*(c.name for c in ONE), MULTI.name) and report.printed == ""
    printing = V.build_report(
        reply_for(outputs, ["attention"], printed="hello"), None, [*ONE, MULTI], REFS, {}
    )
    assert printing.printed == "hello"


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
    assert report.function("scale").first_failure.location is None  # steps are compared, not located


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


def test_multi_head_is_located_and_its_traps_named():
    ref = REFS[(MULTI.name, True)]
    merged = ref.heads.reshape(ref.concat.shape)  # the heads merged without the transpose
    out = merged @ MULTI.W_O
    variables = [["O", encode_array(ref.heads)], ["C", encode_array(merged)]]
    outputs = {("multi_head", MULTI.name): run(out, locals=variables)}
    outputs |= {("attention", c.name): REFS[(c.name, False)].output * 3 for c in ONE}
    one_head = {"three": {c.name: REFS[(c.name, False)].output * 3 for c in ONE}}
    multi = {"merged": {MULTI.name: out}, "other": {MULTI.name: out + 1}}
    reply = reply_for(outputs, ["attention", "multi_head"])
    report = V.build_report(reply, None, [*ONE, MULTI], REFS, one_head, multi)
    assert report.matches == (
        V.TrapMatch("attention", ("three",), False),
        V.TrapMatch("multi_head", ("merged",), False),
    )
    assert report.traps == ("three",) and report.multi_traps == ("merged",)
    loc = report.function("multi_head").cases[0].location
    assert (loc.step, loc.variable, loc.agrees_up_to) == ("concat", "C", "heads")
    assert loc.difference.count > 0
    # without multi-head traps nothing is named for it; without attention, only multi_head's
    alone = V.build_report(reply_for(outputs, ["multi_head"]), None, [*ONE, MULTI], REFS, one_head)
    assert alone.matches == () and alone.traps == () and alone.multi_traps == ()
    right = {("multi_head", MULTI.name): run(ref.output, locals=variables)}
    passed = V.build_report(reply_for(right, ["multi_head"]), None, [MULTI], REFS, {}, multi)
    assert passed.verdict == "pass" and passed.function("multi_head").cases[0].location is None


def test_a_learner_with_attention_and_every_step_function_is_named_from_attention():
    trap = {c.name: REFS[(c.name, False)].output * 3 for c in ONE}
    outputs = {("attention", c.name): trap[c.name] for c in ONE}
    every = ["attention", "scores", "scale", "apply_mask", "softmax", "weighted_sum"]
    report = V.build_report(reply_for(outputs, every), None, ONE, REFS, {"three": trap})
    assert report.matches == (V.TrapMatch("attention", ("three",), False),)


def test_nan_in_both_is_no_empty_row():
    """Only a learner's NaN row against the trap's zeros is reported; NaN where the trap has NaN too
    (an overflow) is plainly equal."""
    right = {"a": np.ones((2, 2)), "b": np.ones((1, 2))}
    trap = {"a": np.array([[np.nan, 1.0], [1.0, 1.0]]), "b": np.full((1, 2), 4.0)}
    assert V.trap_match("attention", dict(trap), {"t": trap}, right) == V.TrapMatch(
        "attention", ("t",), False
    )


def test_unknown_function_names_and_bad_runs_are_ignored():
    reply = reply_for(
        {("attention", ONE[0].name): REFS[(ONE[0].name, False)].output}, ["attention", "helper"]
    )
    reply["runs"].append("junk")
    report = V.build_report(reply, None, ONE[:1], REFS, {})
    assert [f.function for f in report.functions] == ["attention"] and report.verdict == "pass"

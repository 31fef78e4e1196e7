"""From the worker's answers to a verdict: pure functions, no process, no I/O.

For every function the learner defined and every case: pass or fail, and for a failure how much
and where the value differs from the core's; for ``attention``, the first intermediate that
differs, found among the learner's own variables; for the whole program, the trap by name when its
one-head output equals a known mistake's on every case.

Equality is ``np.isclose`` with :data:`RTOL` and :data:`ATOL` (a learner's float32 or another
order of sums stays equal), except where the core has −∞ (a masked score): any value at or below
:data:`MASKED_BELOW` counts as masked there, since a learner who writes −1e9 for the mask gets the
same softmax.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .cases import MULTI_HEAD, ONE_HEAD, STEP_FUNCTIONS, STEP_OUTPUT, STEPS, Case, Reference
from .policy import Refusal
from .wire import WireError, decode_array

RTOL = 1e-5
ATOL = 1e-8
MASKED_BELOW = -1e4
KILLED = ("cpu", "wall", "memory", "output", "crash")
PASS, FAIL, ERROR = "pass", "fail", "error"


@dataclass(frozen=True)
class Difference:
    """How the learner's array differs from the core's. ``gap`` is ``|actual − expected|`` (∞ where
    only one is finite or either is NaN, 0 where they agree) when the shapes match, else None."""

    actual_shape: tuple[int, ...]
    expected_shape: tuple[int, ...]
    count: int  # entries that differ (all of them when the shapes differ)
    total: int  # entries of the core's array
    max_abs: float  # the largest finite gap, or inf
    gap: np.ndarray | None

    @property
    def shape_ok(self) -> bool:
        return self.actual_shape == self.expected_shape


@dataclass(frozen=True)
class LearnerError:
    """An exception in the learner's code: their line, and Python's message or a refusal's code."""

    line: int | None
    message: str | None = None
    code: str | None = None  # a run-time refusal (policy.REFUSAL_TEXT) or "memory"
    name: str | None = None


@dataclass(frozen=True)
class Location:
    """Where a wrong ``attention`` first differs: the step (of cases.STEPS), the learner's variable
    that holds it (None when no variable of theirs does) and the last step a variable matched."""

    step: str
    variable: str | None
    agrees_up_to: str | None
    difference: Difference | None


@dataclass(frozen=True)
class CaseResult:
    case: str
    status: str  # PASS, FAIL or ERROR
    difference: Difference | None = None
    error: LearnerError | None = None
    location: Location | None = None
    note: str | None = None  # "not_numbers:<type>" or "shape_only:<shape>" when no array came back


@dataclass(frozen=True)
class FunctionResult:
    function: str
    cases: tuple[CaseResult, ...]

    @property
    def passed(self) -> bool:
        return all(c.status == PASS for c in self.cases)

    @property
    def first_failure(self) -> CaseResult | None:
        return next((c for c in self.cases if c.status != PASS), None)


@dataclass(frozen=True)
class Report:
    """The whole answer. ``verdict``: "pass", "fail", "refused" (the policy did not compile the
    code), "killed" (``killed`` says why) or "nothing" (none of the functions was defined)."""

    verdict: str
    functions: tuple[FunctionResult, ...] = ()
    traps: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    killed: str | None = None
    module_error: LearnerError | None = None
    printed: str = ""
    printed_cut: bool = False
    cases: tuple[str, ...] = ()

    def function(self, name: str) -> FunctionResult | None:
        return next((f for f in self.functions if f.function == name), None)

    @property
    def first_wrong_step(self) -> FunctionResult | None:
        """The first step function, in the order of the computation, that fails on some case."""
        steps = [self.function(name) for name in STEP_FUNCTIONS]
        return next((f for f in steps if f is not None and not f.passed), None)


# --- comparing arrays ---------------------------------------------------------------------------


def agree(actual: np.ndarray, expected: np.ndarray, nan_equal: bool = False) -> np.ndarray:
    """Entry by entry: does the learner's value count as the core's? (shapes must match)"""
    masked = np.isneginf(expected)
    with np.errstate(invalid="ignore"):
        plain = np.isclose(actual, expected, rtol=RTOL, atol=ATOL, equal_nan=nan_equal)
        return np.where(masked, actual <= MASKED_BELOW, plain)


def same(actual: np.ndarray | None, expected: np.ndarray | None, nan_equal: bool = False) -> bool:
    """Equal shapes and every entry agreeing; None (no value: the code raised) equals only None."""
    if actual is None or expected is None:
        return actual is None and expected is None
    return actual.shape == expected.shape and bool(agree(actual, expected, nan_equal).all())


def compare(actual: np.ndarray, expected: np.ndarray) -> Difference | None:
    """None when the learner's array counts as the core's, else how it differs."""
    if actual.shape != expected.shape:
        return Difference(actual.shape, expected.shape, expected.size, expected.size, math.inf, None)
    ok = agree(actual, expected)
    if ok.all():
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        raw = np.abs(actual - expected)
    gap = np.where(ok, 0.0, np.where(np.isfinite(raw), raw, np.inf))
    finite = gap[np.isfinite(gap) & ~ok]
    max_abs = float(finite.max()) if finite.size == np.count_nonzero(~ok) else math.inf
    return Difference(actual.shape, expected.shape, int(np.count_nonzero(~ok)), expected.size, max_abs, gap)


# --- where a wrong attention() first differs ---------------------------------------------------


def locate(variables: Sequence[tuple[str, np.ndarray]], ref: Reference) -> Location:
    """Where the learner's ``attention`` first goes wrong, from their own variables.

    Every variable is matched against every step of ``cases.STEPS``. The learner agrees with the
    core up to the latest step some variable matches (a later step right implies the earlier ones
    were). The variable shown is the first one, in the order the function names them, after the
    last matching one, that matches no step; it is compared with the later step of its shape it is
    closest to (fewest entries of the wrong kind, then the smallest relative gap): ``S = scores / d_k`` is shown
    against the scaled scores. No such variable: the step after the last match, with no variable
    (the learner computed it inside a longer expression).
    """
    hits = {name: [s for s in STEPS if same(value, ref.step(s))] for name, value in variables}
    matched = [STEPS.index(s) for steps in hits.values() for s in steps]
    last = max(matched, default=-1)
    agrees = STEPS[last] if last >= 0 else None
    if last == len(STEPS) - 1:  # a variable holds the right output, but another value was returned
        return Location(STEPS[-1], None, agrees, None)
    start = 0
    if last >= 0:
        start = next(i for i, (name, _) in enumerate(variables) if STEPS[last] in hits[name])
    later = STEPS[last + 1 :]
    for name, value in variables[start:]:
        shaped = [s for s in later if ref.step(s).shape == value.shape]
        if hits[name] or not shaped:
            continue
        step = min(shaped, key=lambda s: _distance(value, ref.step(s)))
        return Location(step, name, agrees, compare(value, ref.step(step)))
    return Location(later[0], None, agrees, None)


def _distance(actual: np.ndarray, expected: np.ndarray) -> tuple[int, float]:
    """(entries wrong in their kind: a finite value for −∞ or the reverse, NaN; then the relative
    size of the gap over the rest): small means "this is the step the variable was meant to be"."""
    ok = agree(actual, expected)
    both = np.isfinite(actual) & np.isfinite(expected)
    wrong_kind = int(np.count_nonzero(~ok & ~both))
    with np.errstate(over="ignore", invalid="ignore"):
        scale = float(np.linalg.norm(expected[both])) or 1.0
        return wrong_kind, float(np.linalg.norm(actual[both] - expected[both])) / scale


# --- one run, one function, the traps ------------------------------------------------------------


def learner_error(raw: Mapping) -> LearnerError:
    line = raw.get("line")
    return LearnerError(
        line=line if type(line) is int else None,
        message=_text(raw.get("message")),
        code="memory" if raw.get("memory") else _text(raw.get("code")),
        name=_text(raw.get("name")),
    )


def _text(value, limit: int = 500) -> str | None:
    return value[:limit] if isinstance(value, str) else None


def run_value(run: Mapping) -> np.ndarray | None:
    """The array a run returned, or None (it raised, returned no numbers, or sent a bad array)."""
    try:
        return decode_array(run["value"]) if "value" in run else None
    except WireError:
        return None


def case_result(
    run: Mapping | None, case: str, expected: np.ndarray, ref: Reference | None = None
) -> CaseResult:
    """One function on one case. ``ref`` (one-head attention only) lets a failure be located."""
    if run is None:
        return CaseResult(case, ERROR, error=LearnerError(None, code="no_run"))
    if "error" in run:
        return CaseResult(case, ERROR, error=learner_error(run["error"]))
    actual = run_value(run)
    if actual is None:
        note = f"not_numbers:{_text(run.get('not_numbers'), 60)}" if "not_numbers" in run else None
        if "shape_only" in run:
            note = f"shape_only:{_shape_text(run['shape_only'])}"
        return CaseResult(case, FAIL, note=note or "no_value")
    difference = compare(actual, expected)
    if difference is None:
        return CaseResult(case, PASS)
    location = None
    if ref is not None:
        location = locate(_variables(run.get("locals")), ref)
    return CaseResult(case, FAIL, difference=difference, location=location)


def _shape_text(shape) -> str:
    if isinstance(shape, list) and all(type(s) is int for s in shape):
        return "×".join(str(s) for s in shape)
    return "?"


def _variables(raw) -> list[tuple[str, np.ndarray]]:
    out = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str):
            try:
                out.append((item[0][:60], decode_array(item[1])))
            except WireError:
                continue
    return out


def name_traps(
    learner: Mapping[str, np.ndarray | None],
    traps: Mapping[str, Mapping[str, np.ndarray | None]],
    correct: Mapping[str, np.ndarray],
) -> tuple[str, ...]:
    """The traps whose output equals the learner's on every case (both raising counts as equal).

    ``learner`` and each trap map case name -> one-head output (None: raised); a trap that gives
    the core's answer on every case is never named (it cannot be told apart from a right answer),
    and nothing is named for a learner who is right everywhere.
    """
    names = sorted(correct)
    if not names or all(same(learner.get(c), correct[c]) for c in names):
        return ()
    found = []
    for trap, outputs in traps.items():
        if all(same(outputs.get(c), correct[c]) for c in names):
            continue
        if all(same(learner.get(c), outputs.get(c), nan_equal=True) for c in names):
            found.append(trap)
    return tuple(found)


def build_report(
    reply: Mapping | None,
    killed: str | None,
    cases: Sequence[Case],
    refs: Mapping[tuple[str, bool], Reference],
    traps: Mapping[str, Mapping[str, np.ndarray | None]],
) -> Report:
    """The report of one check: the worker's reply (or why it was killed) against the core."""
    names = tuple(dict.fromkeys(c.name for c in cases))
    if killed is not None or reply is None:
        return Report("killed", killed=killed if killed in KILLED else "crash", cases=names)
    printed = _text(reply.get("printed"), 20_000) or ""
    extras = {"printed": printed, "printed_cut": bool(reply.get("printed_cut")), "cases": names}
    if reply.get("refused"):
        refusals = tuple(
            Refusal(
                r.get("line") if type(r.get("line")) is int else None, str(r.get("code")), str(r.get("name"))
            )
            for r in reply["refused"]
            if isinstance(r, dict)
        )
        return Report("refused", refusals=refusals, **extras)
    if isinstance(reply.get("module_error"), dict):
        return Report(FAIL, module_error=learner_error(reply["module_error"]), **extras)
    defined = [f for f in reply.get("defined") or () if f in (ONE_HEAD, *STEP_FUNCTIONS, MULTI_HEAD)]
    if not defined:
        return Report("nothing", **extras)
    runs = {(r.get("fn"), r.get("case")): r for r in reply.get("runs") or () if isinstance(r, dict)}
    functions = []
    for fn in (ONE_HEAD, *STEP_FUNCTIONS, MULTI_HEAD):
        if fn not in defined:
            continue
        results = []
        for case in cases:
            if case.multi != (fn == MULTI_HEAD):
                continue
            ref = refs[(case.name, case.multi)]
            expected = ref.step(STEP_OUTPUT.get(fn, "output"))
            located = ref if fn == ONE_HEAD else None
            results.append(case_result(runs.get((fn, case.name)), case.name, expected, located))
        functions.append(FunctionResult(fn, tuple(results)))
    one_head = [c for c in cases if not c.multi]
    source = ONE_HEAD if ONE_HEAD in defined else "chain"
    learner = {c.name: run_value(runs.get((source, c.name)) or {}) for c in one_head}
    correct = {c.name: refs[(c.name, False)].output for c in one_head}
    found = (
        name_traps(learner, traps, correct) if any(f in defined for f in (ONE_HEAD, *STEP_FUNCTIONS)) else ()
    )
    verdict = PASS if all(f.passed for f in functions) else FAIL
    return Report(verdict, functions=tuple(functions), traps=found, **extras)

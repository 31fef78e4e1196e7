"""From the worker's answers to a verdict: pure functions, no process, no I/O.

For every function the learner defined and every case: pass or fail, and for a failure how much
and where the value differs from the core's; for ``attention`` and ``multi_head``, the first
intermediate that differs, found among the learner's own variables; for one head (``attention``, else
the step functions chained) and for ``multi_head``, the traps by name whose output the learner's
equals on every case (:func:`name_traps` says exactly when).

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

from .cases import MULTI_HEAD, ONE_HEAD, STEP_FUNCTIONS, STEP_OUTPUT, Case, Reference
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
    """Where a wrong ``attention`` or ``multi_head`` first differs: the step (of cases.STEPS, or
    cases.MULTI_STEPS), the learner's variable that holds it (None when no variable of theirs does)
    and the last step a variable matched."""

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
class TrapMatch:
    """The traps whose output a learner's equals on every case (:func:`name_traps`).

    ``function``: ``"attention"``, ``"chain"`` (the learner's step functions one after the other) or
    ``"multi_head"``. ``names``: in the catalogue's order; several when those traps give the same
    numbers on every case (by mathematics, as scaling after the softmax and after the weighted sum do,
    or on these cases), so the check cannot tell which one was written. ``empty_rows``: on some case
    the learner's output has a row of NaN where the traps' has a row of zeros (a query left with no
    key to read: 0/0, which the contract's zero-row rule asks to avoid); that row was counted as equal.
    """

    function: str
    names: tuple[str, ...]
    empty_rows: bool = False


@dataclass(frozen=True)
class Report:
    """The whole answer. ``verdict``: "pass", "fail", "refused" (the policy did not compile the
    code), "killed" (``killed`` says why) or "nothing" (none of the functions was defined)."""

    verdict: str
    functions: tuple[FunctionResult, ...] = ()
    matches: tuple[TrapMatch, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    killed: str | None = None
    module_error: LearnerError | None = None
    printed: str = ""
    printed_cut: bool = False
    cases: tuple[str, ...] = ()

    def function(self, name: str) -> FunctionResult | None:
        return next((f for f in self.functions if f.function == name), None)

    @property
    def traps(self) -> tuple[str, ...]:
        """The traps named for one head (from ``attention``, else from the step functions chained)."""
        return next((m.names for m in self.matches if m.function != MULTI_HEAD), ())

    @property
    def multi_traps(self) -> tuple[str, ...]:
        """The traps named for ``multi_head``."""
        return next((m.names for m in self.matches if m.function == MULTI_HEAD), ())

    @property
    def first_wrong_step(self) -> FunctionResult | None:
        """The first step function, in the order of the computation, that fails on some case."""
        steps = [self.function(name) for name in STEP_FUNCTIONS]
        return next((f for f in steps if f is not None and not f.passed), None)


# --- comparing arrays ---------------------------------------------------------------------------


def agree(actual: np.ndarray, expected: np.ndarray, nan_equal: bool = False) -> np.ndarray:
    """Entry by entry: does the learner's value count as the core's? (shapes must match)"""
    masked = np.isneginf(expected)
    with np.errstate(over="ignore"):  # |x − y| of two huge numbers of opposite signs: inf, not close
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
    """Where the learner's ``attention`` (or ``multi_head``) first goes wrong, from their own variables.

    Every variable is matched against every step of ``ref.steps`` (cases.STEPS, or cases.MULTI_STEPS
    for a multi-head case, whose per-head steps are head first: a loop's list of head outputs arrives
    stacked). The learner agrees with the
    core up to the latest step some variable matches (a later step right implies the earlier ones
    were). The variable shown is the first one, in the order the function names them, after the
    last matching one, that matches no step; it is compared with the later step of its shape it is
    closest to (fewest entries of the wrong kind, then the smallest relative gap): ``S = scores / d_k`` is shown
    against the scaled scores. No such variable: the step after the last match, with no variable
    (the learner computed it inside a longer expression).
    """
    steps = ref.steps
    hits = {name: [s for s in steps if same(value, ref.step(s))] for name, value in variables}
    matched = [steps.index(s) for found in hits.values() for s in found]
    last = max(matched, default=-1)
    agrees = steps[last] if last >= 0 else None
    if last == len(steps) - 1:  # a variable holds the right output, but another value was returned
        return Location(steps[-1], None, agrees, None)
    # the first variable holding the last matched step: the search starts there
    start = next(i for i, (name, _) in enumerate(variables) if steps[last] in hits[name]) if last >= 0 else 0
    later = steps[last + 1 :]
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
    with np.errstate(over="ignore"):  # finite entries only: the norms may overflow, nothing is NaN
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
    """One function on one case. ``ref`` (``attention`` and ``multi_head``) lets a failure be located."""
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


def like_trap(actual: np.ndarray | None, trap: np.ndarray | None) -> bool:
    """Whether the learner's output counts as a trap's: :func:`same` with NaN equal to NaN, and a
    learner's row of NaN counting as the trap's row of zeros. That row is a query left with no key to
    read (by the case's mask or by the trap's): the trap, written as the core writes softmax, gives it
    zeros, and a softmax without the contract's zero-row rule gives 0/0 there, which is a second
    mistake the case of a fully masked query reports on its own, not another trap."""
    if actual is None or trap is None:
        return actual is None and trap is None
    if actual.shape != trap.shape:
        return False
    ok = agree(actual, trap, nan_equal=True)
    if actual.ndim == 2:
        ok = ok | (np.isnan(actual).all(axis=1) & (trap == 0).all(axis=1))[:, None]
    return bool(ok.all())


def name_traps(
    learner: Mapping[str, np.ndarray | None],
    traps: Mapping[str, Mapping[str, np.ndarray | None]],
    correct: Mapping[str, np.ndarray],
) -> tuple[str, ...]:
    """The traps whose output the learner's equals on every case, in the order of ``traps``.

    ``learner`` and each trap map case name -> output (None: it raised). A trap is named when, on every
    case, the learner's output counts as the trap's (:func:`like_trap`; both raising counts) and on at
    least one case both gave numbers that are equal outright and differ from the core's: the evidence
    is in numbers, so a trap that only ever raises (a shape error) is never named from an exception
    alone, nor one that gives the core's answer on every case (it cannot be told apart from a right
    answer). Nothing is named for a learner who is right everywhere (a row of NaN for a query with no
    key counted as the core's zeros, as for a trap: that is the zero-row rule, which its case reports).
    """
    names = sorted(correct)
    if not names or all(like_trap(learner.get(c), correct[c]) for c in names):
        return ()
    found = []
    for trap, outputs in traps.items():
        if not all(like_trap(learner.get(c), outputs.get(c)) for c in names):
            continue
        if any(_shows_trap(learner.get(c), outputs.get(c), correct[c]) for c in names):
            found.append(trap)
    return tuple(found)


def _shows_trap(actual: np.ndarray | None, trap: np.ndarray | None, correct: np.ndarray) -> bool:
    """A case that shows the trap: both gave numbers, equal outright, and not the core's."""
    return actual is not None and same(actual, trap, nan_equal=True) and not same(trap, correct)


def trap_match(
    function: str,
    learner: Mapping[str, np.ndarray | None],
    traps: Mapping[str, Mapping[str, np.ndarray | None]],
    correct: Mapping[str, np.ndarray],
) -> TrapMatch | None:
    """The :class:`TrapMatch` of one function's outputs, or None when no trap is named."""
    names = name_traps(learner, traps, correct)
    if not names:
        return None
    first = traps[names[0]]
    empty_rows = not all(same(learner.get(c), first.get(c), nan_equal=True) for c in correct)
    return TrapMatch(function, names, empty_rows)


def build_report(
    reply: Mapping | None,
    killed: str | None,
    cases: Sequence[Case],
    refs: Mapping[tuple[str, bool], Reference],
    traps: Mapping[str, Mapping[str, np.ndarray | None]],
    multi_traps: Mapping[str, Mapping[str, np.ndarray | None]] | None = None,
) -> Report:
    """The report of one check: the worker's reply (or why it was killed) against the core.

    ``traps`` and ``multi_traps``: trap name -> case name -> that trap's output on the one-head cases
    and on the multi-head cases (traps.trap_outputs)."""
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
            located = ref if fn in (ONE_HEAD, MULTI_HEAD) else None
            results.append(case_result(runs.get((fn, case.name)), case.name, expected, located))
        functions.append(FunctionResult(fn, tuple(results)))
    matches = []
    if any(f in defined for f in (ONE_HEAD, *STEP_FUNCTIONS)):
        source = ONE_HEAD if ONE_HEAD in defined else "chain"
        matches.append(_match(source, runs, [c for c in cases if not c.multi], refs, traps))
    if MULTI_HEAD in defined:
        multi = [c for c in cases if c.multi]
        matches.append(_match(MULTI_HEAD, runs, multi, refs, multi_traps or {}))
    verdict = PASS if all(f.passed for f in functions) else FAIL
    found = tuple(m for m in matches if m is not None)
    return Report(verdict, functions=tuple(functions), matches=found, **extras)


def _match(source: str, runs: Mapping, cases: Sequence[Case], refs, traps) -> TrapMatch | None:
    """The traps named for ``source`` (a function, or "chain") from its runs on ``cases``."""
    learner = {c.name: run_value(runs.get((source, c.name)) or {}) for c in cases}
    correct = {c.name: refs[(c.name, c.multi)].output for c in cases}
    return trap_match(source, learner, traps, correct)

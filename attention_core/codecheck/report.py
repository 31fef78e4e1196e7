"""A check's report as plain English text (the command line; the page says the same in its catalogs)."""

from __future__ import annotations

from .cases import STEP_OUTPUT
from .policy import REFUSAL_TEXT
from .sandbox import WALL_FACTOR
from .verdict import ERROR, PASS, CaseResult, LearnerError, Report, TrapMatch
from .worker import CPU_SECONDS, MEMORY_BYTES

KILLED_TEXT = {
    "cpu": f"took longer than {CPU_SECONDS:g} s of CPU time and was stopped",
    "wall": f"did not finish within {CPU_SECONDS * WALL_FACTOR:g} s and was stopped",
    "memory": f"used more than {MEMORY_BYTES // 2**20} MB of memory and was stopped",
    "output": "sent back more output than the check reads and was stopped",
    "crash": "stopped unexpectedly before it could answer",
}
STEP_TEXT = {
    "Q": "the queries Q = X W_Q",
    "K": "the keys K = X W_K",
    "V": "the values V = X W_V",
    "scores": "the raw scores Q Kᵀ",
    "scaled": "the scaled scores Q Kᵀ / √d_k",
    "masked": "the masked scores",
    "weights": "the softmax weights",
    "output": "the output weights · V",
    "heads": "each head's output weights · V",
    "concat": "the heads side by side (Concat)",
    "layer_output": "the layer's output Concat · W_O",
}
WHO_GIVES = {
    "attention": "your attention gives",
    "chain": "your step functions, run one after the other, give",
    "multi_head": "your multi_head gives",
}
CASE_TEXT = {
    "sentence": "your sentence",
    "random_shapes": "random shapes (d_k ≠ d_v)",
    "d_k_1": "d_k = 1",
    "n_1": "one token (n = 1)",
    "causal": "a causal mask",
    "masked_row": "a query with every key masked",
    "padding": "padding (the last keys masked)",
    "large_scores": "large scores (a softmax without the max overflows)",
    "four_heads": "4 heads, d_k ≠ d_v",
}


def error_text(error: LearnerError) -> str:
    where = f"line {error.line}" if error.line is not None else "your code"
    if error.code == "memory":
        return f"{where}: {KILLED_TEXT['memory']}"
    if error.code in REFUSAL_TEXT:
        return REFUSAL_TEXT[error.code].format(
            line=error.line if error.line is not None else "?", name=error.name
        )
    if error.code == "no_run":
        return "it was not run on this case"
    return f"{where}: {error.message}"


def _case_line(result: CaseResult) -> str:
    name = CASE_TEXT.get(result.case, result.case)
    if result.status == PASS:
        return f"  pass  {name}"
    if result.status == ERROR:
        return f"  error {name}: {error_text(result.error)}"
    d = result.difference
    if d is None:
        return f"  FAIL  {name}: returned no array of numbers ({result.note})"
    if not d.shape_ok:
        shape = "×".join(map(str, d.actual_shape)) or "a scalar"
        want = "×".join(map(str, d.expected_shape))
        return f"  FAIL  {name}: shape {shape}, expected {want}"
    lines = [f"  FAIL  {name}: {d.count} of {d.total} entries differ, by up to {d.max_abs:.3g}"]
    loc = result.location
    if loc is not None:
        up_to = f"agrees with the core up to {STEP_TEXT[loc.agrees_up_to]}; " if loc.agrees_up_to else ""
        if loc.variable is not None:
            lines.append(f"        {up_to}your variable {loc.variable} differs from {STEP_TEXT[loc.step]}")
        else:
            lines.append(
                f"        {up_to}the next step, {STEP_TEXT[loc.step]}, has no variable of yours to compare"
            )
    return "\n".join(lines)


def trap_lines(match: TrapMatch, trap_names: dict[str, str]) -> list[str]:
    """What a trap match says: the traps' numbers equal the learner's on every case, and when several
    are named, that they give the same numbers as each other there (never which one was written)."""
    names = [trap_names.get(n, n) for n in match.names]
    who = WHO_GIVES[match.function]
    if len(names) == 1:
        lines = [f"On every case, {who} the same numbers as a known trap: {names[0]}."]
    else:
        lines = [
            f"On every case, {who} the same numbers as each of these known traps: {', '.join(names)}.",
            "They give the same numbers as each other on every case of the check, so it cannot tell which"
            " one you wrote.",
        ]
    if match.empty_rows:
        lines.append(
            "Counted as equal: rows where a query has no key left to read, which your code makes NaN (0/0)"
            " and the trap zeros, as the contract asks."
        )
    return lines


def report_text(report: Report, trap_names: dict[str, str] | None = None) -> str:
    """The whole report; ``trap_names`` maps a trap's id to a readable name (default: the id)."""
    lines = []
    if report.verdict == "killed":
        lines.append(f"Your code {KILLED_TEXT[report.killed]}.")
    elif report.verdict == "refused":
        lines.append("Your code was not run:")
        lines += ["  " + r.text() for r in report.refusals]
    elif report.verdict == "nothing":
        lines.append("Define attention(X, W_Q, W_K, W_V, mask, d_k) or one of the step functions")
        lines.append("(scores, scale, apply_mask, softmax, weighted_sum, multi_head).")
    elif report.module_error is not None:
        lines.append(f"Your code raised an error while it was loaded: {error_text(report.module_error)}")
    for f in report.functions:
        made = f" (makes {STEP_TEXT[STEP_OUTPUT[f.function]]})" if f.function in STEP_OUTPUT else ""
        lines.append(f"{f.function}{made}: {'pass' if f.passed else 'FAIL'}")
        lines += [_case_line(c) for c in f.cases]
    first = report.first_wrong_step
    if first is not None:
        lines.append(f"The first step that differs: {first.function}.")
    for match in report.matches:
        lines += trap_lines(match, trap_names or {})
    if report.printed:
        lines.append("Printed:")
        lines.append(report.printed.rstrip("\n"))
        if report.printed_cut:
            lines.append("(printed text cut here)")
    if report.verdict in ("pass", "fail"):
        lines.append("PASS" if report.verdict == "pass" else "FAIL")
    return "\n".join(lines)

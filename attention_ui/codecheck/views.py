"""The code check page's views: the gate's message, the presets, the report (all words from the
``codecheck`` catalog; the traps' names and explanations from the ``code`` catalog; the learner's
names and messages are shown as code or escaped, never as Markdown).

Each function's cases are a stacked list, one line per case, not a table: the lines wrap at any
width, so on a 390 px phone the report reads without scrolling sideways (a three-column table there
either scrolls inside its frame or squeezes the detail into a sliver), and text is what a screen
reader reads (st.dataframe draws on a canvas)."""

from __future__ import annotations

import os

import numpy as np
import streamlit as st

from attention_core.codecheck.cases import STEP_OUTPUT
from attention_core.codecheck.verdict import (
    ERROR,
    PASS,
    CaseResult,
    FunctionResult,
    LearnerError,
    Report,
    TrapMatch,
)
from attention_ui import assets, kit
from attention_ui.codecheck import gate
from attention_ui.codecheck.figures import gap_figure
from attention_ui.codecheck.settings import TABLE
from attention_ui.st_structure import key_class

PAD_FOR_PADDING = 2  # [PAD] tokens appended when the mask masks padding
# Constant CSS (no user text): the code box in a monospaced font, as code is read.
MONO = assets.style("codecheck_mono.css").replace("__CODE__", key_class(TABLE.key("code")))


def session_gate() -> tuple[bool, str]:
    """Whether this session may run the check (gate.decide on this request)."""
    try:
        ip = st.context.ip_address
        headers = st.context.headers
        host = headers.get("Host")
        forwarded = headers.get_all("X-Forwarded-For") if hasattr(headers, "get_all") else []
    except Exception:  # outside a browser session: nothing says it is local
        ip, host, forwarded = None, None, []
    return gate.decide(os.environ, ip, host, forwarded)


def preset_source(name: str) -> str:
    from attention_core.codecheck import templates

    return templates.one_step_removed() if name == "removed" else templates.TEMPLATE


def load_preset() -> None:
    """The Load button's callback: the chosen preset replaces the code box's text."""
    st.session_state[TABLE.key("code")] = preset_source(st.session_state.get(TABLE.key("preset"), "removed"))
    st.session_state.pop(TABLE.key("report"), None)


def _md(text: object) -> str:
    return kit.escape_markdown(str(text))


def _code(text: object) -> str:
    """A learner's name for a catalog message that puts it inside a code span (where Markdown is
    inert): only a backtick could close the span, so none is kept."""
    return str(text).replace("`", "'")


def plain(text: str) -> str:
    """A message for a code block, which shows Markdown's backticks literally."""
    return text.replace("`", "")


def error_text(t, error: LearnerError, markdown: bool = True) -> str:
    """One learner error in words (the line, and Python's message or our refusal). As Markdown the
    learner's message is escaped (a name of theirs goes inside a code span); ``markdown`` False: the
    message as it is, for a code block."""
    line = error.line if error.line is not None else "?"
    if error.code == "memory":
        return t("codecheck.killed_memory")
    if error.code:
        return t(f"codecheck.refuse_{error.code}", line=line, name=_code(error.name or ""))
    if not markdown:
        return t("codecheck.error_line", line=line, message=error.message or "")
    message = " ".join((error.message or "").split())  # one line: it ends up in a list item
    return t("codecheck.error_line", line=line, message=_md(message))


def case_label(t, name: str) -> str:
    return t(f"codecheck.case_{name}")


def case_detail(t, result: CaseResult) -> str:
    if result.status == PASS:
        return ""
    if result.status == ERROR:
        return error_text(t, result.error)
    d = result.difference
    if d is None:
        return t("codecheck.detail_no_value")
    if not d.shape_ok:
        return t(
            "codecheck.detail_shape",
            shape="×".join(map(str, d.actual_shape)) or "()",
            expected="×".join(map(str, d.expected_shape)),
        )
    return t("codecheck.detail_entries", count=d.count, total=d.total, gap=f"{d.max_abs:.3g}")


STATUS_MARK = {PASS: "✅", ERROR: "⚠️"}  # a failure: ❌


def case_lines(t, f: FunctionResult) -> str:
    """One function's cases as a Markdown list: the mark, the case, pass/fail/error and what differs."""
    items = []
    for c in f.cases:
        status = t(f"codecheck.status_{c.status}")
        detail = case_detail(t, c)
        line = t(
            "codecheck.case_line_detail" if detail else "codecheck.case_line",
            case=case_label(t, c.case),
            status=status,
            detail=detail,
        )
        items.append(f"- {STATUS_MARK.get(c.status, '❌')} {line}")
    return "\n".join(items)


def trap_text(t, match: TrapMatch) -> str:
    """What a trap match says (Markdown, catalog text only): the traps' numbers equal the learner's on
    every case; several traps: they give the same numbers as each other, so the check cannot tell
    which was written. Each trap with its name and why it is wrong, from the ``code`` catalog."""
    if len(match.names) == 1:
        name = match.names[0]
        parts = [t(f"codecheck.trap_named_{match.function}", name=trap_label(t, name))]
        why = trap_why(t, name)
        parts += [why] if why else []
    else:
        parts = [t(f"codecheck.traps_named_{match.function}")]
        items = []
        for name in match.names:
            why = trap_why(t, name)
            items.append(f"- **{trap_label(t, name)}**" + (t("codecheck.trap_why", why=why) if why else ""))
        parts.append("\n".join(items))
    if match.empty_rows:
        parts.append(t("codecheck.trap_empty_rows"))
    return "\n\n".join(parts)


def show_report(t, page: kit.Page, report: Report, tokens: tuple[str, ...]) -> None:
    """The whole report: the verdict, then each function's cases, where the first failure differs,
    the trap by name and what the code printed."""
    if report.verdict == "pass":
        st.success(t("codecheck.pass_all", cases=len(report.cases) - 1), icon=":material/check_circle:")
    elif report.verdict == "killed":
        st.error(t(f"codecheck.killed_{report.killed}"), icon=":material/timer_off:")
    elif report.verdict == "refused":
        st.error(t("codecheck.refused"), icon=":material/block:")
        for r in report.refusals:
            st.markdown("- " + t(f"codecheck.refuse_{r.code}", line=r.line or "?", name=_code(r.name)))
    elif report.verdict == "nothing":
        st.warning(t("codecheck.nothing"))
    elif report.module_error is not None:
        st.error(t("codecheck.module_error"), icon=":material/error:")
        st.code(plain(error_text(t, report.module_error, markdown=False)), language=None)
    else:
        st.error(t("codecheck.fail"), icon=":material/cancel:")
    for match in report.matches:
        st.warning(trap_text(t, match), icon=":material/lightbulb:")
    first = report.first_wrong_step
    if first is not None:
        st.markdown(t("codecheck.first_wrong_step", function=f"`{first.function}`"))
    for f in report.functions:
        made = t(f"codecheck.step_{STEP_OUTPUT[f.function]}") if f.function in STEP_OUTPUT else ""
        st.subheader(f"`{f.function}`" + (f" — {made}" if made else ""))
        st.markdown(case_lines(t, f))
        failure = f.first_failure
        if failure is not None and failure.status != ERROR:
            show_failure(t, page, f.function, failure, tokens)
    if report.printed:
        st.markdown(t("codecheck.printed"))
        st.code(report.printed, language=None)
        if report.printed_cut:
            st.caption(t("codecheck.printed_cut"))


def show_failure(t, page: kit.Page, function: str, failure: CaseResult, tokens: tuple[str, ...]) -> None:
    """Where the first failing case differs: the step and the learner's variable, and a map of the gap."""
    case = case_label(t, failure.case)
    loc = failure.location
    shown = failure.difference
    if loc is not None:
        up_to = (
            t("codecheck.agrees_up_to", step=t(f"codecheck.step_{loc.agrees_up_to}"))
            if loc.agrees_up_to
            else ""
        )
        if loc.variable is not None:
            st.markdown(
                up_to
                + t(
                    "codecheck.located_var",
                    variable=f"`{_code(loc.variable)}`",
                    step=t(f"codecheck.step_{loc.step}"),
                    case=case,
                )
            )
            shown = loc.difference or shown
        else:
            st.markdown(up_to + t("codecheck.located_none", step=t(f"codecheck.step_{loc.step}"), case=case))
    if shown is None or shown.gap is None or shown.gap.ndim not in (2, 3):
        return
    gap, title = shown.gap, t("codecheck.gap_title", case=case)
    if gap.ndim == 3:  # head first (multi_head): the first head where it differs
        head = next(h for h in range(gap.shape[0]) if np.any(gap[h]))
        gap, title = gap[head], t("codecheck.gap_title_head", case=case, head=head)
    rows, cols = gap.shape
    square = failure.case == "sentence" and rows == cols == len(tokens)
    row_labels = (
        list(tokens)
        if square or (failure.case == "sentence" and rows == len(tokens))
        else [str(i) for i in range(rows)]
    )
    col_labels = list(tokens) if square else [str(j) for j in range(cols)]
    # the title above the chart, as text: it wraps on a phone, where a Plotly title is cut at the edge
    st.markdown(f"**{_md(title)}**")
    fig = gap_figure(gap, row_labels, col_labels, t("codecheck.gap_rows"), t("codecheck.gap_cols"))
    page.chart(fig, f"gap_{function}", t("codecheck.gap_alt", case=case))
    st.caption(t("codecheck.gap_caption"))


def trap_label(t, name: str) -> str:
    """A trap's learner-facing name from the code generator's catalog (``code.mut_<name>``), or its
    id in words while that catalog has no entry for it."""
    try:
        return t(f"code.mut_{name}")
    except KeyError:
        return name.replace("_", " ")


def trap_why(t, name: str) -> str | None:
    """Why the trap is wrong, from the same catalog (``code.mut_<name>_why``), if it says."""
    try:
        return t(f"code.mut_{name}_why")
    except KeyError:
        return None

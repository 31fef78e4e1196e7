"""Each option's consequence as sentences, written from the numbers of its own run (no Streamlit).

The quiz, the guided path, the worksheets' answer key and the live class's polls all word an option
the same way, from :class:`attention_core.codegen_questions.Outcome`; nothing here is canned per trap.
"""

from __future__ import annotations

import math

from attention_core.codegen_questions import CodeOption, CodeQuestion

LETTERS = "ABCD"
ONE = 1e-9  # a row sums to 1 when it is this close
MAX_ERROR = 160  # characters of an error message kept


def number(x: float) -> str:
    """A weight or a distance, four significant digits (nan and ±∞ as NumPy prints them)."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.4g}"


def short_error(error: str) -> str:
    first = error.splitlines()[0].replace("`", "'")
    return first if len(first) <= MAX_ERROR else first[: MAX_ERROR - 1] + "…"


def consequences(t, question: CodeQuestion, option: CodeOption) -> list[str]:
    """The sentences of what ``option`` did on the learner's sentence."""
    o = option.outcome
    if o.stopped:
        return [t("code.c_stopped", error=short_error(o.error))]
    lines = [t("code.c_right")] if option.mutation is None else []
    if math.isnan(o.row_sum_min) or math.isnan(o.row_sum_max):
        lines.append(t("code.c_rows_nan"))
    elif abs(o.row_sum_min - 1) <= ONE and abs(o.row_sum_max - 1) <= ONE:
        lines.append(t("code.c_rows_one"))
    elif number(o.row_sum_min) == number(o.row_sum_max):
        lines.append(t("code.c_rows_same", value=number(o.row_sum_min)))
    else:
        lines.append(t("code.c_rows", low=number(o.row_sum_min), high=number(o.row_sum_max)))
    if o.largest_at:
        head, row, col = o.largest_at
        lines.append(t("code.c_largest", value=number(o.largest_weight), head=head, row=row, col=col))
    if question.forbidden_cells and o.forbidden_at:
        head, row, col = o.forbidden_at
        lines.append(t("code.c_forbidden", value=number(o.forbidden_weight), head=head, row=row, col=col))
    elif question.forbidden_cells and not o.nan_weights:
        lines.append(t("code.c_forbidden_zero"))
    if o.nan_weights:
        lines.append(t("code.c_nan_weights", count=o.nan_weights))
    if o.nan_output:
        lines.append(t("code.c_nan_output", count=o.nan_output, size=o.output_size))
    if o.overflow:
        lines.append(t("code.c_overflow"))
    right = question.answer.outcome
    if o.output_shape != right.output_shape:
        lines.append(t("code.c_shape", shape=_shape(o.output_shape), right=_shape(right.output_shape)))
    elif o.distance is not None and math.isnan(o.distance):
        lines.append(t("code.c_distance_nan"))
    elif o.distance == 0:
        lines.append(t("code.c_same"))
    elif o.distance is not None:
        lines.append(t("code.c_distance", value=number(o.distance)))
    return lines


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def why(t, option: CodeOption) -> str | None:
    """The trap's name and why it is wrong (None for the right fragment)."""
    if option.mutation is None:
        return None
    name = t(f"code.mut_{option.mutation}")
    name = name[:1].upper() + name[1:]  # a title: "The mask on V…" (Japanese has no case)
    return f"**{name}**  \n{t('code.c_why', why=t(f'code.mut_{option.mutation}_why'))}"

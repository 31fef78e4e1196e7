"""The worksheet page's pieces: the teacher's settings from the widgets, the PDF on click, a preview.

The PDF builder (fpdf2) is imported inside the functions that use it: its import takes 0.5-1.6 s,
which no other page should pay.
"""

from __future__ import annotations

import re

import streamlit as st

from attention_core.exercise import generate_exercise
from attention_core.exercise_text import MINUS, decimal_text, fraction_text
from attention_ui import kit
from attention_ui.worksheet.settings import TABLE


def read_settings(t):
    """A validated ``WorksheetSettings`` from the widgets, or None after saying what is wrong."""
    from attention_ui.worksheet.worksheet import WorksheetSettings, WorksheetSettingsError

    v = TABLE.values(st.session_state)
    try:
        return WorksheetSettings(
            exercises=v["exercises"],
            students=v["students"],
            first_seed=v["first_seed"],
            lang=v["lang"],
            causal=bool(v["causal"]),
            code=bool(v["code"]),
        )
    except WorksheetSettingsError as err:
        st.error(t(err.key, **err.values))
        return None


def build_pdf(settings) -> bytes:
    """The worksheet PDF, built when the download button is clicked."""
    from attention_ui.worksheet.worksheet import build_worksheet

    return build_worksheet(settings)


def file_name(settings) -> str:
    from attention_ui.worksheet.worksheet import worksheet_filename

    return worksheet_filename(settings)


# An exponent in square brackets, as the PDF writes it: "e^[x − max]"; its brackets and only those
# become parentheses on the page (an index such as "entry [i, j]" keeps its own).
_EXPONENT = re.compile(r"\^\[([^\[\]]*)\]")


def on_paper(text: str) -> str:
    """A catalog line written for the PDF (``QK^T``, ``e^[x − max]``) as the page shows it."""
    return _EXPONENT.sub(r"^(\1)", text.replace("^T", "ᵀ").replace("e^x", "eˣ"))


def matrix(name: str, a, row_prefix: str) -> None:
    st.markdown(f"**{name}**")
    columns = {str(c + 1): [int(v) for v in a[:, c]] for c in range(a.shape[1])}
    kit.table(columns, index=[f"{row_prefix}{i + 1}" for i in range(a.shape[0])])


def preview(t, settings) -> None:
    """Exercise 1 of sheet 1 as the sheet gives it: the data, the e^x table and the tasks."""
    ex = generate_exercise(settings.seed(1, 1), settings.mask)
    st.header(t("worksheet.ws_preview", seed=ex.seed))
    st.markdown(on_paper(t("worksheet.given", n=ex.n, d_k=ex.d_k, root=ex.root_d_k, d_v=ex.d_v)))
    cols = st.columns(3)
    for column, (key, a, prefix) in zip(
        cols, (("grid_q", ex.Q, "q"), ("grid_k", ex.K, "k"), ("grid_v", ex.V, "v")), strict=True
    ):
        with column:
            matrix(t(f"worksheet.{key}"), a, prefix)
    with st.columns(3)[0]:
        st.markdown(f"**{on_paper(t('worksheet.exp_table_title'))}**")
        exps = {
            "x": [fraction_text(e.x, MINUS) for e in ex.exp_table],
            "eˣ": [decimal_text(e.value, 4) for e in ex.exp_table],
        }
        kit.table(exps, hide_index=True)
    tasks = ["task_intro", "task_scores", "task_scale", f"task_mask_{ex.mask}", "task_softmax", "task_output"]
    for key in tasks:
        st.markdown(kit.escape_markdown(on_paper(t(f"worksheet.{key}", root=ex.root_d_k))))

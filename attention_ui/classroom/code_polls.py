"""A code-question poll on the projector and the phones: its program as code, and after the reveal
every fragment's consequence, drawn by the quiz's own view
(:func:`attention_ui.program.questions_view.show_consequences`).

The poll keeps the settings and tokens it was asked on (attention_ui/classroom/questions.py), and the
four programs are run again here, once per process and poll (cached): each consequence is written
from its own run, as on the quiz, never stored. A rebuilt question whose fragments or answer differ
from the poll's (a process of another version of the app asked it) shows none rather than another
question's.
"""

from __future__ import annotations

import streamlit as st

from attention_core.codegen_questions import CodeQuestion, code_question
from attention_ui import kit
from attention_ui.classroom import questions
from attention_ui.classroom.settings import TABLE
from attention_ui.program.questions_view import show_consequences


def show_question(t, question: dict) -> None:
    """Any poll's question; a code question's program as a code block (as Markdown text its lines
    ran together into one paragraph)."""
    if question.get("kind") == "code":
        st.markdown(t("code.q_" + question["template"]))  # the catalog's words, as on the quiz
        st.code(question["program"], language="python")
    else:
        st.markdown(kit.escape_markdown(questions.question_text(t, question)))


@st.cache_resource(max_entries=16, show_spinner=False)
def _asked(template: str, config, tokens: tuple[str, ...]) -> CodeQuestion | None:
    return code_question(template, config, tokens)


def asked(question: dict, correct: int | None) -> CodeQuestion | None:
    """The code question a poll asked, run again; None for another kind of poll or a mismatch."""
    source = questions.code_poll_source(question)
    if source is None:
        return None
    q = _asked(*source)
    if q is None or q.answer_index != correct or questions.code_labels(q) != question.get("labels"):
        return None
    return q


def show_consequences_of(t, question: dict, correct: int | None, chosen: int | None, poll: object) -> None:
    """After the reveal: each fragment and what it did on the poll's sentence, two per row (one under
    the other on a phone); ``chosen``: this student's answer (None on the projector); ``poll``: the
    poll's number (the panel) or id (a phone), which keys its boxes. Nothing for another kind of poll."""
    q = asked(question, correct)
    if q is None:
        return
    with st.container(key=TABLE.key("code", poll, "consequences")):
        st.markdown(t("class.code_consequences"))
        show_consequences(t, q, chosen, TABLE.key("code", poll))

"""The download buttons of the take-home files, where a learner and a teacher look for them: the
playground's export menu, the masks, multi-head and √d_k labs (the lesson), the quiz page and the
live class's teacher panel (the SCORM package and the Moodle/GIFT quiz).

Every file is made when its button is pressed (deferred data, ``on_click="ignore"``: no rerun, and a
rerun cannot drop the callable before the browser asks for it), by :mod:`attention_ui.takehome.build`,
the same functions ``attention-lab lesson|scorm|quiz`` runs.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attention_core import AttentionConfig, AttentionConfigError, trace_text
from attention_ui import kit
from attention_ui.takehome import build, moodle, questions


def learner_lesson(state, t):
    """(text, trace) of the learner's sentence and settings as the pages share them (kit's learner
    context: the playground, masks and multi-head pages write it), with the playground's defaults
    for anything missing or refused."""
    text = state.get(kit.LEARNER_TEXT) or t("playground.default_text")
    values = {
        "d_model": state.get(kit.LEARNER_D_MODEL, AttentionConfig.d_model),
        "heads": state.get(kit.LEARNER_HEADS, AttentionConfig.heads),
        "seed": state.get(kit.LEARNER_SEED, AttentionConfig.seed),
        "mask": state.get(kit.LEARNER_MASK, AttentionConfig.mask),
    }
    try:
        config = AttentionConfig(**values)
    except (AttentionConfigError, TypeError, ValueError):
        config = AttentionConfig()
    trace = trace_text(text, config)
    if not trace.n:
        text = t("playground.default_text")
        trace = trace_text(text, config)
    return text, trace


def shown(trace, head: int, cell):
    """The head and cell a file is about, inside the trace (a page may hold a stale head or cell
    for a run before it clamps them): the first head, the default cell otherwise."""
    head = int(head) if 0 <= int(head) < trace.heads else 0
    if cell is not None and not all(0 <= int(x) < trace.n for x in cell):
        cell = None
    return head, cell


def lesson_button(t, key: str, make: Callable[[], str]) -> None:
    """ "Download this lesson (HTML)": ``make()`` writes the file when the button is pressed."""
    st.download_button(
        t("takehome.download_lesson"),
        data=lambda: make().encode("utf-8"),
        file_name=f"attention_lesson_{t.lang}.html",
        mime="text/html",
        key=key,
        help=t("takehome.download_lesson_help"),
        icon=":material/school:",
        on_click="ignore",
    )


def _key_maker(page: Callable[..., str] | str) -> Callable[..., str]:
    """A page's key maker; for a bare prefix, the keys it names joined by '_' (as kit.Page.key does)."""
    if callable(page):
        return page
    return lambda *parts: "_".join((page, *map(str, parts)))


def course_files(
    t,
    page: Callable[..., str] | str,
    trace,
    text: str,
    head: int = 0,
    cell=None,
    seed: int | None = None,
    heading: bool = True,
) -> None:
    """The SCORM package and the quiz file for a course platform, with the teacher's choices: how
    many questions, the pass mark, Moodle XML or GIFT. Widgets keyed ``<prefix>_tk_…`` by ``page``, the
    page's key maker (``TABLE.key``: the kit's ``tk_*`` keys of its table), or a bare prefix for a
    page that has no table yet (the quiz page, issue 46); ``seed``: the
    quiz page's computed questions for this seed (default: the lesson's); ``heading``: a bold title
    (off inside an expander that already names it)."""
    key = _key_maker(page)
    head, cell = shown(trace, head, cell)
    if heading:
        st.markdown(f"**{t('takehome.course_files')}**")
    st.caption(t("takehome.course_files_intro"))
    st.text(text)  # the learner's sentence: plain text, never Markdown
    most = questions.most_questions(trace, head, cell or build.lesson.default_cell(trace))
    c1, c2 = st.columns(2)
    count = c1.number_input(
        t("takehome.quiz_count"), 1, most, min(build.DEFAULT_COUNT, most), 1,
        key=key("tk", "count"), help=t("takehome.quiz_count_help"),
    )  # fmt: skip
    mark = c2.number_input(
        t("takehome.pass_mark"), 0, 100, build.DEFAULT_PASS_MARK, 5,
        key=key("tk", "pass"), help=t("takehome.pass_mark_help"),
    )  # fmt: skip
    count, mark = int(count), int(mark)
    st.download_button(
        t("takehome.download_scorm"),
        data=lambda: build.scorm_zip(t, trace, text, head, cell, count, mark, seed=seed),
        file_name=f"attention_lesson_scorm_{t.lang}.zip",
        mime="application/zip",
        key=key("tk", "scorm"),
        help=t("takehome.download_scorm_help"),
        icon=":material/inventory_2:",
        on_click="ignore",
    )
    fmt = st.radio(
        t("takehome.quiz_format"),
        moodle.FORMATS,
        format_func=lambda f: t(f"takehome.format_{f}"),
        horizontal=True,
        key=key("tk", "format"),
    )
    st.download_button(
        t("takehome.download_moodle"),
        data=lambda: build.quiz_file(t, trace, fmt, head, cell, count, seed).encode("utf-8"),
        file_name=f"attention_quiz_{t.lang}.{moodle.EXTENSION[fmt]}",
        mime=moodle.MIME[fmt],
        key=key("tk", "quiz"),
        help=t("takehome.download_moodle_help"),
        icon=":material/quiz:",
        on_click="ignore",
    )


def lab_lesson_button(t, key: str, what_key: str, section: Callable[[], object]) -> None:
    """A lab's "Download this lesson (HTML)": ``section()`` (the lab's part, made at the press) and
    every step on the learner's sentence and settings as they are now."""
    text, trace = learner_lesson(st.session_state, t)
    lesson_button(t, key, lambda: build.lab_lesson(t, trace, text, [section()], what_key))

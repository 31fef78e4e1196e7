"""The files, from a trace: what the download buttons and ``attention-lab lesson|scorm|quiz`` write.

One function per file, so a button and the command line cannot drift apart. ``cell`` is the
(query, key) the lesson explains and the quiz asks about (default: :func:`lesson.default_cell`).
"""

from __future__ import annotations

from attention_ui.takehome import lesson, moodle, questions, scorm

DEFAULT_COUNT = 10  # questions in a quiz unless the teacher chooses
DEFAULT_PASS_MARK = 60  # percent
CATEGORY = "Attention Lab"


def lesson_title(t, what_key: str = "takehome.lesson_playground") -> str:
    return t("takehome.lesson_title", what=t(what_key))


def _cell(trace, cell):
    if cell is None:
        return lesson.default_cell(trace)
    i, j = (int(x) for x in cell)
    if not (0 <= i < trace.n and 0 <= j < trace.n):
        raise ValueError(f"the cell ({i}, {j}) is outside the {trace.n} × {trace.n} map")
    return i, j


def _head(trace, head: int) -> int:
    if not 0 <= int(head) < trace.heads:
        raise ValueError(f"head {head} does not exist: the layer has heads 0 to {trace.heads - 1}")
    return int(head)


def playground_lesson(
    t, trace, text: str, head: int = 0, cell: tuple[int, int] | None = None, extra: tuple = ()
) -> str:
    """The offline lesson: every step of ``trace`` for ``head``, the cell's arithmetic, then the
    sections ``extra`` (a lab's own), in the translator's language."""
    head, cell = _head(trace, head), _cell(trace, cell)
    sections = [*lesson.step_sections(t, trace, head, cell), *extra]
    return lesson.build_lesson(t, trace, sections, title=lesson_title(t), text=text)


def quiz_questions(t, trace, head: int = 0, cell=None, count: int = DEFAULT_COUNT, seed: int | None = None):
    """The first ``count`` questions of the lesson's quiz (ValueError outside 1..most_questions; a
    count above the questions there are gives them all)."""
    head, cell = _head(trace, head), _cell(trace, cell)
    seed = (trace.config.seed if trace.config is not None else 0) if seed is None else seed
    most = questions.most_questions(trace, head, cell)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= most:
        raise ValueError(t("takehome.err_count", most=most))
    return questions.lesson_questions(t, trace, head, cell, seed)[:count]


def scorm_zip(t, trace, text: str, head: int = 0, cell=None, count: int = DEFAULT_COUNT,
              pass_mark: int = DEFAULT_PASS_MARK, extra: tuple = (), seed: int | None = None) -> bytes:  # fmt: skip
    """The SCORM 1.2 package: the lesson and its quiz of ``count`` questions (``seed``: the quiz
    page's computed questions for that seed; default the lesson's)."""
    if isinstance(pass_mark, bool) or not isinstance(pass_mark, int) or not 0 <= pass_mark <= 100:
        raise ValueError(t("takehome.err_pass_mark"))
    asked = quiz_questions(t, trace, head, cell, count, seed)
    html = playground_lesson(t, trace, text, head, cell, extra)
    return scorm.package(t, html, asked, title=lesson_title(t), pass_mark=pass_mark)


def quiz_file(t, trace, fmt: str, head: int = 0, cell=None, count: int = DEFAULT_COUNT, seed=None) -> str:
    """The quiz as Moodle XML (``fmt="moodle"``) or GIFT (``"gift"``)."""
    return moodle.quiz_file(quiz_questions(t, trace, head, cell, count, seed), fmt, CATEGORY)


def lab_lesson(t, trace, text: str, sections: list, what_key: str) -> str:
    """A lab's lesson: its own ``sections`` first, then every step of ``trace`` (the learner's
    sentence and settings) with the last token's own cell explained."""
    steps = lesson.step_sections(t, trace, 0, lesson.default_cell(trace))
    return lesson.build_lesson(t, trace, [*sections, *steps], title=lesson_title(t, what_key), text=text)

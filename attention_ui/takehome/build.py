"""The files, from a trace: what the download buttons and ``attention-lab lesson|scorm|quiz`` write."""

from __future__ import annotations

from attention_ui.takehome import lesson


def lesson_title(t, what_key: str = "takehome.lesson_playground") -> str:
    return t("takehome.lesson_title", what=t(what_key))


def playground_lesson(
    t, trace, text: str, head: int = 0, cell: tuple[int, int] | None = None, extra: tuple = ()
) -> str:
    """The offline lesson: every step of ``trace`` for ``head``, the cell's arithmetic, then the
    sections ``extra`` (a lab's own), in the translator's language."""
    head = max(0, min(int(head), trace.heads - 1))
    sections = [*lesson.step_sections(t, trace, head, cell), *extra]
    return lesson.build_lesson(t, trace, sections, title=lesson_title(t), text=text)

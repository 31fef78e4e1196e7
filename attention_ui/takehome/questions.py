"""The quiz that goes with a lesson: questions on the lesson's own sentence first, then the exam code
questions on it, then the quiz page's computed questions, all as :class:`attention_ui.quiz_bank.Worded`
(the one question interface).

On the sentence (numbers from the lesson's trace, so the quiz asks about what the lesson shows):
- ``cell_weight``: the weight of the lesson's chosen cell; the wrong options are the slips of
  :func:`attention_core.explain.cell_slips` (no division, no mask, the score taken for a weight, a
  uniform row), each with its own computed feedback;
- ``divisor``: the divisor √d_k (when the lesson scales by √d_k); wrong options d_k, d_model, √d_model;
- ``scores_shape``, ``masked_keys``, ``winning_key``: the live class's questions on the sentence
  (:mod:`attention_ui.classroom.questions`), for the lesson's head and the chosen cell's row.
Then the exam code questions (:mod:`attention_core.codegen_questions`, issue 43) for the lesson's
settings and sentence: the program with its blank, four fragments, and each fragment's feedback the
consequences of running it on the sentence (:mod:`attention_ui.program.consequences`, as the quiz page
words them); then the quiz page's computed questions (:func:`attention_ui.quiz_bank.build_quiz`) in
its order for the seed. A question with no fair form on this sentence (tied winners, nothing masked,
a code template whose traps give the right numbers here) is left out.
"""

from __future__ import annotations

import math

from attention_core import codegen_questions as cq
from attention_core.explain import cell_slips
from attention_core.labs.quiz import QUIZ_KINDS
from attention_ui import quiz_bank
from attention_ui.classroom import questions as live
from attention_ui.i18n import DEFAULT_LANGUAGE, Translator
from attention_ui.program.consequences import LETTERS, consequences
from attention_ui.program.consequences import why as trap_why
from attention_ui.quiz_bank import Choice, Worded, feedback_for

N_OPTIONS = 4


def _distinct(options: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """(label, slip key) pairs with the labels that differ as shown, the first of each kept."""
    seen, out = set(), []
    for label, slip in options:
        if label not in seen:
            seen.add(label)
            out.append((label, slip))
    return out[:N_OPTIONS]


def _arrange(options: list[tuple[str, str | None]], by: int) -> tuple[list[tuple[str, str | None]], int]:
    """The options (answer first) in a fixed order that does not always put the answer first."""
    k = by % len(options)
    return options[k:] + options[:k], (len(options) - k) % len(options)


def _fmt(x: float) -> str:
    return "−∞" if x == -math.inf else f"{x:.3f}".replace("-", "−")


def cell_weight(t, trace, head: int, cell: tuple[int, int]) -> Worded | None:
    i, j = cell
    s = cell_slips(trace, head, i, j)
    options = [
        (_fmt(s.weight), None),
        (_fmt(s.unscaled), "fb_cell_unscaled"),
        *([(_fmt(s.unmasked), "fb_cell_unmasked")] if s.unmasked is not None else []),
        (_fmt(s.score), "fb_cell_score"),
        (_fmt(s.uniform), "fb_cell_uniform"),
    ]
    options, correct = _arrange(_distinct(options), i + j)
    if len(options) < 2:
        return None
    a_divisor = f"{trace.divisor:.4g}"
    scaled = trace.scores_scaled[head, i, j]
    values = dict(head=head, i=i, j=j, query=trace.tokens[i], key=trace.tokens[j])
    why = t(
        "takehome.q_cell_weight_why",
        raw=_fmt(trace.scores_raw[head, i, j]),
        divisor=a_divisor,
        scaled=_fmt(scaled),
        mask_term="0" if trace.mask[i, j] else "−∞",
        i=i,
        weight=_fmt(s.weight),
    )
    slips = {
        k: t(f"takehome.{slip}", value=label, divisor=a_divisor, i=i, allowed=s.allowed_keys)
        for k, (label, slip) in enumerate(options)
        if slip is not None
    }
    labels = [label for label, _ in options]
    return Worded(
        qid="cell_weight",
        prompt=t("takehome.q_cell_weight", **values),
        choices=feedback_for(t, labels, correct, why, slips),
        correct=correct,
        explanation=why,
    )


def divisor(t, trace) -> Worded | None:
    c = trace.config
    if c is None or c.scale != "sqrt":
        return None
    d_k, d_model = trace.Q.shape[2], trace.X.shape[1]
    answer = f"{trace.divisor:.3g}"
    options = [
        (answer, None),
        (f"{d_k:g}", "fb_divisor_d_k"),
        (f"{d_model:g}", "fb_divisor_d_model"),
        (f"{math.sqrt(d_model):.3g}", "fb_divisor_sqrt_d_model"),
    ]
    options, correct = _arrange(_distinct(options), d_k)
    if len(options) < 2:
        return None
    why = t("takehome.q_divisor_why", d_k=d_k, answer=answer)
    slips = {k: t(f"takehome.{slip}", value=label) for k, (label, slip) in enumerate(options) if slip}
    labels = [label for label, _ in options]
    return Worded(
        "divisor",
        t("takehome.q_divisor", d_k=d_k),
        feedback_for(t, labels, correct, why, slips),
        correct,
        why,
    )


def _live(t, trace, kind: str, head: int, row: int) -> Worded | None:
    q = live.live_question(kind, trace, head, row)
    if q is None:
        return None
    labels = live.choice_labels(t, q.question)
    answer = labels[q.correct]
    why = {
        "scores_shape": lambda: t("takehome.q_scores_why", answer=answer),
        "masked_keys": lambda: t(
            "takehome.q_masked_why", row=q.question.get("row_token", row), answer=answer
        ),
        "winning_key": lambda: t(
            "takehome.q_winning_why", row=q.question.get("row_token", row), head=head, answer=answer
        ),
    }[kind]()
    return Worded(
        kind, live.question_text(t, q.question), feedback_for(t, labels, q.correct, why), q.correct, why
    )


def _masked_row(trace, row: int) -> int:
    """``row`` when the mask removes a key there, else the first row where it does."""
    if not trace.mask[row].all():
        return row
    return next(i for i in range(trace.n) if not trace.mask[i].all())


def sentence_questions(t, trace, head: int, cell: tuple[int, int]) -> list[Worded]:
    """The questions on the lesson's sentence that have a fair form there, in a fixed order."""
    made = [
        cell_weight(t, trace, head, cell),
        divisor(t, trace),
        _live(t, trace, "scores_shape", head, cell[0]),
        _live(t, trace, "masked_keys", head, _masked_row(trace, cell[0])) if not trace.mask.all() else None,
        _live(t, trace, "winning_key", head, cell[0]),
    ]
    return [q for q in made if q is not None]


def code_worded(t, q: cq.CodeQuestion) -> Worded:
    """An exam code question in words: each fragment's feedback is what it did on the sentence."""
    right = t("code.q_option", letter=LETTERS[q.answer_index])
    choices = []
    for k, option in enumerate(q.options):
        mark = t("takehome.right") if k == q.answer_index else t("takehome.wrong", answer=right)
        lines = "\n".join(f"- {line}" for line in consequences(t, q, option))
        reason = trap_why(t, option)
        body = f"**{t('code.q_option', letter=LETTERS[k])}**: {mark}\n\n{lines}"
        choices.append(Choice("\n".join(option.fragment), body + (f"\n\n{reason}" if reason else "")))
    return Worded(
        qid=f"code_{q.template}",
        prompt=t(f"code.q_{q.template}"),
        choices=tuple(choices),
        correct=q.answer_index,
        explanation=t("code.q_context_note"),
        program=q.program_with_blank(),
        code_choices=True,
    )


def _real_tokens(trace) -> tuple[str, ...]:
    return tuple(trace.tokens[: trace.n - trace.n_pad])


def code_questions(t, trace, seed: int) -> list[Worded]:
    """The exam code questions these settings can ask on the sentence (none for the reference example)."""
    if trace.config is None:
        return []
    return [code_worded(t, q) for q in cq.code_questions(trace.config, _real_tokens(trace), seed)]


def computed_questions(t, seed: int) -> list[Worded]:
    """The quiz page's computed questions for ``seed``, in the page's order."""
    return [quiz_bank.worded(t, item) for item in quiz_bank.build_quiz(seed) if item.computed is not None]


def lesson_questions(t, trace, head: int, cell: tuple[int, int], seed: int = 0) -> list[Worded]:
    """Every question the lesson's quiz can ask, in the order it asks them (take the first few)."""
    return [
        *sentence_questions(t, trace, head, cell),
        *code_questions(t, trace, seed),
        *computed_questions(t, seed),
    ]


def most_questions(trace, head: int, cell: tuple[int, int]) -> int:
    """At most how many questions :func:`lesson_questions` has for this lesson, without running the
    code questions' 48 programs or wording the 16 computed ones on every page run: the sentence's,
    one per code template these settings apply to (a template whose traps all give the right
    numbers here drops out when asked, so the quiz may hold fewer), one per computed kind."""
    templates = (
        0 if trace.config is None else sum(cq.template_applies(tp, trace.config) for tp in cq.TEMPLATES)
    )
    return (
        len(sentence_questions(Translator(DEFAULT_LANGUAGE), trace, head, cell)) + templates + len(QUIZ_KINDS)
    )

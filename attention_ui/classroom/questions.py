"""Poll questions whose answers the core computes, and how a poll is turned into text.

Two sources:
- the teacher's current sentence (a trace): the predict-then-reveal checks of
  ``attention_core.predict`` — the shape of QKᵀ (``scores_shape``), which keys the mask removes
  from a row (``masked_cells``), which key wins a row (``winning_keys``);
- computed quiz questions (``attention_core.labs.quiz.generate_question``), seeded.

A question is a plain dict (stored as JSON, no answer in it) plus the index of the right choice,
which the store keeps apart and shows students only after the reveal. Choice labels are
language-neutral (token text, numbers); key sets are kept as lists and named at display time.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from attention_core import AttentionConfig, AttentionConfigError, predict
from attention_core.codegen_questions import CodeQuestion, code_question
from attention_core.labs.quiz import generate_question
from attention_ui.quiz_bank import format_value

# Exam code questions on the projected sentence (issue 43): a program with a blank, four fragments.
CODE_KINDS = ("code_raw_scores", "code_scale_order", "code_mask_place")
LIVE_KINDS = ("scores_shape", "masked_keys", "winning_key", *CODE_KINDS)
QUIZ_KINDS = ("scores_shape", "head_dim", "sqrt_divisor", "memory_ratio", "multihead_params", "padding_cells")
N_CHOICES = 4


@dataclass(frozen=True)
class Question:
    question: dict  # what the page needs to word it (kind and values); no answer
    n_choices: int
    correct: int


def _token(trace, j: int) -> str:
    return f"{j}: {trace.tokens[j]}"


def live_question(kind: str, trace, head: int, row: int | None = None) -> Question | None:
    """A question on the teacher's sentence; None when it has no fair form there (e.g. a row
    with tied winners, or fewer than two distinct answers)."""
    n = trace.n
    row = n - 1 if row is None else max(0, min(int(row), n - 1))
    head = max(0, min(int(head), trace.heads - 1))
    if kind == "scores_shape":
        answer = predict.scores_shape(trace.Q[head], trace.K[head])  # (n_q, n_k)
        d_k = trace.Q.shape[2]
        options = [answer]
        for o in ((n, d_k), (d_k, d_k), (d_k, n), (n, trace.X.shape[1]), (n + 1, n + 1), (n, 1)):
            if o not in options:
                options.append(o)
        options = options[:N_CHOICES]
        labels, correct = _rotate([format_value(o) for o in options], n)
        return Question({"kind": "scores_shape", "n": n, "d_k": d_k, "labels": labels}, len(labels), correct)
    if kind == "masked_keys":
        removed = sorted(j for i, j in predict.masked_cells(trace.mask) if i == row)
        candidates = [
            removed,
            [],
            list(range(row + 1, n)),
            list(range(n - trace.n_pad, n)),
            [j for j in range(n) if j != row],
            sorted(set(range(row + 1, n)) | set(range(n - trace.n_pad, n))),
        ]
        options: list[list[int]] = []
        for c in candidates:
            if c not in options:
                options.append(c)
        options = options[:N_CHOICES]
        if len(options) < 2:
            return None
        keysets, correct = _rotate(options, row)
        labels = [[_token(trace, j) for j in ks] for ks in keysets]
        return Question(
            {"kind": "masked_keys", "row": row, "row_token": _token(trace, row), "keysets": labels},
            len(labels),
            correct,
        )
    if kind == "winning_key":
        weights = trace.weights[head, row]  # [n_k]
        winners = predict.winning_keys(weights)
        if len(winners) != 1:
            return None
        allowed = [j for j in range(n) if trace.mask[row, j]]
        if len(allowed) < 2:
            return None
        others = sorted((j for j in allowed if j != winners[0]), key=lambda j: -weights[j])
        options = [winners[0], *others[: N_CHOICES - 1]]
        options.sort()
        labels = [_token(trace, j) for j in options]
        return Question(
            {
                "kind": "winning_key",
                "row": row,
                "row_token": _token(trace, row),
                "head": head,
                "labels": labels,
            },
            len(labels),
            options.index(winners[0]),
        )
    if kind in CODE_KINDS:
        return code_poll(kind.removeprefix("code_"), trace)
    raise ValueError(f"unknown live question kind {kind!r}")


def code_poll(template: str, trace) -> Question | None:
    """A code question on the teacher's sentence and settings (None when they cannot ask it). The
    poll keeps those settings and tokens: after the reveal the pages run its options again to show
    each one's consequence (:func:`code_poll_source`), on what the class was asked about even when
    the teacher has moved on to another sentence."""
    if trace.config is None:
        return None
    tokens = trace.tokens[: trace.n - trace.n_pad]
    q = code_question(template, trace.config, tokens)
    if q is None:
        return None
    labels = code_labels(q)
    poll = {"kind": "code", "template": template, "program": q.program_with_blank(), "labels": labels,
            "config": dataclasses.asdict(trace.config), "tokens": list(tokens)}  # fmt: skip
    return Question(poll, len(labels), q.answer_index)


def code_labels(q: CodeQuestion) -> list[str]:
    """A code question's options as one line each ("masked = scaled + M / weights = …"); the pages
    put the letter before it, as for every poll (with one here too they read "A. A: masked …")."""
    return [" / ".join(line.strip() for line in o.fragment) for o in q.options]


def code_poll_source(question: dict) -> tuple[str, AttentionConfig, tuple[str, ...]] | None:
    """(template, settings, tokens) a code poll was asked on, or None: another kind of poll, or one
    whose stored values this version of the app does not take."""
    if question.get("kind") != "code":
        return None
    try:
        config = AttentionConfig(**question["config"])
        tokens = tuple(question["tokens"])
        template = question["template"]
    except (KeyError, TypeError, AttentionConfigError):
        return None
    if not isinstance(template, str) or not isinstance(question["tokens"], list) or not tokens:
        return None
    if not all(isinstance(tok, str) for tok in tokens):
        return None
    return template, config, tokens


def _rotate(options: list, by: int) -> tuple[list, int]:
    """The options in a fixed order that does not always put the answer (options[0]) first."""
    k = by % len(options)
    rotated = options[k:] + options[:k]
    return rotated, (len(options) - k) % len(options)


def quiz_question(kind: str, seed: int) -> Question:
    q = generate_question(kind, int(seed))
    labels = [format_value(c, q.unit) for c in q.choices]
    params = {k: v for k, v in q.params.items() if isinstance(v, int | float | str)}
    return Question({"kind": "quiz", "quiz_kind": kind, "seed": int(seed), "params": params, "labels": labels},
                    len(labels), int(q.answer_index))  # fmt: skip


def question_text(t, question: dict) -> str:
    """The question in the reader's language (plain text; the page escapes it for Markdown)."""
    kind = question.get("kind")
    if kind == "quiz":
        return t(f"quiz.comp_{question['quiz_kind']}", **question["params"])
    if kind == "scores_shape":
        return t("class.q_scores_shape", n=question["n"], d_k=question["d_k"])
    if kind == "masked_keys":
        return t("class.q_masked_keys", row=question["row_token"])
    if kind == "winning_key":
        return t("class.q_winning_key", row=question["row_token"], head=question["head"])
    if kind == "code":
        return f"{t('code.q_' + question['template'])}\n\n{question['program']}"
    return t("class.q_unknown")


def choice_labels(t, question: dict) -> list[str]:
    if question.get("kind") == "masked_keys":
        return [", ".join(ks) if ks else t("class.no_keys") for ks in question["keysets"]]
    return [str(label) for label in question.get("labels", [])]

"""The guided path: an ordered route through the playground's steps and the labs.

Each :class:`Stop` has a goal (``path.stop_<id>_goal``), one or two predict-then-reveal
questions about a hand-sized exercise (``attention_core.exercise``, from the path's seed) and a
link onward to the page where the step lives. Progress lives in the URL, so a reload or a shared
link restores it: ``?seed=S&stop=K&answers=A``, where ``A`` holds one field per question in
route order, separated by ``~`` (see :func:`encode_response`). Malformed fields count as unanswered.

Everything here is pure (no Streamlit): the page (``app_pages/path.py``) draws it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from attention_core.exercise import generate_exercise
from attention_ui.practice.predict_view import (
    SKIPPED,
    Question,
    is_right,
    masked_row_question,
    memory_question,
    pick_row,
    shape_question,
    sums_question,
    winner_question,
)

SEP = "~"
MAX_SEED = 2**31 - 1  # the app's seed inputs (attention_ui.kit.SEED_RANGE)
MAX_PARAM_CHARS = 200  # longer ?answers= values are ignored, not parsed
PLAYGROUND, MASKS, COST = "app_pages/playground.py", "app_pages/masks.py", "app_pages/cost.py"


@dataclass(frozen=True)
class Stop:
    sid: str  # catalog keys path.stop_<sid>_title / _goal / _link
    page: str  # the page the link onward opens
    questions: tuple[str, ...]  # question kinds, see stop_questions


STOPS = (
    Stop("scores", PLAYGROUND, ("shape",)),
    Stop("softmax", PLAYGROUND, ("winner",)),
    Stop("mask", MASKS, ("masked", "sums")),
    Stop("cost", COST, ("memory",)),
)
SUMMARY = len(STOPS) + 1  # the stop number of the summary, after the last stop


@dataclass(frozen=True)
class Progress:
    """Where the learner is: the exercise seed, the stop (1 … SUMMARY), and one response per question
    (None: unanswered; predict_view.SKIPPED: shown without predicting)."""

    seed: int = 0
    stop: int = 1
    responses: tuple[object, ...] = ()


# Rows, queries and keys are shown numbered from 1: the path's exercise is the one the worksheet and
# `python -m attention_core exercise` print, and both number it from 1 as exam papers do (q_1 … q_n);
# only the stored answers (the URL) keep the 0-based indices of the code.
FIRST_NUMBER = 1


def key_labels(n: int) -> tuple[str, ...]:
    return tuple(str(j + FIRST_NUMBER) for j in range(n))


def stop_questions(stop: Stop, seed: int) -> tuple[Question, ...]:
    """The questions of ``stop`` for the path's exercise ``seed`` (unmasked, and causal for the mask stop)."""
    ex = generate_exercise(seed, "causal" if stop.sid == "mask" else "none")
    row = pick_row(ex.weights)
    labels = key_labels(ex.n)
    make = {
        "shape": lambda: shape_question("path_shape", ex.Q, ex.K),
        "winner": lambda: winner_question("path_winner", ex.weights, row, labels, FIRST_NUMBER),
        "masked": lambda: masked_row_question("path_masked", ex.allowed, ex.n - 2, labels, FIRST_NUMBER),
        "sums": lambda: sums_question("path_sums", ex.weights, ex.n - 2, FIRST_NUMBER),
        "memory": lambda: memory_question("path_memory"),
    }
    return tuple(make[kind]() for kind in stop.questions)


def all_questions(seed: int) -> tuple[Question, ...]:
    return tuple(q for stop in STOPS for q in stop_questions(stop, seed))


def encode_response(q: Question, response: object) -> str:
    """One URL field: ``3x4`` (shape), ``2`` (key), ``0.1`` or ``-`` (removed keys), ``y``/``n``,
    ``4`` (factor), ``s`` (skipped), empty (unanswered)."""
    if response is None:
        return ""
    if response == SKIPPED:
        return "s"
    if q.kind == "shape":
        return f"{int(response[0])}x{int(response[1])}"
    if q.kind == "keys":
        return ".".join(str(j) for j in sorted(response)) or "-"
    if q.kind == "yesno":
        return "y" if response else "n"
    return str(int(response))


def _whole(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 10 else None


def decode_response(q: Question, field: str) -> object | None:
    """The response a URL field holds for ``q``, or None if it is empty or malformed."""
    if field == "s":
        return SKIPPED
    if q.kind == "shape":
        parts = [_whole(p) for p in field.split("x")]
        return tuple(parts) if len(parts) == 2 and None not in parts and 0 not in parts else None
    if q.kind == "keys":
        if field == "-":
            return ()
        keys = [_whole(p) for p in field.split(".")]
        ok = keys and all(k in q.options for k in keys) and len(set(keys)) == len(keys)
        return tuple(sorted(keys)) if ok else None
    if q.kind == "yesno":
        return {"y": True, "n": False}.get(field)
    value = _whole(field)
    return value if value in q.options else None


def read_progress(params: Mapping[str, str]) -> Progress:
    """Progress from the URL's query parameters; anything malformed falls back to the start."""
    seed = _whole(str(params.get("seed", "0"))[:12])
    seed = seed if seed is not None and seed <= MAX_SEED else 0
    stop = _whole(str(params.get("stop", "1"))[:3])
    stop = stop if stop is not None and 1 <= stop <= SUMMARY else 1
    raw = str(params.get("answers", ""))
    fields = raw.split(SEP) if len(raw) <= MAX_PARAM_CHARS else []
    questions = all_questions(seed)
    fields += [""] * (len(questions) - len(fields))
    responses = tuple(decode_response(q, f) for q, f in zip(questions, fields, strict=False))
    return Progress(seed, stop, responses)


def write_params(progress: Progress) -> dict[str, str]:
    """The query parameters that restore ``progress``."""
    questions = all_questions(progress.seed)
    answers = SEP.join(encode_response(q, r) for q, r in zip(questions, progress.responses, strict=True))
    return {"seed": str(progress.seed), "stop": str(progress.stop), "answers": answers.rstrip(SEP)}


def marks(questions, responses) -> tuple[str, ...]:
    """Per question: "right", "wrong", "skipped" or "open"."""
    out = []
    for q, r in zip(questions, responses, strict=True):
        if r is None:
            out.append("open")
        elif r == SKIPPED:
            out.append("skipped")
        else:
            out.append("right" if is_right(q, r) else "wrong")
    return tuple(out)

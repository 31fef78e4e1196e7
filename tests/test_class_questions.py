"""Poll questions from the core, the projector's histogram and the results CSV, as plain data.

Each live question's right answer is checked against a computation written here from the trace's
arrays (argmax of a weight row, the False cells of a mask row, the shape of Q Kᵀ by matmul), not
against attention_core.predict, which the questions use.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from attention_core import AttentionConfig, trace_text
from attention_core.csv_cells import cell
from attention_core.labs.quiz import generate_question
from attention_ui.classroom import questions
from attention_ui.classroom.export import results_csv
from attention_ui.classroom.figures import RIGHT, answers_histogram
from attention_ui.i18n import Translator
from classroom.model import Poll, PollTally

T = Translator("en")


@pytest.fixture(scope="module", params=["none", "causal", "padding"])
def trace(request):
    pad = 2 if request.param == "padding" else 0
    return trace_text(
        "the cat sat on the mat", AttentionConfig(d_model=8, heads=2, mask=request.param, pad=pad, seed=3)
    )


def test_scores_shape_question(trace):
    q = questions.live_question("scores_shape", trace, head=1)
    n = len(trace.tokens)
    assert (trace.Q[1] @ trace.K[1].T).shape == (n, n)
    assert q.question["labels"][q.correct] == f"{n} × {n}"
    assert len(set(q.question["labels"])) == q.n_choices == 4


def test_masked_keys_question(trace):
    row = trace.n - 1
    q = questions.live_question("masked_keys", trace, head=0)
    removed = [f"{j}: {trace.tokens[j]}" for j in range(trace.n) if not bool(trace.mask[row, j])]
    assert q.question["keysets"][q.correct] == removed
    assert len({tuple(k) for k in q.question["keysets"]}) == q.n_choices


def test_winning_key_question(trace):
    q = questions.live_question("winning_key", trace, head=0)
    row = trace.n - 1
    w = np.asarray(trace.weights[0, row])
    best = int(np.argmax(w))
    if np.sum(w >= w[best] * (1 - 1e-12)) > 1:
        assert q is None  # a tie has no fair single answer
    else:
        assert q.question["labels"][q.correct] == f"{best}: {trace.tokens[best]}"
        allowed_labels = {f"{j}: {trace.tokens[j]}" for j in range(trace.n) if trace.mask[row, j]}
        assert set(q.question["labels"]) <= allowed_labels


@pytest.mark.parametrize("kind", questions.QUIZ_KINDS)
def test_quiz_questions_keep_the_cores_answer(kind):
    q = questions.quiz_question(kind, seed=11)
    core = generate_question(kind, 11)
    assert q.correct == core.answer_index and q.n_choices == len(core.choices)
    text = questions.question_text(T, q.question)
    assert text and "{" not in text


def test_question_text_and_labels_in_japanese(trace):
    ja = Translator("ja")
    q = questions.live_question("masked_keys", trace, head=0)
    labels = questions.choice_labels(ja, q.question)
    assert ("なし" in labels) == ([] in q.question["keysets"])
    assert "クエリ" in questions.question_text(ja, q.question)


def test_histogram_counts_and_the_right_bar_after_reveal():
    labels, counts = ["0: the", "1: <b>cat</b>", "2: sat"], (3, 5, 0)
    hidden = answers_histogram(labels, counts, None, title="Answers: 8", count_title="Students")
    assert list(hidden.data[0].y) == [3, 5, 0] and RIGHT not in hidden.data[0].marker.color
    assert "<b>" not in "".join(hidden.data[0].x)  # token text is escaped for Plotly
    shown = answers_histogram(labels, counts, 1, title="Answers: 8", count_title="Students")
    assert shown.data[0].marker.color[1] == RIGHT and shown.data[0].marker.color.count(RIGHT) == 1
    # issue 42 point 7: read on a projector, from the back (the template's ticks were 11-12 px there)
    layout = shown.layout
    sizes = [layout.xaxis.tickfont.size, layout.yaxis.tickfont.size, layout.yaxis.title.font.size,
             shown.data[0].textfont.size]  # fmt: skip
    assert min(sizes) >= 18 and layout.title.font.size >= 22, sizes


def test_results_csv_counts_shares_and_only_given_nicknames():
    poll = Poll("p1", 1, 7, {"kind": "quiz", "quiz_kind": "head_dim", "seed": 1,
                             "params": {"d_model": 64, "heads": 4}, "labels": ["16", "64", "4", "256"]}, 4, 0, "revealed")  # fmt: skip
    rows = list(
        csv.DictReader(io.StringIO(results_csv(T, [PollTally(poll, (3, 1, 0, 0))], [(1, "=cmd|x", 0)])))
    )
    options = [r for r in rows if r["record"] == "option"]
    assert [r["count"] for r in options] == ["3", "1", "0", "0"]
    assert options[0]["right"] == "1" and options[0]["share_right"] == "0.750"
    (answer,) = [r for r in rows if r["record"] == "answer"]
    assert answer["nickname"] == "'=cmd|x" and answer["right"] == "1"


@pytest.mark.parametrize(
    "text, safe", [("=1+1", "'=1+1"), ("+x", "'+x"), ("@a", "'@a"), ("-2", "'-2"), ("Ann", "Ann")]
)
def test_csv_cells_never_start_a_formula(text, safe):
    assert cell(text) == safe

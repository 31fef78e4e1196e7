"""The exam code questions where they are offered besides the quiz: the worksheets (a page per sheet and
an answer key with every option's consequence), the live class's polls, and the words of a consequence,
written from the run of that option (attention_ui/program/consequences.py)."""

from __future__ import annotations

import io

from pypdf import PdfReader

from attention_core import AttentionConfig, tokenize, trace_text
from attention_core import codegen_questions as cq
from attention_ui.classroom import questions as polls
from attention_ui.i18n import Translator, translate
from attention_ui.program.consequences import consequences, number, short_error
from attention_ui.worksheet.worksheet import WorksheetSettings, _code_questions, build_worksheet

RICH = AttentionConfig(mask="causal+padding", pad=1)
TOKENS = tokenize("the cat sat on the mat").tokens


def _option(q, name):
    return next(o for o in q.options if o.mutation == name)


def test_a_consequence_is_worded_from_its_own_run():
    t = Translator("en")
    q = cq.code_question("scale_order", RICH, TOKENS)
    late = _option(q, "scale_after_softmax")
    lines = consequences(t, q, late)
    o = late.outcome
    assert t("code.c_rows_same", value=number(o.row_sum_min)) in lines  # every row: 1/√d_k
    q_axis = cq.code_question("softmax_axis", RICH, TOKENS)
    axis = _option(q_axis, "softmax_wrong_axis").outcome
    low, high = number(axis.row_sum_min), number(axis.row_sum_max)
    assert t("code.c_rows", low=low, high=high) in consequences(
        t, q_axis, _option(q_axis, "softmax_wrong_axis")
    )
    assert t("code.c_distance", value=number(o.distance)) in lines
    assert t("code.c_forbidden_zero") in lines  # this trap leaves the mask alone
    right = consequences(t, q, q.answer)
    assert right[0] == t("code.c_right") and t("code.c_rows_one") in right and t("code.c_same") in right
    # a trap that lets the future in: the forbidden weight and where, from the run
    q = cq.code_question("causal_mask", RICH, TOKENS)
    upper = _option(q, "causal_upper_allowed")
    h, i, j = upper.outcome.forbidden_at
    expected = t("code.c_forbidden", value=number(upper.outcome.forbidden_weight), head=h, row=i, col=j)
    assert expected in consequences(t, q, upper)
    # nan, and an error that stops the program
    q = cq.code_question("mask_values", RICH, TOKENS)
    flipped = consequences(t, q, _option(q, "mask_sign_flipped"))
    assert t("code.c_rows_nan") in flipped and t("code.c_distance_nan") in flipped
    q = cq.code_question("raw_scores", RICH, TOKENS)
    stopped = consequences(t, q, _option(q, "k_not_transposed"))
    assert stopped == [t("code.c_stopped", error=short_error(_option(q, "k_not_transposed").outcome.error))]
    # the output of another shape
    q = cq.code_question("merge_heads", RICH, TOKENS)
    per_head = consequences(t, q, _option(q, "w_o_per_head_before_concat"))
    assert t("code.c_shape", shape="(7, 32)", right="(7, 16)") in per_head


def test_overflow_is_said_only_when_exp_overflowed():
    t = Translator("ja")
    big = AttentionConfig(mask="causal", scale=1e-3)
    q = cq.code_question("softmax_stability", big, TOKENS)
    for option in q.options:
        said = translate("ja", "code.c_overflow") in consequences(t, q, option)
        assert said == option.outcome.overflow == (option.mutation is not None)


def test_the_worksheet_prints_code_questions_and_every_consequence_in_the_key():
    settings = WorksheetSettings(exercises=1, students=1, lang="en", code=True)
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(build_worksheet(settings))).pages)
    flat = " ".join(text.split())
    questions = _code_questions(settings, 1)
    assert questions
    t = Translator("en")
    assert " ".join(translate("en", "code.ws_key_title").split()) in flat
    for q in questions:
        assert " ".join(t("code.q_" + q.template).split()) in flat
        for option in q.options:
            for line in consequences(t, q, option):
                assert " ".join(line.replace("`", "").split()) in flat, line
    plain = build_worksheet(WorksheetSettings(exercises=1, students=1, lang="en"))
    assert "Code question" not in " ".join(p.extract_text() for p in PdfReader(io.BytesIO(plain)).pages)


def test_a_live_class_poll_asks_a_code_question_on_the_projected_sentence():
    trace = trace_text("the cat sat on the mat", RICH)
    poll = polls.live_question("code_mask_place", trace, head=0)
    q = cq.code_question("mask_place", RICH, TOKENS)
    assert poll.correct == q.answer_index and poll.n_choices == 4
    t = Translator("ja")
    assert polls.question_text(t, poll.question).startswith(translate("ja", "code.q_mask_place"))
    assert q.program_with_blank() in polls.question_text(t, poll.question)
    labels = polls.choice_labels(t, poll.question)
    assert labels[q.answer_index].startswith("masked = scaled + M")  # the page adds "A. " to every label
    assert polls.live_question("code_mask_place", trace_text("a b", AttentionConfig()), head=0) is None


def test_a_code_poll_keeps_what_it_was_asked_on_and_its_options_run_again_after_the_reveal():
    import json

    from attention_ui.classroom import code_polls

    trace = trace_text("the cat sat on the mat", RICH)
    poll = polls.live_question("code_mask_place", trace, head=0)
    stored = json.loads(json.dumps(poll.question))  # as the store keeps it
    q = code_polls.asked(stored, poll.correct)
    expected = cq.code_question("mask_place", RICH, TOKENS)
    assert q is not None and q.answer_index == expected.answer_index == poll.correct
    t = Translator("en")
    assert [consequences(t, q, o) for o in q.options] == [
        consequences(t, expected, o) for o in expected.options
    ]
    # what another version of the app asked, or another kind of poll: no consequences
    assert code_polls.asked(stored, (poll.correct + 1) % 4) is None
    assert code_polls.asked({**stored, "labels": list(reversed(stored["labels"]))}, poll.correct) is None
    assert code_polls.asked({**stored, "config": {**stored["config"], "heads": 0}}, poll.correct) is None
    assert code_polls.asked({**stored, "tokens": "the cat"}, poll.correct) is None
    assert code_polls.asked({k: v for k, v in stored.items() if k != "tokens"}, poll.correct) is None
    assert code_polls.asked(polls.live_question("scores_shape", trace, head=0).question, 0) is None

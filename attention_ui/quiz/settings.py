"""The quiz's settings, declared once (attention_ui/settings_table.py): key prefix ``quiz``.

Answers live in ``answers`` (question id -> chosen display index), not only in widget state, so they
survive reruns, language switches and visits to other pages; the first answer to a question counts.
The code questions (attention_ui/program/questions_view.py, :func:`quiz_section`) keep theirs apart.
"""

from __future__ import annotations

from attention_core.config import MASK_KINDS
from attention_ui import kit
from attention_ui.settings_table import Setting, Table

TABLE = Table(
    "quiz",
    Setting("seed", 0, bounds=kit.SEED_RANGE),  # shuffles the questions and draws the computed ones
    Setting("retry", None, why="None: every question; else the ids of the retry round"),
    Setting("round", 0, why="part of every radio's key: a new round gets fresh radios"),
    Setting("first", None, why="(correct, answered) before the first retry round: the first attempt's score"),
    Setting("answers", why="question id -> display index of the first answer (a new dict per session)"),
    Setting("r_*", why="a question's radio: r_<round>_<lang>_<qid>"),
    Setting("box_*", why="a question's container"),
    Setting("new_seed", why="the New questions button"),
    Setting("restart", why="the Start over button"),
    Setting("retry_btn", why="the Retry the missed ones button"),
    Setting("back", why="the Back to all questions button of a retry round"),
    # the code questions: the mask and [PAD]s chosen here (every mask trap has a line to change)
    Setting("code_mask", "causal+padding", choices=MASK_KINDS),
    Setting("code_pad", 1, choices=(0, 1, 2)),
    Setting("code_answers", why="a code question's template -> the option picked first"),
    Setting("code_q_*", why="a code question's radio, its box (_box) and its options (_opt_<i>)"),
)
PAGE = kit.Page.of(TABLE)

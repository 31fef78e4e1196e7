"""The class's results as CSV: per poll, the count of each option and the share right; then, for
students who gave a nickname (only they), their answers."""

from __future__ import annotations

import csv
import io

from classroom.model import nickname_marks

from .questions import choice_labels, question_text

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(text: object) -> str:
    """A value for a spreadsheet: a leading = + - @ would start a formula there, so it gets a quote."""
    s = str(text)
    return "'" + s if s.startswith(_FORMULA_START) else s


def results_csv(t, tallies, answers) -> str:
    """``tallies``: the store's PollTally list; ``answers``: (poll seq, nickname, choice) rows."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(
        ["record", "poll", "step", "question", "option", "label", "count", "right", "share_right", "nickname"]
        + ["nickname_code_points"]  # look-alike nicknames differ here (classroom.model.nickname_marks)
    )
    by_seq = {}
    for tally in tallies:
        p = tally.poll
        by_seq[p.seq] = p
        labels = choice_labels(t, p.question)
        share = "" if tally.share_right is None else f"{tally.share_right:.3f}"
        text = question_text(t, p.question)
        for i, count in enumerate(tally.counts):
            label = labels[i] if i < len(labels) else str(i)
            w.writerow(["option", p.seq, p.step, cell(text), chr(65 + i), cell(label), count,
                        int(i == p.correct), share, "", ""])  # fmt: skip
    for seq, nickname, choice in answers:
        p = by_seq.get(seq)
        right = "" if p is None else int(choice == p.correct)
        w.writerow(
            [
                "answer",
                seq,
                "" if p is None else p.step,
                "",
                chr(65 + choice),
                "",
                "",
                right,
                "",
                cell(nickname),
                nickname_marks(nickname),  # look-alikes ("Alice" / "Alice" + U+200B) differ here
            ]
        )
    return out.getvalue()

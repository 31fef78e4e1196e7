"""The class's results as CSV: per poll, the count of each option and the share right; then, for
students who gave a nickname (only they), their answers. Every cell goes through the project's one
CSV writer (attention_core/csv_cells.py): no nickname, question or label starts a spreadsheet formula."""

from __future__ import annotations

from attention_core.csv_cells import csv_text
from classroom.model import nickname_marks

from .questions import choice_labels, question_text

# The last column writes each character outside printable ASCII as <U+XXXX>: look-alike nicknames
# differ there (classroom.model.nickname_marks).
COLUMNS = tuple(
    "record poll step question option label count right share_right nickname nickname_code_points".split()
)


def results_csv(t, tallies, answers) -> str:
    """``tallies``: the store's PollTally list; ``answers``: (poll seq, nickname, choice) rows."""
    rows: list[list[object]] = [list(COLUMNS)]
    by_seq = {}
    for tally in tallies:
        p = tally.poll
        by_seq[p.seq] = p
        labels = choice_labels(t, p.question)
        share = "" if tally.share_right is None else f"{tally.share_right:.3f}"
        text = question_text(t, p.question)
        for i, count in enumerate(tally.counts):
            label = labels[i] if i < len(labels) else str(i)
            rows.append(
                ["option", p.seq, p.step, text, chr(65 + i), label, count, int(i == p.correct), share, "", ""]
            )
    for seq, nickname, choice in answers:
        p = by_seq.get(seq)
        right = "" if p is None else int(choice == p.correct)
        step = "" if p is None else p.step
        rows.append(
            ["answer", seq, step, "", chr(65 + choice), "", "", right, "", nickname, nickname_marks(nickname)]
        )
    return csv_text(rows)

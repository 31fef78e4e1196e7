"""Practice mode's session keys (prefix ``pr``), declared once: the switch, and per question its input,
its stored answer and its buttons. Practice mode has no page of its own: its questions sit in the
playground and the labs (attention_ui/practice/predict_view.py), so its table has no kit keys."""

from __future__ import annotations

from attention_ui.settings_table import Setting, Table

TABLE = Table(
    "pr",
    Setting("mode", False),  # practice mode on: predict before each map (off by default; the path sets it)
    Setting("held", why="a question of this run waits: the later per-head steps wait with it"),
    Setting("in_*", why="a question's input widgets (a shape's rows and columns: in_<qid>_r, _c)"),
    Setting("ans_*", why="a question's stored answer with the question's signature"),
    Setting("missing_*", why="a question checked with its input empty: say so"),
    Setting("box_*", why="a question's container"),
    Setting("check_*", why="a question's Check button"),
    Setting("skip_*", why="a question's Show the answer button"),
    kit=False,
)

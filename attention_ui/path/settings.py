"""The guided path's session keys, declared once (attention_ui/settings_table.py): key prefix ``path``, its
catalog namespace ``path`` too (its messages left practice.json, which keeps practice mode's own).

The learner's progress lives in the URL (``?seed=&stop=&answers=``, attention_ui/path/path.py); the
answers themselves are practice mode's (attention_ui/practice/settings.py: ``pr_ans_<qid>``).
"""

from __future__ import annotations

from attention_ui import kit
from attention_ui.settings_table import Setting, Table

TABLE = Table(
    "path",
    Setting("seed", bounds=kit.SEED_RANGE, url="seed"),  # the exercise's seed (read from the URL first)
    Setting("stop", url="stop", why="the stop shown: 1..len(STOPS), then the summary (read from the URL)"),
    Setting("url_seen", why="the query string last read or written: a new one is read again"),
    Setting("back", why="the Back button"),
    Setting("next", why="the Next (or To the summary) button"),
    Setting("code_q", why="the mask stop's code question's radio (questions_view.path_question)"),
    Setting("code_q_*", why="that question's box (_box) and its options (_opt_<i>)"),
    Setting("code_answer", why="the option picked first in the code question"),
)
PAGE = kit.Page.of(TABLE)  # its progress is in its URL by its own code (path.write_params)

"""The worksheet page's settings, declared once (attention_ui/settings_table.py): key prefix ``worksheet``,
its catalog namespace ``worksheet`` too (its messages left practice.json, which keeps practice mode's)."""

from __future__ import annotations

from attention_ui import kit
from attention_ui.i18n import LANGUAGES
from attention_ui.settings_table import Setting, Table

# The widgets' own bounds; the builder's limits (and its messages) apply on top, e.g. to the total.
EXERCISES_RANGE = (1, 6)
STUDENTS_RANGE = (1, 60)

TABLE = Table(
    "worksheet",
    Setting("exercises", 3, bounds=EXERCISES_RANGE),
    Setting("students", 1, bounds=STUDENTS_RANGE),
    Setting("first_seed", 0, bounds=kit.SEED_RANGE),  # student k's sheet uses first_seed + k - 1
    # the sheet's language: no first value, the page starts it in the learner's language
    Setting("lang", choices=LANGUAGES),
    Setting("causal", False),  # the exercises use the causal mask
    Setting("code", False),  # add the code questions
    Setting("download", why="the Download PDF button (the PDF is built when it is clicked)"),
)
PAGE = kit.Page.of(TABLE)

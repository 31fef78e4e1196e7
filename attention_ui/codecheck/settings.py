"""The code check page's settings, declared once (attention_ui/settings_table.py): key prefix
``codecheck``, the core package's name (attention_core/codecheck/); the URL stays /code_check."""

from __future__ import annotations

from attention_ui import kit
from attention_ui.settings_table import Setting, Table

PRESETS = ("empty", "removed")
MASKS = ("none", "causal", "padding", "causal+padding")

TABLE = Table(
    "codecheck",
    # the learner's context: the sentence, the mask and the seed, shared with the other pages
    Setting("text", text="codecheck.default_text", shared=kit.LEARNER_TEXT, url="text"),
    Setting("kind", "causal", choices=MASKS, translated=True, shared=kit.LEARNER_MASK, url="mask"),
    Setting("seed", 0, bounds=kit.SEED_RANGE, shared=kit.LEARNER_SEED, url="seed"),
    Setting("preset", "removed", choices=PRESETS),  # the code the Load button puts in the box
    Setting("code", why="the learner's code (first: the template with one step removed, set by the page)"),
    Setting("load", why="the Load button: the chosen preset replaces the code box's text"),
    Setting("check", why="the Check button"),
    Setting("report", why="(report, the code it checked, the tokens): the last check's, kept across reruns"),
)
PAGE = kit.Page.of(TABLE)

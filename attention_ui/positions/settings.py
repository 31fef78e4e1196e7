"""The positions lab's settings, declared once (attention_ui/settings_table.py): key prefix ``positions``."""

from __future__ import annotations

from attention_core.labs.positions import D_MODEL_RANGE, OFFSET_RANGE, SEEN_RANGE
from attention_ui import kit
from attention_ui.settings_table import Setting, Table

TABLE = Table(
    "positions",
    # the learner's sentence and seed are shared with the other pages; d_model stays the lab's own
    Setting("text", text="positions.default_text", shared=kit.LEARNER_TEXT, url="text"),
    Setting("seed", 0, bounds=kit.SEED_RANGE, shared=kit.LEARNER_SEED, url="seed"),
    Setting("d_model", 16, bounds=D_MODEL_RANGE),  # even: RoPE turns pairs of coordinates
    Setting("seen", 32, bounds=SEEN_RANGE),  # the longest position seen in training, L
    Setting("offset", 2, bounds=OFFSET_RANGE),  # the query-key distance, below L
    Setting("pair", 0),  # RoPE's coordinate pair drawn as an arrow, below d_model / 2
)
PAGE = kit.Page.of(TABLE)

"""The masks lab's settings, declared once (attention_ui/settings_table.py): key prefix ``masks``."""

from __future__ import annotations

from attention_core.labs.masks import LAB_MASK_KINDS, METHODS
from attention_ui import kit
from attention_ui.settings_table import Setting, Table

MAX_TOKENS = 16  # the leakage matrix runs 2·n layers; 16 keeps it instant and the maps readable
PAD_RANGE = (0, 4)
WINDOW_RANGE = (1, 8)

TABLE = Table(
    "masks",
    # the learner's context first (a lab starts from the playground's sentence; 16 tokens kept)
    Setting("text", text="masks.default_text", shared=kit.LEARNER_TEXT, url="text"),
    Setting("kind", "causal", choices=LAB_MASK_KINDS, translated=True, shared=kit.LEARNER_MASK, url="mask"),
    Setting("seed", 0, bounds=kit.SEED_RANGE, shared=kit.LEARNER_SEED, url="seed"),
    Setting("pad", 2, bounds=PAD_RANGE),
    Setting("window", 2, bounds=WINDOW_RANGE),
    Setting("head", 0, translated=True),
    Setting("all", False),  # every mask kind side by side
    Setting("position", 3, translated=True),  # the leakage experiment's changed token
    Setting("replacement", text="masks.default_replacement"),  # the word put there
    Setting("matrix_method", "zero_values", choices=METHODS, translated=True),
    Setting("code", why="the code tab's expander beside the maps (code_view.masks_code)"),
    Setting("dl_lesson", why="the take-home lesson's download button"),
)
PAGE = kit.Page.of(TABLE)

"""The multi-head lab's settings, declared once (attention_ui/settings_table.py): key prefix ``multihead``,
the page's one name (its core module, attention_core/labs/multihead.py)."""

from __future__ import annotations

from attention_ui import kit
from attention_ui.settings_table import Setting, Table

D_MODEL_RANGE = (1, 128)  # the sentence's layer: small enough to draw every head
MAX_SHOWN_HEADS = 16  # small multiples beyond this are unreadable
COST_N_RANGE = (1, 1_000_000)
COST_D_MODEL_RANGE = (1, 8192)

TABLE = Table(
    "multihead",
    # the learner's sentence, d_model (one this page can draw), head count (one dividing it) and seed;
    # a head count after its d_model (the table's order is the exchange's)
    Setting("text", text="multihead.default_text", shared=kit.LEARNER_TEXT, url="text"),
    Setting(
        "d_model",
        16,
        bounds=D_MODEL_RANGE,
        shared=kit.LEARNER_D_MODEL,
        url="d_model",
        accepts=kit.whole_in(*D_MODEL_RANGE),
    ),
    Setting("heads", 4, shared=kit.LEARNER_HEADS, url="heads", accepts=kit.divides("multihead_d_model")),
    Setting("seed", 0, bounds=kit.SEED_RANGE, shared=kit.LEARNER_SEED, url="seed"),
    Setting("cost_n", 1024, bounds=COST_N_RANGE),  # the cost sweep's sequence length
    Setting("cost_d_model", 512, bounds=COST_D_MODEL_RANGE),  # the cost sweep's d_model
    Setting("code_heads", why="the code tab's expander under the heads (code_view.trace_code)"),
    Setting("code_concat", why="the code tab's expander under Concat · W^O (code_view.trace_code)"),
    Setting("dl_lesson", why="the take-home lesson's download button"),
)
PAGE = kit.Page.of(TABLE)

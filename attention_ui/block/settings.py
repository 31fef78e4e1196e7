"""The block lab's settings, declared once (attention_ui/settings_table.py): key prefix ``block``."""

from __future__ import annotations

from attention_core.labs import block as lab_block
from attention_ui import kit
from attention_ui.settings_table import Setting, Table

D_MODELS = (8, 16, 32, 64)
MAX_HEADS = 8
DEPTHS = (1, 48)
FLOPS_D_RANGE = (16, 16384)
FLOPS_H_RANGE = (1, 128)
FF_MULT_RANGE = (1, 8)

TABLE = Table(
    "block",
    # the learner's context first (not d_model, heads: the block's own sizes stay small)
    Setting("text", text="block.default_text", shared=kit.LEARNER_TEXT, url="text"),
    Setting(
        "mask",
        "none",
        choices=lab_block.MASKS,
        shared=kit.LEARNER_MASK,
        url="mask",
        accepts=lab_block.MASKS.__contains__,
    ),  # fmt: skip
    Setting("seed", 0, bounds=kit.SEED_RANGE, shared=kit.LEARNER_SEED, url="seed"),
    Setting("d_model", 16, choices=D_MODELS),
    Setting("heads", 2),  # the head counts that divide d_model, up to MAX_HEADS
    Setting("norm", "layer", choices=lab_block.NORMS),
    Setting("placement", "pre", choices=lab_block.PLACEMENTS),
    Setting("ffn", "gelu", choices=lab_block.FFNS),
    Setting("depth", 12, bounds=DEPTHS),
    Setting("flops_d", 768, bounds=FLOPS_D_RANGE),
    Setting("flops_h", 12, bounds=FLOPS_H_RANGE),
    Setting("ff_mult", 4, bounds=FF_MULT_RANGE),
)
PAGE = kit.Page.of(TABLE)

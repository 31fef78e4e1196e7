"""The look-alikes lab's settings, declared once (attention_ui/settings_table.py): key prefix
``lookalikes``; its state-space section's settings (attention_ui/lookalikes/ssm_view.py) included."""

from __future__ import annotations

from attention_ui import kit
from attention_ui.settings_table import Setting, Table

MAX_TOKENS = 16  # two readable heatmaps side by side
D_MODEL_CHOICES = (8, 16, 32, 64)
HEAD_CHOICES = (1, 2, 4)
D_A_RANGE = (1, 32)
PATH_N_RANGE = (2, 32)
COST_N_RANGE = (1, 1_000_000)
COST_D_RANGE = (1, 16_384)
SSM_N_CHOICES = (1, 2, 4, 8, 16)
SSM_DELTA_CHOICES = (0.1, 0.2, 0.5, 1.0, 2.0)

TABLE = Table(
    "lookalikes",
    # the first sentence is the learner's, once there is one; the second is the page's own
    Setting("text_a", text="lookalikes.default_text_a", shared=kit.LEARNER_TEXT, url="text"),
    Setting("text_b", text="lookalikes.default_text_b"),
    Setting("d_model", 16, choices=D_MODEL_CHOICES),
    Setting("heads", 2, choices=HEAD_CHOICES),
    Setting("head", 0),  # one of 0..heads-1
    Setting("seed", 0, bounds=kit.SEED_RANGE),
    Setting("d_a", 8, bounds=D_A_RANGE),  # the additive score's hidden size
    Setting("n", 8, bounds=PATH_N_RANGE),  # the path-length illustration: n tokens, from i to j
    Setting("i", 0),
    Setting("j", 7),
    Setting("cost_n", 2048, bounds=COST_N_RANGE),
    Setting("cost_d", 512, bounds=COST_D_RANGE),
    # the state-space section (ssm_view): the state size N, the step Δ, the output row shown
    Setting("ssm_n", 4, choices=SSM_N_CHOICES),
    Setting("ssm_delta", 0.5, choices=SSM_DELTA_CHOICES),
    Setting("ssm_row", None),  # None: the sentence's last output, set once the sentence is known
)
PAGE = kit.Page.of(TABLE)

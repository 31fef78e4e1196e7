"""The inference lab's settings, declared once (attention_ui/settings_table.py): key prefix
``inference``; its cache-size calculator's settings (attention_ui/inference/size_view.py) included."""

from __future__ import annotations

from attention_core.labs.inference import D_MODEL_RANGE, DTYPE_BYTES, PRESETS
from attention_ui import kit
from attention_ui.settings_table import Setting, Table

CALC_N_RANGE = (1, 10_000_000)  # what may be typed; the model's context caps what is computed
CALC_WINDOW_RANGE = (0, 10_000_000)  # sliding window W in tokens, 0 = none
FIRST_PRESET = 1  # SmolLM2-135M

TABLE = Table(
    "inference",
    # the learner's context first: the sentence and the seed (d_model stays the lab's)
    Setting("text", text="inference.default_text", shared=kit.LEARNER_TEXT, url="text"),
    Setting("seed", 0, bounds=kit.SEED_RANGE, shared=kit.LEARNER_SEED, url="seed"),
    Setting("d_model", 16, bounds=D_MODEL_RANGE),
    Setting("heads", 4),  # the head counts that divide d_model (HEADS_RANGE)
    Setting("kv_heads", 2),  # the KV head counts that divide heads (kv_choices)
    # the cache-size calculator (size_view): a public model's shape, n, the value type, g and W
    Setting("preset", FIRST_PRESET, choices=tuple(range(len(PRESETS)))),
    Setting("calc_n", 8192, bounds=CALC_N_RANGE),
    Setting("dtype", "float16 / bfloat16", choices=tuple(DTYPE_BYTES)),
    Setting("calc_kv", PRESETS[FIRST_PRESET].kv_heads),
    Setting("calc_window", PRESETS[FIRST_PRESET].window, bounds=CALC_WINDOW_RANGE),
    Setting("preset_shown", why="the preset whose KV heads and window the calculator last started from"),
)
PAGE = kit.Page.of(TABLE)

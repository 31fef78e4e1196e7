"""The cost lab's settings, declared once (attention_ui/settings_table.py): key prefix ``cost``.

The page (app_pages/cost.py) and its two views (``efficient_view``: the window and linear sections,
``ring_view``: ring attention) share this one table.
"""

from __future__ import annotations

from attention_core.labs.cost import DTYPE_BYTES, MAX_DIRECT_N
from attention_core.labs.ring import P_RANGE
from attention_ui import kit
from attention_ui.settings_table import Setting, Table

# the memory and FLOPs tables, the live measurement and the tiled check (the page)
COUNT_RANGE = {"heads": (1, 256), "batch": (1, 1024), "layers": (1, 256)}
DK_RANGE = (1, 1024)
MEASURE_CHOICES = tuple(n for n in (256, 512, 1024, 2048, 4096) if n <= MAX_DIRECT_N)
CHECK_NS = (64, 128, 256, 512, 1024, 2048)
BLOCKS = (16, 32, 64, 128, 256)
# the sliding window (efficient_view)
WINDOW_NS = (256, 512, 1024, 2048)  # the live check builds an n × n reference: kept small
WINDOWS = (16, 32, 64, 128, 256)
WINDOW_BLOCKS = (32, 64, 128)
# ring attention (ring_view)
RING_NS = (16, 32, 64, 128, 256, 512, 1024)  # the live check builds an n × n reference
COST_N_RANGE = (16, 100_000_000)
COST_D_RANGE = (1, 1024)
BANDWIDTH_RANGE = (0.1, 10_000.0)  # GB/s of the link between neighbours
RATE_RANGE = (0.1, 10_000.0)  # TFLOP/s one device sustains

TABLE = Table(
    "cost",
    # the linear-attention sentence is the learner's (the page's own example only while there is none)
    Setting("text", text="cost.default_text", shared=kit.LEARNER_TEXT, url="text"),
    Setting("dtype", "fp16", choices=tuple(DTYPE_BYTES)),
    *(Setting(name, 1, bounds=bounds) for name, bounds in COUNT_RANGE.items()),
    Setting("dk", 64, bounds=DK_RANGE),
    Setting("max_n", 2048, choices=MEASURE_CHOICES),
    Setting("block", 128, choices=BLOCKS),
    Setting("run", why="the live measurement's button"),
    Setting("clear", why="the button that forgets the measurement"),
    Setting("results", (), why="the live sweep's SweepPoints, kept across reruns"),
    Setting("results_meta", None, why="the sweep's max_n, block and d, said above its table"),
    Setting("check_n", 512, choices=CHECK_NS),
    Setting("check_block", 64, choices=BLOCKS),
    Setting("causal", False),
    # the sliding window and linear attention (efficient_view)
    Setting("win_n", 1024, choices=WINDOW_NS),
    Setting("window", 64, choices=WINDOWS),
    Setting("win_block", 64, choices=WINDOW_BLOCKS),
    Setting("win_run", why="the window timing's button"),
    Setting("win_clear", why="the button that forgets the window timing"),
    Setting("window_results", (), why="the window timing's WindowTimings, kept across reruns"),
    Setting("lin_row", None),  # the linear-attention row shown; None: the sentence's last query
    # ring attention (ring_view): P devices, the checked n and row, and the cost model's inputs
    Setting("ring_p", 4, bounds=P_RANGE),
    Setting("ring_n", 64, choices=RING_NS),
    Setting("ring_causal", True),
    Setting("ring_row", 40),  # below ring_n
    Setting("ring_cost_n", 131_072, bounds=COST_N_RANGE),
    Setting("ring_cost_d", 128, bounds=COST_D_RANGE),
    Setting("ring_dtype", "bf16", choices=tuple(DTYPE_BYTES)),
    Setting("ring_bw", 50.0, bounds=BANDWIDTH_RANGE),
    Setting("ring_rate", 200.0, bounds=RATE_RANGE),
)
PAGE = kit.Page.of(TABLE)

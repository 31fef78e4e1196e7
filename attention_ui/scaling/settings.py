"""The scaling lab's settings, declared once (attention_ui/settings_table.py): key prefix ``scaling``."""

from __future__ import annotations

from attention_core.labs.scaling import MAX_DRAWS
from attention_ui import kit
from attention_ui.settings_table import Setting, Table

DK_OPTIONS = tuple(2**i for i in range(11))  # 1 … 1024
DK_DEFAULT = (1, 256)
KEYS_RANGE = (2, 64)
SAMPLES_RANGE = (100, 20_000)
DIVISOR_RANGE = (0.25, 32.0)
# Random numbers one page run may draw for the softmax experiments (sum over d_k of
# samples·(n_keys+1)·d_k): about half a second on the shared server. MAX_DRAWS is the core's
# hard limit per call; this page budget stays well under it.
PAGE_DRAWS = min(MAX_DRAWS, 18_000_000)
HIST_MAX_SAMPLES = 5000  # histograms need far fewer numbers than the table of d_ks

TABLE = Table(
    "scaling",
    # A range select_slider gets its default through ``value=`` (controls): Streamlit decides from the
    # default whether the widget is a range, so no first value in the session here.
    Setting("dk_range", choices=DK_OPTIONS),
    Setting("keys", 16, bounds=KEYS_RANGE),
    Setting("samples", 2000, bounds=SAMPLES_RANGE),
    Setting("seed", 0, bounds=kit.SEED_RANGE),
    Setting("hist_dk", 64, choices=DK_OPTIONS),  # the histogram's d_k, one of the chosen range
    Setting("row", "8, 4, 2, 0, -2, -6"),  # the one-row experiment's scores
    Setting("divisor", 1.0, bounds=DIVISOR_RANGE),
    Setting("dl_lesson", why="the take-home lesson's download button"),
)
PAGE = kit.Page.of(TABLE)

"""The training lab's settings in its URL (``?task=…&layers=…&heads=…``), read once per new URL and
written back after each run, so a copied link opens on the same settings. The parsers are the
playground's (:mod:`attention_ui.playground.url_state`); a bad parameter is ignored, never an error.
A run itself is not in the link: the page trains again (or finds the run cached) with those settings.
"""

from __future__ import annotations

from attention_ui.i18n import LANGUAGES
from attention_ui.kit import LEARNER_TEXT, SEED_RANGE, url_text
from attention_ui.page_url import PageUrl
from attention_ui.playground import url_state as pg
from attention_ui.playground.url_state import Param

from . import settings as s

PARAMS = (
    Param("task", "tr_task", pg._choice(s.TASKS), pg._str_out),
    Param("text", "tr_text", url_text, pg._str_out),
    Param("layers", "tr_layers", pg._int_in(*s.LAYERS_RANGE), pg._int_out),
    Param("heads", "tr_heads", pg._int_in(*s.HEADS_RANGE), pg._int_out),
    Param("d_model", "tr_d_model", pg._int_in(*s.D_MODEL_RANGE), pg._int_out),
    Param("d_k", "tr_d_k", pg._int_in(*s.D_K_RANGE), pg._int_out),
    Param("scale", "tr_scale", pg._choice(s.SCALES), pg._str_out),
    Param("divisor", "tr_divisor", pg._float_in(*s.DIVISOR_RANGE), pg._float_out),
    Param("mask", "tr_mask", pg._choice(s.MASKS), pg._str_out),
    Param("positions", "tr_positions", pg._bool, pg._bool_out),
    Param("ffn", "tr_ffn", pg._bool, pg._bool_out),
    Param("lr", "tr_lr", pg._float_in(*s.LR_RANGE), pg._float_out),
    Param("steps", "tr_steps", pg._int_in(*s.STEPS_RANGE), pg._int_out),
    Param("seed", "tr_seed", pg._int_in(*SEED_RANGE), pg._int_out),
    Param("lang", "lang", pg._choice(LANGUAGES), pg._str_out),
)
URL = PageUrl(PARAMS, "tr_url_written")
SHARED = {"tr_text": LEARNER_TEXT}  # a shared link's text becomes the learner's sentence too


def read_url(state) -> tuple[str, ...]:
    """Copy valid URL values into the session when the URL is new to it; the names ignored."""
    return URL.read(state, SHARED)


write_url = URL.write

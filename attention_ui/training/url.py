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
    Param("task", s.TABLE.key("task"), pg._choice(s.TASKS), pg._str_out),
    Param("text", s.TABLE.key("text"), url_text, pg._str_out),
    Param("layers", s.TABLE.key("layers"), pg._int_in(*s.LAYERS_RANGE), pg._int_out),
    Param("heads", s.TABLE.key("heads"), pg._int_in(*s.HEADS_RANGE), pg._int_out),
    Param("d_model", s.TABLE.key("d_model"), pg._int_in(*s.D_MODEL_RANGE), pg._int_out),
    Param("d_k", s.TABLE.key("d_k"), pg._int_in(*s.D_K_RANGE), pg._int_out),
    Param("scale", s.TABLE.key("scale"), pg._choice(s.SCALES), pg._str_out),
    Param("divisor", s.TABLE.key("divisor"), pg._float_in(*s.DIVISOR_RANGE), pg._float_out),
    Param("mask", s.TABLE.key("mask"), pg._choice(s.MASKS), pg._str_out),
    Param("positions", s.TABLE.key("positions"), pg._bool, pg._bool_out),
    Param("ffn", s.TABLE.key("ffn"), pg._bool, pg._bool_out),
    Param("lr", s.TABLE.key("lr"), pg._float_in(*s.LR_RANGE), pg._float_out),
    Param("steps", s.TABLE.key("steps"), pg._int_in(*s.STEPS_RANGE), pg._int_out),
    Param("seed", s.TABLE.key("seed"), pg._int_in(*SEED_RANGE), pg._int_out),
    Param("lang", "lang", pg._choice(LANGUAGES), pg._str_out),
)
URL = PageUrl(PARAMS, s.TABLE.key("url_written"))
SHARED = {s.TABLE.key("text"): LEARNER_TEXT}  # a shared link's text becomes the learner's sentence too


def read_url(state) -> tuple[str, ...]:
    """Copy valid URL values into the session when the URL is new to it; the names ignored."""
    return URL.read(state, SHARED)


write_url = URL.write

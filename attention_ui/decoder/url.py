"""The decoder page's view in the URL (``?model=…&text=…&layer=…&head=…``), read once per new URL and
written back after each run.

The parameter table and its readers are the playground's (:mod:`attention_ui.playground.url_state`:
:class:`Param`, the range-checked parsers, ``printable_key``); only the decoder's own table lives
here. A bad parameter is ignored, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping

from attention_core.labs.decoder_view import HEAD_STATS
from attention_ui.decoder.models import MAX_HEADS, MAX_LAYERS, MODELS
from attention_ui.i18n import LANGUAGES
from attention_ui.kit import SEED_RANGE, url_text
from attention_ui.page_url import PageUrl
from attention_ui.playground import url_state as pg
from attention_ui.playground.url_state import Param

TEMPERATURE_RANGE = (0.0, 2.0)
TOP_K_RANGE = (0, 100)

PARAMS = (
    Param("model", "dc_model", pg._choice(MODELS), pg._str_out),
    Param("text", "dc_text", url_text, pg._str_out),
    # the larger model's ranges; the page clamps them to the chosen model's layers and heads
    Param("layer", "dc_layer", pg._int_in(0, MAX_LAYERS - 1), pg._int_out),
    Param("head", "dc_head", pg._int_in(0, MAX_HEADS - 1), pg._int_out),
    Param("stat", "dc_stat", pg._choice(HEAD_STATS), pg._str_out),
    Param("temp", "dc_temperature", pg._float_in(*TEMPERATURE_RANGE), pg._float_out),
    Param("top_k", "dc_top_k", pg._int_in(*TOP_K_RANGE), pg._int_out),
    Param("seed", "dc_seed", pg._int_in(*SEED_RANGE), pg._int_out),
    Param("lang", "lang", pg._choice(LANGUAGES), pg._str_out),
)
URL = PageUrl(PARAMS, "dc_url_written")
BY_URL, WRITTEN = URL.by_url, URL.written
parse, serialise, write_url = URL.parse, URL.serialise, URL.write


def read_url(state, shared: Mapping[str, str]) -> tuple[str, ...]:
    """Copy valid URL values into the session when the URL is new to it (the ``shared`` ones into the
    learner's context too); the names ignored."""
    return URL.read(state, shared)

"""The decoder page's view in the URL (``?model=…&text=…&layer=…&head=…``), read once per new URL and
written back after each run.

Which settings the URL carries, and under which names, is the page's table's (``url`` in
attention_ui/decoder/settings.py); here is only how each is read and written. The readers are the
playground's (:mod:`attention_ui.playground.url_state`: :class:`Param`, the range-checked parsers,
``printable_key``). A bad parameter is ignored, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping

from attention_core.labs.decoder import HEAD_STATS
from attention_ui.decoder.models import MAX_HEADS, MAX_LAYERS, MODELS
from attention_ui.decoder.settings import TABLE, TEMPERATURE_RANGE, TOP_K_RANGE
from attention_ui.i18n import LANGUAGES
from attention_ui.kit import SEED_RANGE, url_text
from attention_ui.page_url import PageUrl
from attention_ui.playground import url_state as pg
from attention_ui.playground.url_state import Param

# How each setting the table puts in the URL is read and written, by the setting's name.
CODECS = {
    "model": (pg._choice(MODELS), pg._str_out),
    "text": (url_text, pg._str_out),
    "layer": (pg._int_in(0, MAX_LAYERS - 1), pg._int_out),
    "head": (pg._int_in(0, MAX_HEADS - 1), pg._int_out),
    "stat": (pg._choice(HEAD_STATS), pg._str_out),
    "temperature": (pg._float_in(*TEMPERATURE_RANGE), pg._float_out),
    "top_k": (pg._int_in(*TOP_K_RANGE), pg._int_out),
    "seed": (pg._int_in(*SEED_RANGE), pg._int_out),
}
PARAMS = (
    *(Param(s.url, TABLE.key(s.name), *CODECS[s.name]) for s in TABLE if s.url),
    Param("lang", "lang", pg._choice(LANGUAGES), pg._str_out),  # the app's language (settings_table.APP_KEYS)
)
URL = PageUrl(PARAMS, TABLE.key("url_written"))
BY_URL, WRITTEN = URL.by_url, URL.written
parse, serialise, write_url = URL.parse, URL.serialise, URL.write


def read_url(state, shared: Mapping[str, str]) -> tuple[str, ...]:
    """Copy valid URL values into the session when the URL is new to it (the ``shared`` ones into the
    learner's context too); the names ignored."""
    return URL.read(state, shared)

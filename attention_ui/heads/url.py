"""The heads page's view in the URL (``?model=…&text=…&layer=…&head=…&token=…``), read once per new URL
and written back after each run. The parameter table and parsers are the playground's
(:mod:`attention_ui.playground.url_state`); a bad parameter is ignored, never an error.
"""

from __future__ import annotations

from attention_core.labs import heads as H
from attention_core.models.gemma3 import GEMMA3_270M
from attention_core.models.smollm2 import SMOLLM2_135M
from attention_ui.i18n import LANGUAGES
from attention_ui.kit import LEARNER_TEXT, url_text
from attention_ui.page_url import PageUrl
from attention_ui.playground import url_state as pg
from attention_ui.playground.url_state import Param

from .settings import TABLE

# The decoders of the family share these bounds until one with more layers or heads lands.
MAX_LAYERS, MAX_HEADS = SMOLLM2_135M.n_layers, SMOLLM2_135M.n_heads
# a token id of the larger vocabulary (Gemma's 262,144); the page drops one the chosen model lacks
MAX_VOCAB = max(SMOLLM2_135M.vocab_size, GEMMA3_270M.vocab_size)
PARAMS = (
    Param("model", TABLE.key("model"), pg._choice(H.MODELS), pg._str_out),
    Param("text", TABLE.key("text"), url_text, pg._str_out),
    Param("layer", TABLE.key("layer"), pg._int_in(0, MAX_LAYERS - 1), pg._int_out),
    Param("head", TABLE.key("head"), pg._int_in(0, MAX_HEADS - 1), pg._int_out),
    Param("kind", TABLE.key("kind"), pg._choice(H.ABLATIONS), pg._str_out),
    Param("token", TABLE.key("token"), pg._int_in(-1, MAX_VOCAB - 1), pg._int_out),
    Param("lang", "lang", pg._choice(LANGUAGES), pg._str_out),
)
URL = PageUrl(PARAMS, TABLE.key("url_written"))
BY_URL, WRITTEN = URL.by_url, URL.written
parse, serialise, write_url = URL.parse, URL.serialise, URL.write
SHARED = {TABLE.key("text"): LEARNER_TEXT}  # a shared link's sentence becomes the learner's context too


def read_url(state) -> tuple[str, ...]:
    """Copy valid URL values into the session when the URL is new to it; the names ignored."""
    return URL.read(state, SHARED)

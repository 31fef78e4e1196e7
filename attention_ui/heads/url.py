"""The heads page's view in the URL (``?model=…&text=…&layer=…&head=…&token=…``), read once per new URL
and written back after each run. The parameter table and parsers are the playground's
(:mod:`attention_ui.playground.url_state`); a bad parameter is ignored, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from attention_core.labs import heads as H
from attention_core.models.smollm2 import SMOLLM2_135M
from attention_ui.i18n import LANGUAGES
from attention_ui.kit import LEARNER_TEXT, MAX_URL_TEXT, url_text
from attention_ui.playground import url_state as pg
from attention_ui.playground.url_state import Param

# The decoders of the family share these bounds until one with more layers or heads lands.
MAX_LAYERS, MAX_HEADS = SMOLLM2_135M.n_layers, SMOLLM2_135M.n_heads
PARAMS = (
    Param("model", "hd_model", pg._choice(H.MODELS), pg._str_out),
    Param("text", "hd_text", url_text, pg._str_out),
    Param("layer", "hd_layer", pg._int_in(0, MAX_LAYERS - 1), pg._int_out),
    Param("head", "hd_head", pg._int_in(0, MAX_HEADS - 1), pg._int_out),
    Param("kind", "hd_kind", pg._choice(H.ABLATIONS), pg._str_out),
    Param("token", "hd_token", pg._int_in(-1, SMOLLM2_135M.vocab_size - 1), pg._int_out),
    Param("lang", "lang", pg._choice(LANGUAGES), pg._str_out),
)
BY_URL = {p.url: p for p in PARAMS}
WRITTEN = "hd_url_written"


def parse(params: Mapping[str, object]) -> tuple[dict, tuple[str, ...]]:
    """``-> (session values, ignored parameter names)``; never raises."""
    values: dict = {}
    ignored: list[str] = []
    for key, raw in params.items():
        param = BY_URL.get(key) if isinstance(key, str) else None
        text = pg._last(raw)
        value = None
        if param is not None and text is not None and (key == "text" or len(text) <= pg.MAX_VALUE_CHARS):
            value = param.parse(text)
        if value is None:
            ignored.append(pg.printable_key(key))
        else:
            values[param.state] = value
    return values, tuple(ignored)


def serialise(state: Mapping[str, object]) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in PARAMS:
        if p.state not in state:
            continue
        text = p.dump(state[p.state])
        if p.url == "text":
            text = text[:MAX_URL_TEXT]
        if text and p.parse(text) is not None:
            out[p.url] = text
    return out


def _snapshot() -> dict:
    return {
        key: (v[0] if len(v := st.query_params.get_all(key)) == 1 else list(v)) for key in st.query_params
    }


def read_url(state) -> tuple[str, ...]:
    """Copy valid URL values into the session when the URL is new to it; the names ignored."""
    current = _snapshot()
    if state.get(WRITTEN) == current:
        return ()
    if WRITTEN in state and not current:  # another page's navigation dropped the parameters
        state[WRITTEN] = current
        return ()
    values, ignored = parse(current)
    for key, value in values.items():
        if key != "lang":
            state[key] = value
            if key == "hd_text":  # a shared link's sentence becomes the learner's context too
                state["hd_text_synced"] = state[LEARNER_TEXT] = value
    state[WRITTEN] = current
    return ignored


def write_url(state) -> None:
    target = serialise(state)
    if _snapshot() != target:
        st.query_params.from_dict(target)
    state[WRITTEN] = dict(target)

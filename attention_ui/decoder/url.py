"""The decoder page's view in the URL (``?model=…&text=…&layer=…&head=…``), read once per new URL and
written back after each run.

The parameter table and its readers are the playground's (:mod:`attention_ui.playground.url_state`:
:class:`Param`, the range-checked parsers, ``printable_key``); only the decoder's own table lives
here. A bad parameter is ignored, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from attention_core.labs.decoder_view import HEAD_STATS
from attention_ui.decoder.models import MAX_HEADS, MAX_LAYERS, MODELS
from attention_ui.i18n import LANGUAGES
from attention_ui.kit import MAX_URL_TEXT, SEED_RANGE, adopt_context, url_text
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
BY_URL = {p.url: p for p in PARAMS}
WRITTEN = "dc_url_written"


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
    """The parameters for a session state: every value that reads back as itself."""
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


def read_url(state, shared: Mapping[str, str]) -> tuple[str, ...]:
    """Copy valid URL values into the session when the URL is new to it (the ``shared`` ones into the
    learner's context too); the names ignored."""
    current = _snapshot()
    if state.get(WRITTEN) == current:
        return ()
    if WRITTEN in state and not current:  # another page's navigation dropped the parameters
        state[WRITTEN] = current
        return ()
    values, ignored = parse(current)
    for key, value in values.items():
        if key != "lang":  # the language is applied by attention_ui.language before the page runs
            state[key] = value
    adopt_context(state, shared, values)
    state[WRITTEN] = current
    return ignored


def write_url(state) -> None:
    target = serialise(state)
    if _snapshot() != target:
        st.query_params.from_dict(target)
    state[WRITTEN] = dict(target)

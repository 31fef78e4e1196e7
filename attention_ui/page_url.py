"""A page whose whole view lives in its own URL (the decoder, Heads at work): its parameter table
read once per new URL and written back after each run.

The parameters and their range-checked parsers are the playground's
(:mod:`attention_ui.playground.url_state`); this is the reading and writing around them. A bad
parameter is ignored, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from attention_ui.kit import MAX_URL_TEXT, adopt_context, keep_url, url_of_ours
from attention_ui.playground import url_state as pg
from attention_ui.playground.url_state import Param


def snapshot() -> dict:
    """The address's query now: one value per parameter, or the list of a repeated one."""
    return {
        key: (v[0] if len(v := st.query_params.get_all(key)) == 1 else list(v)) for key in st.query_params
    }


class PageUrl:
    """``params``: the page's table; ``written``: the session key of the query the page last wrote
    (``<prefix>_url_written``; the ones before it are kept under ``<prefix>_url_ours``)."""

    def __init__(self, params: Sequence[Param], written: str) -> None:
        if not written.endswith("_url_written"):
            raise ValueError(f"a page's URL marker is '<prefix>_url_written', not {written!r}")
        self.params, self.written = tuple(params), written
        self.ours = written.removesuffix("written") + "ours"
        self.by_url = {p.url: p for p in self.params}

    def parse(self, params: Mapping[str, object]) -> tuple[dict, tuple[str, ...]]:
        """``-> (session values, ignored parameter names)``; never raises."""
        values: dict = {}
        ignored: list[str] = []
        for key, raw in params.items():
            param = self.by_url.get(key) if isinstance(key, str) else None
            text = pg._last(raw)
            value = None
            if param is not None and text is not None and (key == "text" or len(text) <= pg.MAX_VALUE_CHARS):
                value = param.parse(text)
            if value is None:
                ignored.append(pg.printable_key(key))
            else:
                values[param.state] = value
        return values, tuple(ignored)

    def serialise(self, state: Mapping[str, object]) -> dict[str, str]:
        """The parameters for a session state: every value that reads back as itself."""
        out: dict[str, str] = {}
        for p in self.params:
            if p.state not in state:
                continue
            text = p.dump(state[p.state])
            if p.url == "text":
                text = text[:MAX_URL_TEXT]
            if text and p.parse(text) is not None:
                out[p.url] = text
        return out

    def read(self, state, shared: Mapping[str, str]) -> tuple[str, ...]:
        """Copy valid URL values into the session when the URL is new to it (the ``shared`` ones into
        the learner's context too); the names ignored."""
        current = snapshot()
        if state.get(self.written) == current:
            return ()
        if self.written in state and not current:  # another page's navigation dropped the parameters
            state[self.written] = current
            return ()
        if self.written in state and url_of_ours(state, self.ours, current):
            return ()  # an older URL of ours, sent by a browser that is behind: write() puts it back
        values, ignored = self.parse(current)
        for key, value in values.items():
            if key != "lang":  # the language is applied by attention_ui.language before the page runs
                state[key] = value
        adopt_context(state, shared, values)
        state[self.written] = current
        return ignored

    def write(self, state) -> None:
        target = self.serialise(state)
        if snapshot() != target:
            st.query_params.from_dict(target)
        state[self.written] = dict(target)
        keep_url(state, self.ours, target)

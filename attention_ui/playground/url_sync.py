"""Thin Streamlit glue between ``st.query_params`` and the playground's session state.

* ``read_url(state)`` runs before any playground widget: on a session's first run (or when the URL
  changed from outside, e.g. back/forward), it copies valid URL values into the session and
  remembers which parameters were ignored. Otherwise the widgets own the values, so URL and
  widgets never fight. A session's first run can also carry widget values from the browser: after
  the app process died and the browser reconnected to another one, the page still shows the
  student's view and the new session starts with the student's next change. Those values win
  over the URL (and over the page's defaults), or that change would be undone.
* ``write_url(state)`` runs after the page has settled its values and updates the URL only when it
  differs, which does not trigger a rerun.
* A URL this session wrote before is not read again, unless the browser went back or forward to it
  (:func:`attention_ui.kit.url_of_ours`: a browser that is behind sends older URLs of ours).

The language parameter is applied by ``attention_ui.language.current_language`` (app.py draws the
language selectbox before this page runs, so its value cannot be changed here).
"""

from __future__ import annotations

import streamlit as st

from attention_ui import kit
from attention_ui.language import LANG_KEY
from attention_ui.playground import url_state
from attention_ui.playground.settings import PAGE, TABLE

_BY_STATE = {p.state: p for p in url_state.PARAMS}

WRITTEN = TABLE.key("url_written")  # the URL parameters this session last read or wrote
OURS = TABLE.key("url_ours")  # the URLs this session wrote before (kit.url_of_ours)
IGNORED = TABLE.key("url_ignored")  # parameter names ignored at the last read
NOTICE_FOR = TABLE.key("url_notice_for")  # the serialised view the notice belongs to


def snapshot() -> dict[str, str | list[str]]:
    params = st.query_params
    out: dict[str, str | list[str]] = {}
    for key in params.keys():
        values = params.get_all(key)
        out[key] = values[0] if len(values) == 1 else list(values)
    return out


def read_url(state) -> None:
    current = snapshot()
    if WRITTEN in state and state[WRITTEN] == current:
        return
    first = WRITTEN not in state
    if not first and kit.url_of_ours(state, OURS, current):
        return  # an older URL of ours, sent by a browser that is behind: write_url puts the view back
    if not first and not current:
        # another page's navigation dropped our parameters: keep the session's view
        state[WRITTEN] = current
        return
    parsed = url_state.parse(current)
    values = dict(parsed.values)
    if first:
        values.update(browser_values(sent_by_browser()))
    for key, value in values.items():
        if key == LANG_KEY:
            continue  # handled by current_language() before the app's language selectbox
        state[key] = value
    kit.adopt_context(state, PAGE.shared, values)  # a shared link's sentence goes on into the labs
    state[IGNORED] = list(parsed.ignored)
    state[NOTICE_FOR] = None
    state[WRITTEN] = current


def sent_by_browser() -> list[tuple[str, object]]:
    """(user key, wire value) of each widget value the browser sent with this rerun.

    Empty on a fresh page load. Reads Streamlit's widget states before the widgets are drawn (no
    public API gives them by key then); if that ever changes, this returns nothing and the URL
    alone restores the view, as before.
    """
    try:
        from streamlit.runtime.state import get_session_state
        from streamlit.runtime.state.common import user_key_from_element_id

        protos = get_session_state().get_widget_states()
    except Exception:  # noqa: BLE001 - no script context (bare mode) or a changed internal API
        return []
    out = []
    for proto in protos:
        kind = proto.WhichOneof("value")
        key = user_key_from_element_id(proto.id)
        if key is None or kind is None:
            continue
        value = getattr(proto, kind)
        if kind == "double_array_value":  # a slider with one thumb
            if len(value.data) != 1:
                continue
            value = value.data[0]
        out.append((key, value))
    return out


def browser_values(sent: list[tuple[str, object]]) -> dict[str, object]:
    """The playground values among ``sent``, checked like URL parameters (pure).

    A value passes only if its parameter's parser accepts it (range, type), so a browser cannot
    send what a URL could not. Choice widgets send their translated label, which is not an option
    name: those are left to the URL (the student's view, which they match).
    """
    out: dict[str, object] = {}
    for key, raw in sent:
        param = _BY_STATE.get(key)
        if param is None or key == LANG_KEY or not isinstance(raw, (bool, int, float, str)):
            continue
        text = raw if isinstance(raw, str) else param.dump(raw)
        value = param.parse(text)
        if isinstance(raw, float) and value != raw:
            continue  # e.g. 4.5 for a whole-number setting: not a value this widget can hold
        if value is not None:
            out[key] = value
    return out


def ignored_notice(state) -> list[str]:
    """Parameter names to list in the notice: shown until the user changes the view."""
    ignored = state.get(IGNORED) or []
    if not ignored:
        return []
    view = url_state.serialise(state)
    if state.get(NOTICE_FOR) is None:
        state[NOTICE_FOR] = view
    if state[NOTICE_FOR] != view:
        state[IGNORED] = []
        return []
    return list(ignored)


def write_url(state) -> None:
    target = url_state.serialise(state)
    if snapshot() != target:
        st.query_params.from_dict(target)
    state[WRITTEN] = dict(target)
    kit.keep_url(state, OURS, target)

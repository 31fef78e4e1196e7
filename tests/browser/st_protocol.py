"""Streamlit's websocket protocol (1.67) as its frontend speaks it, for clients without a browser.

One place for what tests/browser/st_wire.py (the attack tests' client) and bench/hall.py (a lecture
hall of protocol-level students) both need: the ``rerun_script`` BackMsg a page sends, and reading
the ForwardMsgs a run sends back (elements, their widget ids, their text, the end of a run).

What the 1.67 frontend sends (read from its bundle, ``static/js/index.*.js``):

* the websocket ``/_stcore/stream`` with the subprotocols ``["streamlit", <the _streamlit_xsrf
  cookie's value, else "PLACEHOLDER_AUTH_TOKEN">]`` and the page's cookies;
* ``rerun_script``: the page's query string, every widget's current value, the page's script hash
  (after the first run; the first run names the page by its path instead), the fragment id for a
  fragment's rerun, ``is_auto_rerun`` for a ``run_every`` tick, the hashes of the large messages it
  keeps (so the server sends a reference instead of the message again) and the browser's context;
* for a ``run_every`` fragment, it sets a timer when an ``auto_rerun`` message names the fragment and
  clears every such timer when a full run starts (a ``new_session`` message without fragment ids).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

TEXT_FIELDS = ("alert", "markdown", "text", "heading", "exception")
PLACEHOLDER_TOKEN = "PLACEHOLDER_AUTH_TOKEN"  # the frontend's subprotocol when it has no XSRF cookie


def subprotocols(xsrf_cookie: str | None) -> list[str]:
    return ["streamlit", xsrf_cookie or PLACEHOLDER_TOKEN]


def widget_state(wid: str, value: object) -> WidgetState:
    """One widget's value as the frontend sends it: bool is a button's trigger, int, float and str
    are that type (whatever the widget's own: a forged message may send any)."""
    w = WidgetState()
    w.id = wid
    if isinstance(value, bool):
        w.trigger_value = value
    elif isinstance(value, int):
        w.int_value = value
    elif isinstance(value, float):
        w.double_value = value
    else:
        w.string_value = str(value)
    return w


def rerun_script(
    *,
    page: str = "",
    query: str = "",
    widgets: Mapping[str, object] | None = None,
    page_script_hash: str = "",
    fragment_id: str = "",
    auto: bool = False,
    cached_hashes: Iterable[str] = (),
    url: str = "",
    locale: str = "en-US",
) -> bytes:
    """The serialized ``rerun_script`` BackMsg (see the module's docstring for the fields)."""
    msg = BackMsg()
    state = msg.rerun_script
    state.query_string = query
    if page_script_hash:
        state.page_script_hash = page_script_hash
    else:
        state.page_name = page
    if fragment_id:
        state.fragment_id = fragment_id
    state.is_auto_rerun = auto
    state.cached_message_hashes.extend(cached_hashes)
    for wid, value in (widgets or {}).items():
        state.widget_states.widgets.append(widget_state(wid, value))
    info = state.context_info
    info.timezone, info.timezone_offset, info.locale, info.url = "UTC", 0, locale, url
    info.color_scheme = "light"
    return msg.SerializeToString()


def parse(raw: bytes) -> ForwardMsg:
    fwd = ForwardMsg()
    fwd.ParseFromString(raw)
    return fwd


def element(fwd: ForwardMsg):
    """(kind, proto) of a ``new_element`` delta, else None (``kind``: "markdown", "radio", ...)."""
    if fwd.WhichOneof("type") != "delta" or fwd.delta.WhichOneof("type") != "new_element":
        return None
    el = fwd.delta.new_element
    kind = el.WhichOneof("type")
    return (kind, getattr(el, kind)) if kind else None


def element_text(kind: str, proto) -> str | None:
    """The text an alert, Markdown (captions too), text or heading element shows, else None."""
    if kind not in TEXT_FIELDS:
        return None
    return getattr(proto, "body", "") or getattr(proto, "message", "")


def finished(fwd: ForwardMsg) -> bool:
    """A ``script_finished`` that ends what the request started: a run that asked for another
    (``st.rerun``) ends "early for rerun" and that next run is still to come."""
    return (
        fwd.WhichOneof("type") == "script_finished"
        and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
    )


def run_fragments(fwd: ForwardMsg) -> list[str]:
    """The fragment ids of the run a ``new_session`` message starts (empty: a full run)."""
    return list(fwd.metadata.run.fragment_ids)

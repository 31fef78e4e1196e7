"""A Streamlit client without a browser: Streamlit's own websocket messages, sent by a script.

What an attacker on the server (or anywhere) can send, and a browser cannot: any header on the
websocket handshake (Chromium adds none of Playwright's extra headers to a websocket, so a browser
test cannot forge X-Forwarded-For there), and any widget value, of any type, for any widget id.
Used by the attack tests (tests/browser/test_class_attacks_browser.py).

    with Wire(url, headers={"X-Forwarded-For": "6.6.6.6"}) as w:
        w.run("class_join", query="code=ABC123")          # the page's first run
        w.run("class_join", query="code=ABC123", widgets={w.widget("cls_join_code"): "ABC123",
                                                         w.widget("FormSubmitter:cls_join_form"): True})
        w.text()                                          # everything the last runs showed
"""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

from st_protocol import element, element_text, finished, parse, rerun_script
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect


class Wire:
    def __init__(
        self,
        base_url: str,
        headers: dict[str, str] | None = None,
        timeout: float = 60,
        source: str | None = None,
    ) -> None:
        """``source``: the local address to connect from (another loopback address, 127.0.0.2: a
        second machine as far as the server can tell)."""
        parts = urlsplit(base_url)
        self._address, self._source = (parts.hostname, parts.port or 80), source
        self.base, self.timeout = base_url.rstrip("/"), timeout
        self._ws_url = f"ws://{parts.netloc}{parts.path.rstrip('/')}/_stcore/stream"
        self._headers = {"Origin": f"{parts.scheme}://{parts.netloc}", **(headers or {})}
        self.widgets: dict[str, str] = {}  # the ids of the widgets drawn so far, by their last part
        self.messages: list[ForwardMsg] = []  # of the last run (and the reruns it asked for)
        self._ws = None

    def __enter__(self) -> Wire:
        sock = None
        if self._source:
            sock = socket.create_connection(
                self._address, timeout=self.timeout, source_address=(self._source, 0)
            )
        connection = connect(self._ws_url, additional_headers=self._headers, subprotocols=["streamlit"],
                             open_timeout=self.timeout, sock=sock)  # fmt: skip
        self._ws = connection.__enter__()  # (websockets wants its connection used as a context manager)
        return self

    def __exit__(self, *exc) -> None:
        self._ws.__exit__(*exc)

    def widget(self, key: str) -> str:
        """The full id of a drawn widget whose id ends with ``key`` (a user key) or contains it."""
        found = [i for i in self.widgets if i.endswith("-" + key) or key in i]
        assert len(found) == 1, (key, list(self.widgets))
        return found[0]

    def run(
        self, page: str, *, query: str = "", widgets: dict[str, object] | None = None
    ) -> list[ForwardMsg]:
        """One rerun of ``page`` with these widget values (bool: a trigger; str, int, float: that
        type, whatever the widget's own); waits until the runs it starts have finished."""
        self._ws.send(rerun_script(page=page, query=query, widgets=widgets))
        self.messages = []
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            try:
                raw = self._ws.recv(timeout=max(0.1, deadline - time.monotonic()))
            except TimeoutError:
                break
            fwd = parse(raw)
            self.messages.append(fwd)
            el = element(fwd)
            if el is not None and getattr(el[1], "id", ""):
                self.widgets[el[1].id] = el[0]
            if finished(fwd):  # a run that asks for another (st.rerun): wait for that one too
                break
        return self.messages

    def send(self, raw: bytes) -> None:
        """Send one BackMsg as it is (st_protocol.rerun_script), without waiting for its runs."""
        self._ws.send(raw)

    def receive(self, timeout: float) -> ForwardMsg | None:
        """The next message from the server, or None when none came within ``timeout`` seconds."""
        try:
            return parse(self._ws.recv(timeout=timeout))
        except TimeoutError:
            return None

    def text(self) -> str:
        """The text of the alerts, Markdown, text and headings the last run drew."""
        found = (element(fwd) for fwd in self.messages)
        return "\n".join(t for t in (element_text(*el) for el in found if el) if t is not None)

"""Shared AppTest helpers for tests that reach a page through app.py (navigation, language)."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def run_page(page: str, timeout: float = 120, **state) -> AppTest:
    """Run app.py, switch to ``page``, set widget state, rerun."""
    at = AppTest.from_file(APP, default_timeout=timeout).run()
    at.switch_page(page)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def open_page(page: str, lang: str = "en", timeout: float = 90) -> AppTest:
    """Run app.py in ``lang``, switch to ``page``; fail on any exception."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.session_state["lang"] = lang
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    return at


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def chart_spec(at: AppTest, key: str) -> dict:
    """The Plotly figure JSON of the chart whose widget key ends with ``key``."""
    for el in at.get("plotly_chart"):
        if el.proto.id.endswith(key):
            return json.loads(el.proto.spec)
    raise AssertionError(f"no chart {key}")

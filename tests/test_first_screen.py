"""The playground's first view draws step 1 first (attention_ui/playground/first_screen.py).

AppTest has no browser (no User-Agent), so the deferral is switched on here by patching the decision;
the browser side (the script that asks for the rest by itself) is tests/browser/test_first_screen_browser.py.
"""

from __future__ import annotations

import pytest

from attention_ui.i18n import translate
from attention_ui.playground import first_screen
from tests.apptest_pages import charts, open_page

BROWSER = {"User-Agent": "Mozilla/5.0"}


def test_only_the_first_view_of_a_browser_session_is_deferred():
    state: dict = {}
    assert first_screen.defer_rest(state, BROWSER) is True
    assert first_screen.defer_rest(state, BROWSER) is False  # every later run draws every step
    assert first_screen.defer_rest({}, {}) is False  # no browser: nothing would ask for the rest
    no_browser: dict = {}
    first_screen.defer_rest(no_browser, {})
    assert first_screen.defer_rest(no_browser, BROWSER) is False  # the first view was had


@pytest.fixture
def deferred(monkeypatch):
    """The session's first run behaves as a browser's first view."""
    real = first_screen.defer_rest
    monkeypatch.setattr(first_screen, "defer_rest", lambda state, headers: real(state, BROWSER))


def test_first_view_draws_step_1_then_the_rest_after_one_run(deferred):
    at = open_page()
    assert set(charts(at)) == {"pg_chart_x"}
    captions = " ".join(c.value for c in at.caption)
    assert translate("en", "playground.rest_pending", first=2, last=11) in captions
    steps = [h.value for h in at.main.header]
    assert steps == ["1. " + translate("en", "playground.step_x")]
    at.button(key=first_screen.BUTTON_KEY).click().run()
    assert not at.exception
    keys = set(charts(at))
    assert {"pg_chart_x", "pg_chart_weights", "pg_chart_all_heads", "pg_chart_output"} <= keys
    assert len(keys) == 11
    assert not [b for b in at.button if b.key == first_screen.BUTTON_KEY]


def test_any_rerun_draws_the_rest(deferred):
    """A learner who changes a control before the rest arrives gets every step (nothing waits on the button)."""
    at = open_page()
    assert len(charts(at)) == 1
    at.sidebar.text_area(key="pg_text").set_value("the cat sat down").run()
    assert not at.exception
    assert len(charts(at)) == 11

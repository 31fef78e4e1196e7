"""The playground's first view draws step 1 first (attention_ui/playground/first_screen.py).

AppTest has no browser (no User-Agent), so the deferral is switched on here by patching the decision;
the browser side (the script that asks for the rest by itself) is tests/browser/test_first_screen_browser.py.
"""

from __future__ import annotations

import pytest

from attention_ui.i18n import translate
from attention_ui.language import LANG_KEY
from attention_ui.playground import examples, first_screen
from attention_ui.practice.predict_view import MODE_KEY
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
    """The session's first run behaves as a browser's first view (defer_rest asks first_view too)."""
    real = first_screen.first_view
    monkeypatch.setattr(first_screen, "first_view", lambda state, headers: real(state, BROWSER))


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
    """Any rerun before the rest arrives (the browser reconnecting, a page link clicked back) draws every
    step and every setting (nothing waits on the button)."""
    at = open_page()
    assert len(charts(at)) == 1
    at.run()
    assert not at.exception
    assert len(charts(at)) == 11
    # the settings are drawn, the sentence box holding the sentence the first view was computed from
    assert at.main.text_area(key="pg_text").value == translate("en", "playground.default_text")
    assert at.sidebar.radio(key=LANG_KEY).value == "en"


SETTINGS = (
    "pg_max_tokens",
    "pg_d_model",
    "pg_heads",
    "pg_pad",
    "pg_seed",
    "pg_weights",
    MODE_KEY,
    LANG_KEY,
)


def sidebar_keys(at) -> set[str]:
    return {
        w.key
        for kind in ("text_area", "number_input", "selectbox", "toggle", "radio")
        for w in at.sidebar.get(kind)
    }


def test_the_first_view_sends_the_settings_with_the_rest(deferred):
    """The settings, the weights radio, the practice switch and the language switch (below the
    sidebar's first screen, its navigation fills it) come one run later with steps 2–11, at the values the first view's step 1
    was computed from (a link's values included)."""
    at = open_page(params={"text": "a b c a", "d_model": "12", "heads": "3", "seed": "5"})
    assert set(charts(at)) == {"pg_chart_x"}
    assert not set(SETTINGS) & sidebar_keys(at), "the settings were drawn on the first view"
    assert at.main.text_area(key="pg_text").value == "a b c a"  # the sentence is on the first screen
    assert not [w for w in at.selectbox if w.key == examples.PICK_KEY]  # its example picker comes later
    first_x = charts(at)["pg_chart_x"]["data"][0]["z"]
    at.button(key=first_screen.BUTTON_KEY).click().run()
    assert not at.exception
    assert set(SETTINGS) <= sidebar_keys(at)
    assert at.main.text_area(key="pg_text").value == "a b c a"
    assert at.main.selectbox(key=examples.PICK_KEY)
    assert [at.sidebar.number_input(key=k).value for k in ("pg_d_model", "pg_heads", "pg_seed")] == [12, 3, 5]
    assert charts(at)["pg_chart_x"]["data"][0]["z"] == first_x  # the same step 1, now beside its settings
    assert len(charts(at)) == 11


def test_a_first_view_without_a_step_draws_its_settings_at_once(deferred):
    """A link whose settings draw no step (16 is not divisible by 3 heads): nothing would ask for a
    second run, so the settings that fix it (and the language switch) are on the first view."""
    at = open_page(params={"d_model": "16", "heads": "3"}, check=False)
    assert not charts(at)
    assert at.error, "the link was expected to show a settings error"
    assert set(SETTINGS) - {MODE_KEY} <= sidebar_keys(at)  # (the practice switch is step 1's)
    assert at.main.selectbox(key=examples.PICK_KEY) and at.main.text_area(key="pg_text")


def test_the_language_switch_is_left_out_only_before_it_was_ever_drawn(deferred):
    """A session that opened on a lab (its language switch drawn there) and then opens the playground:
    the switch stays (a widget left out of a run after it was drawn would lose the learner's choice)."""
    at = open_page("app_pages/masks.py", check=False)
    at.sidebar.radio(key=LANG_KEY).set_value("ja").run()
    at.switch_page("app_pages/playground.py").run()
    assert not at.exception
    assert set(charts(at)) == {"pg_chart_x"}  # the playground's first view, deferred
    assert at.sidebar.radio(key=LANG_KEY).value == "ja"
    at.run()
    assert at.sidebar.radio(key=LANG_KEY).value == "ja"

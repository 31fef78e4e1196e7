"""Issue 42, point 8: where a newcomer types the sentence. The playground's introduction asks for a
sentence; its box was in the sidebar under 17 page links and two switches. It now follows the
introduction in the page itself (attention_ui/playground/sentence_box.py), on the session's first view
too, and stays the learner's shared sentence. That it lies inside the first screen at 1366 × 768 and on a
390 × 844 phone is measured in Chromium (tests/browser/test_first_screen_browser.py and
tests/browser/test_phone_touch_browser.py).
"""

from __future__ import annotations

import pytest

from attention_core.models import minilm
from attention_ui import kit
from attention_ui.i18n import translate
from attention_ui.playground import first_screen
from tests.apptest_pages import no_exception, open_page

BROWSER = {"User-Agent": "Mozilla/5.0"}
CHROME = {"SpecialBlock", "Block", "Column", "Html"}  # containers and scripts: nothing a learner reads


def opening(at, count: int = 3) -> list:
    """The first ``count`` things the main area shows, in order."""
    return [el for el in at.main if type(el).__name__ not in CHROME][:count]


def assert_box_after_intro(at, lang: str, intro_key: str) -> None:
    title, intro, box = opening(at)
    assert (title.value, intro.value) == (translate(lang, "playground.title"), translate(lang, intro_key))
    assert box.key == "pg_text" and box.label == translate(lang, "playground.text")
    assert not [w for w in at.sidebar.text_area if w.key == "pg_text"]  # one box, not in the sidebar


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_sentence_box_follows_the_introduction_from_the_first_view(lang, monkeypatch) -> None:
    real = first_screen.first_view
    monkeypatch.setattr(first_screen, "first_view", lambda state, headers: real(state, BROWSER))
    at = open_page(lang=lang)  # a browser's first view: step 1 and the sentence, the settings later
    assert_box_after_intro(at, lang, "playground.intro")
    assert translate(lang, "playground.intro").startswith(
        ("Type a sentence in the box below", "下の入力欄に文を")
    )
    at.button(key=first_screen.BUTTON_KEY).click().run()
    no_exception(at)
    assert_box_after_intro(at, lang, "playground.intro")


@pytest.mark.skipif(not minilm.is_available(), reason="all-MiniLM-L6-v2 not installed")
def test_the_pretrained_view_has_the_same_box_in_the_same_place() -> None:
    at = open_page(pg_weights="pretrained")
    assert_box_after_intro(at, "en", "pretrained.intro")
    assert at.main.text_area(key="pg_text").help == translate("en", "pretrained.text_help")


def test_the_box_is_the_learners_sentence_across_pages_and_controls() -> None:
    """Typed in the playground's box: the labs start from it, a setting changed afterwards keeps it, and
    a sentence typed in a lab comes back into the box."""
    at = open_page()
    at.main.text_area(key="pg_text").input("a dog ran home").run()
    assert at.session_state[kit.LEARNER_TEXT] == "a dog ran home"
    at.sidebar.number_input(key="pg_d_model").set_value(24).run()
    assert at.main.text_area(key="pg_text").value == "a dog ran home"
    at.switch_page("app_pages/masks.py").run()
    no_exception(at)
    assert at.sidebar.text_area(key="masks_text").value == "a dog ran home"
    at.sidebar.text_area(key="masks_text").input("a cat sat down").run()
    at.switch_page("app_pages/playground.py").run()
    no_exception(at)
    assert at.main.text_area(key="pg_text").value == "a cat sat down"
    assert at.sidebar.number_input(key="pg_d_model").value == 24

"""WCAG points the app controls outside the figures (issue 18): the page language, page titles,
headings, the chart toolbar, learner context carried across pages. Figures' contrast is in
tests/test_colour_access.py; the rendered pages are checked with axe-core in tests/browser/test_axe_browser.py."""

from __future__ import annotations

import json

import pytest

from attention_ui.i18n import LANGUAGES, Translator
from tests.apptest_pages import open_page


def _lang_scripts(at) -> list[str]:
    return [el.proto.body for el in at.get("html") if "documentElement.lang" in el.proto.body]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_declares_its_language(lang):
    at = open_page("app_pages/masks.py", lang=lang)
    scripts = _lang_scripts(at)
    assert scripts == [f"<script>document.documentElement.lang = {json.dumps(lang)};</script>"]


def test_the_language_script_follows_a_language_switch():
    at = open_page("app_pages/masks.py", lang="en")
    at.session_state["lang"] = "ja"
    at.run()
    assert _lang_scripts(at) == ['<script>document.documentElement.lang = "ja";</script>']


@pytest.mark.parametrize("lang", LANGUAGES)
def test_page_titles_name_the_page_and_the_app(lang):
    t = Translator(lang)
    title = t("app.page_title", page=t("app.nav_masks"))
    assert t("app.nav_masks") in title and "Attention Lab" in title
    assert title != t("app.page_title", page=t("app.nav_quiz"))

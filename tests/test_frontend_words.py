"""Streamlit's own words in the page's language (attention_ui/frontend_words.py, issue 42, point 13):
the table and the script's data. What the script does to a real page, in both languages and back, is
checked in Chromium (tests/browser/test_phone_touch_browser.py)."""

from __future__ import annotations

import json
import re

from attention_ui import frontend_words as F
from attention_ui.i18n import Translator, catalog, translate


def test_every_word_has_its_japanese_and_its_english_is_streamlits() -> None:
    for english, key in F.WORDS.items():
        assert translate("en", key) == english  # the English catalog names the source it replaces
        ja = translate("ja", key).replace("Enter", "").replace("Ctrl", "")  # key names stay as printed
        assert not re.search(r"[a-z]{3,}", ja) and re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", ja), key
    for source, key in F.PATTERNS.items():
        made = translate("en", key, label="LABEL")
        assert re.fullmatch(source, made) and re.fullmatch(source, made)[1] == "LABEL", (source, made)
        assert "{label}" in catalog("ja")[key]


def _data(script: str) -> dict:
    return json.loads(re.search(r"window.__alWords = (.*?);\n", script)[1])


def test_the_script_carries_the_page_languages_words_and_none_in_english() -> None:
    ja = _data(F.words_script(Translator("ja")))
    assert ja["exact"]["Fullscreen"] == translate("ja", "app.st_fullscreen")
    assert ja["exact"]["Link to heading"] == translate("ja", "app.st_link_to_heading")
    assert [p[0] for p in ja["patterns"]] == list(F.PATTERNS)
    assert "{label}" in dict(ja["patterns"])[r"^Help for (.+)$"]
    assert _data(F.words_script(Translator("en"))) == {"exact": {}, "patterns": []}  # Streamlit's own


def test_nothing_in_the_data_can_end_the_script_element() -> None:
    script = F.words_script(Translator("ja"))
    assert script.count("</script>") == 1 and script.rstrip().endswith("</script>")

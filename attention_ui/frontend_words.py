"""Streamlit's own words in the page's language: tooltips and screen-reader names its frontend writes.

Streamlit 1.67 has no translations: its frontend writes English into every page, whatever the app's
language. In the Japanese interface a chart's full-screen button said "Fullscreen" (its tooltip, from
the button's ``data-title``), and a screen reader read "Link to heading", "Help for 文", "Increment",
"Decrement", "Open", "Collapse sidebar"; a text box said "Press Ctrl+Enter to apply" under it
(issue 42, point 13).

A constant script, the pattern of the other scripts app.py runs around every page (touch.py,
narrow_fit.py, chart_keys.py), puts the page's language in their place: the words come from the
message catalog (:data:`WORDS`, :data:`PATTERNS`; ``app.st_*``) and are handed to the script as data.
It looks at what Streamlit wrote, never at what a learner typed:

* the attributes :data:`ATTRIBUTES` whose whole value is one of Streamlit's sentences (``Fullscreen``)
  or one of its patterns around a widget's label (``Help for {label}``: the label is the catalog's);
* the text of the elements :data:`TEXT_ELEMENTS` (the hint under a text box), the same way.

It keeps each element's English original, so a switch back to English (or a value Streamlit writes
anew, e.g. after the language switch renamed a widget) is read from Streamlit's own text again.
Values are set with ``setAttribute`` and as text, never as HTML.
"""

from __future__ import annotations

import json

import streamlit as st

from attention_ui import assets
from attention_ui.i18n import Translator
from attention_ui.st_structure import testid

# Streamlit's sentence -> the catalog key of the page's words for it.
WORDS = {
    "Fullscreen": "app.st_fullscreen",
    "Close fullscreen": "app.st_close_fullscreen",
    "Link to heading": "app.st_link_to_heading",
    "Help": "app.st_help",
    "Increment": "app.st_increment",
    "Decrement": "app.st_decrement",
    "Open": "app.st_open",
    "Clear value": "app.st_clear_value",
    "Clear all": "app.st_clear_all",
    "Choose an option": "app.st_choose",
    "Collapse sidebar": "app.st_collapse_sidebar",
    "Expand sidebar": "app.st_expand_sidebar",
    "Sidebar": "app.st_sidebar",
    "App pages": "app.st_app_pages",
    "Download as CSV": "app.st_download_csv",
    "Search": "app.st_search",
    "Close Search": "app.st_close_search",
    "Previous Result": "app.st_previous_result",
    "Next Result": "app.st_next_result",
    "Show/hide columns": "app.st_show_hide_columns",
    "Show password": "app.st_show_password",
    "Hide password": "app.st_hide_password",
    "Press Enter to apply": "app.st_enter_to_apply",
    "Press Ctrl+Enter to apply": "app.st_ctrl_enter_to_apply",
    "Press ⌘+Enter to apply": "app.st_cmd_enter_to_apply",
    "Press Enter to submit form": "app.st_enter_to_submit",
    "Running...": "app.st_running",
    "progress": "app.st_progress",
    "Copy to clipboard": "app.st_copy",
    "Copied": "app.st_copied",
}
# Streamlit's sentences around a widget's label (a regular expression with one group, the label) ->
# the catalog key whose {label} receives it.
PATTERNS = {
    r"^Help for (.+)$": "app.st_help_for",
    r"^(.+) — start$": "app.st_range_start",
    r"^(.+) — end$": "app.st_range_end",
}
ATTRIBUTES = ("aria-label", "title", "data-title", "placeholder")
TEXT_ELEMENTS = f"{testid('InputInstructions')} > span, {testid('stTooltipContent')} p"

_SCRIPT = assets.script("frontend_words.js")


def words(t: Translator) -> dict:
    """The words handed to the script: none in English (Streamlit's own), else the catalog's."""
    if t.lang == "en":
        return {"exact": {}, "patterns": []}
    return {
        "exact": {english: t(key) for english, key in WORDS.items()},
        "patterns": [[source, t(key, label="{label}")] for source, key in PATTERNS.items()],
    }


def _js(value: object) -> str:
    """A JavaScript value that cannot end the <script> element it sits in."""
    return json.dumps(value, ensure_ascii=False).replace("</", "<\\/")


def words_script(t: Translator) -> str:
    """The script with the page language's words (catalog messages, never user text) filled in."""
    values = {"__WORDS__": words(t), "__ATTRIBUTES__": list(ATTRIBUTES), "__TEXT__": TEXT_ELEMENTS}
    script = _SCRIPT
    for name, value in values.items():
        script = script.replace(name, _js(value))
    return script


def in_page_language(t: Translator) -> None:
    """Put the script on the page; call once per run from app.py (it is invisible)."""
    st.html(words_script(t), unsafe_allow_javascript=True)

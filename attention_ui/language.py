"""Session-wide UI state shared by every page (language)."""

from __future__ import annotations

import streamlit as st

from .i18n import LANGUAGES, Translator, language_from_locale

LANG_KEY = "lang"


def first_language(browser_locale: str | None, link_lang: object) -> str:
    """A new session's language: the browser's, else the link's ``?lang=``, else the default.

    A shared link names the sender's language; the receiver reads in their own (a Japanese teacher's
    link opens in English in an English browser). The link's language counts only when the browser
    sends no locale. The numbers do not depend on it: the link carries the sentence itself.
    """
    if browser_locale:
        return language_from_locale(browser_locale)
    return link_lang if link_lang in LANGUAGES else language_from_locale(None)


def current_language() -> str:
    """The learner's choice (the language switch); on a session's first run, :func:`first_language`."""
    if LANG_KEY not in st.session_state:
        locale = getattr(st.context, "locale", None)
        st.session_state[LANG_KEY] = first_language(locale, st.query_params.get(LANG_KEY))
    lang = st.session_state[LANG_KEY]
    if lang not in LANGUAGES:
        # Only a message forged by hand sends a language we do not offer (or a number: Streamlit then
        # serializes the switch's value into the message's type and raises a TypeError when it draws
        # the switch). Reset before the switch is drawn: the first call of a run is before it.
        del st.session_state[LANG_KEY]  # the widget's state too (see student_view._draw_poll)
        lang = st.session_state[LANG_KEY] = LANGUAGES[0]
    return lang


def translator() -> Translator:
    return Translator(current_language())
